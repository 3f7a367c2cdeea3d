#!/usr/bin/python3
"""Preconditioners across a coefficient jump (issue 32, finding 9).

check_jump.py MPIEXEC HEXCG SOURCE WORK [RANKS]
The layered 6 x 3 x 3 mesh of make_layered.py (layers along x alternating
between kappa = 1 and kappa = C), p = 4, u = 0 on the left, 1 on the right,
insulated elsewhere: the exact solution is piecewise linear in x (flux
continuous), so the discrete solution is exact up to the solver tolerance
(checked at the right-hand end of each layer through the nodal values is
not needed: the solve itself is the subject). For C = 1, 1e2, 1e4, 1e8
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
for c in KAPPA:
    for pc in ("jacobi", "pmg", "asm"):
        case = os.path.join(work, f"layered_{pc}_{c if isinstance(c, str) else f'{c:g}'}.yaml")
        with open(case, "w") as f:
            f.write(f"""mesh: {{type: gmsh, file: layered.msh}}
order: 4
problem:
  kappa: {KAPPA[c]}
  rhs: "0"
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
        counts[(pc, c)] = yaml.safe_load(open(os.path.join(out, "summary.yaml")))["solver"]["iterations"]
print("contrast   jacobi   pmg   asm")
for c in KAPPA:
    print(f"{c if isinstance(c, str) else f'{c:g}':>8} " + " ".join(f"{counts.get((pc, c), -1):6d}" for pc in ("jacobi", "pmg", "asm")))
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
