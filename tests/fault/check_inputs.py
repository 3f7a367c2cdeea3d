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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, failures, finish, hexcg, setup  # noqa: E402,F401

a, W = setup(case=False)




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

# extreme coordinates: the message names the real problem (the coincidence tolerance overflowed to inf,
# and every vertex was "at the same point"; 1e-300 edges read as length 0)
HEX = """$MeshFormat
2.2 0 8
$EndMeshFormat
$Nodes
8
1 0 0 0
2 X 0 0
3 X 1 0
4 0 1 0
5 0 0 1
6 X 0 1
7 X 1 1
8 0 1 1
$EndNodes
$Elements
1
1 5 2 1 1 1 2 3 4 5 6 7 8
$EndElements
"""
for name, x, want in (("huge", "1e300", "huge.msh: vertex 2 at (1e+300, 0, 0) is outside the supported coordinates "
                                       "|x|, |y|, |z| <= 1e+30"),
                      ("tiny", "1e-300", "has an edge of length 1e-300, below the smallest supported element size 1e-30"),
                      ("far", "1e10", "has an edge of length 1, too short against coordinates of magnitude 1e+10"),
                      ("nan", "nan", "nan.msh:7: expected node coordinate (a finite number), found 'nan'")):
    write(f"{name}.msh", HEX.replace("X", x))
    rc, out, err = hexcg(["mesh", "--file", f"{name}.msh", "--order", "1"])
    check(rc == 2 and want in err and err.count("\n") == 1, f"gmsh {name}: rc {rc} {err!r}")
for ext, want in (("0,1e300,0,1e300,0,1e300", "vertex 4 at (1e+300, 0, 0) is outside the supported coordinates"),
                  ("0,1e-300,0,1,0,1", "has an edge of length 2.5e-301, below the smallest supported element size")):
    rc, out, err = hexcg(["mesh", "--elements", "4,4,4", "--extent", ext, "--order", "1"], ranks=2)
    check(rc == 2 and want in err, f"mesh --extent {ext}: rc {rc} {err!r}")
write("ext.yaml", "mesh: {type: box, elements: 4, extent: [[-1.7e308, 1.7e308], [0, 1], [0, 1]]}\norder: 2\n"
      "problem: {rhs: '1', lambda: 1}\n")
rc, out, err = hexcg(["run", "ext.yaml", "--output", "o-ext"])
check(rc == 2 and err.startswith("ext.yaml:1:41: mesh.extent: the x range [-1.7e+308, 1.7e+308] is outside the "
                                 "supported coordinates |x| <= 1e+30"), f"extent 1.7e308: rc {rc} {err!r}")

# the restart reader: the format attribute and the node coordinates are checked
write("r.yaml", "mesh: {type: box, elements: [3, 3, 2]}\norder: 3\nproblem:\n  rhs: '1'\n  boundary:\n"
      "    - {tags: [xmin, xmax], type: dirichlet, value: 0}\n")
rc, out, err = hexcg(["run", "r.yaml", "--output", "o-r", "--quiet"])
check(rc == 0, f"restart reference: rc {rc} {err!r}")
ref = os.path.join(W, "o-r", "solution.h5")
for ranks in (1, 2):
    rc, out, err = hexcg(["run", "r.yaml", "--output", f"o-r-same{ranks}", "--quiet", "--set",
                          f"solver.initial_guess={ref}"], ranks)
    check(rc == 0, f"restart on the same mesh np{ranks}: rc {rc} {err!r}")
    rc, out, err = hexcg(["run", "r.yaml", "--output", f"o-r-ext{ranks}", "--set", "mesh.extent=[[0,2],[0,1],[0,1]]",
                          "--set", f"solver.initial_guess={ref}"], ranks)
    check(rc == 2 and err.startswith(f"{ref}: the initial guess is on another mesh: node ")
          and "(same mesh and order needed)" in err and err.count("\n") == 1,
          f"restart on a stretched mesh np{ranks}: rc {rc} {err!r}")
try:
    import h5py
    import numpy
    fmt = os.path.join(W, "fmt.h5")
    shutil.copy(ref, fmt)
    with h5py.File(fmt, "r+") as f:
        f.attrs["format"] = numpy.bytes_("other-format-2")
    rc, out, err = hexcg(["run", "r.yaml", "--output", "o-r-fmt", "--set", f"solver.initial_guess={fmt}"], 2)
    check(rc == 2 and err == f"{fmt}: format 'other-format-2' is not 'hexcg-solution-1' (a file of another program "
          "or of another hexcg version)\n", f"restart format: rc {rc} {err!r}")
    with h5py.File(fmt, "r+") as f:
        del f.attrs["format"]
    rc, out, err = hexcg(["run", "r.yaml", "--output", "o-r-fmt", "--set", f"solver.initial_guess={fmt}"])
    check(rc == 2 and "not a hexcg solution file (no attribute 'format')" in err, f"restart no format: rc {rc} {err!r}")
    moved = os.path.join(W, "moved.h5")
    shutil.copy(ref, moved)
    with h5py.File(moved, "r+") as f:
        c = f["mesh/coordinates"]
        c[100, 1] = c[100, 1] + 1e-6
    rc, out, err = hexcg(["run", "r.yaml", "--output", "o-r-moved", "--set", f"solver.initial_guess={moved}"], 2)
    check(rc == 2 and "the initial guess is on another mesh: node " in err, f"restart one node moved: rc {rc} {err!r}")
