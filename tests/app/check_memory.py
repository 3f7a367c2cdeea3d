#!/usr/bin/env python3
"""The case check's memory estimate against the measured peak (issue 34 item 5).

hexcg run writes both into summary.yaml: memory.peak_per_rank_bytes (the
largest ru_maxrss of the ranks) and memory.estimate_per_rank_bytes (the
figure hx_case_check_memory compares with the memory available). Each case
runs on 2 ranks with about 0.5M GLL nodes per rank, where the fixed part
(MPI, hypre, HDF5: about 30 MiB) is a fifth of the peak, so a wrong figure
per node shows. The tolerance, 25 %, is the issue's 20 % plus what the
machine changes by itself: glibc's heap trimming and the libraries' own
buffers move ru_maxrss by a few MiB from run to run.

  check_memory.py --hexcg H --mpiexec M --source SRC --work DIR [--cases a,b]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--hexcg", required=True)
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--source", required=True)
ap.add_argument("--work", required=True)
ap.add_argument("--cases", default="box-jacobi,kershaw-jacobi,box-pmg")
ap.add_argument("--tol", type=float, default=0.25)
a = ap.parse_args()
shutil.rmtree(a.work, ignore_errors=True)
os.makedirs(a.work)

# (config, --set arguments): 14^3 elements at p = 7 is 0.70M GLL nodes per
# rank (0.48M DOFs); Kershaw 24^3 at p = 3 0.44M; a loose tolerance keeps
# the solve short (the peak is reached by the first iterations)
CASES = {
    "box-jacobi": ("poisson_box.yaml", ["mesh.elements=[14,14,14]", "preconditioner.type=jacobi", "solver.tol=1e-3"]),
    "kershaw-jacobi": ("kershaw.yaml", ["mesh.elements=[24,24,24]", "order=3", "preconditioner.type=jacobi",
                                        "solver.tol=1e-3"]),
    "box-pmg": ("poisson_box.yaml", ["mesh.elements=[14,14,14]", "preconditioner.type=pmg", "solver.tol=1e-3"]),
}

failures = []


def flow_number(text, key):
    m = re.search(r"\b%s: ([0-9.eE+-]+)" % re.escape(key), text)
    return float(m.group(1)) if m else None


for name in a.cases.split(","):
    cfg, sets = CASES[name]
    out = os.path.join(a.work, name)
    cmd = [a.mpiexec, "-n", "2", a.hexcg, "run", os.path.join(a.source, "configs", cfg), "--force", "--quiet",
           "--output", out, "--set", "output.solution=false", "--set", "output.history=false"]
    for s in sets:
        cmd += ["--set", s]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("HEXCG_MEM_AVAILABLE", None)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    if p.returncode != 0:
        failures.append(f"{name}: rc {p.returncode}: {p.stderr[-500:]}")
        continue
    summ = open(os.path.join(out, "summary.yaml")).read()
    mem = next((l for l in summ.splitlines() if l.startswith("memory:")), "")
    peak, est = flow_number(mem, "peak_per_rank_bytes"), flow_number(mem, "estimate_per_rank_bytes")
    bpd = flow_number(mem, "bytes_per_dof")
    if not peak or not est:
        failures.append(f"{name}: no peak or estimate in {mem!r}")
        continue
    ratio = est / peak
    print(f"{name}: peak {peak / 2**20:.1f} MiB per rank ({bpd:.0f} B/DOF), estimate {est / 2**20:.1f} MiB "
          f"(ratio {ratio:.3f})")
    if abs(ratio - 1.0) > a.tol:
        failures.append(f"{name}: estimate {est / 2**20:.1f} MiB is {100 * (ratio - 1):+.1f} % off the measured "
                        f"peak {peak / 2**20:.1f} MiB (allowed {100 * a.tol:.0f} %)")

if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)
print("memory estimate ok")
