"""Shared cases of the hexcg package's tests: the unit box with the
manufactured solution u = sin(pi x) sin(pi y) sin(pi z) (-lap u = 3 pi^2 u),
Dirichlet data from u on every face."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest
from mpi4py import MPI

import hexcg

EXACT = "sin(pi*x)*sin(pi*y)*sin(pi*z)"


def box_case(elements: int = 4, order: int = 3, tol: float = 1e-10, lam: float = 0.0) -> str:
    """The YAML text of the box case (the C example's case, docs/library.md)."""
    return f"""
mesh: {{type: box, elements: [{elements}, {elements}, {elements}], extent: [[0, 1], [0, 1], [0, 1]]}}
order: {order}
problem:
  kappa: 1.0
  lambda: {lam}
  rhs: "{3 * np.pi ** 2 + lam!r}*{EXACT}"
  exact: "{EXACT}"
  boundary:
    - {{tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}}
solver: {{type: pcg, tol: {tol}, max_iterations: 500}}
backend: cpu
"""


def exact_at(xyz: np.ndarray) -> np.ndarray:
    """u at the nodes, computed here (not by hexcg)."""
    return np.sin(np.pi * xyz[:, 0]) * np.sin(np.pi * xyz[:, 1]) * np.sin(np.pi * xyz[:, 2])


def rel(a: np.ndarray, b: np.ndarray) -> float:
    """||a - b|| / ||b|| over this rank's local nodes (both vectors on the same nodes)."""
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


@pytest.fixture
def comm() -> MPI.Comm:
    return MPI.COMM_WORLD


@pytest.fixture
def box(comm: MPI.Comm) -> Iterator[hexcg.Solver]:
    with hexcg.Solver.from_yaml(box_case(), comm=comm, name="box") as s:
        yield s
