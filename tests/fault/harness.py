"""What the fault checks (tests/fault/check_*.py) share: their arguments
(--hexcg, --mpiexec, --work, and --case where a check needs one), a fresh
work folder, check() that records a failure and says it, hexcg() that runs
hexcg on N ranks in the work folder, and finish() with the exit status."""
import argparse
import os
import shutil
import subprocess
import sys

failures = []
A = None


def setup(case=False, options=()):
    """parse the arguments (options: (flags, keywords) pairs for more) and empty the work folder"""
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--hexcg", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--work", required=True)
    if case:
        ap.add_argument("--case", required=True)
    for flags, kw in options:
        ap.add_argument(*flags, **kw)
    A = ap.parse_args()
    shutil.rmtree(A.work, ignore_errors=True)
    os.makedirs(A.work)
    return A, A.work


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def hexcg(args, ranks=1, timeout=120):
    """hexcg ARGS on `ranks` ranks in the work folder: (exit status, stdout, stderr)"""
    p = subprocess.run([A.mpiexec, "-n", str(ranks), A.hexcg] + args, cwd=A.work, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def finish(ok):
    print(f"{len(failures)} failed" if failures else ok)
    sys.exit(1 if failures else 0)
