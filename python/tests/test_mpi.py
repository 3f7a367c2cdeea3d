"""The answer on the communicator's ranks (run it on 2: mpiexec -n 2 python -m
pytest python/tests/test_mpi.py) equals a 1-rank solve on rank 0, node by
node through the global ids; shared nodes agree between ranks."""

from __future__ import annotations

import numpy as np
from conftest import box_case, exact_at
from mpi4py import MPI

import hexcg


def test_ranks_equal_one_rank() -> None:
    comm = MPI.COMM_WORLD
    with hexcg.Solver.from_yaml(box_case(tol=1e-12), comm=comm, name="np") as s:
        u, res = s.solve()
        gid, n_global = s.global_ids.copy(), s.num_global
    assert res.converged and np.max(np.abs(u - exact_at(s.nodes))) < 1e-3
    parts = comm.gather((gid, u), root=0)
    ok = True
    if comm.rank == 0:
        whole = np.full(n_global, np.nan)
        for g, v in parts:
            seen = ~np.isnan(whole[g])
            # a shared node's value is the same on every rank holding it
            ok &= bool(np.all(np.abs(whole[g][seen] - v[seen]) <= 1e-14 * np.max(np.abs(v))))
            whole[g] = v
        ok &= not np.any(np.isnan(whole))
        with hexcg.Solver.from_yaml(box_case(tol=1e-12), comm=MPI.COMM_SELF, name="np1") as one:
            w, _ = one.solve()
            ref = np.empty(n_global)
            ref[one.global_ids] = w
        ok &= bool(np.linalg.norm(whole - ref) <= 1e-8 * np.linalg.norm(ref))
    assert comm.bcast(ok, root=0)
