#!/usr/bin/python3
"""Restart and checkpoint defects of the hostile trial (issue 53), each a
case that ended in a foreign or lost result or a false "complete" before its
fix. Kill points are simulated by placing a checkpoint of one run in the
folder of another (what a kill after that checkpoint, before the commit,
leaves) and by the test hook HEXCG_TEST_SIGNAL (a second signal ends the
process in the step after a checkpoint):

 8. --restart carried the folder's steps.csv/history.csv rows and series/
    files without checking they belong to the checkpoint's run: a --force
    run of case B over case A's folder, killed after its step-4
    checkpoint, then restarted, ended (exit 0) with A's rows 2-4 and A's
    series files in B's outputs. Now every row and file carries its run's
    id (steps.csv's run_id column, the series files' run_id attribute,
    summary.yaml's time.run_id, checkpoint.yaml's run_id) and a restart
    carries only the checkpoint's run's, saying what it dropped.
 9. a run killed after its final checkpoint, before the output commit:
    --restart said "the run is complete; ... the results in DIR are kept"
    and exited 0 with no results in DIR (or another run's). Now "complete"
    only when the committed set is this run's and ends at the last step;
    otherwise the outputs are rebuilt from the checkpoint and committed.
 12. a checkpoint of another mesh was accepted when the GLL coordinates
    agreed: the same box made periodic, a Gmsh file whose boundary tags (or
    materials) were swapped in place. Now the checkpoint's mesh identity
    covers periodicity, connectivity, boundary tags and materials: refused
    (exit 2, the part named) at --restart and at --dry-run --restart.
 19. (part) a value not finite at a late step (rhs 1/(t-0.4) at t = 0.4)
    exited 2 with the load-time text (no step, no t) and dropped the solved
    steps' outputs. Now the message names the key, its line:col, the step
    and t; the steps before it are committed (summary.yaml: reason
    data_not_finite), exit 2. The same for a boundary value and for the
    exact solution where the error norms are due (its norms were inf, exit 0)."""
import csv
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, finish, hexcg, setup, summary_section  # noqa: E402

