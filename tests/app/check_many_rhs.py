#!/usr/bin/python3
"""Several right-hand sides through `hexcg run` (problem.rhs a list: block PCG).

  check_many_rhs.py --hexcg H --mpiexec M --work W [--ranks N]

Runs a box case with 3 right-hand sides (and their exact solutions) on N
ranks, then each column as a case of its own, and checks: each column's
solution (series/solution_00000i.h5, and solution.h5 for column 0)
equals its single run's to 1e-8 relative, each column's iterations in
summary.yaml's columns: equal its single run's, the top-level iterations
are the largest, converged all, the errors small; no history.csv. Then the
refusals of the case reader: a list of 1 or 65, an exact list of another
length, a time: section, solver.type fcg / pcg1, preconditioner auto,
solver.initial_guess, solver.projection, boundary value exact: each exits
with status 2 and names case.yaml:LINE and the fix; a pure Neumann problem
(no block path, found at run time) exits with status 2 naming the file. Exit 0 pass, 1 fail."""
import os
import re
import sys

import h5py
import numpy as np
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import harness  # noqa: E402
from harness import check, hexcg, setup  # noqa: E402

RHS = ["3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)",
       "12*pi^2*sin(2*pi*x)*sin(2*pi*y)*sin(2*pi*z)",
       "6*pi^2*sin(pi*x)*sin(pi*y)*sin(2*pi*z)"]
EXACT = ["sin(pi*x)*sin(pi*y)*sin(pi*z)",
         "sin(2*pi*x)*sin(2*pi*y)*sin(2*pi*z)",
         "sin(pi*x)*sin(pi*y)*sin(2*pi*z)"]


def flow(items):
    return "[" + ", ".join(f'"{e}"' for e in items) + "]"


def case(out, rhs, exact=None, solver="{type: pcg, tol: 1.0e-10, max_iterations: 500}", pc="{type: jacobi}",
         extra="", value="0"):
    ex = f"  exact: {exact}\n" if exact is not None else ""
    return ("mesh:\n  type: box\n  elements: [3, 3, 3]\n  extent: [[0, 1], [0, 1], [0, 1]]\norder: 4\n"
            f"problem:\n  rhs: {rhs}\n{ex}  boundary:\n"
            f"    - {{tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: {value}}}\n"
            f"solver: {solver}\npreconditioner: {pc}\nbackend: cpu\n"
            f"output: {{dir: {out}, solution: true, history: true}}\n{extra}")


