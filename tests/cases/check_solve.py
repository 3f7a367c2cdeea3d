#!/usr/bin/python3
"""`hexcg run` end to end on a tiny case: every output file is there and
consistent (summary.yaml, history.csv/.h5, solution.h5/.xdmf), a second run
without --force is refused and changes nothing, a restart from the solution
on 2 ranks starts converged, and a late input error (unknown Gmsh tag, found
after the mesh is read) exits 2 and leaves no output folder."""
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, failures as fails, setup  # noqa: E402

a, _ = setup(source=True, clean=False)


def run(args, ranks=1):
    return subprocess.run([a.mpiexec, "-n", str(ranks), a.hexcg, "run"] + args, cwd=a.work, capture_output=True,
                          text=True, timeout=120)


shutil.rmtree(a.work, ignore_errors=True)
os.makedirs(a.work)
box = os.path.join(a.source, "configs", "poisson_box.yaml")
small = ["--set", "mesh.elements=[2, 2, 2]", "--set", "order=3", "--quiet"]
d = os.path.join(a.work, "solve")
p = run([box, "--output", d] + small)
check(p.returncode == 0, f"solve: rc {p.returncode} {p.stderr!r}")
if p.returncode == 0:
    s = yaml.safe_load(open(os.path.join(d, "summary.yaml")))
    check(s["solver"]["converged"] is True and s["solver"]["iterations"] > 0, f"summary solver {s['solver']}")
    check(s["mesh"]["elements"] == 8, f"8 elements: {s['mesh']}")
    check(s["order"] == 3 and s["dofs"] == 7 ** 3 and s["ranks"] == 1, f"order/dofs/ranks {s['order']} {s['dofs']}")
    check(s["error"] is not None and 0 < s["error"]["l2"] < 1e-2, f"error {s['error']}")
    check(all(v >= 0 for v in s["timers_s"].values()) and s["timers_s"]["total"] > 0, "timers")
    # the time table of a real run (auto, the default) adds up: setup + solve + io + other = total,
    # the solve's parts = solve (the setup of the preconditioner in setup, not in its applies);
    # the values are written to 17 digits, so only the sums' rounding is left
    t = s["timers_s"]
    whole = t["setup"] + t["solve"] + t["io"] + t["other"]
    parts = t["operator"] + t["preconditioner"] + t["vector"] + t["reductions"] + t["solve_other"]
    check(s["solver"]["preconditioner"] == "auto", f"the default preconditioner: {s['solver']}")
    check(abs(whole - t["total"]) <= 1e-12 * t["total"], f"setup+solve+io+other {whole!r} != total {t['total']!r}")
    check(abs(parts - t["solve"]) <= 1e-12 * t["total"], f"the solve's parts {parts!r} != solve {t['solve']!r}")
    check(t["preconditioner"] <= t["solve"] and s["preconditioner"]["setup_s"] <= t["setup"],
          f"pmg's applies within the solve, its setup within setup: {t} {s['preconditioner']['setup_s']}")
    check(s["memory"]["peak_per_rank_bytes"] > 0, "peak memory")
    hist = np.loadtxt(os.path.join(d, "history.csv"), delimiter=",", skiprows=1, ndmin=2)
    check(hist.shape[0] >= 2 and hist[0, 0] == 0 and hist[-1, 2] < 1e-8, f"history rows {hist.shape}")
    with h5py.File(os.path.join(d, "history.h5"), "r") as f:
        check(np.array_equal(f["iteration"][...], hist[:, 0].astype(np.int64)), "history.h5 = history.csv")
    with h5py.File(os.path.join(d, "solution.h5"), "r") as f:
        N = 8 * 4 ** 3
        check(f["fields/u"].shape == (N,) and f["mesh/connectivity"].shape == (8 * 27, 8), "solution shapes")
        err = np.abs(f["fields/error"][...]).max()
        # summary: max over a finer sampling (run driver); file: at the GLL nodes
        check(0 < err <= 2 * s["error"]["max"], f"max |error| {err} vs summary {s['error']['max']}")
    x = ET.parse(os.path.join(d, "solution.xdmf")).getroot()
    check(x.find("Domain/Grid/Topology").get("NumberOfElements") == str(8 * 27), "xdmf topology")
    # the dot-entries are the folder's protocol (.hexcg-current, .hexcg-sets: docs/reliability.md)
    listed = sorted(n for n in os.listdir(d) if not n.startswith("."))
    check(listed == ["case.yaml", "history.csv", "history.h5", "solution.h5", "solution.xdmf", "summary.yaml"],
          f"outputs {listed}")
    before = open(os.path.join(d, "summary.yaml")).read()
    p2 = run([box, "--output", d] + small)
    check(p2.returncode == 2 and "exists; use --force" in p2.stderr, f"second run refused: {p2.returncode}")
    check(open(os.path.join(d, "summary.yaml")).read() == before, "summary untouched without --force")
    # restart on 2 ranks from the 1-rank solution
    d2 = os.path.join(a.work, "restart")
    p3 = run([box, "--output", d2, "--set", f"solver.initial_guess={{file: {d}/solution.h5}}"] + small, ranks=2)
    check(p3.returncode == 0, f"restart: rc {p3.returncode} {p3.stderr!r}")
    if p3.returncode == 0:
        s3 = yaml.safe_load(open(os.path.join(d2, "summary.yaml")))
        check(s3["solver"]["iterations"] <= 1 and s3["ranks"] == 2, f"restart iterations {s3['solver']['iterations']}")

# a Gmsh tag the mesh does not have: found after reading the mesh, still exit 2 and nothing written
case = os.path.join(a.work, "bad_tag.yaml")
msh = os.path.join(a.source, "configs", "meshes", "two_materials.msh")
open(case, "w").write(f"""mesh: {{type: gmsh, file: {msh}}}
order: 2
problem:
  rhs: "1"
  boundary:
    - {{tags: [inlet, outlt], type: dirichlet, value: 0}}
""")
d3 = os.path.join(a.work, "bad")
p4 = run(["bad_tag.yaml", "--output", d3, "--quiet"])
msg = ("bad_tag.yaml:6:22: problem.boundary[0].tags: unknown boundary tag 'outlt' (did you mean 'outlet'?); "
       "the gmsh mesh has: inlet, outlet, wall")
check(p4.returncode == 2 and msg in p4.stderr.splitlines(), f"late tag error: rc {p4.returncode} {p4.stderr!r}")
check(not os.path.exists(d3), "no output folder after a late input error")
sys.exit(1 if fails else 0)