a, W = setup(case=False)
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def write(name, text):
    path = os.path.join(W, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def rows(out):
    p = os.path.join(W, out, "steps.csv")
    return list(csv.DictReader(open(p))) if os.path.exists(p) else []


def summary_time(out):
    return summary_section(os.path.join(W, out, "summary.yaml"), "time")


def summary_reason(out):
    m = re.search(r"^\s*reason:\s*(\S+)", open(os.path.join(W, out, "summary.yaml")).read(), re.M)
    return m.group(1).strip('"') if m else None


def ck_run_id(out):
    m = re.search(r"^run_id: (\S+)", open(os.path.join(W, out, "checkpoint", "checkpoint.yaml")).read(), re.M)
    return m.group(1) if m else None


def series_ids(out):
    """series frame file -> its run_id attribute (None: none); not the series' mesh.h5, which every
    segment writes anew (the same mesh: no run's)"""
    import h5py
    d = os.path.join(W, out, "series")
    r = {}
    for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if n == "mesh.h5":
            continue
        with h5py.File(os.path.join(d, n), "r") as f:
            v = f.attrs.get("run_id")
            r[n] = v.decode() if isinstance(v, bytes) else (str(v) if v is not None else None)
    return r


def u_of(path):
    import h5py
    import numpy as np
    with h5py.File(path, "r") as f:
        return np.array(f["fields/u"][()])


def place_checkpoint(src, dst):
    """what a kill after src's checkpoint (before src's commit) leaves in dst"""
    shutil.rmtree(os.path.join(W, dst, "checkpoint"), ignore_errors=True)
    os.makedirs(os.path.join(W, dst), exist_ok=True)
    shutil.copytree(os.path.join(W, src, "checkpoint"), os.path.join(W, dst, "checkpoint"))


HEAT = """mesh: {type: box, elements: [2, 2, 2]}
order: 2
time: {scheme: bdf2, dt: 0.1, steps: %d, checkpoint_every: 2, output_every: 2}
solver: {projection: 0, tol: 1.0e-12}  # enough iterations in step 5 for the kill below
problem:
  rhs: "%s"
  exact: "0"
  boundary:
    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: 0}
"""
A6 = write("a6.yaml", HEAT % (6, "1 + x"))
B4 = write("b4.yaml", HEAT % (4, "2 - y"))  # B's run killed after its step-4 checkpoint, simulated
B6 = write("b6.yaml", HEAT % (6, "2 - y"))

# ---------------------------------------------------------------- 8. provenance of carried rows and files
rc, so, se = hexcg(["run", B6, "--output", "bref", "--quiet"])
check(rc == 0, f"B's uninterrupted run: rc {rc} {se[-300:]!r}")
ref = rows("bref")
rid_ref = summary_time("bref").get("run_id")
check(rid_ref and re.fullmatch(r"[0-9a-f]{16}", rid_ref) and all(r.get("run_id") == rid_ref for r in ref) and
      ck_run_id("bref") == rid_ref and set(series_ids("bref").values()) == {rid_ref},
      f"one run id in summary.yaml, steps.csv, checkpoint.yaml and the series files: {rid_ref}")
rc, so, se = hexcg(["run", A6, "--output", "d8", "--quiet"])
check(rc == 0, f"A's run: rc {rc} {se[-300:]!r}")
rid_a = summary_time("d8").get("run_id")
rc, so, se = hexcg(["run", B4, "--output", "b4", "--quiet"])
check(rc == 0, f"B to step 4: rc {rc} {se[-300:]!r}")
rid_b = ck_run_id("b4")
place_checkpoint("b4", "d8")
rc, so, se = hexcg(["run", B6, "--restart", os.path.join(W, "d8"), "--output", "d8"])
got = rows("d8")
TIMING = ("seconds", "projection_s", "run_id")
strip = lambda rs: [{k: v for k, v in r.items() if k not in TIMING} for r in rs]  # noqa: E731
check(rc == 0 and [r["step"] for r in got] == ["5", "6"] and strip(got) == strip(ref[-2:]),
      f"B restarted over A's folder: rc {rc}, steps {[r['step'] for r in got]} (A's rows must not be carried) "
      f"{se[-300:]!r}")
check(all(r.get("run_id") == rid_b for r in got) and summary_time("d8").get("run_id") == rid_b and rid_a != rid_b,
      f"the continuation keeps B's run id {rid_b} (A's {rid_a}): {[r.get('run_id') for r in got]}")
ids = series_ids("d8")
check(ids == {"solution_000006.h5": rid_b}, f"no series file of A carried: {ids}")
check("dropped: of another run than the checkpoint's" in so, f"the log says what was dropped: {so[-600:]!r}")

# the real kill: a --force run of B over A's folder, SIGTERM at step 5 and a
# second one while it finishes (the process ends with the step-4 checkpoint)
rc, so, se = hexcg(["run", A6, "--output", "k8", "--quiet"])
os.environ["HEXCG_TEST_SIGNAL"] = "5:1:1:2"
rc, so, se = hexcg(["run", B6, "--output", "k8", "--quiet", "--force"], ranks=2)
del os.environ["HEXCG_TEST_SIGNAL"]
killed = rc != 0 and rc != 5 and os.path.exists(os.path.join(W, "k8", "checkpoint", "checkpoint.yaml"))
if check(killed, f"B killed after its step-4 checkpoint: rc {rc} {se[-200:]!r}"):
    check(re.search(r"^step: 4$", open(os.path.join(W, "k8", "checkpoint", "checkpoint.yaml")).read(), re.M),
          "the checkpoint left is B's step 4")
    rid_k = ck_run_id("k8")
    rc, so, se = hexcg(["run", B6, "--restart", os.path.join(W, "k8"), "--output", "k8", "--quiet"], ranks=2)
    got = rows("k8")
    check(rc == 0 and [r["step"] for r in got] == ["5", "6"] and all(r.get("run_id") == rid_k for r in got) and
          series_ids("k8") == {"solution_000006.h5": rid_k},
          f"after a real kill: rc {rc}, steps {[r['step'] for r in got]}, series {series_ids('k8')} {se[-300:]!r}")

# a restart of the run's own folder still carries its own rows and files
rc, so, se = hexcg(["run", B4, "--output", "own", "--quiet"])
rc, so, se = hexcg(["run", B6, "--restart", os.path.join(W, "own"), "--output", "own", "--quiet"])
got = rows("own")
check(rc == 0 and strip(got) == strip(ref) and list(series_ids("own")) == list(series_ids("bref")),
      f"B's own folder continued: rc {rc}, steps {[r['step'] for r in got]}, series {list(series_ids('own'))}")

# ---------------------------------------------------------------- 9. "complete" only for this run's committed set
for label, before in (("an empty folder", None), ("A's results", A6)):
    out = "d9" + ("a" if before else "e")
    shutil.rmtree(os.path.join(W, out), ignore_errors=True)
    if before:
        rc, so, se = hexcg(["run", before, "--output", out, "--quiet"])
    place_checkpoint("bref", out)  # B's final checkpoint, killed before its commit
    rc, so, se = hexcg(["run", B6, "--restart", os.path.join(W, out), "--output", out])
    st = summary_time(out)
    sfile = os.path.join(W, out, "series", "solution_000006.h5")
    same_u = os.path.exists(sfile) and (u_of(sfile) == u_of(os.path.join(W, "bref", "series",
                                                                         "solution_000006.h5"))).all()
    check(rc == 0 and "the run is complete" not in so and st.get("run_id") == rid_ref and st.get("last_step") == "6"
          and same_u and os.path.exists(os.path.join(W, out, "solution.xdmf")) and
          series_ids(out) == {"solution_000006.h5": rid_ref},
          f"B's last checkpoint over {label}: rc {rc}, summary {st}, u(6) {'B' if same_u else 'missing/wrong'} "
          f"{so[-400:]!r} {se[-200:]!r}")
    # the rebuilt set is complete: a repeated job changes nothing
    mtime = lambda: os.stat(os.path.join(W, out, "summary.yaml")).st_mtime_ns if os.path.exists(  # noqa: E731
        os.path.join(W, out, "summary.yaml")) else None
    mt = mtime()
    rc, so, se = hexcg(["run", B6, "--restart", os.path.join(W, out), "--output", out])
    check(rc == 0 and "the run is complete" in so and mt is not None and mtime() == mt,
          f"the rebuilt set is complete ({label}): rc {rc} {so[-300:]!r}")

# this run's committed set ends before the last step: a segment interrupted
# after step 3 (exit 5), continued to the end, killed after its final
# checkpoint and before its commit (the step-3 set put back)
d9s = os.path.join(W, "d9s")
os.environ["HEXCG_TEST_SIGNAL"] = "3:1:0"
rc, so, se = hexcg(["run", B6, "--output", "d9s", "--quiet", "--force"])
del os.environ["HEXCG_TEST_SIGNAL"]
check(rc == 5, f"B interrupted at step 3: rc {rc} {se[-200:]!r}")
rid_s = summary_time("d9s").get("run_id")
saved = os.path.join(W, "d9s-set")
shutil.rmtree(saved, ignore_errors=True)
shutil.copytree(d9s, saved, symlinks=True, ignore=shutil.ignore_patterns("checkpoint*"))
rc, so, se = hexcg(["run", B6, "--restart", d9s, "--output", "d9s", "--quiet"])
check(rc == 0 and summary_time("d9s").get("last_step") == "6", f"B continued to the end: rc {rc} {se[-200:]!r}")
for n in os.listdir(d9s):
    if not n.startswith("checkpoint"):
        p_ = os.path.join(d9s, n)
        shutil.rmtree(p_) if os.path.isdir(p_) and not os.path.islink(p_) else os.remove(p_)
shutil.copytree(saved, d9s, symlinks=True, dirs_exist_ok=True)
rc, so, se = hexcg(["run", B6, "--restart", d9s, "--output", "d9s"])
check(rc == 0 and "the outputs are rebuilt from the checkpoint" in so and
      [r["step"] for r in rows("d9s")] == ["2", "3"] and summary_time("d9s").get("last_step") == "6" and
      series_ids("d9s") == {"solution_000000.h5": rid_s, "solution_000002.h5": rid_s, "solution_000006.h5": rid_s},
      f"this run's set at step 3, its checkpoint at 6: rc {rc}, steps {[r['step'] for r in rows('d9s')]}, "
      f"summary {summary_time('d9s').get('last_step')}, series {series_ids('d9s')} {so[-300:]!r}")

# ---------------------------------------------------------------- 12. the mesh beyond its GLL nodes
PER = """mesh: {type: box, elements: [2, 2, 2]%s}
order: 2
time: {scheme: bdf2, dt: 0.1, steps: %d}
problem:
  rhs: "1"
  exact: "0"
  boundary:
    - {tags: [ymin, ymax, zmin, zmax], type: dirichlet, value: 0}
"""
rc, so, se = hexcg(["run", write("plain2.yaml", PER % ("", 2)), "--output", "m12", "--quiet"])
check(rc == 0, f"box run: rc {rc} {se[-300:]!r}")
per4 = write("per4.yaml", PER % (", periodic: [x]", 4))
for dry in ([], ["--dry-run"]):
    rc, so, se = hexcg(["run", per4, "--restart", os.path.join(W, "m12"), "--output", "m12", "--quiet"] + dry)
    check(rc == 2 and "is of another mesh" in se and "periodicity" in se and
          not os.path.exists(os.path.join(W, "m12", "series", "solution_000004.h5")),
          f"a box checkpoint restarted periodic {dry}: rc {rc} {se[-300:]!r}")
rc, so, se = hexcg(["run", write("plain4.yaml", PER % ("", 4)), "--restart", os.path.join(W, "m12"), "--output",
                    "m12", "--quiet"])
check(rc == 0, f"the same box continues: rc {rc} {se[-300:]!r}")

msh = os.path.join(W, "two.msh")
shutil.copy(os.path.join(SRC, "configs", "meshes", "two_materials.msh"), msh)
GM = """mesh: {type: gmsh, file: two.msh}
order: 2
time: {scheme: bdf2, dt: 0.1, steps: %d}
problem:
  kappa: {steel: 1, copper: 2}
  rhs: "1"
  exact: "0"
  boundary:
    - {tags: [inlet], type: dirichlet, value: 0}
    - {tags: [outlet, wall], type: neumann, value: 1}
"""
gm2, gm4 = write("gm2.yaml", GM % 2), write("gm4.yaml", GM % 4)
original = open(msh).read()
for what, swap in (("boundary tags", ('"inlet"', '"outlet"')), ("materials", ('"steel"', '"copper"'))):
    open(msh, "w").write(original)
    rc, so, se = hexcg(["run", gm2, "--output", "g12", "--quiet", "--force"])
    check(rc == 0, f"gmsh run: rc {rc} {se[-300:]!r}")
    x, y = swap
    open(msh, "w").write(original.replace(x, "@").replace(y, x).replace("@", y))  # swapped in place
    for dry in ([], ["--dry-run"]):
        rc, so, se = hexcg(["run", gm4, "--restart", os.path.join(W, "g12"), "--output", "g12", "--quiet"] + dry)
        check(rc == 2 and "is of another mesh" in se and what in se,
              f"gmsh {swap} swapped {dry}: rc {rc} {se[-300:]!r}")
open(msh, "w").write(original)

# ---------------------------------------------------------------- 19. a value not finite at a late step
LATE = """mesh: {type: box, elements: [2, 2, 2]}
order: 2
time: {scheme: bdf2, dt: 0.1, steps: 6, initial: "0", output_every: 1}
problem:
  rhs: "1/(t-0.4)"
  boundary:
    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: 0}
"""
late = write("late.yaml", LATE)
for ranks in (1, 2):
    out = f"late{ranks}"
    rc, so, se = hexcg(["run", late, "--output", out, "--quiet"], ranks=ranks)
    m = re.search(r"late\.yaml:(\d+):(\d+): problem\.rhs: .*step 4 \(t = 0\.4", se)
    got = rows(out)
    check(rc == 2 and m and m.group(1) == "5" and [r["step"] for r in got] == ["1", "2", "3"] and
          os.path.exists(os.path.join(W, out, "series", "solution_000003.h5")) and
          summary_reason(out) == "data_not_finite" and not os.path.exists(os.path.join(W, out, ".hexcg-new")),
          f"rhs 1/(t-0.4) on {ranks} rank(s): rc {rc}, steps {[r['step'] for r in got]}, {se[-400:]!r}")


def late_value(name, text, where, label):
    """The case name.yaml (text) with a value not finite from step 4 on:
    exit status 2, the message naming the file at where (a regular
    expression of line:column: key) and the step, steps 1-3 written, the
    summary's reason data_not_finite."""
    rc, so, se = hexcg(["run", write(f"{name}.yaml", text), "--output", name, "--quiet"])
    got = rows(name)
    check(rc == 2 and re.search(name + r"\.yaml:" + where + r".*step 4 \(t = 0\.4", se) and
          [r["step"] for r in got] == ["1", "2", "3"] and summary_reason(name) == "data_not_finite",
          f"{label}: rc {rc}, steps {[r['step'] for r in got]}, {se[-400:]!r}")


# a boundary value: the same, named by its key and position
late_value("late_bc", LATE.replace('rhs: "1/(t-0.4)"', 'rhs: "1"').replace("value: 0}", 'value: "x/(t-0.4)"}'),
           r"7:\d+: problem\.boundary", "boundary value x/(t-0.4)")
# the exact solution (the error norms'): the same
late_value("late_ex", LATE.replace('rhs: "1/(t-0.4)"', 'rhs: "1"\n  exact: "1/(t-0.4)"'),
           r"6:\d+: problem\.exact: ", "exact 1/(t-0.4)")
# at the first step: nothing of the run written, the step named
early = write("early.yaml", LATE.replace("t-0.4", "t-0.1"))
rc, so, se = hexcg(["run", early, "--output", "early", "--quiet"])
check(rc == 2 and "step 1 (t = 0.1" in se and "early.yaml:5:" in se and not os.path.exists(os.path.join(W, "early")),
      f"rhs 1/(t-0.1): rc {rc} {se[-300:]!r}")

finish("restart checks ok")
