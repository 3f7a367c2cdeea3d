#!/usr/bin/python3
"""Sizes that cannot fit in memory are refused before anything is allocated
(docs/case-format.md, "Memory"): hexcg run (and --dry-run) on 1 and 2 ranks,
a Gmsh mesh once read,
hexcg mesh (a case and --elements) and the benchmarks' size options. Each
must exit 2 with the estimate in the message, at once and without growing:
the peak memory of every child stays small."""
import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import UNIT_CUBE_NODES, check, failures, finish, hexcg, setup  # noqa: E402,F401

a, W = setup(case=False)



def hexcg(args, ranks=1, env=None, timeout=60):
    e = dict(os.environ)
    e.pop("HEXCG_MEM_AVAILABLE", None)
    e.update(env or {})
    t = time.time()
    p = subprocess.run([a.mpiexec, "-n", str(ranks), a.hexcg] + args, cwd=W, capture_output=True, text=True,
                       timeout=timeout, env=e)
    return p.returncode, p.stdout, p.stderr, time.time() - t


CASE = """mesh:
  type: box
  elements: %s
order: %d
problem:
  rhs: "1"
  boundary:
    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: 0}
preconditioner: {type: jacobi}
"""
open(os.path.join(W, "a.yaml"), "w").write(CASE % ("[5000, 5000, 1]", 7))
open(os.path.join(W, "b.yaml"), "w").write(CASE % ("[100000, 100000, 1]", 3))
open(os.path.join(W, "c.yaml"), "w").write(CASE % ("[64, 64, 64]", 7))

NEED = (r"need about [0-9.]+ [KMGTPE]iB of memory on the node of rank 0 \(the global mesh on rank 0: [0-9.]+ "
        r"[KMGTPE]iB, %d ranks? x [0-9.]+ [KMGTPE]iB\), more than the [0-9.]+ [KMGTPE]?i?B available there "
        r"\([^)]+\); see \"Memory\" in docs/case-format.md\n$")

for case, pos, E, p in (("a.yaml", "3:13", 25000000, 7), ("b.yaml", "3:13", 10000000000, 3)):
    for ranks in (1, 2):
        for extra in ([], ["--dry-run"]):
            out = f"o-{case}-{ranks}{''.join(extra)}"
            rc, so, se, dt = hexcg(["run", case, "--output", out] + extra, ranks)
            want = (re.escape(f"{case}:{pos}: mesh.elements: {E} elements at order {p} ") + NEED % ranks)
            check(rc == 2 and re.match(want, se) and not os.path.exists(os.path.join(W, out)) and dt < 20,
                  f"run {case} np{ranks} {extra}: rc {rc} {dt:.1f} s {se!r}")
# the same through --set, with a fixed figure for the available memory (the exact message)
rc, so, se, dt = hexcg(["run", "c.yaml", "--set", "mesh.elements=[64,64,128]", "--output", "o-c"],
                       env={"HEXCG_MEM_AVAILABLE": "8G"})
check(rc == 2 and se == "--set mesh.elements=[64,64,128]: mesh.elements: 524288 elements at order 7 need about "
      "31 GiB of memory on the node of rank 0 (the global mesh on rank 0: 500 MiB, 1 rank x 31 GiB), more than "
      "the 8.0 GiB available there (HEXCG_MEM_AVAILABLE); see \"Memory\" in docs/case-format.md\n",
      f"run with HEXCG_MEM_AVAILABLE: rc {rc} {se!r}")
rc, so, se, dt = hexcg(["run", "c.yaml", "--set", "preconditioner.type=asm", "--output", "o-c"],
                       env={"HEXCG_MEM_AVAILABLE": "30G"})
check(rc == 2 and "1 rank x 35 GiB" in se, f"asm adds its share: rc {rc} {se!r}")
rc, so, se, dt = hexcg(["run", "c.yaml", "--output", "o-c", "--dry-run", "--quiet"],
                       env={"HEXCG_MEM_AVAILABLE": "30G"})
check(rc == 0, f"a size that fits: rc {rc} {se!r}")

# a Gmsh mesh: checked once read, at mesh.file
open(os.path.join(W, "one.msh"), "w").write("""$MeshFormat
2.2 0 8
$EndMeshFormat
$Nodes
8
""" + UNIT_CUBE_NODES + """$EndNodes
$Elements
1
1 5 2 1 1 1 2 3 4 5 6 7 8
$EndElements
""")
open(os.path.join(W, "g.yaml"), "w").write("mesh: {type: gmsh, file: one.msh}\norder: 15\nproblem: {rhs: '1', lambda: 1}\n"
                                         "preconditioner: {type: jacobi}\n")
rc, so, se, dt = hexcg(["run", "g.yaml", "--output", "o-g", "--dry-run"], env={"HEXCG_MEM_AVAILABLE": "100K"})
check(rc == 2 and se.startswith("g.yaml:1:26: mesh.file: 1 elements at order 15 need about 31 MiB of memory on "
                                "the node of rank 0 (1 rank x 31 MiB), more than the 100 KiB available there")
      and not os.path.exists(os.path.join(W, "o-g")), f"gmsh: rc {rc} {se!r}")

# hexcg mesh: a case and --elements
rc, so, se, dt = hexcg(["mesh", "a.yaml"])
check(rc == 2 and "a.yaml:3:13: mesh.elements: 25000000 elements at order 7 need about" in se and dt < 20,
      f"mesh a.yaml: rc {rc} {se!r}")
rc, so, se, dt = hexcg(["mesh", "--elements", "100000,100000,1", "--order", "1"], ranks=2)
check(rc == 2 and "--elements 100000,100000,1: 10000000000 elements at order 1 need about" in se and dt < 20,
      f"mesh --elements: rc {rc} {se!r}")

# the benchmarks' sizes
for args, want in ((["bench", "ax", "--dofs", "2e9", "--pmin", "3", "--pmax", "3"], "bench ax: --dofs 2e+09: need about"),
                   (["bench", "stream", "--max", "500G"], "bench stream: --max 5.37e+11: need about"),
                   (["bench", "stream", "--max", "1M", "--gs-max", "500G"], "bench stream: --gs-max 5.37e+11: need about"),
                   (["bench", "cg", "--elements", "5000"], "bench cg: --elements 5000 --order 7: need about"),
                   (["bench", "precond", "--elements", "512"], "bench precond: --elements 512 --order 7: need about")):
    rc, so, se, dt = hexcg(args, env={"HEXCG_MEM_AVAILABLE": "4G"})
    check(rc == 2 and want in se and dt < 20, f"{' '.join(args)}: rc {rc} {dt:.1f} s {se!r}")

# nothing big was allocated on the way (ru_maxrss: KiB on Linux)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
check(peak < 1024, f"peak memory of the refused runs: {peak:.0f} MiB")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("sizes: ok")
