#!/usr/bin/python3
"""Variable kappa and lambda end to end (issue 29 item 1).

check_coef.py MPIEXEC HEXCG WORK MODE
MODE conv: the manufactured solution u = exp(x y z) with
  kappa = 1 + 100 x^2 y^2 (contrast 101) and lambda = 1 + x^2, the
  right-hand side -div(kappa grad u) + lambda u written out analytically:
  - exponential convergence in p on a 3^3 box (p = 2..7): the L2 error falls
    by at least 4x per order and by 1e-4 from p = 2 to p = 7;
  - algebraic convergence in h at p = 2 (elements 2, 4, 8 per direction,
    deformed mesh): the L2 rate between the last two meshes is >= 2.7 (the
    theory: p + 1 = 3);
  - 1, 2 and 3 ranks (p = 5, 4^3, split geometry on 3 ranks): the same L2
    error to 1e-6 relative and iteration counts within 1.
  - the Q1 coarse level with the coefficients: pmg with coarse.operator
    galerkin and fem (fp64 and fp32) on the same case gives the 1-rank
    error to 1e-6 relative (every solve reaches 1e-12, the discretisation
    error is ~3e-9: a coarse level that missed kappa would only cost
    iterations, so the counts are also held within 1.5x of galerkin's);
  - lambda varying without kappa (kappa = 1, lambda = 1 + 10 x^2 y, the
    same u): exponential convergence in p (p = 2..6, 4x per order), so the
    mass term sees lambda at every node.
MODE pmg: iteration counts of pmg with a smooth kappa of contrast 1e2 and
  1e4 (kappa = 1 + (C - 1) x^2 y^2) against the count with kappa = 1 on the
  same mesh (6^3, p = 5), with fp64 and fp32 preconditioning: within 1.5x
  (measured 5, 5, 7).
MODE bad: kappa <= 0 or lambda < 0 at a GLL node (expressions, a material
  map) on 1 and 2 ranks: exit 2, the message names the case file line, the
  key, the expression and the node; no output folder.
Prints the figures."""
import math
import os
import shutil
import subprocess
import sys

import yaml

mpiexec, hexcg, work, mode = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
fail = []

RHS = ("-((1 + 100*x^2*y^2)*(y^2*z^2 + x^2*z^2 + x^2*y^2) + 200*x*y^3*z + 200*x^3*y*z)*exp(x*y*z)"
       " + (1 + x^2)*exp(x*y*z)")


def case(name, elements, order, kappa, lam, rhs, exact, pc="pmg", deform=0.0, tol=1e-12, extra=""):
    path = os.path.join(work, name + ".yaml")
    ex = f'  exact: "{exact}"\n' if exact else ""
    val = "exact" if exact else "0"
    with open(path, "w") as f:
        f.write(f"""mesh: {{type: box, elements: [{elements}, {elements}, {elements}], deform: {deform}}}
order: {order}
problem:
  kappa: {kappa}
  lambda: {lam}
  rhs: "{rhs}"
{ex}  boundary:
    - {{tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: {val}}}
solver: {{tol: {tol}, max_iterations: 2000}}
preconditioner: {pc}
output: {{solution: false, history: false}}
{extra}""")
    return path


def run(path, ranks=1, sets=(), expect_rc=0):
    out = path[:-5] + f"_np{ranks}_out"
    args = [mpiexec, "-n", str(ranks), hexcg, "run", path, "--output", out, "--force", "-q"]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    if expect_rc != 0:
        return p, out
    if p.returncode != 0:
        fail.append(f"{path} on {ranks} ranks: exit {p.returncode}: {p.stderr.strip()[:500]}")
        return None
    return yaml.safe_load(open(os.path.join(out, "summary.yaml")))


