#!/usr/bin/env python3
"""End to end under the CUDA emulator (HEXCG_CUDA=EMU, docs/gpu-verification.md):
`hexcg run` of one case with `backend: cuda` and with `backend: cpu`, the
same ranks and overrides, then the two result sets compared.

    e2e_check.py --hexcg BIN --mpiexec MPIEXEC --ranks N --case CASE.yaml
                 [--set KEY=VALUE ...] [--hist-tol T] [--sol-tol S] [--restart-at T_END]

Checks: both converged; iteration counts within one (per step for a time-
dependent case: the totals within one per step); the relative residual
histories within --hist-tol of each other while above --hist-floor (1e-4)
of the first residual (where they are not, CG amplifies the backends' different
summation orders); the solutions' largest difference within --sol-tol of the
largest |u|. --restart-at T: the cuda run is made in two halves, to time T
(its checkpoint) and then `--restart` to the case's end: the restart path on
the device. Exit 0 when every check passes, 1 with the reasons otherwise."""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def run(a, out, backend, extra=()):
    cmd = [a.mpiexec, "-n", str(a.ranks), a.hexcg, "run", a.case, "--output", out, "--force", "--quiet",
           "--set", f"backend={backend}"]
    for s in a.set:
        cmd += ["--set", s]
    cmd += list(extra)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print(" ".join(cmd))
        print(r.stdout)
        sys.exit(f"e2e: the {backend} run failed (exit {r.returncode})")


def summary(out):
    """the few summary keys the checks need (flat YAML read by hand: no PyYAML needed)"""
    keys = {}
    section = None
    with open(os.path.join(out, "summary.yaml")) as f:
        for line in f:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if not line.startswith(" "):
                section = line.split(":")[0]
            k, _, v = line.strip().partition(":")
            keys[f"{section}.{k}"] = v.strip()
    return keys


def history(out):
    p = os.path.join(out, "history.csv")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return [float(r["rel_residual"]) for r in csv.DictReader(f)]


def solution(out):
    """the solution, or a time-dependent run's last frame"""
    p = os.path.join(out, "solution.h5")
    if not os.path.exists(p):
        series = sorted(f for f in os.listdir(os.path.join(out, "series")) if f.endswith(".h5"))
        p = os.path.join(out, "series", series[-1])
    with h5py.File(p, "r") as f:
        return np.array(f["fields/u"][...], dtype=float).ravel()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hexcg", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--case", required=True)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--hist-tol", type=float, default=None)
    ap.add_argument("--hist-floor", type=float, default=1e-4)
    ap.add_argument("--sol-tol", type=float, required=True)
    ap.add_argument("--restart-at", type=float, default=None)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="hexcg-e2e-")
    bad = []
    try:
        cpu, cu = os.path.join(tmp, "cpu"), os.path.join(tmp, "cuda")
        run(a, cpu, "cpu")
        if a.restart_at is None:
            run(a, cu, "cuda")
        else:
            run(a, cu, "cuda", ["--set", f"time.end={a.restart_at}"])
            if not os.path.isdir(os.path.join(cu, "checkpoint")):
                bad.append("the first half wrote no checkpoint")
            run(a, cu, "cuda", ["--restart", cu])
        sc, sg = summary(cpu), summary(cu)
        for s, name in ((sc, "cpu"), (sg, "cuda")):
            if s.get("solver.converged") != "true":
                bad.append(f"the {name} run did not converge ({s.get('solver.reason')})")
        ic, ig = int(sc["solver.iterations"]), int(sg["solver.iterations"])
        steps = 1
        if "time.last_step" in sc:
            steps = int(sc["time.last_step"]) - int(sc.get("time.first_step", "1")) + 1
        print(f"iterations: cpu {ic}, cuda {ig} ({steps} solve(s))")
        if abs(ic - ig) > steps:
            bad.append(f"iterations cpu {ic}, cuda {ig}: more than one apart per solve")
        if a.hist_tol is not None:
            hc, hg = history(cpu), history(cu)
            if hc is None or hg is None:
                bad.append("no history.csv to compare")
            else:
                worst, at = 0.0, -1
                for i, (x, y) in enumerate(zip(hc, hg)):
                    if x < a.hist_floor:
                        break
                    d = abs(x - y) / x
                    if d > worst:
                        worst, at = d, i
                print(f"histories: largest relative difference {worst:.3e} (iteration {at}), bound {a.hist_tol:.0e}")
                if worst > a.hist_tol:
                    bad.append(f"histories differ by {worst:.3e} at iteration {at} > {a.hist_tol:.0e}")
        uc, ug = solution(cpu), solution(cu)
        if uc.shape != ug.shape:
            bad.append(f"solutions of {uc.size} and {ug.size} values")
        else:
            d = float(np.max(np.abs(uc - ug))) / max(float(np.max(np.abs(uc))), 1e-300)
            print(f"solutions: largest difference {d:.3e} of max|u|, bound {a.sol_tol:.0e}")
            if not d <= a.sol_tol:
                bad.append(f"solutions differ by {d:.3e} of max|u| > {a.sol_tol:.0e}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for b in bad:
        print("FAIL:", b)
    print("e2e: " + ("cuda and cpu agree" if not bad else f"{len(bad)} check(s) failed"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
