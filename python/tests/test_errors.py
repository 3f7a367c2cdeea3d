"""Failures are exceptions with the library's message; wrong-sized arrays are
ValueErrors raised before any C call."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import box_case

import hexcg


def test_bad_case_string() -> None:
    text = box_case().replace("type: box", "type: boxx")
    with pytest.raises(hexcg.InputError) as e:
        hexcg.Solver.from_yaml(text, name="bad-case")
    assert "bad-case" in str(e.value) and "boxx" in str(e.value)
    assert e.value.status == 1 and e.value.status_name == "HEXCG_ERR_INPUT"
    assert isinstance(e.value, hexcg.Error) and e.value.message == str(e.value)


def test_missing_file() -> None:
    with pytest.raises(hexcg.Error) as e:
        hexcg.Solver.from_file("no-such-case.yaml")
    assert "no-such-case.yaml" in str(e.value)


def test_bad_setting() -> None:
    with pytest.raises(ValueError, match="KEY=VALUE"):
        hexcg.Solver.from_yaml(box_case(), set=["order"])


def test_wrong_sizes(box: hexcg.Solver) -> None:
    n = box.num_nodes
    with pytest.raises(ValueError, match=f"expected {n} values"):
        box.solve(np.zeros(n + 1))
    with pytest.raises(ValueError, match="expected"):
        box.set_dirichlet(np.zeros((n, 2)))
    with pytest.raises(ValueError, match="transposed"):
        box.solve_many(np.zeros((n, 2)))
    with pytest.raises(ValueError, match="C-contiguous float64"):
        box.solve_many(np.zeros((2, n), dtype=np.float32))
    with pytest.raises(ValueError, match="C-contiguous float64"):
        box.solve_many(np.zeros((n, 2)).T)


def test_nan_in_f(box: hexcg.Solver) -> None:
    f = np.ones(box.num_nodes)
    f[box.num_nodes // 2] = np.nan
    with pytest.raises(hexcg.InputError) as e:
        box.solve(f)
    # the message names the value and the node
    assert f"f[{box.num_nodes // 2}] = nan" in str(e.value) and "not finite" in str(e.value)
    # the solver is still usable afterwards
    u, res = box.solve()
    assert res.converged


def test_negative_shift(box: hexcg.Solver) -> None:
    with pytest.raises(hexcg.ArgumentError) as e:
        box.set_shift(-1.0)
    assert "shift -1" in str(e.value)


def test_bad_description() -> None:
    mesh = hexcg.box_mesh(2)
    with pytest.raises(hexcg.InputError, match="'nope' is not a boundary tag"):
        hexcg.Solver.from_problem(mesh, 2, bcs={"nope": hexcg.Dirichlet(0.0)})
    with pytest.raises(hexcg.InputError, match="kappa"):
        hexcg.Solver.from_problem(mesh, 2, kappa="sin(", bcs={"xmin": hexcg.Dirichlet(0.0)})
    with pytest.raises(ValueError, match="hexes"):
        hexcg.Solver.from_problem(hexcg.Mesh(mesh.vertices, mesh.hexes[:, :6]), 2)


def test_closed_solver() -> None:
    s = hexcg.Solver.from_yaml(box_case(elements=2, order=2))
    s.close()
    s.close()
    with pytest.raises(ValueError, match="closed"):
        s.solve()
