#!/usr/bin/python3
"""The `hexcg run` command line, without a solve (--dry-run): --output,
--force, --set, --quiet/--verbose, the effective case and its reload, a
missing case file, usage errors, one message on 2 ranks, and every example
case in configs/ being valid."""
import glob
import os
import shutil
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, failures, setup  # noqa: E402

a, _ = setup(source=True, clean=False)


def run(args, ranks=1, cwd=None):
    p = subprocess.run([a.mpiexec, "-n", str(ranks), a.hexcg, "run"] + args, cwd=cwd or a.work,
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


shutil.rmtree(a.work, ignore_errors=True)
os.makedirs(a.work)
box = os.path.join(a.source, "configs", "poisson_box.yaml")
W = a.work

# missing case file, usage errors
rc, out, err = run(["no-such-case.yaml"])
check(rc == 2 and err == "cannot read case file 'no-such-case.yaml': No such file or directory\n",
      f"missing case file: rc {rc}, stderr {err!r}")
rc, out, err = run([])
check(rc == 2 and "no case file given" in err and "usage: hexcg run" in err, f"no case: rc {rc} {err!r}")
rc, out, err = run([box, "--frobnicate"])
check(rc == 2 and "unknown option '--frobnicate'" in err, f"unknown option: rc {rc} {err!r}")
rc, out, err = run([box, "--progress-every", "x"])
check(rc == 2 and "--progress-every expects an integer" in err, f"bad --progress-every: rc {rc} {err!r}")
rc, out, err = run([box, "--quiet", "--verbose"])
check(rc == 2, f"--quiet --verbose: rc {rc}")
check(not os.path.exists(os.path.join(W, "out")), "usage errors wrote nothing")

# first run creates the folder and the effective case
d = os.path.join(W, "a")
rc, out, err = run([box, "--dry-run", "--output", d])
eff = os.path.join(d, "case.yaml")
check(rc == 0 and os.path.isfile(eff), f"dry run: rc {rc} {err!r}")
check("dry run" in out and "poisson_box" in out, f"setup printed: {out!r}")
check(not [f for f in os.listdir(d) if f.endswith(".tmp")], "no temporary files left")
first = open(eff).read()
check(yaml.safe_load(first).get("operator") == {"geometry": "fp64"}, "operator.geometry default fp64 written")
open(os.path.join(d, "keep.txt"), "w").write("user file\n")

# a folder left by a dry run (case.yaml alone) is no result: the next run may use it
rc, out, err = run([box, "--dry-run", "--output", d, "--set", "order=6"])
check(rc == 0 and "order: 6" in open(eff).read(), f"dry-run folder reused: rc {rc} {err!r}")
rc, out, err = run([box, "--dry-run", "--output", d])
first = open(eff).read()
# a folder with results: a dry run validates, writes nothing into it and says
# that the run needs --force (which refuses it without, and leaves it alone)
open(os.path.join(d, "summary.yaml"), "w").write("# results of an earlier run\n")
rc, out, err = run([box, "--dry-run", "--output", d, "--set", "order=5"])
check(rc == 0 and "kept as they are; the run needs --force" in out and err == "",
      f"dry run into a folder with results: rc {rc} {out!r} {err!r}")
listed = sorted(n for n in os.listdir(d) if not n.startswith("."))  # the protocol's dot-entries aside
check(open(eff).read() == first and listed == ["case.yaml", "keep.txt", "summary.yaml"],
      f"dry run wrote nothing: {listed}")
rc, out, err = run([box, "--output", d, "--set", "order=2", "--set", "mesh.elements=[2,2,2]"])
check(rc == 2 and err == f"output directory '{d}' exists; use --force to overwrite it\n",
      f"existing folder: rc {rc} {err!r}")
check(open(eff).read() == first, "case.yaml unchanged without --force")
rc, out, err = run([box, "--output", d, "--set", "order=2", "--set", "mesh.elements=[2,2,2]"], ranks=2)
check(rc == 2 and err.count("exists; use --force") == 1, f"np2 existing folder: one message, rc {rc} {err!r}")
# a dry run with --force validates but keeps the earlier results with their case.yaml
rc, out, err = run([box, "--dry-run", "--output", d, "--force", "--set", "order=5"])
check(rc == 0 and "kept" in out and open(eff).read() == first, f"dry run keeps results: rc {rc} {out!r} {err!r}")
os.remove(os.path.join(d, "summary.yaml"))
# --output --force: a missing value, not a folder named --force
rc, out, err = run([box, "--dry-run", "--output", "--force"])
check(rc == 2 and "option --output needs a value" in err and not os.path.exists(os.path.join(W, "--force")),
      f"--output --force: rc {rc} {err!r}")

# --force with overrides
sets = ["order=5", "mesh.elements=[2, 3, 4]", "solver.tol=1e-10",
        "problem.boundary.0.value=x*y+1", "problem.rhs=0", "mesh.partitioner=metis",
        "output.history=false", "preconditioner.type=none", "problem.kappa={box: 2.5}",
        "operator.geometry=split"]
args = [box, "--dry-run", "--output", d, "--force", "--progress-every", "7"]
for s in sets:
    args += ["--set", s]
rc, out, err = run(args)
check(rc == 0, f"--force with --set: rc {rc} {err!r}")
c = yaml.safe_load(open(eff))
check(c["order"] == 5, f"order {c['order']}")
check(c["mesh"]["elements"] == [2, 3, 4], f"elements {c['mesh']['elements']}")
check(c["solver"]["tol"] == 1e-10, f"tol {c['solver']['tol']}")
check(c["backend"] == "cpu", f"backend {c['backend']}")
check(c["problem"]["boundary"][0]["value"] == "x*y+1", f"bc value {c['problem']['boundary'][0]}")
check(c["problem"]["rhs"] == "0", f"rhs {c['problem']['rhs']}")
check(c["problem"]["kappa"] == {"box": 2.5}, f"kappa {c['problem']['kappa']}")
check(c["mesh"]["partitioner"] == "metis", "partitioner")
check(c["output"]["history"] is False and c["output"]["solution"] is True, "output flags")
check(c["output"]["progress_every"] == 7, "progress_every from the command line")
check(c["preconditioner"]["type"] == "none", "preconditioner")
check(c["operator"] == {"geometry": "split"}, f"operator {c.get('operator')}")
check(c["output"]["dir"] == d, f"output.dir {c['output']['dir']}")
check(c["problem"]["exact"] == "sin(pi*x)*sin(pi*y)*sin(pi*z)", "exact kept")
check(c["mesh"]["extent"] == [[0.0, 1.0]] * 3 and c["mesh"]["deform"] == 0.0, "defaults written")
check(os.path.isfile(os.path.join(d, "keep.txt")), "--force keeps files hexcg did not write")

# the effective case loads again and gives the same effective case
d2 = os.path.join(W, "b")
rc, out, err = run([eff, "--dry-run", "--output", d2])
check(rc == 0, f"reload effective case: rc {rc} {err!r}")
if rc == 0:
    c2 = yaml.safe_load(open(os.path.join(d2, "case.yaml")))
    c["output"]["dir"] = c2["output"]["dir"]
    check(c == c2, f"effective case round trip:\n{c}\n{c2}")

# one bool rule for every key (YAML 1.2's true|True|TRUE, false|False|FALSE),
# the preconditioner's included; its messages name the allowed values
d3 = os.path.join(W, "bools")
rc, out, err = run([box, "--dry-run", "--quiet", "--output", d3, "--set", "output.history=False", "--set",
                    "preconditioner.type=asm", "--set", "preconditioner.overlap=TRUE"])
check(rc == 0, f"True/FALSE booleans: rc {rc} {err!r}")
if rc == 0:
    c3 = yaml.safe_load(open(os.path.join(d3, "case.yaml")))
    check(c3["output"]["history"] is False and c3["preconditioner"]["overlap"] is True,
          f"booleans in the effective case: {c3['output']} {c3['preconditioner']}")
rc, out, err = run([box, "--dry-run", "--output", os.path.join(W, "bools2"), "--set", "preconditioner.type=asm",
                    "--set", "preconditioner.overlap=yes"])
check(rc == 2 and err == "--set preconditioner.overlap=yes: preconditioner.overlap: expected true, false or auto, "
      "got 'yes'\n", f"bad preconditioner bool: rc {rc} {err!r}")

# the memory check asks the preconditioner module: pmg's levels count too
# (12^3 elements at order 7: about 162 MB with Jacobi, 265 MB with pmg)
os.environ["HEXCG_MEM_AVAILABLE"] = "200M"
rc, out, err = run([box, "--dry-run", "--quiet", "--output", os.path.join(W, "mem-j"), "--set", "mesh.elements=12",
                    "--set", "preconditioner.type=jacobi"])
check(rc == 0, f"12^3 with jacobi fits in 200M: rc {rc} {err!r}")
rc, out, err = run([box, "--dry-run", "--quiet", "--output", os.path.join(W, "mem-p"), "--set", "mesh.elements=12",
                    "--set", "preconditioner.type=pmg"])
check(rc == 2 and "mesh.elements: 1728 elements at order 7 need about" in err,
      f"12^3 with pmg is refused in 200M: rc {rc} {err!r}")
del os.environ["HEXCG_MEM_AVAILABLE"]

# quiet / verbose / 2 ranks / default output folder
rc, out, err = run([box, "--dry-run", "--quiet", "--output", os.path.join(W, "q")])
check(rc == 0 and out == "" and err == "", f"--quiet: rc {rc} out {out!r} err {err!r}")
rc, out, err = run([box, "--dry-run", "--verbose", "--output", os.path.join(W, "v")])
check(rc == 0 and "effective case" in out and "  | order: 7" in out, f"--verbose: {out!r}")
rc, out, err = run([box, "--dry-run", "--output", os.path.join(W, "np2")], ranks=2)
check(rc == 0 and out.count("dry run") == 1 and "2 MPI ranks" in out, f"np2 dry run: {out!r} {err!r}")
rc, out, err = run([box, "--dry-run"])
check(rc == 0 and os.path.isfile(os.path.join(W, "out", "poisson_box", "case.yaml")),
      f"default output folder out/poisson_box: rc {rc} {err!r}")

# every example case is valid
for cfg in sorted(glob.glob(os.path.join(a.source, "configs", "*.yaml"))):
    name = os.path.basename(cfg)[:-5]
    rc, out, err = run([cfg, "--dry-run", "--quiet", "--output", os.path.join(W, "cfg-" + name)])
    check(rc == 0, f"configs/{name}.yaml is valid: rc {rc} {err!r}")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
