#!/usr/bin/python3
"""Single-reduction CG (solver.type: pcg1) on a regression case (issue 17).

  check_pcg1.py NAME --hexcg H --mpiexec M --source S --work W [--ranks N]

Runs regression/cases/NAME.yaml as the regression driver does, with
`--set solver.type=pcg1` added, and compares the run with the case's PCG
baseline (regression/baselines/NAME) through `hexcg compare`: iteration count
within 2 of PCG's (--iteration-slack 2), the same converged reason, the error
norms within the case's error tolerance (the same solution), the residual
curve within the case's curve tolerance (pcg1 has the iterates of PCG in
exact arithmetic; its rounding differs like another rank count's does), and
the case's bounds with max_iterations raised by 2. Exit 0 pass, 1 fail,
2 bad case, 77 skipped (no gmsh)."""
import os
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "regression"))
import regress  # noqa: E402  (load_case, run_case, compare_opts of the regression driver)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import setup  # noqa: E402


def main():
    a, _ = setup(source=True, clean=False, options=((("case",), {}), (("--ranks",), dict(type=int, default=1))))
    a.hexcg = os.path.abspath(a.hexcg)
    try:
        c = regress.load_case(a.source, a.case)
    except regress.CaseError as e:
        print(f"check_pcg1.py: {e}", file=sys.stderr)
        return 2
    c["set"] = list(c["set"]) + ["solver.type=pcg1"]
    work = regress.fresh(os.path.join(os.path.abspath(a.work), f"{a.case}-pcg1-np{a.ranks}"))
    out = os.path.join(work, "out")
    rc = regress.run_case(a, c, a.ranks, out, work)
    if rc == regress.SKIP:
        return regress.SKIP
    if rc != 0:
        print(f"FAIL: hexcg run (pcg1) exited with status {rc}")
        return 1
    with open(os.path.join(out, "summary.yaml")) as f:
        s = yaml.safe_load(f)
    if s["solver"]["type"] != "pcg1":
        print(f"FAIL: the run did not use pcg1: {s['solver']}")
        return 1
    bounds = dict(c["bounds"])
    if "max_iterations" in bounds:
        bounds["max_iterations"] = int(bounds["max_iterations"]) + 2
    bfile = os.path.join(work, "bounds.yaml")
    with open(bfile, "w") as f:
        yaml.safe_dump({"bounds": bounds}, f)
    opts = dict(c["compare"])
    opts["iteration_slack"] = 2
    base = os.path.join(a.source, "regression", "baselines", a.case)
    rc = regress.sh([a.hexcg, "compare", out, base] + regress.compare_opts(opts) + ["--bounds", bfile])
    if rc != 0:
        print(f"FAIL: pcg1 on {a.case} ({a.ranks} rank(s)) does not reach PCG's solution within 2 iterations "
              f"(hexcg compare: status {rc})")
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
