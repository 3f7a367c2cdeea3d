#!/usr/bin/python3
"""Inputs that were refused with a wrong message or not at all: a directory
where a file is expected, extreme coordinates, a restart file of another
format or geometry, Gmsh 4.1 binary files with a 4-byte data size and a
negative count. Each must give its own message and exit 2."""
import argparse
import os
import shutil
import struct
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--hexcg", required=True)
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--work", required=True)
a = ap.parse_args()
shutil.rmtree(a.work, ignore_errors=True)
os.makedirs(a.work)
W = a.work
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def hexcg(args, ranks=1, timeout=120):
    p = subprocess.run([a.mpiexec, "-n", str(ranks), a.hexcg] + args, cwd=W, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def write(name, text, mode="w"):
    path = os.path.join(W, name)
    with open(path, mode) as f:
        f.write(text)
    return path


# a directory where a file is expected: "is a directory", exit 2 (was: out of memory allocating 2^63 bytes)
os.makedirs(os.path.join(W, "adir"))
rc, out, err = hexcg(["mesh", "--file", "adir"])
check(rc == 2 and "Gmsh file 'adir' is a directory, not a file" in err, f"mesh --file DIR: rc {rc} {err!r}")
rc, out, err = hexcg(["run", "adir"])
check(rc == 2 and "cannot read case file 'adir': Is a directory" in err, f"run DIR: rc {rc} {err!r}")
write("gdir.yaml", "mesh: {type: gmsh, file: adir}\norder: 2\nproblem: {rhs: '1', lambda: 1}\n")
for ranks in (1, 2):
    rc, out, err = hexcg(["run", "gdir.yaml", "--output", "o-gdir"], ranks)
    check(rc == 2 and err == "gdir.yaml:1:26: mesh.file: 'adir' (relative to the case file's folder) is a "
          "directory, not a file\n", f"mesh.file DIR np{ranks}: rc {rc} {err!r}")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("inputs: ok")
