"""Poisson on the unit cube with hexcg from Python: the case as YAML text,
one solve with the case's own source, then a source computed here at the
nodes, then two right-hand sides at once. Run: mpiexec -n 2 python solve.py"""

import numpy as np
from mpi4py import MPI

import hexcg

CASE = """
mesh: {type: box, elements: [4, 4, 4]}
order: 3
problem:
  rhs: "3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)"
  exact: "sin(pi*x)*sin(pi*y)*sin(pi*z)"
  boundary:
    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}
solver: {tol: 1.0e-10}
"""

comm = MPI.COMM_WORLD
with hexcg.Solver.from_yaml(CASE, comm=comm, name="example") as s:
    u, res = s.solve()  # f = None: the case's rhs
    if comm.rank == 0:
        print(f"{s.num_global} nodes: {res.iterations} iterations, L2 error {res.errors.l2:.2e}")
    assert res.converged and res.errors.l2 < 1e-3

    x, y, z = s.nodes.T  # this rank's nodes
    exact = np.sin(np.pi * x) * np.sin(np.pi * y) * np.sin(np.pi * z)
    v, _ = s.solve(3 * np.pi ** 2 * exact)
    assert np.max(np.abs(v - u)) < 1e-8 * np.max(np.abs(u))

    F = np.stack([3 * np.pi ** 2 * exact, np.ones_like(x)])  # one right-hand side per row
    U, results = s.solve_many(F)
    assert np.max(np.abs(U[0] - u)) < 1e-7 and all(r.converged for r in results)
    if comm.rank == 0:
        print("solve, solve with f from the nodes and solve_many agree")
