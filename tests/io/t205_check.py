#!/usr/bin/python3
"""summary.yaml written by t205-history parses as YAML with every field the
issue asks for; history.h5 (h5py) agrees with history.csv (numpy)."""
import os
import sys

import h5py
import numpy as np
import yaml

d = sys.argv[1]
s = yaml.safe_load(open(os.path.join(d, "summary.yaml")))
fails = []
exp = {"case": "poisson_box", "ranks": 4, "backend": "cpu", "order": 7, "dofs": 185193}
for k, v in exp.items():
    if s.get(k) != v:
        fails.append(f"{k}: {s.get(k)!r} != {v!r}")
checks = [
    (s["hexcg"] == {"version": "9.8.7", "git": "abcdef123456"}, "versions"),
    (s["mesh"] == {"type": "box", "elements": 512}, "mesh"),
    (s["solver"]["iterations"] == 123 and s["solver"]["converged"] is True, "iterations/converged"),
    (s["solver"]["reason"] == "rel_residual < tol", "reason"),
    (s["solver"]["initial_residual"] == 12.5 and s["solver"]["final_residual"] == 1.25e-7, "residuals"),
    (s["solver"]["final_rel_residual"] == 1e-8, "relative residual"),
    (s["error"] == {"l2": 3.5e-9, "max": 7.25e-9}, "errors"),
    # setup + solve + io + other = total, and the solve's parts add up to solve
    (s["timers_s"] == {"setup": 0.5, "solve": 2.0, "operator": 1.25, "exchange": 0.03125, "preconditioner": 0.125,
                       "vector": 0.25, "reductions": 0.0625, "solve_other": 0.3125, "io": 0.25, "other": 0.25,
                       "total": 3.0}, f"timers {s['timers_s']}"),
    (list(s["timers_s"])[:2] == ["setup", "solve"], "timers in table order"),
    (s["memory"]["peak_per_rank_bytes"] == 256 * 1048576, "memory"),
    ("HDF5" in s["libraries"] and "date" in s, "libraries/date"),
]
fails += [what for ok, what in checks if not ok]
csv = np.loadtxt(os.path.join(d, "history.csv"), delimiter=",", skiprows=1)
with h5py.File(os.path.join(d, "history.h5"), "r") as f:
    cols = [f[k][...] for k in ("iteration", "residual", "rel_residual", "time_s")]
if not (csv.shape == (41, 4) and all(np.allclose(csv[:, i], cols[i], rtol=1e-9, atol=0) for i in range(4))):
    fails.append("history.h5 and history.csv differ")
if cols[0].dtype != np.int64:
    fails.append(f"iteration dtype {cols[0].dtype}")
for f in fails:
    print("FAIL:", f, file=sys.stderr)
sys.exit(1 if fails else 0)
