#!/usr/bin/python3
"""The features of issue 29 together, through `hexcg run` (each alone is
tested where it lives):

A. fully periodic Poisson (x, y, z wrap, lambda = 0: the constants are the
   null space) with a variable kappa: u = sin(2 pi x), kappa = 2 + cos(2 pi y)
   (independent of x, so -div(kappa grad u) = 4 pi^2 kappa u); the solution is
   the zero-mean one and u has mean zero;
B. a Robin wall with a variable kappa and lambda on a mesh periodic in y:
   u = exp(x) cos(2 pi y), kappa = 1 + x^2, lambda = 1 + z^2 on the unit cube;
   -div(kappa grad u) + lambda u = u ((1 + x^2)(4 pi^2 - 1) - 2x + 1 + z^2);
   on xmin (n = -x) kappa du/dn = -u, so alpha = 2 gives value cos(2 pi y);
   Dirichlet on xmax, the z faces homogeneous Neumann (u does not depend on z).

Each case: the L2 error falls exponentially in p (at least 20x per +2 in p
from 3 to 7: spectral convergence of these smooth solutions gives more than
100x; algebraic convergence at these orders would give at most ~3x), pmg
(FP32) and Jacobi give the same solution (errors within 1e-6 relative), and
the same case on 2 ranks gives the 1-rank error within 1e-6 and iterations
within 1. Case A also reports the null space (summary.yaml) with a
compatibility defect below 1e-8: its data are compatible. Both cases then
run through every preconditioner: asm and pmg with each smoother (ras and
cheby-ras under fcg), in FP64 and FP32, and pmg with the Q1 coarse matrix
built by Galerkin and by FEM (the coarse level carries the variable kappa,
lambda and the Robin term), giving Jacobi's solution. Last, on the deformed
box (mesh.deform 0.05: curved elements, so split geometry stores split
factors; the deformation keeps the periodic faces flat and alike), pmg with
operator.geometry split (FP64 and FP32 preconditioning) gives the error of
Jacobi with FP64 geometry within 1e-6 relative: split geometry with a
periodic mesh and the null space (A), and with Robin (B)."""
import os
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, finish, hexcg, setup  # noqa: E402

a, W = setup()

CASES = {
    "A": """mesh: {type: box, elements: [3, 3, 3], periodic: [x, y, z]}
order: 3
problem:
  kappa: "2 + cos(2*pi*y)"
  rhs: "4*pi^2*(2 + cos(2*pi*y))*sin(2*pi*x)"
  exact: "sin(2*pi*x)"
solver: {type: pcg, tol: 1.0e-12, max_iterations: 2000}
preconditioner: {type: pmg}
output: {dir: out}
""",
    "B": """mesh: {type: box, elements: [3, 3, 3], periodic: [y]}
order: 3
problem:
  kappa: "1 + x^2"
  lambda: "1 + z^2"
  rhs: "exp(x)*cos(2*pi*y)*((1 + x^2)*(4*pi^2 - 1) - 2*x + 1 + z^2)"
  exact: "exp(x)*cos(2*pi*y)"
  boundary:
    - {tags: [xmin], type: robin, alpha: 2, value: "cos(2*pi*y)"}
    - {tags: [xmax], type: dirichlet, value: exact}
solver: {type: pcg, tol: 1.0e-12, max_iterations: 2000}
preconditioner: {type: pmg}
output: {dir: out}
""",
}


def solve(name, order, ranks=1, pc="pmg", extra=(), tag=""):
    case = os.path.join(W, f"{name}.yaml")
    with open(case, "w") as f:
        f.write(CASES[name])
    out = os.path.join(W, f"{name}-p{order}-np{ranks}-{pc}{tag}")
    sets = []
    for kv in extra:
        sets += ["--set", kv]
    rc, _, err = hexcg(["run", case, "--output", out, "--force", "--quiet", "--set", f"order={order}",
                        "--set", f"preconditioner.type={pc}"] + sets, ranks=ranks)
    if not check(rc == 0, f"{name} p={order} np{ranks} {pc} {' '.join(extra)}: exit {rc}: {err.strip()[-400:]}"):
        return None
    with open(os.path.join(out, "summary.yaml")) as f:
        return yaml.safe_load(f)


