#!/usr/bin/python3
"""Run `hexcg run CASE [ARGS] --output OUT` in the folder of CASE and check
that it fails at validation: exit status 2, stderr exactly the "# expect: "
line of CASE, nothing on stdout, OUT not created. ARGS: the "# args: " line."""
import os
import shlex
import shutil
import subprocess
import sys

mpiexec, ranks, hexcg, case, out = sys.argv[1:6]
folder, name = os.path.split(os.path.abspath(case))
expect, args = None, []
for line in open(case).read().split("\n"):
    if line.startswith("# expect: "):
        expect = line[len("# expect: "):]
    elif line.startswith("# args: "):
        args = shlex.split(line[len("# args: "):])
if expect is None:
    sys.exit(f"{name}: no '# expect: ' line")
shutil.rmtree(out, ignore_errors=True)
p = subprocess.run([mpiexec, "-n", ranks, hexcg, "run", name] + args + ["--output", out], cwd=folder,
                   capture_output=True, text=True, timeout=60)
fail = []
if p.returncode != 2:
    fail.append(f"exit status {p.returncode}, expected 2")
if p.stderr != expect + "\n":
    fail.append(f"stderr:\n  got:      {p.stderr!r}\n  expected: {expect + chr(10)!r}")
if p.stdout:
    fail.append(f"stdout not empty: {p.stdout!r}")
if os.path.exists(out):
    fail.append(f"output folder {out} was created")
if fail:
    sys.exit(f"{name}:\n" + "\n".join(fail))
