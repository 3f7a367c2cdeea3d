#!/usr/bin/python3
"""`hexcg run` with operator.geometry fp64 and split on 2 ranks (issue 14):
on the deformed box at p = 3 (every element curved) the summary reports the
storage (geometry, element counts, bytes per DOF), split stores every element
split and moves fewer bytes, and the error norms against the exact solution
agree to 1% (measured 5e-7 relative: docs/performance.md); on the undeformed
box every element is affine and split gives the same iterations and the
same error bits."""
import argparse
import os
import subprocess
import sys

import yaml

ap = argparse.ArgumentParser()
ap.add_argument("--hexcg", required=True)
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--source", required=True)
ap.add_argument("--work", required=True)
a = ap.parse_args()
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(case, geometry, tag, sets):
    d = os.path.join(a.work, tag + "-" + geometry)
    args = [a.mpiexec, "-n", "2", a.hexcg, "run", os.path.join(a.source, "configs", case), "--output", d, "--force",
            "--quiet", "--set", "operator.geometry=" + geometry, "--set", "output.solution=false",
            "--set", "output.history=false", "--set", "solver.tol=1e-12"]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    check(p.returncode == 0, f"{tag} {geometry}: rc {p.returncode} {p.stderr!r}")
    if p.returncode:
        return None
    return yaml.safe_load(open(os.path.join(d, "summary.yaml")))


os.makedirs(a.work, exist_ok=True)
# deformed box, p = 3, 4^3 elements: all curved
f = run("poisson_deformed.yaml", "fp64", "deformed", ["order=3", "mesh.elements=[4,4,4]"])
s = run("poisson_deformed.yaml", "split", "deformed", ["order=3", "mesh.elements=[4,4,4]"])
if f and s:
    check(f["operator"]["geometry"] == "fp64" and s["operator"]["geometry"] == "split", "geometry in summary")
    check(f["operator"]["elements_general"] == 64 and f["operator"]["elements_split"] == 0,
          f"fp64 counts {f['operator']}")
    check(s["operator"]["elements_split"] == 64 and s["operator"]["elements_general"] == 0
          and s["operator"]["elements_affine"] == 0, f"split counts {s['operator']}")
    check(s["operator"]["bytes_per_dof"] < 0.75 * f["operator"]["bytes_per_dof"],
          f"bytes per DOF {s['operator']['bytes_per_dof']} vs {f['operator']['bytes_per_dof']}")
    for k in ("l2", "max"):
        rel = abs(s["error"][k] - f["error"][k]) / f["error"][k]
        check(rel < 0.01, f"deformed error {k}: split {s['error'][k]} vs fp64 {f['error'][k]} ({rel:.2e})")
    check(abs(s["solver"]["iterations"] - f["solver"]["iterations"]) <= 1, "iterations")
# undeformed box: all affine, split == fp64
f = run("poisson_box.yaml", "fp64", "box", ["order=3", "mesh.elements=[4,4,4]"])
s = run("poisson_box.yaml", "split", "box", ["order=3", "mesh.elements=[4,4,4]"])
if f and s:
    check(f["operator"]["elements_affine"] == 64 and s["operator"]["elements_affine"] == 64, "box all affine")
    check(s["solver"]["iterations"] == f["solver"]["iterations"] and s["error"] == f["error"]
          and s["solver"]["final_residual"] == f["solver"]["final_residual"],
          f"box: split differs from fp64: {s['error']} {f['error']}")
if failures:
    print(f"{len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print("ok")