for name in CASES:
    errs = {}
    for p in (3, 5, 7):
        s = solve(name, p)
        if s is None:
            continue
        errs[p] = s["error"]["l2"]
        check(s["solver"]["converged"] if "converged" in s.get("solver", {}) else True, f"{name} p={p}: not converged")
        if name == "A":
            ns = s.get("nullspace") or s.get("solver", {}).get("nullspace")
            check(isinstance(ns, dict) and ns.get("projected"), f"A p={p}: no null space in summary.yaml: {ns!r}")
            if isinstance(ns, dict):
                check(abs(ns.get("defect", 1.0)) < 1e-8, f"A p={p}: compatibility defect {ns.get('defect')}")
    print(f"{name}: L2 errors by order {errs}")
    for p in (3, 5):
        if p in errs and p + 2 in errs:
            check(errs[p] / errs[p + 2] >= 20, f"{name}: error {errs[p]:.3e} at p={p} -> {errs[p + 2]:.3e} at "
                                               f"p={p + 2}: not spectral")
    s1, sj, s2 = solve(name, 5), solve(name, 5, pc="jacobi"), solve(name, 5, ranks=2)
    if s1 and sj:
        e1, ej = s1["error"]["l2"], sj["error"]["l2"]
        check(abs(e1 - ej) <= 1e-6 * ej, f"{name}: pmg error {e1:.6e} vs jacobi {ej:.6e}")
    if s1 and s2:
        e1, e2 = s1["error"]["l2"], s2["error"]["l2"]
        i1, i2 = s1["solver"]["iterations"], s2["solver"]["iterations"]
        print(f"{name}: p=5 pmg {i1} iterations on 1 rank, {i2} on 2; jacobi {sj['solver']['iterations'] if sj else '-'}")
        check(abs(e1 - e2) <= 1e-6 * e1, f"{name}: 1-rank error {e1:.6e} vs 2 ranks {e2:.6e}")
        check(abs(i1 - i2) <= 1, f"{name}: iterations {i1} on 1 rank, {i2} on 2")
# every preconditioner, smoother and precision on both cases (p = 4): the same
# discrete solution as Jacobi's (errors within 1e-6 relative: every solve
# reaches 1e-12, the discretisation error is ~1e-4)
VARIANTS = [("asm", ("preconditioner.precision=fp64",)), ("asm", ("preconditioner.precision=fp32",))]
for sm in ("jacobi", "asm", "ras", "cheby-jacobi", "cheby-asm", "cheby-ras"):
    for prec in ("fp64", "fp32"):
        solver = ("solver.type=fcg",) if "ras" in sm else ()
        VARIANTS.append(("pmg", (f"preconditioner.smoother.type={sm}", f"preconditioner.precision={prec}") + solver))
for co in ("galerkin", "fem"):
    for prec in ("fp64", "fp32"):
        VARIANTS.append(("pmg", (f"preconditioner.coarse.operator={co}", f"preconditioner.precision={prec}")))
for name in CASES:
    ref = solve(name, 4, pc="jacobi")
    if ref is None:
        continue
    er = ref["error"]["l2"]
    counts = []
    for k, (pc, extra) in enumerate(VARIANTS):
        s = solve(name, 4, pc=pc, extra=extra, tag=f"-v{k}")
        if s is None:
            continue
        e = s["error"]["l2"]
        counts.append(f"{pc} {' '.join(x.split('=')[1] for x in extra)}: {s['solver']['iterations']}")
        check(abs(e - er) <= 1e-6 * er, f"{name} {pc} {' '.join(extra)}: error {e:.6e} vs jacobi {er:.6e}")
        want = [x.split("=")[1] for x in extra if x.startswith("preconditioner.precision=")][0]
        check(s["preconditioner"]["precision"] == want, f"{name} {pc} {' '.join(extra)}: ran in "
                                                        f"{s['preconditioner']['precision']}")
    print(f"{name} p=4 iterations (jacobi {ref['solver']['iterations']}): " + "; ".join(counts))
# split geometry on curved elements
for name in CASES:
    deform = ("mesh.deform=0.05",)
    ref = solve(name, 4, pc="jacobi", extra=deform, tag="-deform")
    if ref is None:
        continue
    er = ref["error"]["l2"]
    for prec in ("fp64", "fp32"):
        s = solve(name, 4, extra=deform + ("operator.geometry=split", f"preconditioner.precision={prec}"),
                  tag=f"-split-{prec}")
        if s is None:
            continue
        e = s["error"]["l2"]
        print(f"{name} deformed, split geometry, pmg {prec}: {s['solver']['iterations']} iterations, error {e:.6e} "
              f"(jacobi fp64 geometry {er:.6e}), {s['operator']['elements_split']} split elements")
        check(s["operator"]["elements_split"] > 0, f"{name} split {prec}: no split elements")
        check(abs(e - er) <= 1e-6 * er, f"{name} split {prec}: error {e:.6e} vs jacobi {er:.6e}")
        if name == "A":
            check((s.get("nullspace") or {}).get("projected"), f"A split {prec}: no null space")
finish("features together: ok")
