#!/usr/bin/python3
"""Output faults injected with strace on one rank (issue 32, items 1 and 2).

An output folder holds a complete result set of an order-3 run (the "old"
set); an order-2 run (the "new" set) then writes into it with --force while
strace, wrapped around one chosen rank only (an MPMD launch), either

- fails one system call (openat, write/pwrite64, rename, fsync, close) on the
  K-th access to one of the run's output files with an errno, or
- kills the rank with SIGKILL at its K-th rename (every rename point of a
  run: the staging writes and each move of the commit).

Whatever happens, the run must end within its timeout (no hang: 2 ranks used
to hang when rank 0 could not create summary.yaml.tmp), a failed system call
must give a non-zero exit with an error message, and hexcg's readers must see
either the old complete set or the new complete set, never a mixture: `hexcg
compare FOLDER REF` MATCHes exactly one of the two reference runs (residual
history, summary, order), and the folder's solution.h5, read back as an
initial guess, has the order of that set. A later run into the folder must
succeed and give the new set.
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, failures, finish, run_or_kill, hexcg, setup  # noqa: E402,F401

a, W = setup(case=True, options=[(("--strace",), dict(default="/usr/bin/strace"))])
if not os.access(a.strace, os.X_OK):
    print(f"check_inject: no strace at {a.strace} (scripts/bootstrap.sh installs it)", file=sys.stderr)
    sys.exit(1)
shutil.rmtree(a.work, ignore_errors=True)
os.makedirs(a.work)
TIMEOUT = 60



SMALL = ["--set", "mesh.elements=[2,2,2]", "--quiet"]


def run_args(order, out, extra=()):
    return [a.hexcg, "run", a.case, "--output", out, "--force", "--set", f"order={order}"] + SMALL + list(extra)


def launch(ranks, order, out, strace=None, rank=0):
    """hexcg run on `ranks` ranks; strace (a list of its options) around rank `rank` only"""
    cmd = [a.mpiexec]
    for r in range(ranks):
        if r:
            cmd.append(":")
        cmd += ["-n", "1"] + ([a.strace, "-f", "-o", "/dev/null"] + strace if strace and r == rank else [])
        cmd += run_args(order, out)
    return run_or_kill(cmd, W, out, TIMEOUT)


def compare(folder, ref):
    p = subprocess.run([a.hexcg, "compare", folder, ref, "--quiet"], cwd=W, capture_output=True, text=True,
                       timeout=60)
    return p.returncode == 0 and "result: MATCH" in p.stdout + p.stderr


def reads_at(folder, order):
    """the folder's solution.h5, read by hexcg as an initial guess, is of this order (a run of
    another order refuses it, tests/fault/check_inputs.py)"""
    p = subprocess.run(run_args(order, f"{folder}-guess{order}",
                                ["--set", f"solver.initial_guess={folder}/solution.h5"]), cwd=W,
                       capture_output=True, text=True, timeout=60)
    return p.returncode == 0


# references: the old set (order 3) and the new set (order 2)
for order, ref in ((3, "ref-old"), (2, "ref-new")):
    rc, err = launch(1, order, ref)
    if not check(rc == 0, f"reference order {order}: rc {rc} {err!r}"):
        sys.exit(1)


def fresh_old(folder):
    shutil.rmtree(os.path.join(W, folder), ignore_errors=True)
    shutil.copytree(os.path.join(W, "ref-old"), os.path.join(W, folder), symlinks=True)


def verdict(folder, label):
    """the folder holds exactly one complete set; returns 'old' or 'new'"""
    old, new = compare(folder, "ref-old"), compare(folder, "ref-new")
    if not check(old != new, f"{label}: compare MATCHes {'both sets' if old else 'neither set'}"):
        return None
    which = "old" if old else "new"
    order = 3 if old else 2
    check(reads_at(folder, order), f"{label}: the {which} set's solution.h5 does not read at order {order}")
    return which


def recovers(folder, ranks, label):
    rc, err = launch(ranks, 2, folder)
    check(rc == 0 and compare(folder, "ref-new"), f"{label}: the next run into the folder: rc {rc} {err!r}")
    check(not os.path.exists(os.path.join(W, folder, ".hexcg-new")), f"{label}: a staging folder is left")


# how many renames one run makes on rank 0 (the staging writes and the commit)
def strace_count(label, trace, needle):
    """A fresh run (output folder label) under strace -e trace=trace: its
    process and the number of traced calls (lines holding needle)."""
    fresh_old(label)
    log = os.path.join(W, f"{label}.log")
    p = subprocess.run([a.mpiexec, "-n", "1", a.strace, "-f", "-o", log, "-e", f"trace={trace}"] +
                       run_args(2, label), cwd=W, capture_output=True, text=True, timeout=TIMEOUT)
    with open(log) as f:
        return p, sum(1 for line in f if needle in line and "resumed" not in line)


p, nren = strace_count("count", "rename,renameat,renameat2", "rename")
check(p.returncode == 0 and nren >= 7, f"counting renames: rc {p.returncode}, {nren} renames")
# the last rename is the commit point (.hexcg-current switched, issue 53 defect 16); the removals of
# the old generation after it are unlinkat calls: the last ones are kill points after the switch
p, nunl = strace_count("count-unlinkat", "unlinkat", "unlinkat(")
check(p.returncode == 0 and nunl >= 2, f"counting unlinkat: rc {p.returncode}, {nunl} calls")
print(f"{nren} renames, {nunl} unlinkat per run")

# every kill point
seen = set()
for ranks in (1, 2):
    for k in range(1, nren + 1):
        folder, label = f"kill-np{ranks}-{k}", f"SIGKILL at rename {k} of {nren}, np{ranks}"
        fresh_old(folder)
        rc, err = launch(ranks, 2, folder, ["-e", "trace=rename,renameat,renameat2",
                                            "-e", f"inject=rename,renameat,renameat2:signal=KILL:when={k}"])
        check(rc not in (0, "timeout"), f"{label}: rc {rc}")
        which = verdict(folder, label)
        seen.add(which)
        recovers(folder, ranks, label)
    for k in (nunl - 1, nunl):
        folder, label = f"kill-unl-np{ranks}-{k}", f"SIGKILL at unlinkat {k} of {nunl}, np{ranks}"
        fresh_old(folder)
        rc, err = launch(ranks, 2, folder, ["-e", "trace=unlinkat", "-e", f"inject=unlinkat:signal=KILL:when={k}"])
        check(rc not in (0, "timeout"), f"{label}: rc {rc}")
        seen.add(verdict(folder, label))
        recovers(folder, ranks, label)
check(seen == {"old", "new"}, f"kill points: sets seen {seen} (expected both old and new)")

# failed system calls on the output files, on each rank (the plan below)
STAGE_FILES = ["case.yaml", "summary.yaml", "solution.h5", "solution.xdmf", "history.csv", "history.h5",
               ".manifest"]
CALLS = {"openat": "ENOSPC", "write,pwrite64": "EIO", "rename": "EACCES", "fsync,fdatasync": "EIO", "close": "EIO"}


def file_paths(folder):
    paths = []
    for name in STAGE_FILES:
        for suffix in ("", ".tmp"):
            for base in (f"{folder}/.hexcg-new", folder):
                paths += ["-P", f"{base}/{name}{suffix}", "-P", os.path.join(W, base, name + suffix)]
    # the commit: the stage renamed to a generation, the switch of .hexcg-current (issue 53, defect 16)
    for name in (".hexcg-new", ".hexcg-current", ".hexcg-current.tmp"):
        paths += ["-P", f"{folder}/{name}", "-P", os.path.join(W, folder, name)]
    return paths


def accesses(ranks, rank):
    """how often the new-set run on `ranks` ranks makes each call on `rank` to the output files"""
    folder = f"acc-np{ranks}-r{rank}"
    fresh_old(folder)
    tr = os.path.join(W, f"{folder}.tr")
    traced = ",".join(CALLS)
    rc, err = launch(ranks, 2, folder, file_paths(folder) + ["-o", tr, "-e", f"trace={traced}"], rank)
    check(rc == 0, f"counting accesses np{ranks} rank {rank}: rc {rc} {err!r}")
    n = dict.fromkeys(CALLS, 0)
    with open(tr) as f:
        for line in f:
            call = line.split(None, 1)[1].split("(", 1)[0] if " " in line else ""
            for calls in CALLS:
                if call in calls.split(","):
                    n[calls] += 1
    return n


# rank 0 writes every file; the others only their rows of solution.h5 (rank 1 of 3: the
# close that exited 9 instead of 1). Every access of every call (every open, including
# summary.yaml.tmp's, the hang point, and every rename of the commit, after its commit
# point too), but rank 0's writes, which HDF5 makes often: its first, third, middle and last. The writes of ranks > 0 (their rows, with
# plain pwrite since solution.h5's structure is made by rank 0 alone) are all tried: with
# parallel HDF5 a failed metadata write of rank 1 inside H5Fflush hung the run in HDF5's
# barrier, and a failed close in ROMIO's create probe on rank 0 hung it in ROMIO's Bcast
PLAN = [(1, 0, CALLS), (2, 0, CALLS), (2, 1, CALLS), (3, 0, ["openat", "rename"]),
        (3, 1, ["write,pwrite64", "close", "openat", "fsync,fdatasync"]), (3, 2, ["write,pwrite64"])]
ncases = 0
for ranks, rank, calls_here in PLAN:
    n = accesses(ranks, rank)
    print(f"np{ranks} rank {rank}: accesses {n}")
    for calls in calls_here:
        errno_name = CALLS[calls]
        ks = sorted({1, 3, max(1, n[calls] // 2), n[calls]}) if calls.startswith("write") and rank == 0 \
            else range(1, n[calls] + 1)
        for k in ks:
            if k < 1 or k > n[calls]:
                continue
            ncases += 1
            folder = f"err-np{ranks}-r{rank}-{calls.split(',')[0]}-{k}"
            label = f"{calls}={errno_name} at access {k} of {n[calls]}, rank {rank} of {ranks}"
            fresh_old(folder)
            rc, err = launch(ranks, 2, folder, file_paths(folder) + ["-e", f"trace={calls}",
                                                                    "-e", f"inject={calls}:error={errno_name}:when={k}"],
                             rank)
            check(rc != "timeout", f"{label}: hung")
            # the documented status of an I/O error (docs/case-format.md, "Exit status"), on every rank count
            if rc != 0:
                check(rc == 1, f"{label}: exit {rc}, not 1: {err!r}")
                check("error" in err, f"{label}: rc {rc} without an error message: {err!r}")
            which = verdict(folder, label)
            if which == "old":
                check(rc != 0, f"{label}: exit 0 but the folder holds the old set")
            recovers(folder, ranks, label)
print(f"{ncases} injected failures")

# a name of the set that is a directory in the folder cannot be replaced:
# refused before the commit point (the folder keeps its files), then fine
for name in ("summary.yaml", "history.csv"):
    folder = f"dir-{name}"
    fresh_old(folder)
    os.remove(os.path.join(W, folder, name))
    os.makedirs(os.path.join(W, folder, name))
    with open(os.path.join(W, folder, "case.yaml")) as f:
        before = f.read()
    rc, err = launch(2, 2, folder)
    check(rc == 1 and "is a directory" in err, f"{name} a directory: rc {rc} {err!r}")
    with open(os.path.join(W, folder, "case.yaml")) as f:
        check(f.read() == before, f"{name} a directory: case.yaml was replaced")
    check(not os.path.exists(os.path.join(W, folder, ".hexcg-new")), f"{name} a directory: a stage is left")
    os.rmdir(os.path.join(W, folder, name))
    recovers(folder, 2, f"{name} a directory")

finish("all injected output faults handled")
