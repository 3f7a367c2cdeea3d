"""One setup, many solves: the answer against the exact solution, repeated and
fresh solves, the block solve's rows against single solves, a shift, and the
local-node arrays (any number of ranks; test_mpi.py compares ranks)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import box_case, exact_at, rel

import hexcg


def test_box_solution_matches_exact(box: hexcg.Solver) -> None:
    u, res = box.solve()
    assert res.converged and res.reason.startswith("converged")
    assert res.errors is not None and res.errors.l2 < 1e-3 and res.errors.max < 1e-3
    # the same error measured here at the nodes, from hexcg's coordinates
    assert np.max(np.abs(u - exact_at(box.nodes))) < 1e-3
    assert res.residuals.final < res.residuals.initial and res.iterations > 0


def test_node_arrays(box: hexcg.Solver, comm) -> None:
    n = box.num_nodes
    assert box.nodes.shape == (n, 3) and box.global_ids.shape == (n,)
    assert box.owned.dtype == bool and box.dirichlet.dtype == bool
    # 4^3 elements at p = 3: 13^3 GLL nodes, 11^3 of them inside
    assert box.num_global == 13 ** 3
    assert comm.allreduce(int(box.owned.sum())) == 13 ** 3
    xyz = box.nodes
    on_face = np.any((np.abs(xyz) < 1e-12) | (np.abs(xyz - 1) < 1e-12), axis=1)
    assert np.array_equal(on_face, box.dirichlet)
    assert box.global_ids.min() >= 0 and box.global_ids.max() < 13 ** 3
    assert box.describe()[:2] == (3, 64)


def test_repeated_solves_equal_fresh(box: hexcg.Solver) -> None:
    x = box.nodes
    f1 = 3 * np.pi ** 2 * exact_at(x)
    f2 = 1.0 + x[:, 0] * x[:, 1] - np.cos(x[:, 2])
    a1, _ = box.solve(f1)
    a2, _ = box.solve(f2)
    a3, _ = box.solve(f1)
    assert np.array_equal(a1, a3)
    with hexcg.Solver.from_yaml(box_case(), name="fresh") as fresh:
        b2, _ = fresh.solve(f2)
    assert rel(a2, b2) < 1e-12


def test_solve_many_rows_equal_single_solves(box: hexcg.Solver) -> None:
    x = box.nodes
    F = np.ascontiguousarray(np.stack([3 * np.pi ** 2 * exact_at(x), 1.0 + x[:, 0] ** 2, np.sin(3 * x[:, 1])]))
    U, results = box.solve_many(F)
    assert U.shape == F.shape and len(results) == 3
    for c in range(3):
        u, _ = box.solve(F[c])
        assert results[c].converged
        assert rel(U[c], u) < 1e-8, c


def test_set_shift(box: hexcg.Solver) -> None:
    shift = 5.0
    box.set_shift(shift)
    f = (3 * np.pi ** 2 + shift) * exact_at(box.nodes)
    u, res = box.solve(f)
    assert res.converged and np.max(np.abs(u - exact_at(box.nodes))) < 1e-3
    # the same as a solver built with lambda = shift
    with hexcg.Solver.from_yaml(box_case(lam=shift), name="lambda5") as other:
        v, _ = other.solve(f)
    assert rel(u, v) < 1e-8
    box.set_shift(0.0)
    w, _ = box.solve()
    assert np.max(np.abs(w - exact_at(box.nodes))) < 1e-3


def test_two_solvers_alive(box: hexcg.Solver) -> None:
    u1, _ = box.solve()
    with hexcg.Solver.from_yaml(box_case(elements=3, order=2), name="small") as small:
        v1, _ = small.solve()
        u2, _ = box.solve()
        v2, _ = small.solve()
        assert small.num_global == 7 ** 3
    assert np.array_equal(u1, u2) and np.array_equal(v1, v2)


def test_from_problem_matches_case(box: hexcg.Solver) -> None:
    exact = "sin(pi*x)*sin(pi*y)*sin(pi*z)"
    mesh = hexcg.box_mesh(4)
    bcs = {t: hexcg.Dirichlet(exact) for t in mesh.boundary}
    with hexcg.Solver.from_problem(mesh, 3, f=f"3*pi^2*{exact}", bcs=bcs, exact=exact, tol=1e-10) as s:
        u, res = s.solve()
        assert s.num_global == box.num_global
        assert res.errors is not None and res.errors.l2 < 1e-3
        assert np.max(np.abs(u - exact_at(s.nodes))) < 1e-3


def test_time_run_monitor_stops(box: hexcg.Solver) -> None:
    seen = []

    def monitor(step: int, t: float, u: np.ndarray, r: hexcg.Result) -> bool:
        seen.append((step, t, u.shape))
        return step == 2

    u, tr = box.time_run(0.01, 5, scheme=1, monitor=monitor)
    assert tr.steps == 2 and abs(tr.t - 0.02) < 1e-15 and not tr.failed
    assert [s for s, _, _ in seen] == [1, 2] and seen[0][2] == (box.num_nodes,)
    assert u.shape == (box.num_nodes,) and np.all(np.isfinite(u))


def test_from_file_with_settings() -> None:
    case = Path(__file__).resolve().parents[2] / "configs" / "poisson_box.yaml"
    with hexcg.Solver.from_file(str(case), set={"order": 2, "mesh.elements": "[2, 2, 3]"}) as s:
        assert s.describe()[:2] == (2, 12)
        assert s.num_global == 5 * 5 * 7  # (2 p + 1)^2 (3 p + 1) at p = 2
        u, res = s.solve()
        assert res.converged and res.errors is not None and res.errors.max < 0.1
    with hexcg.Solver.from_file(str(case), set=["order=1", "mesh.elements=2"]) as s:
        assert s.num_global == 27


def test_time_run_keeps_the_steady_solution(box: hexcg.Solver) -> None:
    # f and the boundary data do not depend on t, and u0 = None starts from
    # the exact (steady) solution: du/dt = 0, the steps stay there
    u, tr = box.time_run(0.01, 3, scheme=2)
    assert tr.steps == 3 and not tr.failed and tr.iterations >= 0 and abs(tr.t - 0.03) < 1e-14
    assert np.max(np.abs(u - exact_at(box.nodes))) < 1e-3
    # from u0 = 0 inside (the boundary values are Dirichlet data) it is still far from it
    v, _ = box.time_run(0.01, 3, scheme=2, u0=np.where(box.dirichlet, exact_at(box.nodes), 0.0))
    assert np.max(np.abs(v - exact_at(box.nodes))) > 1e-2
    # and the steady solve is unchanged afterwards (the shift restored)
    w, _ = box.solve()
    assert np.max(np.abs(w - exact_at(box.nodes))) < 1e-3
