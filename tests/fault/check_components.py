#!/usr/bin/python3
"""Issue 53 defect 4: the null space per connected component. A Gmsh mesh of
two disjoint boxes, Dirichlet u = 5 on body A and only Neumann data on body
B, lambda = 0: B's constant is in the operator's null space, but the solver
removes one constant for the whole mesh, so B's level was arbitrary (u = 0
where the answer is cos(pi x) + c), exit 0, no note. Now several components
with a floating one are refused with exit 2, the message naming the
component (elements, bounding box) and the fix, nothing written; on 1 and 2
ranks, with the bodies on different ranks and with body B across both.
Both bodies anchored (Dirichlet on both; lambda > 0 on B; Robin on B; B
joined to A through a periodic pair, so one component) solve as before, and
summary.yaml lists the components; B alone, pure Neumann, is unchanged."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, failures, finish, hexcg, setup  # noqa: E402,F401

a, W = setup(case=False)
PI = "3.141592653589793"
FACES = ("xmin", "xmax", "ymin", "ymax", "zmin", "zmax")


def box(x0, lx, nx, ny, nz, base, pbase, name):
    """nodes, hexes and boundary quads of [x0, x0+lx] x [0,1]^2; the faces
    carry the physical tags pbase + 0..5 (name_xmin..), the volume pbase + 6"""
    nid = lambda i, j, k: base + i + (nx + 1) * (j + (ny + 1) * k)  # noqa: E731
    nodes = [(nid(i, j, k), x0 + lx * i / nx, j / ny, k / nz)
             for k in range(nz + 1) for j in range(ny + 1) for i in range(nx + 1)]
    hexes = []
    for k in range(nz):
        for j in range(ny):
            for i in range(nx):
                hexes.append([nid(i, j, k), nid(i + 1, j, k), nid(i + 1, j + 1, k), nid(i, j + 1, k),
                              nid(i, j, k + 1), nid(i + 1, j, k + 1), nid(i + 1, j + 1, k + 1), nid(i, j + 1, k + 1)])
    quads = []
    for j in range(ny):
        for k in range(nz):
            quads.append((pbase + 0, [nid(0, j, k), nid(0, j, k + 1), nid(0, j + 1, k + 1), nid(0, j + 1, k)]))
            quads.append((pbase + 1, [nid(nx, j, k), nid(nx, j + 1, k), nid(nx, j + 1, k + 1), nid(nx, j, k + 1)]))
    for i in range(nx):
        for k in range(nz):
            quads.append((pbase + 2, [nid(i, 0, k), nid(i + 1, 0, k), nid(i + 1, 0, k + 1), nid(i, 0, k + 1)]))
            quads.append((pbase + 3, [nid(i, ny, k), nid(i, ny, k + 1), nid(i + 1, ny, k + 1), nid(i + 1, ny, k)]))
    for i in range(nx):
        for j in range(ny):
            quads.append((pbase + 4, [nid(i, j, 0), nid(i, j + 1, 0), nid(i + 1, j + 1, 0), nid(i + 1, j, 0)]))
            quads.append((pbase + 5, [nid(i, j, nz), nid(i + 1, j, nz), nid(i + 1, j + 1, nz), nid(i, j + 1, nz)]))
    names = [(2, pbase + f, f"{name}_{FACES[f]}") for f in range(6)] + [(3, pbase + 6, f"body_{name}")]
    return nodes, hexes, quads, names, pbase + 6


def write_msh(path, boxes):
    nodes, elems, names = [], [], []
    for bx in boxes:
        n, h, q, nm, vol = bx
        nodes += n
        names += nm
        elems += [(3, t, c) for t, c in q] + [(5, vol, c) for c in h]
    with open(os.path.join(W, path), "w") as f:
        f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n")
        f.write(f"$PhysicalNames\n{len(names)}\n" + "".join(f'{d} {t} "{s}"\n' for d, t, s in names) +
                "$EndPhysicalNames\n")
        f.write(f"$Nodes\n{len(nodes)}\n" + "".join(f"{i} {x!r} {y!r} {z!r}\n" for i, x, y, z in nodes) +
                "$EndNodes\n")
        f.write(f"$Elements\n{len(elems)}\n" +
                "".join(f"{k + 1} {t} 2 {p} {p} " + " ".join(map(str, c)) + "\n" for k, (t, p, c) in enumerate(elems)) +
                "$EndElements\n")


def tags(name):
    return "[" + ", ".join(f"{name}_{f}" for f in FACES) + "]"


# A = [0,1]^3 (2x2x2 elements); B = [2,3] x [0,1]^2 (2x2x2: the bodies on separate ranks under
# rcb) or [2,4] x [0,1]^2 (4x2x2: the median cut of 24 elements falls inside B)
write_msh("equal.msh", [box(0.0, 1.0, 2, 2, 2, 1, 1, "a"), box(2.0, 1.0, 2, 2, 2, 1001, 11, "b")])
write_msh("lopsided.msh", [box(0.0, 1.0, 2, 2, 2, 1, 1, "a"), box(2.0, 2.0, 4, 2, 2, 1001, 11, "b")])
write_msh("b_alone.msh", [box(2.0, 1.0, 2, 2, 2, 1001, 11, "b")])
# touching at x = 1 through a periodic pair (a_xmax ~ b_xmin, translation 1): one component
write_msh("joined.msh", [box(0.0, 1.0, 2, 2, 2, 1, 1, "a"), box(2.0, 1.0, 2, 2, 2, 1001, 11, "b")])

# u = 5 on A (rhs 0 there), u = cos(pi x) + c on B: -u'' = pi^2 cos(pi x), zero flux on B's faces
# (sin(pi x) = 0 at x = 2, 3, 4); exact with c = 0 for the anchored variants
RHS = f"{PI}^2*cos({PI}*x)*step(x - 1.5)"
EXACT = f"5 + step(x - 1.5)*(cos({PI}*x) - 5)"


def case(name, mesh, b_bc, extra="", rhs=RHS, a_bc="{tags: %s, type: dirichlet, value: 5}" % tags("a"),
         exact=EXACT):
    text = (f"mesh: {{type: gmsh, file: {mesh}}}\norder: 4\n"
            f"solver: {{tol: 1.0e-10}}\nproblem:\n  rhs: '{rhs}'\n  exact: '{exact}'\n{extra}"
            f"  boundary:\n" + (f"    - {a_bc}\n" if a_bc else "") + (f"    - {b_bc}\n" if b_bc else ""))
    with open(os.path.join(W, name + ".yaml"), "w") as f:
        f.write(text)
    return name + ".yaml"


def summary(out):
    with open(os.path.join(W, out, "summary.yaml")) as f:
        return f.read()


def err_max(s):
    m = re.search(r"^error: \{l2: (\S+), max: (\S+)\}", s, re.M)
    return float(m.group(2)) if m else float("inf")


# the partitions the refusal is checked on (rcb, 2 ranks): equal.msh puts one body on each rank
# (no shared node), lopsided.msh cuts body B between the ranks
for mesh, nbr in (("equal.msh", 0), ("lopsided.msh", 1)):
    rc, so, se = hexcg(["mesh", "--file", mesh, "--order", "2"], 2)
    check(rc == 0 and re.search(r"neighbour ranks\s+max %d\b" % nbr, so),
          f"{mesh} on 2 ranks: expected {nbr} neighbour rank(s): {so!r}")

NEUMANN_B = "{tags: %s, type: neumann, value: 0}" % tags("b")
# --- refused: B floats (Neumann only, lambda = 0)
for mesh, box_b in (("equal.msh", "[2, 3]"), ("lopsided.msh", "[2, 4]")):
    nb = 8 if mesh == "equal.msh" else 16
    c = case("float-" + mesh[:-4], mesh, NEUMANN_B)
    for ranks in (1, 2):
        out = f"o-float-{mesh[:-4]}-np{ranks}"
        rc, so, se = hexcg(["run", c, "--output", out], ranks)
        check(rc == 2 and "2 connected components" in se and "1 of them float" in se and
              f"component 2 ({nb} elements" in se and f"bounding box {box_b} x [0, 1] x [0, 1]" in se and
              "Dirichlet or Robin" in se and "lambda > 0" in se,
              f"{c} np{ranks}: expected the refusal naming body B, rc {rc} {se!r}")
        check(not os.path.exists(os.path.join(W, out)), f"{c} np{ranks}: output written")
    # a dry run (no discretisation: the case's tags and coefficients) refuses it the same way
    rc, so, se = hexcg(["run", c, "--output", f"o-float-{mesh[:-4]}-dry", "--dry-run"], 2)
    check(rc == 2 and "1 of them float" in se and f"bounding box {box_b} x [0, 1] x [0, 1]" in se,
          f"{c} --dry-run: rc {rc} {se!r}")
# the class, not the one input: B with no boundary entry at all (its faces get kappa du/dn = 0), and
# B with a lambda expression that is 0 at every node (decided from the values, as for one body)
for name, b_bc, extra in (("float-untagged", None, ""),
                          ("float-lambda0", NEUMANN_B, "  lambda: {body_a: 0, body_b: '0*x'}\n")):
    c = case(name, "equal.msh", b_bc, extra)
    rc, so, se = hexcg(["run", c, "--output", "o-" + name], 2)
    check(rc == 2 and "1 of them float" in se and "bounding box [2, 3] x [0, 1] x [0, 1]" in se,
          f"{c}: expected the refusal naming body B, rc {rc} {se!r}")
    check(not os.path.exists(os.path.join(W, "o-" + name)), f"{c}: output written")
# both bodies floating (no Dirichlet at all): two constants, refused too (it was solved with one)
c = case("float-both", "equal.msh", NEUMANN_B, rhs=f"{PI}^2*cos({PI}*x)", exact=f"cos({PI}*x)",
         a_bc="{tags: %s, type: neumann, value: 0}" % tags("a"))
for ranks in (1, 2):
    rc, so, se = hexcg(["run", c, "--output", f"o-float-both-np{ranks}"], ranks)
    check(rc == 2 and "2 of them float" in se and "component 1 (8 elements" in se and "[0, 1] x [0, 1] x [0, 1]" in se,
          f"{c} np{ranks}: rc {rc} {se!r}")
    check(not os.path.exists(os.path.join(W, f"o-float-both-np{ranks}")), f"{c} np{ranks}: output written")

# --- accepted: every body anchored; A is 5, B is cos(pi x); summary.yaml lists the components
anchored = [
    ("dirichlet", "equal.msh", "{tags: %s, type: dirichlet, value: exact}" % tags("b"), ""),
    ("dirichlet-lop", "lopsided.msh", "{tags: %s, type: dirichlet, value: exact}" % tags("b"), ""),
    # lambda = 1 on B's material: -u'' + u = (pi^2 + 1) cos(pi x)
    ("lambda", "equal.msh", NEUMANN_B, "  lambda: {body_a: 0, body_b: 1}\n"),
    # Robin kappa du/dn + u = cos(pi x) on B's faces (du/dn = 0 there)
    ("robin", "equal.msh", "{tags: %s, type: robin, alpha: 1, value: 'cos(%s*x)'}" % (tags("b"), PI), ""),
]
for name, mesh, b_bc, extra in anchored:
    rhs = f"({PI}^2 + 1)*cos({PI}*x)*step(x - 1.5)" if name == "lambda" else RHS
    c = case("ok-" + name, mesh, b_bc, extra, rhs=rhs)
    for ranks in (1, 2):
        out = f"o-{name}-np{ranks}"
        rc, so, se = hexcg(["run", c, "--output", out], ranks)
        check(rc == 0, f"{c} np{ranks}: rc {rc} {se!r}")
        if rc != 0:
            continue
        s = summary(out)
        check(err_max(s) < 1e-3, f"{c} np{ranks}: max error {err_max(s)} (A must be 5, B cos(pi x))")
        check("components:\n  count: 2\n  floating: 0\n" in s and s.count("floating: false}") == 2 and
              "nullspace:" not in s, f"{c} np{ranks}: summary.yaml components: {s!r}")
        check("mesh component 2 of 2" in so and "fixed" in so, f"{c} np{ranks}: no per-component log line: {so!r}")
    rc, so, se = hexcg(["run", c, "--output", f"o-{name}-dry", "--dry-run"], 2)
    check(rc == 0, f"{c} --dry-run: rc {rc} {se!r}")

# --- joined through a periodic pair: one component, anchored by A's Dirichlet faces
c = ("mesh: {type: gmsh, file: joined.msh, periodic: [[a_xmax, b_xmin]]}\norder: 3\nproblem:\n  rhs: '0'\n"
     "  boundary:\n    - {tags: [a_xmin], type: dirichlet, value: 5}\n"
     "    - {tags: [a_ymin, a_ymax, a_zmin, a_zmax, b_xmax, b_ymin, b_ymax, b_zmin, b_zmax], type: neumann, value: 0}\n")
with open(os.path.join(W, "joined.yaml"), "w") as f:
    f.write(c)
for ranks in (1, 2):
    rc, so, se = hexcg(["run", "joined.yaml", "--output", f"o-joined-np{ranks}"], ranks)
    check(rc == 0 and "mesh component" not in so, f"joined.yaml np{ranks}: rc {rc} {so!r} {se!r}")
    if rc == 0:
        s = summary(f"o-joined-np{ranks}")
        check("components:" not in s and "nullspace:" not in s, f"joined.yaml np{ranks}: {s!r}")

# --- B alone, pure Neumann: solved as before (zero-mean solution, the constant projected out)
c = case("alone", "b_alone.msh", NEUMANN_B, rhs=f"{PI}^2*cos({PI}*x)", exact=f"cos({PI}*x) + 7", a_bc=None)
for ranks in (1, 2):
    rc, so, se = hexcg(["run", c, "--output", f"o-alone-np{ranks}"], ranks)
    check(rc == 0, f"{c} np{ranks}: rc {rc} {se!r}")
    if rc == 0:
        s = summary(f"o-alone-np{ranks}")
        check("nullspace: {projected: true" in s and "components:" not in s and err_max(s) < 1e-3 and
              "mesh component" not in so, f"{c} np{ranks}: {s!r}")
finish("all connected-component checks passed")
