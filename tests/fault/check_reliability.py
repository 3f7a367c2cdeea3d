#!/usr/bin/python3
"""The hostile trial's defects (issue 53), each a case that ended in a false
success, a lost or foreign result or a bad message before its fix:

 1. order 1 where an element's Schwarz box has no free node in a direction
    (every node Dirichlet: a one-element-thick box) with pmg, asm and
    Jacobi on 1-3 ranks: LAPACK's dsygv was called with n = 0 and its error
    handler ended the process with status 0 and nothing written. Now the run
    solves (0 iterations: no unknowns) and writes its results.
 2. the stopping test was PCG's recursive residual: tol 1e-14 or 1e-30
    "converged" (exit 0) while b - A x was far larger. Now the true residual
    is checked and reported; a tolerance the arithmetic cannot reach ends in
    exit 3 (diverged_stagnation or max_iterations), never exit 0.
 5. ranks started with different arguments (an MPMD launch) each applied
    their own options: a mixed solve "converged" with exit 0 and an
    unreadable solution.h5; --dry-run on one rank only hung. Now refused
    with exit 2 before anything is read or written.
 7. a time axis that overflows (dt 1e308 or 5e307 with 10 steps: infinite
    times, exit 0) is refused at the case's time.dt with exit 2.
 10. a kill while a checkpoint was written left checkpoint.new/*.h5.tmp, and
    every later run into the folder (a --force run, a --restart) died at its
    first checkpoint with "cannot create checkpoint.new: File exists"; now
    the partial checkpoint is removed (hexcg's own names only: a user's file
    there stays, and the run says why it cannot write).
 11. one flipped bit in checkpoint.yaml (step 4 -> 6, levels 2 -> 1) was
    accepted and the run went on from the wrong time; now the file carries
    a checksum and its fields are cross-checked (t = step dt, levels <=
    step + 1), also in a checkpoint of the earlier format without one.
 13. --restart read steps.csv and history.csv with fopen: a FIFO blocked
    forever and /dev/zero read until memory ran out; now a non-regular
    file is refused at once, naming it (exit 2).
 14. --dry-run --restart checked neither that a checkpoint exists nor that
    it fits the case (exit 0 either way); now both are checked (exit 2 with
    the reason), the mesh's node hash when the run reads it.
 15. --force and --restart emptied DIR/series (and DIR/.hexcg-new) with a
    walk that followed a symbolic link: every plain file of the link's
    target was deleted; a user's file inside a real series/ went too. Now no
    link is followed (the link itself is replaced) and only hexcg's own
    names are removed.
 18. kappa 1e306 (then documented as valid) ended in internal messages
    ("assembled diagonal ... is -nan", "r.Sr = 0"); kappa and lambda are
    now bounded by 1e250, refused at the key (a number) or at the GLL node
    (an expression), exit 2.
 19. (in part) an expression with a lone '.' made libmatheval's lexer echo
    it to stdout, under --quiet too; now refused before libmatheval sees it,
    naming the character's position, with nothing on stdout."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, finish, hexcg, setup  # noqa: E402

a, W = setup(case=False)


def write(name, text):
    path = os.path.join(W, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def summary_value(out, key):
    m = re.search(r"^\s*" + re.escape(key) + r":\s*(\S+)", open(os.path.join(W, out, "summary.yaml")).read(), re.M)
    return m.group(1) if m else None


BOX = """mesh: {type: box, elements: %s}
order: %d
problem:
  rhs: "3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)"
  exact: "sin(pi*x)*sin(pi*y)*sin(pi*z)"
  boundary:
    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}
