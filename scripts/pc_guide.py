#!/usr/bin/env python3
"""Which preconditioner when: hexcg's preconditioners side by side on broadband right-hand sides.

The measurements behind docs/preconditioner.md's guidance (issue 54 point 7). For each case the
preconditioners run alternately (one process after the other, `--rounds` times each, so that a
drift of the machine's load hits all of them alike), on the same mesh, order and rank count, with
a right-hand side that excites many modes (the guidance measured before used a single
eigenfunction, sin(pi x) sin(pi y) sin(pi z), on which one V-cycle is nearly exact):

  exp     f = exp(x y z), u = 0 on the boundary (smooth, but every mode of the discrete operator)
  one     f = 1, u = 0 on the boundary (the corners' singularities: rough)

It prints one markdown table per right-hand side: iterations and the median (min..max) of setup +
solve from summary.yaml, and each preconditioner's time over the fastest of the case.

  scripts/pc_guide.py                     # 3 rounds, both right-hand sides, every case
  scripts/pc_guide.py --rounds 1 --cases box-p7 --rhs one
"""
import argparse
import os
import statistics
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = {  # name: (config, sets); the first three are issue 52's reference cases, the rest cases the
    # default was not tuned on (a curved mesh, a 1e4 kappa jump, order 5, Helmholtz)
    "kershaw-p7": ("configs/kershaw.yaml", ["mesh.elements=[12,12,12]", "order=7"]),
    "kershaw-p3": ("configs/kershaw.yaml", ["mesh.elements=[24,24,24]", "order=3"]),
    "box-p7": ("configs/poisson_box.yaml", ["mesh.elements=[16,16,16]", "order=7"]),
    "curved-p5": ("configs/poisson_deformed.yaml", ["mesh.elements=[16,16,16]", "order=5", "mesh.deform=0.1"]),
    "jump-p5": ("configs/poisson_box.yaml", ["mesh.elements=[16,16,16]", "order=5",
                                             "problem.kappa=1 + 9999*0.5*(1 + tanh(40*(x - 0.5)))"]),
    "kershaw-p5": ("configs/kershaw.yaml", ["mesh.elements=[18,18,18]", "order=5"]),
    "helmholtz-p6": ("configs/helmholtz_box.yaml", ["mesh.elements=[14,14,14]", "order=6", "problem.lambda=100"]),
    # an unstructured curved Gmsh mesh (hex27, every element general), made by gmsh from
    # scripts/pc_guide_notch.geo into the work folder on first use (mesh.file set then)
    "gmsh-p5": ("regression/inputs/gmsh_extruded.yaml", ["order=5"]),
}
GMSH_TAGS = "[bottom, top, side]"  # the boundary tags of the Gmsh case's mesh
RHS = {
    "exp": "exp(x*y*z)",
    "one": "1",
    "case": None,  # the case's own right-hand side and boundary data (the sine: one eigenfunction)
}
PCS = {  # label: sets
    "default": ["preconditioner=null"],  # the case's own choice dropped: hexcg's default
    "jacobi": ["preconditioner.type=jacobi"],
    "asm": ["preconditioner.type=asm"],
    "pmg": ["preconditioner.type=pmg"],
    "pmg cheby-jacobi": ["preconditioner.type=pmg", "preconditioner.smoother.type=cheby-jacobi"],
    "pmg asm-fine": ["preconditioner.type=pmg", "preconditioner.smoother.type_below=cheby-jacobi"],
    "auto": ["preconditioner.type=auto"],
}


def gmsh_mesh(a):
    """the Gmsh case's mesh in the work folder, made once"""
    msh = os.path.join(a.work, "notch.msh")
    if not os.path.exists(msh):
        os.makedirs(a.work, exist_ok=True)
        subprocess.run(["gmsh", "-3", "-format", "msh41", "-o", msh, os.path.join(ROOT, "scripts", "pc_guide_notch.geo")],
                       check=True, capture_output=True)
    return msh


