#!/usr/bin/python3
"""Every reader sees one whole result set (issue 53, defect 16).

A folder holds a first run's set (A: order 3, output every 2nd step, with
history files) and a user's files (DIR/mine.txt, DIR/series/my_notes.txt).
A second run (B: order 2, every step, no history files) writes into it with
--force while strace kills rank 0 at each rename and each symlink of the
run (the staging writes and every step of the commit) and at each unlink
(the removals after the switch). After each kill, and
with plain Python (os, h5py: not hexcg, which knows the protocol), every
result name of the folder must resolve into one set: the names present are
exactly A's or exactly B's, and summary.yaml, case.yaml, solution.h5, the
series files, solution.xdmf's references and steps.csv's run ids all belong
to that set; the user's files are still there. A later run completes the
folder (one generation left, no stage). The commit used to rename the files
one by one, so a kill between two renames showed a mixture to such readers.
An older hexcg's folder (the files themselves in DIR) is taken over whole.
"""
import os
import re
import shutil
import subprocess
import sys

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, failures, finish, run_or_kill, setup  # noqa: E402,F401

a, W = setup(options=[(("--strace",), dict(default="/usr/bin/strace"))])
if not os.access(a.strace, os.X_OK):
    print(f"check_publish: no strace at {a.strace} (scripts/bootstrap.sh installs it)", file=sys.stderr)
    sys.exit(1)
TIMEOUT = 60
HEAT = """mesh: {type: box, elements: [2, 2, 2]}
order: 3
time: {scheme: bdf2, dt: 0.1, steps: 4, output_every: 2}
problem:
  rhs: "1"
  exact: "0"
  boundary:
    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: 0}
"""
case = os.path.join(W, "heat.yaml")
with open(case, "w") as f:
    f.write(HEAT)
NAMES = ["case.yaml", "solution.h5", "series", "solution.xdmf", "history.csv", "history.h5", "steps.csv",
         "summary.yaml"]
SETS = {"A": dict(order=3, args=[]),
        "B": dict(order=2,
                  args=["--set", "order=2", "--set", "time.output_every=1", "--set", "output.history=false"])}


def run_cmd(which, out):
    return [a.hexcg, "run", case, "--output", out, "--force", "--quiet"] + SETS[which]["args"]


def launch(which, out, strace=None):
    cmd = [a.mpiexec, "-n", "1"] + ([a.strace, "-f", "-o", "/dev/null"] + strace if strace else []) + \
        run_cmd(which, out)
    return run_or_kill(cmd, W, out, TIMEOUT)


def h5_order(path):
    with h5py.File(path, "r") as f:
        return int(f.attrs["order"]), f.attrs.get("run_id")


def yaml_order(path):
    m = re.search(r"^order:\s*(\d+)", open(path).read(), re.M)
    return int(m.group(1)) if m else None


def one_set(folder, label):
    """plain-Python readers of every result name: the set they see ('A' or 'B'), or None"""
    d = os.path.join(W, folder)
    present = {n for n in NAMES if os.path.exists(os.path.join(d, n))}
    which = [k for k, s in SETS.items() if s["names"] == present]
    if not check(len(which) == 1, f"{label}: the names present {sorted(present)} are neither set's"):
        return None
    which = which[0]
    s = SETS[which]
    seen = {"summary.yaml": yaml_order(os.path.join(d, "summary.yaml")),
            "case.yaml": yaml_order(os.path.join(d, "case.yaml"))}
    ids = {}
    if os.path.exists(os.path.join(d, "solution.h5")):
        seen["solution.h5"], ids["solution.h5"] = h5_order(os.path.join(d, "solution.h5"))
    steps = set()
    for n in os.listdir(os.path.join(d, "series")):
        m = re.fullmatch(r"solution_(\d+)\.h5", n)
        if m:
            steps.add(int(m.group(1)))
            seen[f"series/{n}"], ids[f"series/{n}"] = h5_order(os.path.join(d, "series", n))
    check(len(set(ids.values())) == 1, f"{label}: solution files of several runs {ids}")
    run_id = next(iter(ids.values()), None)
    check(steps == s["series"], f"{label}: set {which}: series steps {sorted(steps)}, not {sorted(s['series'])}")
    xdmf = open(os.path.join(d, "solution.xdmf")).read()
    for ref in sorted(set(re.findall(r"([\w/]+\.h5):", xdmf))):
        p = os.path.join(d, ref)
        seen[f"xdmf->{ref}"] = h5_order(p)[0] if os.path.exists(p) else None
    with open(os.path.join(d, "steps.csv")) as f:
        rows = [r.rstrip("\n").split(",") for r in f]
    if "run_id" in rows[0]:
        c = rows[0].index("run_id")
        ids = {r[c] for r in rows[1:]}
        rid = run_id.decode() if isinstance(run_id, bytes) else run_id
        check(ids == {rid}, f"{label}: steps.csv rows of runs {ids}, solution.h5 of {rid}")
    bad = {k: v for k, v in seen.items() if v != s["order"]}
    check(not bad, f"{label}: set {which} (order {s['order']}), but {bad}")
    check(open(os.path.join(d, "mine.txt")).read() == "mine", f"{label}: DIR/mine.txt lost")
    check(os.path.exists(os.path.join(d, "series", "my_notes.txt")), f"{label}: DIR/series/my_notes.txt lost")
    return which