except ImportError:
    print("note: no h5py, the restart format is not tested")

# Gmsh 4.1 binary: a header whose data size does not match the data, and negative counts
def msh41bin(ds, ds_hdr=None, nnodes=None):
    Z = "<Q" if ds == 8 else "<I"
    sz = lambda v: struct.pack(Z, v)
    i = lambda v: struct.pack("<i", v)
    d = lambda v: struct.pack("<d", v)
    b = b"$MeshFormat\n4.1 1 %d\n" % (ds_hdr or ds) + i(1) + b"\n$EndMeshFormat\n"
    b += b"$PhysicalNames\n2\n2 1 \"wall\"\n3 2 \"body\"\n$EndPhysicalNames\n"
    # entities: 0 points 0 curves 1 surface 1 volume
    b += b"$Entities\n" + sz(0) + sz(0) + sz(1) + sz(1)
    b += i(1) + d(0)*3 + d(1)*3 + sz(1) + i(1) + sz(0)
    b += i(1) + d(0)*3 + d(1)*3 + sz(1) + i(2) + sz(0)
    b += b"\n$EndEntities\n"
    pts = [(0,0,0),(1,0,0),(1,1,0),(0,1,0),(0,0,1),(1,0,1),(1,1,1),(0,1,1)]
    n = len(pts) if nnodes is None else nnodes
    b += b"$Nodes\n" + sz(1) + sz(n & (2**(8*ds)-1)) + sz(1) + sz(8)
    b += i(3) + i(1) + i(0) + sz(8)
    for k in range(8): b += sz(k+1)
    for p in pts: b += d(p[0]) + d(p[1]) + d(p[2])
    b += b"\n$EndNodes\n"
    b += b"$Elements\n" + sz(2) + sz(2) + sz(1) + sz(2)
    b += i(3) + i(1) + i(5) + sz(1) + sz(1) + b"".join(sz(k) for k in [1,2,3,4,5,6,7,8])
    b += i(2) + i(1) + i(3) + sz(1) + sz(2) + b"".join(sz(k) for k in [1,2,3,4])
    b += b"\n$EndElements\n"
    return b


write("b8.msh", msh41bin(8), "wb")
write("b4.msh", msh41bin(4), "wb")
write("b8as4.msh", msh41bin(8, ds_hdr=4), "wb")
write("b4as8.msh", msh41bin(4, ds_hdr=8), "wb")
write("bneg.msh", msh41bin(8, nnodes=-8), "wb")
for name in ("b8", "b4"):
    rc, out, err = hexcg(["mesh", "--file", f"{name}.msh", "--order", "1"])
    check(rc == 0 and "elements              1" in out, f"gmsh {name}: rc {rc} {err!r}")
for name, said, real in (("b8as4", 4, 8), ("b4as8", 8, 4)):
    rc, out, err = hexcg(["mesh", "--file", f"{name}.msh", "--order", "1"])
    check(rc == 2 and f"{name}.msh: the $MeshFormat line says data size {said}, but the binary data is written with "
          f"{real}-byte sizes" in err, f"gmsh {name}: rc {rc} {err!r}")
rc, out, err = hexcg(["mesh", "--file", "bneg.msh", "--order", "1"])
check(rc == 2 and "bneg.msh: byte offset 312 (line 14): number of nodes is 18446744073709551608 (negative as a "
      "signed number: -8), more than any file can hold (corrupt file)" in err, f"gmsh binary -8 nodes: rc {rc} {err!r}")
write("neg22.msh", HEX.replace("X", "1").replace("$Nodes\n8\n", "$Nodes\n-8\n"))
rc, out, err = hexcg(["mesh", "--file", "neg22.msh", "--order", "1"])
check(rc == 2 and "neg22.msh:5: node count -8 is negative (corrupt file)" in err, f"gmsh 2.2 -8 nodes: rc {rc} {err!r}")
write("neg41.msh", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 -8 1 8\n$EndNodes\n")
rc, out, err = hexcg(["mesh", "--file", "neg41.msh", "--order", "1"])
check(rc == 2 and "neg41.msh:5: expected number of nodes (a non-negative count), found -8" in err,
      f"gmsh 4.1 -8 nodes: rc {rc} {err!r}")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("inputs: ok")
