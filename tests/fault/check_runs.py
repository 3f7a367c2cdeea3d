#!/usr/bin/python3
"""Hostile inputs and failed runs of `hexcg run`: a 400 KB expression,
non-finite data at a mesh node (rhs, exact, Dirichlet and Neumann values, an
all-NaN initial guess), a solve that does not converge (exit 3), a failing
and a killed --force run (the earlier results survive, byte for byte), the
folders a failed first run created are removed, two concurrent runs into one
folder (the second is refused), a dry run that reads the Gmsh mesh, and Gmsh
files with tetrahedra or duplicate element tags."""
import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import UNIT_CUBE_NODES, check, failures, finish, hexcg, setup  # noqa: E402,F401

a, W = setup(case=False)



def run(args, ranks=1, timeout=120):
    p = subprocess.run([a.mpiexec, "-n", str(ranks), a.hexcg, "run"] + args, cwd=W, capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def write(name, text):
    path = os.path.join(W, name)
    open(path, "w").write(text)
    return path


def digest(d):
    return {f: hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest() for f in sorted(os.listdir(d)) if not f.startswith(".")}


BOX = """mesh: {type: box, elements: [4, 4, 4]}
order: 2
problem:
  rhs: "%s"
  exact: "%s"
  boundary:
    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: %s}
"""
good = write("good.yaml", BOX % ("3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)", "sin(pi*x)*sin(pi*y)*sin(pi*z)", "exact"))

# expressions: a 400 KB rhs is refused at its position, before libmatheval
long = write("long.yaml", BOX % ("+".join(["x"] * 200000), "x", "0"))
rc, out, err = run([long, "--output", "o-long"])
check(rc == 2 and err.startswith(os.path.join(W, "long.yaml") + ":4:8: problem.rhs: expression too long (399999 characters")
      and err.count("\n") == 1, f"400 KB expression: rc {rc} {err[:300]!r}")

# non-finite data at some GLL node (x = 0.25 is a node at order 2 on 4 elements), on 1 and 2 ranks
for name, case, want in (
        ("rhs", BOX % ("1/(x-0.25)", "x", "0"), "problem.rhs: '1/(x-0.25)' is not finite at the mesh node (0.25,"),
        ("exact", BOX % ("1", "1/(z-0.25)", "0"), "problem.exact: '1/(z-0.25)' is not finite at the mesh node"),
        ("dirichlet", BOX % ("1", "x", '"1/(y-0.25)"'), "problem.boundary.0.value: '1/(y-0.25)' is not finite"),
        ("neumann", BOX.replace("dirichlet, value: %s}", "dirichlet, value: 0}\n    - {tags: [zmax], type: neumann, value: \"1/(x-0.75)\"}")
         .replace("ymin, ymax, zmin, zmax]", "ymin, ymax, zmin]") % ("1", "x"),
         "problem.boundary.1.value: '1/(x-0.75)' is not finite")):
    path = write(f"nan-{name}.yaml", case)
    for ranks in (1, 2):
        rc, out, err = run([path, "--output", f"o-nan-{name}", "--quiet"], ranks=ranks)
        check(rc == 2 and want in err and err.count("\n") == 1 and not os.path.exists(os.path.join(W, f"o-nan-{name}")),
              f"non-finite {name} np{ranks}: rc {rc} {err!r}")

# a solve that does not converge: results written, exit 3
rc, out, err = run([good, "--output", "o-noconv", "--set", "solver.max_iterations=2", "--quiet"])
summ = os.path.join(W, "o-noconv", "summary.yaml")
check(rc == 3 and "not converged" in err and os.path.isfile(summ) and "converged: false" in open(summ).read(),
      f"not converged: rc {rc} {err!r}")

# an all-NaN initial guess is refused
rc, out, err = run([good, "--output", "o-ref", "--quiet"])
check(rc == 0, f"reference run: rc {rc} {err!r}")
try:
    import h5py
    import numpy
    nanfile = os.path.join(W, "nan-solution.h5")
    shutil.copy(os.path.join(W, "o-ref", "solution.h5"), nanfile)
    with h5py.File(nanfile, "r+") as f:
        f["fields/u"][...] = numpy.nan
    rc, out, err = run([good, "--output", "o-nanguess", "--set", f"solver.initial_guess={nanfile}"], ranks=2)
    check(rc == 2 and "solver.initial_guess: not finite at the mesh node" in err and "(value nan)" in err,
          f"NaN initial guess: rc {rc} {err!r}")
except ImportError:
    print("note: no h5py, the NaN initial guess is not tested")

# --force: a failing rerun keeps the earlier results, byte for byte
before = digest(os.path.join(W, "o-ref"))
rc, out, err = run([good, "--output", "o-ref", "--force", "--set", "problem.rhs=1/(x-0.25)"], ranks=2)
check(rc == 2 and digest(os.path.join(W, "o-ref")) == before, f"failed --force run: rc {rc} {err!r}")
# a killed --force run too, and while it runs a second run into the folder is refused
slow = ["--output", "o-ref", "--force", "--quiet", "--set", "mesh.elements=[12,12,12]", "--set", "order=6",
        "--set", "solver.max_iterations=100000", "--set", "solver.tol=1e-300", "--set", "output.progress_every=0"]
p = subprocess.Popen([a.mpiexec, "-n", "1", a.hexcg, "run", good] + slow, cwd=W, start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(4)
rc, out, err = run([good, "--output", "o-ref", "--force"])
check(rc == 2 and "is in use by another hexcg run" in err, f"concurrent run: rc {rc} {err!r}")
os.killpg(p.pid, signal.SIGKILL)
p.wait()
time.sleep(0.5)
check(digest(os.path.join(W, "o-ref")) == before, "killed --force run: the earlier results are intact")
rc, out, err = run([good, "--output", "o-ref", "--force", "--quiet"])
check(rc == 0 and not os.path.exists(os.path.join(W, "o-ref", ".hexcg-new")), f"rerun after the kill: rc {rc} {err!r}")

# a failed first run removes the folders it created (the parents too); so does --dry-run's failure
rc, out, err = run([os.path.join(W, "nan-rhs.yaml"), "--output", "p1/p2/o"])
check(rc == 2 and not os.path.exists(os.path.join(W, "p1")), f"created parents removed: rc {rc}")
rc, out, err = run([good, "--output", "dry", "--dry-run", "--quiet"])
rc2, out, err2 = run([good, "--output", "dry", "--quiet"])
check(rc == 0 and rc2 == 0, f"a dry run's folder does not block the real run: {rc} {rc2} {err2!r}")

# Gmsh: a dry run reads the mesh; tetrahedra and duplicate element tags are errors
MSH = """$MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
2
2 1 "wall"
3 2 "body"
$EndPhysicalNames
$Nodes
9
""" + UNIT_CUBE_NODES + """9 2 0 0
$EndNodes
$Elements
%s
$EndElements
"""
HEX = "1 5 2 2 1 1 2 3 4 5 6 7 8"
write("hex.msh", MSH % ("2\n" + HEX + "\n2 3 2 1 1 1 2 3 4"))
write("tet.msh", MSH % ("3\n" + HEX + "\n2 4 2 2 1 2 9 3 6\n3 3 2 1 1 1 2 3 4"))
write("dup.msh", MSH % ("2\n" + HEX + "\n" + HEX))
GM = """mesh: {type: gmsh, file: %s}
order: 2
problem:
  rhs: "1"
  boundary:
    - {tags: [%s], type: dirichlet, value: 0}
"""
rc, out, err = run([write("g-ok.yaml", GM % ("hex.msh", "wall")), "--dry-run", "--output", "g-ok", "--quiet"])
check(rc == 0, f"gmsh dry run: rc {rc} {err!r}")
rc, out, err = run([write("g-tag.yaml", GM % ("hex.msh", "wal")), "--dry-run", "--output", "g-tag"])
check(rc == 2 and "unknown boundary tag 'wal'" in err and not os.path.exists(os.path.join(W, "g-tag")),
      f"dry run checks the mesh tags: rc {rc} {err!r}")
rc, out, err = run([write("g-tet.yaml", GM % ("tet.msh", "wall")), "--dry-run", "--output", "g-tet"])
check(rc == 2 and "3-D elements that are not hexahedra: 1 tetrahedra (type 4)" in err, f"tetrahedra: rc {rc} {err!r}")
rc, out, err = run([write("g-dup.yaml", GM % ("dup.msh", "wall")), "--output", "g-dup"])
check(rc == 2 and "element tag 1 is defined twice" in err, f"duplicate element tags: rc {rc} {err!r}")

# other subcommands: an unusable backend is bad input (exit 2, as for run); unknown options say so
p = subprocess.run([a.mpiexec, "-n", "1", a.hexcg, "bench", "ax", "--backend", "cuda"], cwd=W, capture_output=True,
                   text=True, timeout=120)
check(p.returncode in (0, 2), f"bench ax --backend cuda without a device: rc {p.returncode} {p.stderr!r}")
p = subprocess.run([a.mpiexec, "-n", "1", a.hexcg, "mesh", "--bogus"], cwd=W, capture_output=True, text=True, timeout=60)
check(p.returncode == 2 and "unknown option '--bogus'" in p.stderr, f"mesh --bogus: rc {p.returncode} {p.stderr!r}")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("runs: ok")