def fresh(folder, src="ref-A", links=True):
    shutil.rmtree(os.path.join(W, folder), ignore_errors=True)
    shutil.copytree(os.path.join(W, src), os.path.join(W, folder), symlinks=links)


def recovers(folder, label):
    rc, err = launch("B", folder)
    check(rc == 0 and one_set(folder, f"{label}, then a run") == "B", f"{label}: the next run: rc {rc} {err!r}")
    d = os.path.join(W, folder)
    check(not os.path.exists(os.path.join(d, ".hexcg-new")), f"{label}: a stage is left")
    sets = os.path.join(d, ".hexcg-sets")
    gens = os.listdir(sets) if os.path.isdir(sets) else []
    check(len(gens) == 1, f"{label}: generations left {gens}")


# the first set, with the user's files
rc, err = launch("A", "ref-A")
if not check(rc == 0, f"run A: rc {rc} {err!r}"):
    finish("")
open(os.path.join(W, "ref-A", "mine.txt"), "w").write("mine")
open(os.path.join(W, "ref-A", "series", "my_notes.txt"), "w").write("notes")
rc, err = launch("B", "ref-B")
check(rc == 0, f"run B: rc {rc} {err!r}")
for k, ref in (("A", "ref-A"), ("B", "ref-B")):
    SETS[k]["names"] = {n for n in NAMES if os.path.exists(os.path.join(W, ref, n))}
    SETS[k]["series"] = {int(n[9:15]) for n in os.listdir(os.path.join(W, ref, "series"))
                         if n.startswith("solution_") and n.endswith(".h5")}  # not the series' mesh.h5
check(SETS["A"]["names"] - SETS["B"]["names"] == {"history.csv", "history.h5"}, f"the sets' names {SETS}")
check(one_set("ref-A", "run A") == "A", "run A: not set A")

# the calls of a run into the folder, each counted on its own (strace counts per call): the
# renames and symlinks up to the switch, the unlinks after it (the old set's links and files)
counts = {}
for call in ("rename", "symlink", "unlink", "unlinkat"):
    fresh("count")
    log = os.path.join(W, f"{call}.log")
    p = subprocess.run([a.mpiexec, "-n", "1", a.strace, "-f", "-o", log, "-e", f"trace={call}"] + run_cmd("B", "count"),
                       cwd=W, capture_output=True, text=True, timeout=TIMEOUT)
    with open(log) as f:
        counts[call] = sum(1 for line in f if re.match(r"\d+\s+" + call + r"\(", line))
    check(p.returncode == 0 and one_set("count", f"counting {call}") == "B", f"counting {call}: rc {p.returncode}")
print(f"per run: {counts}")
check(counts["rename"] >= 5, f"only {counts['rename']} renames counted")

seen = set()
for call, n in counts.items():
    for k in range(1, n + 1):
        folder, label = f"kill-{call}-{k}", f"SIGKILL at {call} {k} of {n}"
        fresh(folder)
        rc, err = launch("B", folder, ["-e", f"trace={call}", "-e", f"inject={call}:signal=KILL:when={k}"])
        check(rc not in (0, "timeout"), f"{label}: rc {rc}")
        seen.add(one_set(folder, label))
        recovers(folder, label)
check(seen == {"A", "B"}, f"kill points: sets seen {seen} (expected both)")

# an older hexcg's folder: the files themselves in DIR, series/ a folder
fresh("old-layout", links=False)
for n in (".hexcg-current", ".hexcg-sets"):
    p = os.path.join(W, "old-layout", n)
    shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p) if os.path.lexists(p) else None
check(not any(os.path.islink(os.path.join(W, "old-layout", n)) for n in NAMES), "old layout: links copied")
rc, err = launch("B", "old-layout")
check(rc == 0 and one_set("old-layout", "old layout, then a run") == "B", f"old layout: rc {rc} {err!r}")
check(all(os.path.islink(os.path.join(W, "old-layout", n)) and
          os.readlink(os.path.join(W, "old-layout", n)) == f".hexcg-current/{n}"
          for n in SETS["B"]["names"]), "old layout: names not linked")
recovers("old-layout", "old layout")

finish("every reader saw one whole set at every kill point")