def run(a, case, rhs, pc, r):
    cfg, sets = CASES[case]
    out = os.path.join(a.work, f"{case}-{rhs}-{pc.replace(' ', '_')}-{r}")
    tags = GMSH_TAGS if case.startswith("gmsh") else "[xmin, xmax, ymin, ymax, zmin, zmax]"
    data = [] if RHS[rhs] is None else [
        f"problem.rhs={RHS[rhs]}", "problem.exact=null",
        f"problem.boundary=[{{tags: {tags}, type: dirichlet, value: 0}}]"]
    if case.startswith("gmsh"):
        # its config names jacobi: dropped (the default's own line below drops it too)
        sets = sets + [f"mesh.file={gmsh_mesh(a)}"] + ([] if "preconditioner=null" in PCS[pc] else ["preconditioner=null"])
    if RHS[rhs] is not None and case.startswith("helmholtz"):  # its Neumann sides stay
        data[-1] = "problem.boundary=[{tags: [zmin, zmax], type: dirichlet, value: 0}, " \
                   "{tags: [xmin, xmax, ymin, ymax], type: neumann, value: 0}]"
    pcs = PCS[pc]
    if "preconditioner=null" in pcs and not any(l.startswith("preconditioner:") for l in open(os.path.join(ROOT, cfg))):
        pcs = [x for x in pcs if x != "preconditioner=null"]  # the config has none: the default already
    sets = sets + pcs + data + a.set + [
        "solver.tol=1e-8", "solver.max_iterations=5000", "output.solution=false", "output.history=false"]
    cmd = [a.mpiexec, "-n", str(a.ranks), a.hexcg, "run", os.path.join(ROOT, cfg), "--output", out, "--force",
           "--quiet"]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if p.returncode != 0:
        sys.exit(f"pc_guide.py: {' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    s = yaml.safe_load(open(os.path.join(out, "summary.yaml")))
    t = s["timers_s"]
    return s["solver"]["iterations"], t["setup"] + t["solve"], s["preconditioner"].get("setup_s", 0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hexcg", default=os.path.join(ROOT, "build", "hexcg"))
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--rhs", default=",".join(RHS))
    ap.add_argument("--pcs", default=",".join(PCS))
    ap.add_argument("--work", default="/tmp/hexcg-pc-guide")
    ap.add_argument("--set", action="append", default=[], help="an extra hexcg --set for every run")
    a = ap.parse_args()
    cases, rhss, pcs = a.cases.split(","), a.rhs.split(","), a.pcs.split(",")
    for name, known in ((cases, CASES), (rhss, RHS), (pcs, PCS)):
        bad = [c for c in name if c not in known]
        if bad:
            sys.exit(f"pc_guide.py: unknown {bad}; choose from {', '.join(known)}")
    load = open("/proc/loadavg").read().split()[:3]
    print(f"# pc_guide.py: {a.ranks} ranks x 1 thread, {a.rounds} rounds alternated, tol 1e-8; "
          f"load average at the start {' '.join(load)}")
    for rhs in rhss:
        print(f"\nright-hand side {rhs}: f = {RHS[rhs]}, u = 0 on the boundary\n")
        print("| case | " + " | ".join(pcs) + " |")
        print("| --- |" + " --- |" * len(pcs))
        for case in cases:
            res = {pc: [] for pc in pcs}
            its, pcs_s = {}, {pc: [] for pc in pcs}
            for r in range(a.rounds):
                for pc in pcs:
                    n, t, ts = run(a, case, rhs, pc, r)
                    its[pc] = n
                    res[pc].append(t)
                    pcs_s[pc].append(ts)
            med = {pc: statistics.median(v) for pc, v in res.items()}
            best = min(med.values())
            cells = [f"{its[pc]} its, {med[pc]:.2f} s ({min(res[pc]):.2f}..{max(res[pc]):.2f}; preconditioner "
                     f"setup {statistics.median(pcs_s[pc]):.2f}), {med[pc] / best:.2f}x" for pc in pcs]
            print(f"| {case} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nload average at the end {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
