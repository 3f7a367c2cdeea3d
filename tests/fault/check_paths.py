#!/usr/bin/python3
"""Paths with characters the file system allows but MPI-IO reads specially.

ROMIO takes the text before a colon as a file-system type ("ufs:", "nfs:"), so
an output folder like out/run_2026-12-01T16:30:19 (what a timestamped folder
looks like) used to run the whole solve and then fail with "cannot create
.../solution.h5.tmp" and no reason, and an initial guess under such a path was
"cannot open as an HDF5 file". Each folder below must take the whole result
set on 1 and 2 ranks, the solution must read back (h5py, and hexcg itself as
an initial guess: the converged solution needs 0 iterations), and a missing
initial-guess file under such a path must be refused with exit 2 and a reason.
"""
import argparse
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, failures, finish, hexcg, setup  # noqa: E402,F401

a, W = setup(case=True)




SMALL = ["--set", "mesh.elements=[2,2,2]", "--set", "order=3", "--quiet"]
OUTPUTS = ["case.yaml", "history.csv", "history.h5", "solution.h5", "solution.xdmf", "summary.yaml"]
folders = ["out/run_2026-12-01T16:30:19", "ufs:lookalike", "a:b/c:d", "space and ünïcödé/x"]
for ranks in (1, 2):
    for k, d in enumerate(folders):
        d = f"{d}-np{ranks}"
        rc, out, err = hexcg(["run", a.case, "--output", d] + SMALL, ranks)
        check(rc == 0, f"np{ranks} output '{d}': rc {rc} {err!r}")
        got = sorted(n for n in os.listdir(os.path.join(W, d)) if not n.startswith(".")) if os.path.isdir(os.path.join(W, d)) else []
        check(got == OUTPUTS, f"np{ranks} output '{d}': files {got}")
        if rc != 0:
            continue
        with h5py.File(os.path.join(W, d, "solution.h5"), "r") as f:
            u = np.asarray(f["fields/u"])
            check(u.size == f["mesh/coordinates"].shape[0] and np.all(np.isfinite(u)) and np.abs(u).max() > 0,
                  f"np{ranks} '{d}': solution.h5 u has {u.size} values, max {np.abs(u).max()}")
        # the converged solution as the initial guess, read through MPI-IO from the same folder
        g = os.path.join(d, "solution.h5")
        rc, out, err = hexcg(["run", a.case, "--output", d + "-restart", "--set", f"solver.initial_guess={g}"] +
                             SMALL, ranks)
        check(rc == 0, f"np{ranks} initial_guess '{g}': rc {rc} {err!r}")
        if rc == 0:
            with open(os.path.join(W, d + "-restart", "summary.yaml")) as f:
                s = f.read()
            check("iterations: 0\n" in s, f"np{ranks} initial_guess '{g}': not 0 iterations")
    # a missing file under a colon path: refused with the reason, exit 2, nothing written
    g = f"no:such/dir-np{ranks}/solution.h5"
    rc, out, err = hexcg(["run", a.case, "--output", f"o-missing-np{ranks}", "--set",
                          f"solver.initial_guess={g}"] + SMALL, ranks)
    check(rc == 2 and g in err, f"np{ranks} missing initial_guess: rc {rc} {err!r}")
    check(not os.path.exists(os.path.join(W, f"o-missing-np{ranks}", "summary.yaml")),
          f"np{ranks} missing initial_guess: an output was written")

# a case file whose name holds a newline, a quote and a colon: the effective case.yaml must
# rerun as documented (its comment line used to break and the rerun failed with a YAML error)
import shutil as _sh
odd = os.path.join(W, 'odd\nname "x":y.yaml')
_sh.copyfile(a.case, odd)
rc, out, err = hexcg(["run", odd, "--output", "o-odd"] + SMALL, 2)
check(rc == 0, f"case file with a newline in its name: rc {rc} {err!r}")
if rc == 0:
    with open(os.path.join(W, "o-odd", "case.yaml")) as f:
        first = f.readline()
    check(first.startswith("# effective case of ") and "\\n" in first, f"effective case comment: {first!r}")
    rc, out, err = hexcg(["run", os.path.join("o-odd", "case.yaml"), "--output", "o-odd-rerun", "--quiet"], 2)
    check(rc == 0, f"rerun of the effective case: rc {rc} {err!r}")
    if rc == 0:
        import yaml
        it = [yaml.safe_load(open(os.path.join(W, d, "summary.yaml")))["solver"]["iterations"]
              for d in ("o-odd", "o-odd-rerun")]
        check(it[0] == it[1], f"rerun iterations {it}")

finish("all path checks passed")