preconditioner: {type: %s}
"""

# 1. no free node in a direction at p = 1
for elems in ("[3, 3, 1]", "[3, 1, 1]"):
    for pc in ("pmg", "asm", "jacobi"):
        for ranks in (1, 2, 3):
            case = write("fin.yaml", BOX % (elems, 1, pc))
            out = f"fin-{pc}-{ranks}-{elems.count('1')}"
            rc, so, se = hexcg(["run", case, "--output", out, "--quiet"], ranks=ranks)
            ok = rc == 0 and os.path.exists(os.path.join(W, out, "solution.h5"))
            check(ok and "illegal value" not in so + se and summary_value(out, "iterations") == "0",
                  f"fin {elems} {pc} on {ranks} ranks: rc {rc}, solution.h5 "
                  f"{os.path.exists(os.path.join(W, out, 'solution.h5'))}: {(so + se)[-300:]!r}")

# 2. a tolerance below round-off is never reported as converged
for tol, ranks in (("1.0e-14", 1), ("1.0e-30", 2)):
    case = write("tight.yaml", BOX % ("[4, 4, 4]", 5, "jacobi") + f"solver: {{tol: {tol}, max_iterations: 400}}\n")
    rc, so, se = hexcg(["run", case, "--output", "tight", "--quiet", "--force"], ranks=ranks)
    reason = summary_value("tight", "reason")
    rel = float(summary_value("tight", "final_rel_residual") or "nan")
    # 1e-30: out of reach (before: "converged" at 9e-31, exit 0); 1e-14: at the edge,
    # either converged on the true residual or stopped with exit 3
    stopped = rc == 3 and reason in ('"diverged_stagnation"', '"diverged_max_iterations"') and 1e-16 < rel < 1e-10
    met = rc == 0 and reason == '"converged_rtol"' and rel <= float(tol) and tol != "1.0e-30"
    check(stopped or met, f"tol {tol} on {ranks} ranks: rc {rc}, reason {reason}, final_rel_residual {rel}")
# an ordinary tolerance: converged on the true residual
case = write("ok.yaml", BOX % ("[4, 4, 4]", 5, "jacobi") + "solver: {tol: 1.0e-8}\n")
rc, so, se = hexcg(["run", case, "--output", "okt", "--quiet", "--force"])
check(rc == 0 and float(summary_value("okt", "final_rel_residual")) <= 1e-8, f"tol 1e-8: rc {rc} {se[-200:]!r}")

# 5. ranks with different command lines
base = write("mpmd.yaml", BOX % ("[2, 2, 2]", 2, "jacobi"))
for extra0, extra1 in ((["--set", "order=3"], ["--set", "order=4"]), (["--dry-run"], [])):
    cmd = [a.mpiexec, "-n", "1", a.hexcg, "run", base, "--output", "mpmd", "--quiet"] + extra0 + \
          [":", "-n", "1", a.hexcg, "run", base, "--output", "mpmd", "--quiet"] + extra1
    try:
        p = subprocess.run(cmd, cwd=W, capture_output=True, text=True, timeout=60)
        rc, se = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, se = None, "timed out (hung)"
    check(rc == 2 and "started with different arguments: rank 1's differ" in se
          and not os.path.exists(os.path.join(W, "mpmd")), f"MPMD {extra0} : {extra1}: rc {rc} {se[-300:]!r}")

# 7. a time axis that overflows the double range
HEAT = """mesh: {type: box, elements: [2, 2, 2]}
order: 2
time: {scheme: bdf2, dt: %s, steps: 10}
problem:
  rhs: "1"
  exact: "0"
  boundary:
    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: 0}
