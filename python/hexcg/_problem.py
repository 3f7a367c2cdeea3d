"""A problem without a case file: the mesh as numpy arrays, coefficients and
boundary conditions as numbers or expression strings (hexcg.h's
hexcg_problem)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

#: a scalar field: a number or an expression of x, y, z (and t in a time run)
#: in the case file's syntax, e.g. ``"sin(pi*x)*exp(-t)"``
FieldLike = Union[float, int, str]


@dataclass(frozen=True)
class Dirichlet:
    """u = value on the tag's faces."""

    value: FieldLike = 0.0


@dataclass(frozen=True)
class Neumann:
    """kappa du/dn = value (0: the natural condition of an untagged face)."""

    value: FieldLike = 0.0


@dataclass(frozen=True)
class Robin:
    """kappa du/dn + alpha u = value."""

    value: FieldLike = 0.0
    alpha: FieldLike = 1.0


BoundaryCondition = Union[Dirichlet, Neumann, Robin]


@dataclass
class Mesh:
    """An all-hex mesh as arrays (read on rank 0 only; other ranks may pass
    an empty Mesh()).

    vertices: (nv, 3) float64 coordinates; hexes: (ne, 8) vertex indices
    (0-based) per hexahedron in VTK_HEXAHEDRON / Gmsh hex8 order (the bottom
    face counter-clockwise seen from inside, then the top face above it);
    boundary: tag name -> (m, 4) vertex indices of its boundary quads (any
    order around the quad; a boundary face in none is tagged "untagged");
    materials: (ne,) indices into material_names (None: one material "body").
    """

    vertices: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    hexes: np.ndarray = field(default_factory=lambda: np.zeros((0, 8), dtype=np.int64))
    boundary: Dict[str, np.ndarray] = field(default_factory=dict)
    materials: Optional[np.ndarray] = None
    material_names: Sequence[str] = ()


def box_mesh(elements: Union[int, Tuple[int, int, int]],
             extent: Sequence[Tuple[float, float]] = ((0.0, 1.0), (0.0, 1.0), (0.0, 1.0))) -> Mesh:
    """A structured box of nx x ny x nz hexahedra with the boundary tags of a
    case file's box mesh: xmin xmax ymin ymax zmin zmax."""
    n = (elements,) * 3 if isinstance(elements, int) else tuple(elements)
    if len(n) != 3 or min(n) < 1:
        raise ValueError(f"box_mesh: elements={elements!r}: give one integer >= 1 or three")
    nx, ny, nz = n
    axes = [np.linspace(lo, hi, k + 1) for (lo, hi), k in zip(extent, n)]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    vertices = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)

    def vid(i: np.ndarray, j: np.ndarray, k: np.ndarray) -> np.ndarray:
        return (k * (ny + 1) + j) * (nx + 1) + i

    k, j, i = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    i, j, k = i.ravel(), j.ravel(), k.ravel()
    hexes = np.stack([vid(i, j, k), vid(i + 1, j, k), vid(i + 1, j + 1, k), vid(i, j + 1, k),
                      vid(i, j, k + 1), vid(i + 1, j, k + 1), vid(i + 1, j + 1, k + 1), vid(i, j + 1, k + 1)], axis=1)
    boundary: Dict[str, np.ndarray] = {}
    for axis, name in enumerate("xyz"):
        others = [a for a in range(3) if a != axis]
        b, a = np.meshgrid(np.arange(n[others[1]]), np.arange(n[others[0]]), indexing="ij")
        a, b = a.ravel(), b.ravel()
        for side, at in (("min", 0), ("max", n[axis])):
            idx: List[np.ndarray] = [np.empty(0)] * 3
            quad = []
            for da, db in ((0, 0), (1, 0), (1, 1), (0, 1)):
                idx[axis] = np.full_like(a, at)
                idx[others[0]] = a + da
                idx[others[1]] = b + db
                quad.append(vid(idx[0], idx[1], idx[2]))
            boundary[name + side] = np.stack(quad, axis=1).astype(np.int64)
    return Mesh(vertices, hexes.astype(np.int64), boundary)


def as_field_map(what: str, value: Union[FieldLike, Mapping[str, FieldLike]],
                 materials: Sequence[str]) -> List[FieldLike]:
    """A coefficient for all materials (one entry) or per material name (one
    entry per mesh material, in material_names' order)."""
    if isinstance(value, Mapping):
        names = list(materials) or ["body"]
        missing = [m for m in names if m not in value]
        extra = [m for m in value if m not in names]
        if missing or extra:
            raise ValueError(f"{what}: per-material values must name each material {names} once "
                             f"(missing {missing}, unknown {extra})")
        return [value[m] for m in names]
    return [value]