def run(name, text, ranks):
    path = os.path.join(harness.A.work, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return hexcg(["run", path, "--force"], ranks=ranks)


def field_u(path):
    """/fields/u with the element rows in global-id order"""
    with h5py.File(path, "r") as h:
        eid = h["mesh/element_id"][()]
        u = h["fields/u"][()].reshape(len(eid), -1)
    return u[np.argsort(eid)]


def check_block(ranks):
    work = harness.A.work
    for pc in ("{type: jacobi}", "{type: pmg}"):
        tag = pc.split()[1].rstrip("}")
        out = os.path.join(work, f"many-{tag}")
        st, so, se = run(f"many-{tag}", case(out, flow(RHS), flow(EXACT), pc=pc), ranks)
        if not check(st == 0, f"{tag}: the 3-column run failed ({st}): {se[-2000:]}"):
            continue
        with open(os.path.join(out, "summary.yaml")) as f:
            s = yaml.safe_load(f)
        cols = s.get("columns")
        if not check(isinstance(cols, list) and len(cols) == 3, f"{tag}: summary.yaml columns: {cols!r}"):
            continue
        check(not os.path.exists(os.path.join(out, "history.csv")), f"{tag}: a history.csv was written")
        with open(os.path.join(out, "solution.xdmf")) as f:
            xd = f.read()
        check(all(f"series/solution_{i:06d}.h5" in xd for i in range(3)), f"{tag}: solution.xdmf lacks a column")
        # the effective case keeps the lists and runs again
        with open(os.path.join(out, "case.yaml")) as f:
            eff = yaml.safe_load(f)["problem"]
        check(eff.get("rhs") == RHS and eff.get("exact") == EXACT, f"{tag}: the effective case's lists: {eff}")
        st, _, se = hexcg(["run", os.path.join(out, "case.yaml"), "--dry-run", "--output", out + "-again"])
        check(st == 0, f"{tag}: the effective case does not run again ({st}): {se[-1500:]}")
        check(len(re.findall(r"column \d: \d+ iterations", so)) == 3, f"{tag}: no log line per column:\n{so}")
        its = []
        for i in range(3):
            sout = os.path.join(work, f"single-{tag}-{i}")
            st, _, se = run(f"single-{tag}-{i}", case(sout, f'"{RHS[i]}"', f'"{EXACT[i]}"', pc=pc), ranks)
            if not check(st == 0, f"{tag}: the single run of column {i} failed ({st}): {se[-2000:]}"):
                continue
            with open(os.path.join(sout, "summary.yaml")) as f:
                s1 = yaml.safe_load(f)
            n1 = s1["solver"]["iterations"]
            its.append(cols[i]["iterations"])
            check(cols[i]["iterations"] == n1,
                  f"{tag}: column {i}: {cols[i]['iterations']} iterations, the single run {n1}")
            check(cols[i]["converged"] is True, f"{tag}: column {i} not converged: {cols[i]}")
            check(cols[i]["error"]["l2"] < 1e-3, f"{tag}: column {i}'s error {cols[i]['error']}")
            u1 = field_u(os.path.join(sout, "solution.h5"))
            for f in (["solution.h5"] if i == 0 else []) + [f"series/solution_{i:06d}.h5"]:
                ub = field_u(os.path.join(out, f))
                rel = np.abs(ub - u1).max() / np.abs(u1).max()
                check(rel <= 1e-8, f"{tag}: column {i}'s {f} differs from its single run's by {rel:.3e} relative")
        check(s["solver"]["iterations"] == max(c["iterations"] for c in cols),
              f"{tag}: top-level iterations {s['solver']['iterations']}, not the largest column's")
        check(s["solver"]["converged"] is True, f"{tag}: top-level converged {s['solver']['converged']}")
        # each column stops on its own test: with Jacobi these three need different counts
        check(len(set(its)) > 1 or tag == "pmg", f"{tag}: the columns' iterations {its} do not differ")


def check_refusals():
    work = harness.A.work
    out = os.path.join(work, "refused")
    guess = os.path.join(work, "single-jacobi-0", "solution.h5")
    three = flow(RHS)
    cases = {
        "one": (case(out, flow(RHS[:1])), "problem.rhs: a list of 1 expressions"),
        "many": (case(out, flow(["1"] * 65)), "give one expression, or a list of 2 to 64"),
        "exact-length": (case(out, three, flow(EXACT[:2])), "give a list of 3 expressions"),
        "exact-one": (case(out, three, f'"{EXACT[0]}"'), "give a list of 3 expressions"),
        "time": (case(out, three, extra="time: {dt: 0.1, steps: 2}\n"),
                 "several right-hand sides are for steady runs"),
        "fcg": (case(out, three, solver="{type: fcg}"), "the block solve is plain PCG"),
        "pcg1": (case(out, three, solver="{type: pcg1}"), "the block solve is plain PCG"),
        "auto": (case(out, three, pc="{type: auto}"), "the block solve is plain PCG"),
        "guess": (case(out, three, solver=f"{{type: pcg, initial_guess: {guess}}}"),
                  "remove solver.initial_guess"),
        "projection": (case(out, three, solver="{type: pcg, projection: 4}"), "remove solver.projection"),
        "bc-exact": (case(out, three, flow(EXACT), value="exact"), "the columns share their boundary data"),
    }
    # found at run time: a pure Neumann problem has no block path
    cases["neumann"] = (case(out, three).replace("type: dirichlet", "type: neumann"),
                        "problem.rhs: several right-hand sides are solved at once by block PCG, which this case "
                        "cannot use: a pure Neumann problem")
    for name, (text, msg) in cases.items():
        st, so, se = run("refuse-" + name, text, 1)
        check(st == 2, f"refusal {name}: exit status {st}, want 2")
        where = r"\.yaml: " if name == "neumann" else r"\.yaml:\d+"  # found at run time: the file alone
        check(msg in se and re.search(r"refuse-" + name + where, se),
              f"refusal {name}: the message does not name the file:line and '{msg}':\n{se[-1500:]}")


def check_default_pc(ranks):
    """a list of right-hand sides without a preconditioner type runs with pmg (the single solve's
    default, auto, observes one Krylov run and has no block path)"""
    out = os.path.join(harness.A.work, "many-default")
    text = "".join(line + "\n" for line in case(out, flow(RHS), flow(EXACT)).splitlines()
                   if not line.startswith("preconditioner:"))
    st, _, se = run("many-default", text, ranks)
    if not check(st == 0, f"default preconditioner: the 3-column run failed ({st}): {se[-2000:]}"):
        return
    with open(os.path.join(out, "summary.yaml")) as f:
        s = yaml.safe_load(f)
    check(s["solver"]["preconditioner"] == "pmg" and len(s.get("columns", [])) == 3,
          f"default preconditioner: {s['solver']['preconditioner']}, columns {s.get('columns')!r}")


def main():
    a, _ = setup(options=((("--ranks",), dict(type=int, default=1)),))
    check_block(a.ranks)
    check_default_pc(a.ranks)
    check_refusals()
    if harness.failures:
        print(f"{len(harness.failures)} failure(s)")
        return 1
    print("many rhs ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
