#!/usr/bin/python3
"""OpenMP threads per rank (issue 32 item 6): OMP_NUM_THREADS=0, -1, empty or
abc used to turn off hexcg's sharing of the node's cores between its ranks
(libgomp ignores such values and gives every rank every core) and =1000 was
accepted, a silent 20-60x slowdown. Each must now give a warning naming the
value and the count used, ranks x threads must not exceed the cores of the
node, HEXCG_OVERSUBSCRIBE=1 keeps an explicit value, and the thread count is
in the run log and in summary.yaml (threads_per_rank)."""
import argparse
import os
import shutil
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, failures, finish, hexcg, setup  # noqa: E402,F401

a, W = setup(case=True)
cores = len(os.sched_getaffinity(0))



def run(ranks, value, extra_env=None):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "HEXCG_OVERSUBSCRIBE")}
    if value is not None:
        env["OMP_NUM_THREADS"] = value
    env.update(extra_env or {})
    out = f"o-np{ranks}-{len(os.listdir(W))}"
    p = subprocess.run([a.mpiexec, "-n", str(ranks), a.hexcg, "run", a.case, "--output", out, "--set",
                        "mesh.elements=[2,2,2]", "--set", "order=2"], cwd=W, capture_output=True, text=True,
                       timeout=120, env=env)
    s = yaml.safe_load(open(os.path.join(W, out, "summary.yaml"))) if p.returncode == 0 else None
    return p, s


for ranks in (1, 2):
    share = max(1, cores // ranks)
    for value in ("0", "-1", "", "abc", "1000"):
        p, s = run(ranks, value)
        if not check(p.returncode == 0 and s, f"np{ranks} OMP_NUM_THREADS={value!r}: rc {p.returncode} {p.stderr!r}"):
            continue
        word = "is not a positive integer" if value != "1000" else "would run"
        check((f"OMP_NUM_THREADS={value!r}" if value != "1000" else "OMP_NUM_THREADS=1000") in p.stderr,
              f"np{ranks} {value!r}: the warning does not name the value: {p.stderr!r}")
        check(word in p.stderr and f"using {share} " in p.stderr, f"np{ranks} {value!r}: warning {p.stderr!r}")
        check(p.stderr.count("warning: OMP_NUM_THREADS") == 1, f"np{ranks} {value!r}: one warning, not one per rank")
        check(s["threads_per_rank"] == share, f"np{ranks} {value!r}: threads_per_rank {s['threads_per_rank']}")
        check(f"x {share} OpenMP thread" in p.stdout, f"np{ranks} {value!r}: the log line: {p.stdout[:200]!r}")
    # unset: the share, no warning; a fitting value: taken, no warning
    for value, want in ((None, share), ("1", 1)):
        p, s = run(ranks, value)
        check(p.returncode == 0 and "warning" not in p.stderr and s and s["threads_per_rank"] == want,
              f"np{ranks} OMP_NUM_THREADS={value!r}: rc {p.returncode} {p.stderr!r} threads {s and s['threads_per_rank']}")
# one thread per rank with more ranks than cores: no fewer threads would help, so no
# thread warning (it said "using 1 per rank (HEXCG_OVERSUBSCRIBE=1 keeps 1)": nothing to change)
p, s = run(cores + 1, "1")
check(p.returncode == 0 and "warning: OMP_NUM_THREADS" not in p.stderr and s and s["threads_per_rank"] == 1,
      f"np{cores + 1} OMP_NUM_THREADS=1: rc {p.returncode} {p.stderr!r}")
# an explicit oversubscription on request
p, s = run(1, str(cores + 1), {"HEXCG_OVERSUBSCRIBE": "1"})
check(p.returncode == 0 and "warning" not in p.stderr and s and s["threads_per_rank"] == cores + 1,
      f"HEXCG_OVERSUBSCRIBE=1: rc {p.returncode} {p.stderr!r}")
finish("thread checks passed")