if mode == "conv":
    errs = []
    for p in range(2, 8):
        s = run(case(f"p{p}", 3, p, '"1 + 100*x^2*y^2"', '"1 + x^2"', RHS, "exp(x*y*z)"))
        if s:
            errs.append(s["error"]["l2"])
            print(f"p = {p}: L2 error {s['error']['l2']:.3e}, {s['solver']['iterations']} iterations")
    if len(errs) == 6:
        for i in range(5):
            if not errs[i + 1] < errs[i] / 4:
                fail.append(f"p-convergence: error {errs[i + 1]:.3e} at p = {i + 3} not 4x below {errs[i]:.3e}")
        if not errs[-1] < 1e-4 * errs[0]:
            fail.append(f"p-convergence: {errs[0]:.3e} -> {errs[-1]:.3e} is not exponential")
    herrs = []
    for ne in (2, 4, 8):
        s = run(case(f"h{ne}", ne, 2, '"1 + 100*x^2*y^2"', '"1 + x^2"', RHS, "exp(x*y*z)", deform=0.05))
        if s:
            herrs.append(s["error"]["l2"])
            print(f"h = 1/{ne}, p = 2: L2 error {s['error']['l2']:.3e}")
    if len(herrs) == 3:
        rate = math.log2(herrs[1] / herrs[2])
        print(f"h rate {math.log2(herrs[0] / herrs[1]):.2f}, {rate:.2f}")
        if rate < 2.7:
            fail.append(f"h-convergence rate {rate:.2f} < 2.7 at p = 2")
    ref = None
    for ranks in (1, 2, 3):
        sets = ["operator.geometry=split"] if ranks == 3 else []
        s = run(case("ranks", 4, 5, '"1 + 100*x^2*y^2"', '"1 + x^2"', RHS, "exp(x*y*z)", deform=0.05), ranks,
                sets)
        if not s:
            continue
        e, it = s["error"]["l2"], s["solver"]["iterations"]
        print(f"{ranks} ranks: L2 error {e:.6e}, {it} iterations")
        if ref is None:
            ref = (e, it)
        else:
            if abs(e - ref[0]) > 1e-6 * ref[0]:
                fail.append(f"{ranks} ranks: L2 error {e:.9e} vs {ref[0]:.9e} on 1 rank")
            if abs(it - ref[1]) > 1:
                fail.append(f"{ranks} ranks: {it} iterations vs {ref[1]} on 1 rank")
    gal = None
    for co, prec in (("galerkin", "fp64"), ("fem", "fp64"), ("fem", "fp32")):
        s = run(case(f"coarse_{co}_{prec}", 4, 5, '"1 + 100*x^2*y^2"', '"1 + x^2"', RHS, "exp(x*y*z)", deform=0.05,
                     pc=f"{{type: pmg, precision: {prec}, coarse: {{operator: {co}}}}}"))
        if not s or ref is None:
            continue
        e, it = s["error"]["l2"], s["solver"]["iterations"]
        print(f"coarse {co} {prec}: L2 error {e:.6e}, {it} iterations")
        gal = it if gal is None else gal
        if abs(e - ref[0]) > 1e-6 * ref[0]:
            fail.append(f"coarse {co} {prec}: L2 error {e:.9e} vs {ref[0]:.9e}")
        if it > 1.5 * gal:
            fail.append(f"coarse {co} {prec}: {it} iterations, more than 1.5 x {gal} (galerkin fp64)")
    # lambda without kappa: -lap u + lambda u, u = exp(x y z)
    lrhs = "-(y^2*z^2 + x^2*z^2 + x^2*y^2)*exp(x*y*z) + (1 + 10*x^2*y)*exp(x*y*z)"
    lerrs = []
    for p in range(2, 7):
        s = run(case(f"lam_p{p}", 3, p, "1", '"1 + 10*x^2*y"', lrhs, "exp(x*y*z)"))
        if s:
            lerrs.append(s["error"]["l2"])
    print("lambda alone, p = 2..6: L2 " + " ".join(f"{e:.3e}" for e in lerrs))
    for i in range(len(lerrs) - 1):
        if not lerrs[i + 1] < lerrs[i] / 4:
            fail.append(f"lambda alone: error {lerrs[i + 1]:.3e} at p = {i + 3} not 4x below {lerrs[i]:.3e}")
elif mode == "pmg":
    for prec in ("fp64", "fp32"):
        base = None
        for c in (1, 1e2, 1e4):
            kappa = "1" if c == 1 else f'"1 + {c - 1:g}*x^2*y^2"'
            s = run(case(f"pmg_{prec}_{c:g}", 6, 5, kappa, "0", "1", None, tol=1e-8,
                         pc=f"{{type: pmg, precision: {prec}}}"))
            if not s:
                continue
            it = s["solver"]["iterations"]
            print(f"pmg {prec}, smooth kappa contrast {c:g}: {it} iterations")
            if base is None:
                base = it
            elif it > 1.5 * base:
                fail.append(f"pmg {prec} at contrast {c:g}: {it} iterations > 1.5 x {base}")
elif mode == "bad":
    bad = [("kappa_expr", '"1 - 2*x"', "0", "4:10: problem.kappa '1 - 2*x': kappa = "),
           ("lambda_expr", "1", '"x - 0.5"', "5:11: problem.lambda 'x - 0.5': lambda = -0.5 at the GLL node (0, "),
           ("kappa_map", '{box: "x*y"}', "0", "4:16: problem.kappa.box 'x*y': kappa = 0 at the GLL node (0, ")]
    for name, k, l, msg in bad:
        for ranks in (1, 2):
            path = case(name, 4, 3, k, l, "1", None)
            p, out = run(path, ranks, expect_rc=2)
            if p.returncode != 2:
                fail.append(f"{name} on {ranks} ranks: exit {p.returncode}, expected 2: {p.stderr.strip()[:300]}")
            if (os.path.basename(path) + ":" + msg) not in p.stderr or "at every node" not in p.stderr:
                fail.append(f"{name} on {ranks} ranks: message {p.stderr.strip()[:400]!r} lacks {msg!r}")
            if os.path.exists(out):
                fail.append(f"{name} on {ranks} ranks: output folder created")
            print(f"{name} np{ranks}: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''}")
if fail:
    print("FAIL:\n" + "\n".join(fail))
    sys.exit(1)
print(f"coefficients {mode}: ok")
