#!/usr/bin/python3
"""Preconditioners across a coefficient jump (issue 32, finding 9).

check_jump.py MPIEXEC HEXCG SOURCE WORK [RANKS]
The layered 6 x 3 x 3 mesh of make_layered.py (layers along x alternating
between kappa = 1 and kappa = C), p = 4, u = 0 on the left, 1 on the right,
insulated elsewhere: the exact solution is piecewise linear in x (flux
continuous), so the discrete solution is exact up to the solver tolerance:
each constant-contrast run's max error against it (summary.yaml) must be
below 1e-5. For C = 1, 1e2, 1e4, 1e8
jacobi, pmg and asm solve to 1e-8, and once more with a field in each
material and a 1e8 jump between them ("fields": soft 1 + x y, hard
1e8 (1 + z)); pmg and asm must stay within 2x of their C = 1 counts and
never need more iterations than jacobi. Prints the table."""
import os
import shutil
import subprocess
import sys

import yaml

mpiexec, hexcg, src, work = sys.argv[1:5]
ranks = sys.argv[5] if len(sys.argv) > 5 else "1"
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
msh = os.path.join(work, "layered.msh")
subprocess.run([sys.executable, os.path.join(src, "tests/precond/make_layered.py"), msh], check=True)
fail = []
counts = {}
KAPPA = {c: f"{{soft: 1, hard: {c:g}}}" for c in (1, 1e2, 1e4, 1e8)}
# a field in each material and a 1e8 jump between them (the boxes' node scale and element constants)
KAPPA["fields"] = '{soft: "1 + x*y", hard: "1e8*(1 + z)"}'


def exact(c):
    """the piecewise-linear solution for layers of width 1 along x, kappa 1 in the even ones and c in
    the odd ones (1, 3, 5): the flux q is the same in every layer, u' = q / kappa, u(6) = 1; the time
    spent in odd layers up to x is the sum of clamp(x - j, 0, 1) = (|x - j| - |x - j - 1| + 1) / 2"""
    q = 1.0 / (3.0 + 3.0 / c)
    odd = " + ".join(f"(abs(x - {j}) - abs(x - {j + 1}) + 1)/2" for j in (1, 3, 5))
    return f"{q!r}*(x + ({1.0 / c - 1.0!r})*({odd}))"


errors = {}
for c in KAPPA:
    for pc in ("jacobi", "pmg", "asm"):
        case = os.path.join(work, f"layered_{pc}_{c if isinstance(c, str) else f'{c:g}'}.yaml")
        exact_line = "" if isinstance(c, str) else f'  exact: "{exact(c)}"'
        with open(case, "w") as f:
            f.write(f"""mesh: {{type: gmsh, file: layered.msh}}
order: 4
problem:
  kappa: {KAPPA[c]}
  rhs: "0"
{exact_line}
  boundary:
    - {{tags: [left], type: dirichlet, value: 0}}
    - {{tags: [right], type: dirichlet, value: 1}}
    - {{tags: [wall], type: neumann, value: 0}}
solver: {{tol: 1.0e-8, max_iterations: 3000}}
preconditioner: {pc}
output: {{solution: false, history: false}}
""")
        out = case[:-5] + "_out"
        p = subprocess.run([mpiexec, "-n", ranks, hexcg, "run", case, "--output", out, "--force", "-q"],
                           capture_output=True, text=True, timeout=600, env=dict(os.environ, OMP_NUM_THREADS="1"))
        if p.returncode != 0:
            fail.append(f"{pc} at contrast {c if isinstance(c, str) else f'{c:g}'}: exit {p.returncode}: {p.stderr.strip()[:400]}")
            continue
        summary = yaml.safe_load(open(os.path.join(out, "summary.yaml")))
        counts[(pc, c)] = summary["solver"]["iterations"]
        if not isinstance(c, str):
            # the discrete space holds the exact solution (the jumps lie on element faces): what is
            # left is the algebraic error of a 1e-8 relative residual, seen up to 2e-7 of max|u| = 1
            # at a 1e8 contrast; a preconditioner that solves a wrong operator, or stops early, is
            # off by far more
            # Jacobi at 1e8 is the exception, printed but not failed: its relative residual of 1e-8 is
            # reached while the soft layers, whose residual entries are 1e-8 of the hard ones', are
            # still far off (seen: 27 iterations, "converged", max error 0.67): the stopping test is
            # on the residual, not the error, and a 1e8 contrast is where the two part
            errors[(pc, c)] = summary["error"]["max"]
            if not summary["error"]["max"] <= 1e-5 and not (pc == "jacobi" and c >= 1e8):
                fail.append(f"{pc} at contrast {c:g}: max error {summary['error']['max']:.3e} > 1e-5 against "
                            "the exact piecewise-linear solution")
print("contrast   jacobi   pmg   asm   (max error against the exact solution)")
for c in KAPPA:
    print(f"{c if isinstance(c, str) else f'{c:g}':>8} " + " ".join(f"{counts.get((pc, c), -1):6d}" for pc in ("jacobi", "pmg", "asm"))
          + "   " + " ".join(f"{errors[(pc, c)]:.1e}" for pc in ("jacobi", "pmg", "asm") if (pc, c) in errors))
for c in (1e2, 1e4, 1e8, "fields"):
    for pc in ("pmg", "asm"):
        it, base, jac = counts.get((pc, c)), counts.get((pc, 1)), counts.get(("jacobi", c))
        if it is None or base is None or jac is None:
            continue
        if it > 2 * base:
            fail.append(f"{pc} at contrast {c if isinstance(c, str) else f'{c:g}'}: {it} iterations > 2 x {base} (contrast 1)")
        if it > jac:
            fail.append(f"{pc} at contrast {c if isinstance(c, str) else f'{c:g}'}: {it} iterations > jacobi's {jac}")
if fail:
    print("FAIL:\n" + "\n".join(fail))
    sys.exit(1)
print("coefficient jumps: ok")
