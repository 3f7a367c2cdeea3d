#!/usr/bin/python3
"""Periodic meshes through `hexcg run`: every cases/NN-*.yaml here fails after
the mesh is read (a Gmsh tag pair whose nodes do not match, a wrong $Periodic
partner, a boundary condition on a tag the file's $Periodic section made
periodic): exit status 2, the last stderr line ends with the case's
"# expect-end: " text (the message names the mesh file by its absolute
path, so only the end is compared), and no output folder is created.

usage: check_periodic_cli.py MPIEXEC RANKS HEXCG WORK"""
import glob
import os
import shutil
import subprocess
import sys

mpiexec, ranks, hexcg, work = sys.argv[1:5]
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
fail = []
cases = sorted(glob.glob(os.path.join(here, "[0-9]*.yaml")))
if not cases:
    sys.exit("no cases found in " + here)
for case in cases:
    name = os.path.basename(case)
    want = next(l[len("# expect-end: "):].rstrip("\n") for l in open(case) if l.startswith("# expect-end: "))
    out = os.path.join(work, "out-" + name[:-5])
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run([mpiexec, "-n", ranks, hexcg, "run", name, "--output", out], cwd=here,
                       capture_output=True, text=True, timeout=120)
    last = p.stderr.strip().split("\n")[-1] if p.stderr.strip() else ""
    if p.returncode != 2:
        fail.append(f"{name}: exit status {p.returncode}, expected 2")
    if not last.endswith(want):
        fail.append(f"{name}: last stderr line\n  got:      {last!r}\n  expected: ...{want!r}")
    if os.path.exists(out):
        fail.append(f"{name}: output folder {out} was created")
if fail:
    sys.exit("\n".join(fail))
print(f"{len(cases)} periodic bad-input cases refused")
