#!/usr/bin/python3
"""Issue 32 item 3 through the command line: a Gmsh mesh whose touching
faces share no vertex (two hexes offset by half a face) used to be solved as
two insulated walls (exit 0, "converged", max error 1.0 against u = x); it
must be refused with exit 2, the elements and coordinates named, and no
output written, on 1 and 2 ranks. Boundary faces without a surface physical
group are reported (count and the first one's location)."""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, failures, finish, hexcg, setup  # noqa: E402,F401

a, W = setup(case=False)




def write(name, text):
    with open(os.path.join(W, name), "w") as f:
        f.write(text)


HDR = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
NAMES = '$PhysicalNames\n2\n2 1 "ends"\n3 2 "body"\n$EndPhysicalNames\n'
# hex 1 on [0,1]^3, hex 2 on [0.5,1.5]x[0,1]x[1,2]: they touch on [0.5,1]x[0,1] at z = 1
NODES = ("$Nodes\n16\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 0 0 1\n6 1 0 1\n7 1 1 1\n8 0 1 1\n"
         "9 0.5 0 1\n10 1.5 0 1\n11 1.5 1 1\n12 0.5 1 1\n13 0.5 0 2\n14 1.5 0 2\n15 1.5 1 2\n16 0.5 1 2\n"
         "$EndNodes\n")
# the bottom of hex 1 and the top of hex 2 tagged "ends"
ELEMS = ("$Elements\n4\n1 5 2 2 1 1 2 3 4 5 6 7 8\n2 5 2 2 1 9 10 11 12 13 14 15 16\n"
         "3 3 2 1 1 1 2 3 4\n4 3 2 1 1 13 14 15 16\n$EndElements\n")
write("offset.msh", HDR + NAMES + NODES + ELEMS)
CASE = ("mesh: {type: gmsh, file: %s}\norder: 3\nproblem:\n  rhs: '0'\n  exact: 'x'\n"
        "  boundary:\n    - {tags: [ends], type: dirichlet, value: exact}\n")
write("offset.yaml", CASE % "offset.msh")
for ranks in (1, 2):
    rc, out, err = hexcg(["run", "offset.yaml", "--output", f"o-offset-np{ranks}"], ranks)
    check(rc == 2 and "non-conforming faces" in err and "overlap face to face" in err and
          "file element tag 2" in err and "(0.5, 0, 1)" in err, f"offset np{ranks}: rc {rc} {err!r}")
    check(not os.path.exists(os.path.join(W, f"o-offset-np{ranks}")), f"offset np{ranks}: output written")
    # each face is named with its own 4 corners (the message listed the element's 8): hex 1's
    # top face z = 1, hex 2's bottom face z = 1
    faces = re.findall(r"with vertices ((?:\d+ \([^)]*\) ?)+)", err)
    check(len(faces) == 2 and all(len(re.findall(r"\(", f)) == 4 and
                                  all(c.endswith(", 1") for c in re.findall(r"\(([^)]*)\)", f)) for f in faces),
          f"offset np{ranks}: the faces' vertices are not their 4 corners at z = 1: {faces!r}")

# the same two hexes stacked conformingly: accepted, and the 8 untagged side faces reported
NODES2 = ("$Nodes\n12\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 0 0 1\n6 1 0 1\n7 1 1 1\n8 0 1 1\n"
          "13 0 0 2\n14 1 0 2\n15 1 1 2\n16 0 1 2\n$EndNodes\n")
ELEMS2 = ("$Elements\n4\n1 5 2 2 1 1 2 3 4 5 6 7 8\n2 5 2 2 1 5 6 7 8 13 14 15 16\n"
          "3 3 2 1 1 1 2 3 4\n4 3 2 1 1 13 14 15 16\n$EndElements\n")
write("stack.msh", HDR + NAMES + NODES2 + ELEMS2)
write("stack.yaml", CASE % "stack.msh")
rc, out, err = hexcg(["run", "stack.yaml", "--output", "o-stack"], 2)
check(rc == 0, f"stack: rc {rc} {err!r}")
check("8 of 10 boundary faces carry no surface physical tag" in out + err and "kappa du/dn = 0" in out + err,
      f"stack: no untagged-face note in {out + err!r}")
finish("all mesh-face checks passed")
