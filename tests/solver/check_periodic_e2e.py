#!/usr/bin/python3
"""Periodic meshes end to end through `hexcg run` (issue 29 item 3, 4):

 - the example cases run as they are, on 2 ranks: configs/periodic_gmsh.yaml
   (a Gmsh file, x and y paired by mesh.periodic) has exactly
   24 x 24 x 19 = 10944 DOFs (4 x 4 x 3 elements of order 6, x and y wrap)
   and an L2 error below 1e-5 (measured 7e-7); configs/periodic_poisson.yaml
   (fully periodic Poisson, the constants as null space) has 24^3 = 13824
   DOFs, reports the null space with a defect below 1e-12 (its data are
   compatible) and an L2 error below 1e-5 (measured 3e-7);
 - the output shows the periodic field correctly: solution.h5 holds the
   nodes per element, so a node on a periodic face appears with each of its
   positions (x = 0 and x = 1, ...). Grouping the written nodes by their
   position modulo the period (rounded to 1e-9), every group holds one value
   of u, bit for bit (the copies are one unknown), the number of groups is
   the number of DOFs, copies across the period exist, and solution.xdmf
   points at datasets of the written sizes. Box (periodic x, y, z) and Gmsh
   (case pairs), 2 ranks;
 - algebraic convergence in h at p = 3 on 2, 4, 8 elements per direction:
   the L2 rate of the last halving >= 3.5 (p + 1 = 4 expected) for
   configs/periodic_box.yaml (periodic x, y; Helmholtz) and for
   configs/periodic_poisson.yaml (periodic x, y, z; the null space).

check_periodic_e2e.py --hexcg HEXCG --mpiexec MPIEXEC --source SRC --work WORK
Prints the figures."""
import math
import os
import re
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, finish, hexcg, setup  # noqa: E402

a, W = setup(source=True)
CFG = os.path.join(a.source, "configs")


def run(cfg, name, ranks=2, sets=(), solution=False):
    out = os.path.join(W, name)
    args = ["run", os.path.join(CFG, cfg), "--output", out, "--force", "--quiet",
            "--set", f"output.solution={'true' if solution else 'false'}", "--set", "output.history=false"]
    for s in sets:
        args += ["--set", s]
    rc, _, err = hexcg(args, ranks=ranks, timeout=300)
    if not check(rc == 0, f"{name}: exit {rc}: {err.strip()[-400:]}"):
        return None, out
    with open(os.path.join(out, "summary.yaml")) as f:
        s = yaml.safe_load(f)
    check(s["solver"]["converged"], f"{name}: not converged ({s['solver']['reason']})")
    return s, out


# the example cases as they are
def s_dofs(s):
    return s["dofs"]


s, _ = run("periodic_gmsh.yaml", "gmsh")
if s:
    print(f"configs/periodic_gmsh.yaml: {s_dofs(s)} DOFs, {s['solver']['iterations']} iterations, "
          f"L2 {s['error']['l2']:.3e}")
    check(s_dofs(s) == 10944, f"periodic_gmsh: {s_dofs(s)} DOFs, expected 10944")
    check(s["error"]["l2"] < 1e-5, f"periodic_gmsh: L2 {s['error']['l2']:.3e}")
s, _ = run("periodic_poisson.yaml", "poisson")
if s:
    ns = s.get("nullspace") or {}
    print(f"configs/periodic_poisson.yaml: {s_dofs(s)} DOFs, {s['solver']['iterations']} iterations, "
          f"L2 {s['error']['l2']:.3e}, null space {ns}")
    check(s_dofs(s) == 13824, f"periodic_poisson: {s_dofs(s)} DOFs, expected 13824")
    check(ns.get("projected") and abs(ns.get("defect", 1)) < 1e-12, f"periodic_poisson: null space {ns}")
    check(s["error"]["l2"] < 1e-5, f"periodic_poisson: L2 {s['error']['l2']:.3e}")


# the output of a periodic field
def output_check(cfg, name, sets, period):
    import h5py  # python3-h5py (scripts/bootstrap.sh)
    s, out = run(cfg, name, sets=sets, solution=True)
    if not s:
        return
    with h5py.File(os.path.join(out, "solution.h5"), "r") as f:
        X = f["/mesh/coordinates"][()]
        u = f["/fields/u"][()]
        ncells = f["/mesh/connectivity"].shape[0]
    groups, wrapped = {}, 0
    for k in range(len(u)):
        key = []
        for d in range(3):
            x = X[k][d]
            if period[d]:
                if abs(x - 1.0) < 1e-9:
                    wrapped += 1
                x = x % 1.0
                if abs(x - 1.0) < 1e-9:
                    x = 0.0
            key.append(round(x, 9) + 0.0)
        groups.setdefault(tuple(key), set()).add(float(u[k]))
    spread = max(max(v) - min(v) for v in groups.values())
    multi = sum(1 for v in groups.values() if len(v) > 1)
    print(f"{name}: {len(u)} written nodes, {len(groups)} positions modulo the period ({s_dofs(s)} DOFs), "
          f"{wrapped} copies on a far periodic face, largest spread of u at one position {spread:.1e}")
    check(multi == 0, f"{name}: {multi} positions carry more than one value of u (spread {spread:.3e})")
    check(len(groups) == s_dofs(s), f"{name}: {len(groups)} positions modulo the period, {s_dofs(s)} DOFs")
    check(wrapped > 0, f"{name}: no node written on a far periodic face")
    xdmf = open(os.path.join(out, "solution.xdmf")).read()
    check(re.search(rf'Dimensions="{len(u)} 3"[^>]*>solution.h5:/mesh/coordinates<', xdmf) is not None,
          f"{name}: solution.xdmf does not point at {len(u)} coordinates")
    check(re.search(rf'Dimensions="{len(u)}"[^>]*>solution.h5:/fields/u<', xdmf) is not None,
          f"{name}: solution.xdmf does not point at {len(u)} values of u")
    check(f'NumberOfElements="{ncells}"' in xdmf, f"{name}: solution.xdmf does not have {ncells} cells")


output_check("periodic_poisson.yaml", "out-box", ["mesh.elements=[3,3,3]", "order=3"], (1, 1, 1))
output_check("periodic_gmsh.yaml", "out-gmsh", ["order=3"], (1, 1, 0))

# h-convergence at p = 3
for cfg in ("periodic_box.yaml", "periodic_poisson.yaml"):
    eh = []
    for ne in (2, 4, 8):
        s, _ = run(cfg, f"h-{cfg[:-5]}-{ne}", sets=[f"mesh.elements=[{ne},{ne},{ne}]", "order=3", "solver.tol=1e-12"])
        eh.append(s["error"]["l2"] if s else float("nan"))
    rate = math.log2(eh[1] / eh[2])
    print(f"{cfg} p = 3, 2/4/8 elements, L2: {eh[0]:.3e} {eh[1]:.3e} {eh[2]:.3e}, rates "
          f"{math.log2(eh[0] / eh[1]):.2f} {rate:.2f}")
    check(rate >= 3.5, f"{cfg}: h rate {rate:.2f} < 3.5")
finish("periodic end to end: ok")
