#!/usr/bin/python3
"""Boundary faces of a Gmsh file in no surface physical group through
`hexcg run` and `hexcg mesh` (issue 32: reported, count and a location,
unless the case says what they are). A 2x2x2 box on [0,1]^3 whose bottom and
top are physical groups and whose 16 side faces are in none; exact solution
u = (x-1/2)^2 + (y-1/2)^2 - 2 z^2 (harmonic, so rhs 0; kappa du/dn = 1 on
every side; order 3 represents it exactly), Dirichlet on bottom and top:
- the case names no 'untagged': the note (16 of 24 faces, the first face's
  file element and centre, the fix) is printed once, and the sides are
  insulated, so the answer differs from u (max error > 0.1);
- 'untagged' with a Neumann value 1, or in the Dirichlet entry: no note, and
  the condition acts: max error at the solver tolerance (Neumann: 1e-7;
  Dirichlet everywhere, the quadratic u is exact in the space: 1e-9, ten
  times the relative tolerance 1e-10 of the solve), on 1 and 2 ranks;
- hexcg mesh lists the tag 'untagged (16 faces)' and the note;
- every face tagged: naming 'untagged' is an unknown tag (exit 2, the
  mesh's tags listed, nothing written);
- a physical group named 'untagged' beside faces in none: exit 2 with the
  group named and the fix, nothing written."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, finish, hexcg, setup  # noqa: E402

a, W = setup()


def write_box(name, n, surf):
    """n^3 hex8 on [0,1]^3 as MSH 2.2; surf[s] (s: 0 x=0, 1 x=1, 2 y=0,
    3 y=1, 4 z=0, 5 z=1): the surface's physical group name, or None for no
    quadrilaterals"""
    names = []
    for s in surf:
        if s and s not in names:
            names.append(s)

    def nid(i, j, k):
        return 1 + i + (n + 1) * (j + (n + 1) * k)

    out = ["$MeshFormat", "2.2 0 8", "$EndMeshFormat", "$PhysicalNames", str(len(names) + 1)]
    out += ['2 %d "%s"' % (q + 1, nm) for q, nm in enumerate(names)]
    out += ['3 %d "solid"' % (len(names) + 1), "$EndPhysicalNames", "$Nodes", str((n + 1) ** 3)]
    for k in range(n + 1):
        for j in range(n + 1):
            for i in range(n + 1):
                out.append("%d %r %r %r" % (nid(i, j, k), i / n, j / n, k / n))
    out.append("$EndNodes")
    el = []
    for s in range(6):
        if not surf[s]:
            continue
        d, side = s // 2, s % 2
        d1, d2 = (1 if d == 0 else 0), (1 if d == 2 else 2)
        for b in range(n):
            for a_ in range(n):
                q = []
                for da, db in ((0, 0), (1, 0), (1, 1), (0, 1)):
                    c = [0, 0, 0]
                    c[d], c[d1], c[d2] = (n if side else 0), a_ + da, b + db
                    q.append(nid(*c))
                el.append("3 2 %d %d " % (names.index(surf[s]) + 1, s + 1) + " ".join(map(str, q)))
    corners = ((0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1))
    for k in range(n):
        for j in range(n):
            for i in range(n):
                el.append("5 2 %d 1 " % (len(names) + 1) +
                          " ".join(str(nid(i + x, j + y, k + z)) for x, y, z in corners))
    out += ["$Elements", str(len(el))] + ["%d %s" % (t + 1, e) for t, e in enumerate(el)] + ["$EndElements"]
    with open(os.path.join(W, name), "w") as f:
        f.write("\n".join(out) + "\n")


def write_case(name, mesh, boundary):
    text = ("mesh: {type: gmsh, file: %s}\norder: 3\nproblem:\n  rhs: '0'\n"
            "  exact: '(x-0.5)^2 + (y-0.5)^2 - 2*z^2'\n  boundary:\n" % mesh)
    text += "".join("    - %s\n" % b for b in boundary)
    text += "solver: {tol: 1.0e-10}\n"
    with open(os.path.join(W, name), "w") as f:
        f.write(text)


def error_max(out):
    """the max error of the summary block"""
    for line in out.splitlines():
        if line.strip().startswith("error ") and ", max " in line:
            return float(line.rsplit("max", 1)[1])
    return None


NOTE = "carry no surface physical tag"
write_box("sides.msh", 2, [None, None, None, None, "bottom", "top"])
ENDS = "{tags: [bottom, top], type: dirichlet, value: exact}"

# the case names no 'untagged': the note, once, and the sides insulated
write_case("natural.yaml", "sides.msh", [ENDS])
for ranks in (1, 2):
    rc, out, err = hexcg(["run", "natural.yaml", "--output", f"o-natural-np{ranks}"], ranks)
    both = out + err
    check(rc == 0, f"natural np{ranks}: rc {rc} {err!r}")
    check(both.count(NOTE) == 1, f"natural np{ranks}: the note {both.count(NOTE)} times in {both!r}")
    check("16 of 24 boundary faces carry no surface physical tag (the first: face " in both and
          "of file element " in both and "centre (" in both and "give them a condition with tags: [untagged] "
          "in problem.boundary, or put them in a physical group" in both and "kappa du/dn = 0" in both,
          f"natural np{ranks}: note text in {both!r}")
    e = error_max(out)
    check(e is not None and e > 0.1, f"natural np{ranks}: max error {e} (insulated sides should be wrong)")

# 'untagged' given a condition: no note, and the condition acts
write_case("neumann.yaml", "sides.msh", [ENDS, "{tags: [untagged], type: neumann, value: 1}"])
write_case("dirichlet.yaml", "sides.msh", ["{tags: [bottom, top, untagged], type: dirichlet, value: exact}"])
for case, tol in (("neumann", 1e-7), ("dirichlet", 1e-9)):
    for ranks in (1, 2):
        rc, out, err = hexcg(["run", case + ".yaml", "--output", f"o-{case}-np{ranks}"], ranks)
        check(rc == 0, f"{case} np{ranks}: rc {rc} {err!r}")
        check(NOTE not in out + err, f"{case} np{ranks}: note printed although the case names untagged")
        e = error_max(out)
        check(e is not None and e < tol, f"{case} np{ranks}: max error {e}, expected < {tol}")

# hexcg mesh: the tag and the note
rc, out, err = hexcg(["mesh", "--file", "sides.msh", "--order", "2"], 2)
check(rc == 0 and "untagged (16 faces)" in out and "16 of 24 boundary faces " + NOTE in out,
      f"hexcg mesh: rc {rc} {out!r} {err!r}")

# every face tagged: no tag 'untagged'
write_box("tagged.msh", 2, ["sides", "sides", "sides", "sides", "bottom", "top"])
write_case("tagged.yaml", "tagged.msh", [ENDS, "{tags: [untagged], type: neumann, value: 1}"])
rc, out, err = hexcg(["run", "tagged.yaml", "--output", "o-tagged"], 1)
check(rc == 2 and "unknown boundary tag 'untagged'" in err and "the gmsh mesh has: sides, bottom, top" in err,
      f"tagged: rc {rc} {err!r}")
check(not os.path.exists(os.path.join(W, "o-tagged")), "tagged: output written")
write_case("tagged-ok.yaml", "tagged.msh", [ENDS])
rc, out, err = hexcg(["run", "tagged-ok.yaml", "--output", "o-tagged-ok"], 1)
check(rc == 0 and NOTE not in out + err, f"tagged-ok: rc {rc}, note printed or failed {out + err!r}")

# a physical group named 'untagged' beside faces in none: refused
write_box("clash.msh", 2, ["untagged", "untagged", None, None, "bottom", "top"])
write_case("clash.yaml", "clash.msh", [ENDS])
for ranks in (1, 2):
    rc, out, err = hexcg(["run", "clash.yaml", "--output", f"o-clash-np{ranks}"], ranks)
    check(rc == 2 and "clash.msh: a surface physical group is named 'untagged'" in err and
          "8 boundary face(s) are in none" in err and "rename the group" in err,
          f"clash np{ranks}: rc {rc} {err!r}")
    check(not os.path.exists(os.path.join(W, f"o-clash-np{ranks}")), f"clash np{ranks}: output written")
finish("all untagged-face checks passed")