"""
for dt in ("1.0e308", "5.0e307"):
    case = write("ovf.yaml", HEAT % dt)
    rc, so, se = hexcg(["run", case, "--output", "ovf", "--quiet"])
    check(rc == 2 and se.startswith(case + ":3:") and "time.dt:" in se and "double range" in se
          and not os.path.exists(os.path.join(W, "ovf")),
          f"time.dt {dt}: rc {rc}, {se[:300]!r}")

# 10. a partial checkpoint.new left by a kill during its write
HEAT2 = HEAT % "0.1"
case = write("heat.yaml", HEAT2.replace("steps: 10", "steps: 4, checkpoint_every: 2"))
case6 = write("heat6.yaml", HEAT2.replace("steps: 10", "steps: 6, checkpoint_every: 2"))
rc, so, se = hexcg(["run", case, "--output", "ck", "--quiet"])
check(rc == 0, f"heat run: rc {rc} {se[-300:]!r}")
for how in ("--force", "--restart"):
    part = os.path.join(W, "ck", "checkpoint.new")
    os.makedirs(part, exist_ok=True)
    for n in ("u_0.h5.tmp", "u_1.h5", "checkpoint.yaml.tmp"):
        open(os.path.join(part, n), "w").write("partial")
    args = ["run", case, "--output", "ck", "--quiet", "--force"] if how == "--force" else \
        ["run", case, "--restart", os.path.join(W, "ck"), "--output", "ck", "--quiet"]
    rc, so, se = hexcg(args)
    check(rc == 0 and not os.path.exists(part) and os.path.exists(os.path.join(W, "ck", "checkpoint", "checkpoint.yaml")),
          f"{how} over a partial checkpoint.new: rc {rc} {se[-300:]!r}")
# a file of the user's in checkpoint.new: kept, and the run says so
part = os.path.join(W, "ck", "checkpoint.new")
os.makedirs(part, exist_ok=True)
open(os.path.join(part, "notes.txt"), "w").write("mine")
rc, so, se = hexcg(["run", case, "--output", "ck", "--quiet", "--force"])
check(rc != 0 and "holds files hexcg did not write" in se and open(os.path.join(part, "notes.txt")).read() == "mine",
      f"a user's file in checkpoint.new: rc {rc} {se[-300:]!r}")

# 11. a corrupt checkpoint.yaml
import re as _re  # noqa: E402
for edit, fmt1 in ((("step: 4", "step: 6"), False), (("levels: 2", "levels: 1"), False),
                   (("step: 4", "step: 2"), True), (("levels: 2", "levels: 1"), True)):
    rc, so, se = hexcg(["run", case, "--output", "cy", "--quiet", "--force"])
    y = os.path.join(W, "cy", "checkpoint", "checkpoint.yaml")
    text = open(y).read()
    check(edit[0] in text and "checksum: " in text, f"checkpoint.yaml has {edit[0]!r} and a checksum")
    text = text.replace(edit[0], edit[1])
    if fmt1:  # the earlier format: no checksum line
        text = _re.sub(r"checksum: .*\n", "", text).replace("hexcg-checkpoint-2", "hexcg-checkpoint-1")
    open(y, "w").write(text)
    rc, so, se = hexcg(["run", case6, "--restart", os.path.join(W, "cy"), "--output", "cy", "--quiet"])
    check(rc == 2 and "corrupt" in se, f"checkpoint.yaml with {edit[1]!r} (format {1 if fmt1 else 2}): rc {rc} {se[-250:]!r}")

# 13. a FIFO or a device where the previous run's tables are
for table in ("steps.csv", "history.csv"):
    for kind in ("fifo", "/dev/zero"):
        rc, so, se = hexcg(["run", case, "--output", "tb", "--quiet", "--force"])
        p = os.path.join(W, "tb", table)
        os.remove(p)
        if kind == "fifo":
            os.mkfifo(p)
        else:
            os.symlink("/dev/zero", p)
        try:
            rc, so, se = hexcg(["run", case6, "--restart", os.path.join(W, "tb"), "--output", "tb", "--quiet"],
                               timeout=60)
        except subprocess.TimeoutExpired:
            rc, se = None, "timed out"
        check(rc == 2 and f"'{os.path.join('tb', table)}'" in se.replace(W + "/", "") and "not a regular file" in se,
              f"{table} as {kind}: rc {rc} {se[-300:]!r}")
        os.remove(p)

# 14. a dry run of a restart checks the checkpoint
rc, so, se = hexcg(["run", case, "--output", "dr", "--quiet", "--force"])
rc, so, se = hexcg(["run", case6, "--restart", os.path.join(W, "dr"), "--output", "dr", "--dry-run"])
check(rc == 0 and "dry run: --restart from" in so and "it fits the case" in so, f"dry restart: rc {rc} {se[-200:]!r}")
rc, so, se = hexcg(["run", case6, "--restart", os.path.join(W, "nothere"), "--output", "dr", "--dry-run", "--quiet"])
check(rc == 2 and "no checkpoint there" in se, f"dry restart without a checkpoint: rc {rc} {se[-200:]!r}")
other = write("heat_dt.yaml", open(case6).read().replace("dt: 0.1", "dt: 0.05"))
rc, so, se = hexcg(["run", other, "--restart", os.path.join(W, "dr"), "--output", "dr", "--dry-run", "--quiet"])
check(rc == 2 and "is of another case: time.dt differs" in se, f"dry restart of another case: rc {rc} {se[-200:]!r}")

# 15. removals never follow a link, and remove only hexcg's own names
outside = os.path.join(W, "outside")
for how in ("--force", "--restart"):
    for link in ("series", ".hexcg-new"):
        shutil.rmtree(outside, ignore_errors=True)
        os.makedirs(outside)
        for n in ("precious.dat", "solution_000002.h5"):
            open(os.path.join(outside, n), "w").write("keep me")
        rc, so, se = hexcg(["run", case, "--output", "sl", "--quiet", "--force"])
        target = os.path.join(W, "sl", link)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        elif os.path.islink(target):  # hexcg's own link series -> .hexcg-current/series
            os.remove(target)
        os.symlink(outside, target)
        args = ["run", case, "--output", "sl", "--quiet", "--force"] if how == "--force" else \
            ["run", case6, "--restart", os.path.join(W, "sl"), "--output", "sl", "--quiet"]
        rc, so, se = hexcg(args)
        kept = sorted(os.listdir(outside)) == ["precious.dat", "solution_000002.h5"]
        # the user's link is replaced by hexcg's own (series -> .hexcg-current/series, issue 53 defect 16)
        ours = not os.path.islink(target) or os.readlink(target) == f".hexcg-current/{link}"
        check(rc == 0 and kept and ours,
              f"{how} with {link} a link: rc {rc}, outside {sorted(os.listdir(outside))}, {se[-300:]!r}")
    # a user's file inside a real series/
    rc, so, se = hexcg(["run", case, "--output", "us", "--quiet", "--force"])
    mine = os.path.join(W, "us", "series", "my_notes.txt")
    open(mine, "w").write("mine")
    args = ["run", case, "--output", "us", "--quiet", "--force"] if how == "--force" else \
        ["run", case6, "--restart", os.path.join(W, "us"), "--output", "us", "--quiet"]
    rc, so, se = hexcg(args)
    series = sorted(os.listdir(os.path.join(W, "us", "series"))) if os.path.isdir(os.path.join(W, "us", "series")) else []
    check(rc == 0 and os.path.exists(mine) and any(n.startswith("solution_") for n in series),
          f"{how} with a user's file in series/: rc {rc}, series {series}, {se[-300:]!r}")

# 18. coefficients beyond what the operator can hold
for key, val, want in (("kappa", "1.0e306", "problem.kappa: must be in (0, 1e+250], got 1e+306"),
                       ("lambda", "1.0e300", "problem.lambda: must be in [0, 1e+250], got 1e+300"),
                       ("kappa", '"exp(709*x)"', "kappa must be finite, > 0 and <= 1e250 at every node")):
    case = write("big.yaml", BOX % ("[2, 2, 2]", 3, "jacobi") + f"problem_override: 0\n")
    text = open(case).read().replace("problem_override: 0\n", "").replace("problem:\n", f"problem:\n  {key}: {val}\n")
    open(case, "w").write(text)
    rc, so, se = hexcg(["run", case, "--output", "big", "--quiet", "--force"])
    check(rc == 2 and want in se and "nan" not in se, f"{key} {val}: rc {rc} {se[-250:]!r}")
ok250 = (BOX % ("[2, 2, 2]", 3, "jacobi")).replace("problem:\n", "problem:\n  kappa: 1.0e250\n")
rc, so, se = hexcg(["run", write("ok250.yaml", ok250.replace("3*pi^2*", "3e250*pi^2*")), "--output", "big2", "--quiet",
                    "--force"])
check(rc == 0, f"kappa 1e250 (the bound) solves: rc {rc} {se[-250:]!r}")

# 19. a '.' outside a number: refused, nothing echoed on stdout
for expr, pos in ((".", 1), ("x+.", 3), ("sin(x).", 7)):
    case = write("dot.yaml", (BOX % ("[2, 2, 2]", 2, "jacobi")).replace('rhs: "3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)"',
                                                                        f'rhs: "{expr}"'))
    rc, so, se = hexcg(["run", case, "--output", "dot", "--quiet", "--dry-run"])
    check(rc == 2 and so == "" and f"a '.' that is not part of a number at character {pos}" in se,
          f"rhs {expr!r}: rc {rc}, stdout {so!r}, {se[-200:]!r}")
for expr in (".5*x", "2.*x", "1.e3*x"):
    case = write("dot.yaml", (BOX % ("[2, 2, 2]", 2, "jacobi")).replace('rhs: "3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)"',
                                                                        f'rhs: "{expr}"'))
    rc, so, se = hexcg(["run", case, "--output", "dot2", "--quiet", "--dry-run", "--force"])
    check(rc == 0, f"rhs {expr!r} is a number: rc {rc} {se[-200:]!r}")

finish("reliability checks ok")
