"""hexcg.Mesh and the problem's numbers and expressions as a C hexcg_problem
(the buffers it points to are returned alongside: keep them alive during the
call; hexcg_create copies the description)."""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ._hexcg import ffi, lib
from ._problem import BoundaryCondition, Dirichlet, FieldLike, Mesh, Neumann, Robin, as_field_map


def _field(out: Any, value: Optional[FieldLike], what: str, keep: List[Any]) -> None:
    """Fills a hexcg_field with a number or an expression string (None: unknown)."""
    if value is None:
        return
    if isinstance(value, str):
        buf = ffi.new("char[]", value.encode())
        keep.append(buf)
        out.expr = buf
    elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        out.value = float(value)
    else:
        raise TypeError(f"{what}: expected a number or an expression string such as 'sin(pi*x)', got {value!r}")


def _names(names: Sequence[str], keep: List[Any]) -> Any:
    bufs = [ffi.new("char[]", str(n).encode()) for n in names]
    arr = ffi.new("const char *[]", bufs) if bufs else ffi.NULL
    keep.extend(bufs)
    keep.append(arr)
    return arr


def _array(a: Any, dtype: Any, cols: int, what: str, keep: List[Any]) -> Tuple[int, Any]:
    """(rows, pointer) of a (rows, cols) array (cols 0: one-dimensional)."""
    x = np.ascontiguousarray(a, dtype=dtype)
    shape_ok = x.ndim == 1 if cols == 0 else (x.ndim == 2 and x.shape[1] == cols) or x.size == 0
    if not shape_ok:
        want = "(m,)" if cols == 0 else f"(m, {cols})"
        raise ValueError(f"mesh.{what}: expected an array of shape {want}, got {x.shape}")
    keep.append(x)
    ctype = {np.float64: "double[]", np.int64: "int64_t[]", np.int32: "int32_t[]"}[dtype]
    return (x.shape[0] if x.size else 0), (ffi.from_buffer(ctype, x) if x.size else ffi.NULL)


def _mesh(mesh: Mesh, keep: List[Any]) -> Any:
    m = ffi.new("hexcg_mesh *")
    keep.append(m)
    m.num_vertices, m.xyz = _array(mesh.vertices, np.float64, 3, "vertices", keep)
    m.num_elements, m.hex = _array(mesh.hexes, np.int64, 8, "hexes", keep)
    if mesh.materials is not None:
        nm, m.material = _array(mesh.materials, np.int32, 0, "materials", keep)
        if nm != m.num_elements:
            raise ValueError(f"mesh.materials: {nm} entries for {m.num_elements} elements: give one per element")
    m.num_materials = len(mesh.material_names)
    m.material_names = _names(mesh.material_names, keep)
    tags = list(mesh.boundary)
    faces = [np.asarray(mesh.boundary[t], dtype=np.int64).reshape(-1, 4) for t in tags]
    allf = np.concatenate(faces) if faces else np.zeros((0, 4), dtype=np.int64)
    ftag = np.concatenate([np.full(len(f), i, dtype=np.int32) for i, f in enumerate(faces)]) if faces else \
        np.zeros(0, dtype=np.int32)
    m.num_faces, m.face_vertices = _array(allf, np.int64, 4, "boundary", keep)
    _, m.face_tag = _array(ftag, np.int32, 0, "boundary tags", keep)
    m.num_tags = len(tags)
    m.tag_names = _names(tags, keep)
    return m


def _bcs(bcs: Mapping[str, BoundaryCondition], d: Any, keep: List[Any]) -> None:
    arr = ffi.new("hexcg_bc[]", max(len(bcs), 1))
    keep.append(arr)
    kinds = {Dirichlet: lib.HEXCG_BC_DIRICHLET, Neumann: lib.HEXCG_BC_NEUMANN, Robin: lib.HEXCG_BC_ROBIN}
    for i, (tag, bc) in enumerate(bcs.items()):
        if type(bc) not in kinds:
            raise TypeError(f"bcs[{tag!r}]: expected hexcg.Dirichlet, Neumann or Robin, got {bc!r}")
        name = ffi.new("char[]", str(tag).encode())
        keep.append(name)
        arr[i].tag = name
        arr[i].type = kinds[type(bc)]
        _field(arr[i].value, bc.value, f"bcs[{tag!r}].value", keep)
        if isinstance(bc, Robin):
            _field(arr[i].alpha, bc.alpha, f"bcs[{tag!r}].alpha", keep)
    d.num_bcs = len(bcs)
    d.bcs = arr


def describe(mesh: Mesh, order: int, kappa: Union[FieldLike, Mapping[str, FieldLike]],
             lambda_: Union[FieldLike, Mapping[str, FieldLike]], f: FieldLike,
             bcs: Mapping[str, BoundaryCondition], exact: Optional[FieldLike], preconditioner: Optional[str],
             tol: float, max_iterations: int, backend: Optional[str]) -> Tuple[Any, List[Any]]:
    """The hexcg_problem of Solver.from_problem's arguments and its buffers."""
    keep: List[Any] = []
    d = ffi.new("hexcg_problem *")
    keep.append(d)
    d.mesh = _mesh(mesh, keep)
    d.order = order
    ks = as_field_map("kappa", kappa, mesh.material_names)
    ls = as_field_map("lambda_", lambda_, mesh.material_names)
    if len(ks) != len(ls):  # one for all and one per material: spell both out per material
        ks = ks * len(ls) if len(ks) == 1 else ks
        ls = ls * len(ks) if len(ls) == 1 else ls
    kap, lam = ffi.new("hexcg_field[]", len(ks)), ffi.new("hexcg_field[]", len(ls))
    keep += [kap, lam]
    for i, (kv, lv) in enumerate(zip(ks, ls)):
        _field(kap[i], kv, "kappa", keep)
        _field(lam[i], lv, "lambda_", keep)
    d.num_coefs, d.kappa = len(ks), kap
    setattr(d, "lambda", lam)  # a Python keyword
    _field(d.f, f, "f", keep)
    _bcs(bcs, d, keep)
    _field(d.exact, exact, "exact", keep)
    for attr, text in (("preconditioner", preconditioner), ("backend", backend)):
        if text is not None:
            buf = ffi.new("char[]", text.encode())
            keep.append(buf)
            setattr(d, attr, buf)
    d.tol = float(tol)
    d.max_iterations = int(max_iterations)
    return d, keep
