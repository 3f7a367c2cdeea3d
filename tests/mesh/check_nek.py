#!/usr/bin/python3
"""NekRS / Nek5000 .re2 meshes (issue 51) through `hexcg mesh` and `hexcg run`.

1. Every .re2 file in --shared (the real files written by Nek tools, never
   copied into the repository): on 1-3 ranks, the element count, the
   boundary tags with their face counts and the periodic pairs are those an
   independent reader (pymech, with the topology counted here in numpy:
   vertices by coordinate, 'P' pairs matched by translation) gives, and the
   unique GLL node count at order 3 is V + 2 Ed + 4 F + 8 E of that
   topology (periodic nodes counted once). A linear solution (orthogonal to
   the periodic translations) is in the discrete space of every mesh, curved
   ones included (the map is isoparametric), so the solve at order 5 (on 1
   or 3 ranks, alternately) must meet it to 1e-8 (curved elements: once the GLL
   quadrature of the metric terms is accurate; at order 3 the 'm' file is
   4e-4 off, at 5 1e-12).
2. Files written by pymech with what the shared files lack: an annulus of
   'C' arcs (little and big endian: the same mesh) and a sphere shell of 's'
   faces (big endian, 2 layers: an interior sphere face shared by two
   elements). Their volume and outer area (t406-nek-geom: the operator's
   mass, the GLL quadrature of the faces) converge exponentially in p to
   3 pi, 4 pi (annulus) and 28 pi / 3, 16 pi (shell); a manufactured
   solution's error falls exponentially in p (by a steady factor every two
   orders: 8 on the annulus, 4 on the coarse 12-element shell).
3. Bad files: truncated, a wrong byte-order marker, an element count that
   lies, curved and periodic records naming elements that do not exist, a
   'P' pair that is not a translation, an unsupported curve type, an arc on
   an edge parallel to z, a field
   the file lacks, not a .re2 header: exit 2 with the file, byte offset or
   record and the fix; no crash, nothing written."""
import math
import os
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, finish, hexcg, setup  # noqa: E402

from pymech.core import HexaData  # noqa: E402
from pymech.neksuite.mesh import readre2, writere2  # noqa: E402

a, W = setup(options=((("--geom",), {"required": True}), (("--shared",), {"required": True}),
                      (("--part",), {"choices": ("files", "curved", "bad"), "required": True})))

# Nek's preprocessor faces (1-based vertices): 1 s=-1, 2 r=+1, 3 s=+1, 4 r=-1, 5 t=-1, 6 t=+1
FACES = ((1, 2, 6, 5), (2, 3, 7, 6), (3, 4, 8, 7), (4, 1, 5, 8), (1, 2, 3, 4), (5, 6, 7, 8))
EDGES = ((1, 2), (2, 3), (3, 4), (4, 1), (5, 6), (6, 7), (7, 8), (8, 5), (1, 5), (2, 6), (3, 7), (4, 8))


def corners(el):
    """the 8 vertices of a pymech element in Nek's preprocessor order"""
    P = el.pos
    out = []
    for iz in range(2):
        for iy, ix in ((0, 0), (0, 1), (1, 1), (1, 0)):
            out.append(P[:, iz, iy, ix].copy())
    return np.array(out)


def topology(d, field):
    """independent counts: V, Ed, F, boundary faces per code, P pairs, periodic translations"""
    X = np.array([corners(el) for el in d.elem])  # nel, 8, 3
    ext = X.max() - X.min()
    key = np.round(X.reshape(-1, 3) / ext * 1e9).astype(np.int64)
    _, vid = np.unique(key, axis=0, return_inverse=True)
    vid = vid.reshape(len(d.elem), 8)
    parent = list(range(vid.max() + 1))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    codes, npair, trans = {}, 0, []
    for e, el in enumerate(d.elem):
        for f in range(6):
            bc = el.bcs[field, f]
            code = bc[0].strip()
            if code == "P":
                npair += 1
                e2, f2 = int(bc[3]) - 1, int(bc[4]) - 1
                A = X[e][[v - 1 for v in FACES[f]]]
                B = X[e2][[v - 1 for v in FACES[f2]]]
                T = B.mean(0) - A.mean(0)
                trans.append(T)
                for i, v in enumerate(FACES[f]):
                    j = int(np.argmin(np.linalg.norm(B - (A[i] + T), axis=1)))
                    ra, rb = find(vid[e, v - 1]), find(vid[e2, FACES[f2][j] - 1])
                    parent[max(ra, rb)] = min(ra, rb)
            elif code and code != "E":
                codes[code] = codes.get(code, 0) + 1
    root = np.vectorize(find)(vid)
    V = len(np.unique(root))
    edges = {tuple(sorted((root[e, a - 1], root[e, b - 1]))) for e in range(len(d.elem)) for a, b in EDGES}
    faces = {}
    for e in range(len(d.elem)):
        for fv in FACES:
            k = tuple(sorted(root[e, v - 1] for v in fv))
            faces[k] = faces.get(k, 0) + 1
    nbnd = sum(1 for c in faces.values() if c == 1)
    return V, len(edges), len(faces), nbnd, codes, npair // 2, trans


def field_of(out, name):
    for line in out.splitlines():
        if line.strip().startswith(name):
            return line.split(None, len(name.split()))[len(name.split())]
    return None


def tags_of(out):
    line = [x for x in out.splitlines() if x.strip().startswith("boundary tags")]
    if not line:
        return None
    words = line[0].split("boundary tags", 1)[1].replace("(", " ").replace(")", " ").replace("faces", " ").split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1, 2)}


def error_max(out):
    for line in out.splitlines():
        if line.strip().startswith("error ") and ", max " in line:
            return float(line.rsplit("max", 1)[1])
    return None


# ---------------------------------------------------------------- 1. the shared files
files = sorted(f for f in os.listdir(a.shared) if f.endswith(".re2")) if os.path.isdir(a.shared) else []
if a.part != "files":
    files = []
check(a.part != "files" or len(files) >= 5, f"the shared .re2 files: {len(files)} in {a.shared} (expected the 5 of ../shared/meshes/nek)")
for name in files:
    path = os.path.join(a.shared, name)
    d = readre2(path)
    for field in range(d.nbc):
        V, Ed, F, nbnd, codes, npair, trans = topology(d, field)
        ntag = sum(codes.values())
        want_tags = dict(codes)
        if nbnd > ntag:
            want_tags["untagged"] = nbnd - ntag
        N3 = V + 2 * Ed + 4 * F + 8 * len(d.elem)
        for ranks in (1, 2, 3):
            rc, out, err = hexcg(["mesh", "--file", path, "--field", str(field + 1), "--order", "3"], ranks)
            what = f"{name} field {field + 1} np{ranks}"
            if not check(rc == 0, f"{what}: rc {rc} {err!r}"):
                continue
            check(field_of(out, "elements") == str(len(d.elem)), f"{what}: elements {field_of(out, 'elements')} "
                  f"(pymech: {len(d.elem)})")
            gll = field_of(out, "unique GLL nodes")
            check(gll is not None and int(gll.split()[0]) == N3, f"{what}: {gll} unique GLL nodes, topology: {N3}")
            per = field_of(out, "periodic face pairs")
            check((int(per.split()[0]) if per else 0) == npair, f"{what}: periodic pairs {per}, pymech: {npair}")
            check(tags_of(out) == want_tags, f"{what}: tags {tags_of(out)}, pymech: {want_tags}")
        if field > 0:
            continue
        # a linear solution orthogonal to the periodic translations: exact in the space
        n = np.array([1.0, 2.0, -1.5])
        if trans:
            _, s, vt = np.linalg.svd(np.array(trans))
            rank = int((s > 1e-9 * s.max()).sum())
            n = vt[rank] * 2.0 if rank < 3 else None
        if n is None:
            continue
        ex = "%r*x + %r*y + %r*z" % tuple(float(c) for c in n)
        tags = sorted(want_tags)
        with open(os.path.join(W, f"{name}.yaml"), "w") as f:
            f.write(f"mesh: {{type: nek, file: {path}}}\norder: 5\nproblem:\n  rhs: '0'\n  exact: '{ex}'\n"
                    f"  boundary:\n    - {{tags: [{', '.join(tags)}], type: dirichlet, value: exact}}\n"
                    "solver: {tol: 1.0e-12}\n")
        for ranks in (1 + 2 * (files.index(name) % 2),):  # 1 and 3 ranks, alternately
            rc, out, err = hexcg(["run", f"{name}.yaml", "--output", f"o-{name}-np{ranks}"], ranks)
            e = error_max(out)
            check(rc == 0 and e is not None and e < 1e-8 * max(1.0, float(np.abs(n).sum())),
                  f"{name} np{ranks}: solve rc {rc}, max error {e} for u = {ex} {err[-400:]!r}")


# ---------------------------------------------------------------- 2. files by pymech: C arcs, s faces
def make(elems, endian):
    """elems: (vertices[8] in Nek preprocessor order, {edge or face (0-based): (type, params)},
    {face: code}) per element"""
    d = HexaData(3, len(elems), [2, 2, 2], [3, 0, 0, 0, 0], 1)
    d.wdsz, d.endian, d.ncurv = 8, endian, 0
    for el, (V, cu, bc) in zip(d.elem, elems):
        for idim in range(3):
            for iz in range(2):
                for q, (iy, ix) in enumerate(((0, 0), (0, 1), (1, 1), (1, 0))):
                    el.pos[idim, iz, iy, ix] = V[4 * iz + q][idim]
        for k, (t, par) in cu.items():
            el.ccurv[k] = t
            el.curv[k, :len(par)] = par
            d.ncurv += 1
        for f, code in bc.items():
            el.bcs[0, f][0] = code
    return d


def annulus(nt, nr, r0=1.0, r1=2.0):
    """nt x nr elements, one layer z in [0, 1]: the arcs of edges 2, 6 (outer, counter-clockwise: R > 0)
    and 4, 8 (inner, clockwise: R < 0)"""
    E = []
    rs, ts = np.linspace(r0, r1, nr + 1), np.linspace(0, 2 * math.pi, nt + 1)
    for j in range(nt):
        for i in range(nr):
            ra, rb, ta, tb = rs[i], rs[i + 1], ts[j], ts[j + 1]
            P = [(r * math.cos(t), r * math.sin(t), z) for z in (0.0, 1.0)
                 for r, t in ((ra, ta), (rb, ta), (rb, tb), (ra, tb))]
            bc = {4: "W", 5: "W"}
            if i == 0:
                bc[3] = "W"
            if i == nr - 1:
                bc[1] = "O"
            E.append((P, {1: ("C", [rb]), 3: ("C", [-ra]), 5: ("C", [rb]), 7: ("C", [-ra])}, bc))
    return E


def shell(nl, r0=1.0, r1=2.0):
    """the cube sphere: 6 patches x nl layers, 's' on the inner (5) and outer (6) faces"""
    E = []
    rs = np.linspace(r0, r1, nl + 1)
    for ax in range(3):
        for sg in (-1.0, 1.0):
            D = []
            for u, v in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                p = np.zeros(3)
                p[ax], p[(ax + 1) % 3], p[(ax + 2) % 3] = sg, u, v
                D.append(p / np.linalg.norm(p))
            for lay in range(nl):
                ri, ro = rs[lay], rs[lay + 1]
                V = [tuple(ri * x) for x in D] + [tuple(ro * x) for x in D]
                A = np.array(V)
                if np.linalg.det(np.array([A[1] - A[0], A[3] - A[0], A[4] - A[0]])) < 0:
                    V = [V[0], V[3], V[2], V[1], V[4], V[7], V[6], V[5]]
                bc = {}
                if lay == 0:
                    bc[4] = "W"
                if lay == nl - 1:
                    bc[5] = "O"
                E.append((V, {4: ("s", [0, 0, 0, ri]), 5: ("s", [0, 0, 0, ro])}, bc))
    return E


writere2(os.path.join(W, "ann-le.re2"), make(annulus(4, 1), "little"))
writere2(os.path.join(W, "ann-be.re2"), make(annulus(4, 1), "big"))
writere2(os.path.join(W, "shell-be.re2"), make(shell(2), "big"))
with open(os.path.join(W, "ann-le.re2"), "rb") as f:
    le = f.read()
with open(os.path.join(W, "ann-be.re2"), "rb") as f:
    be = f.read()
check(le[80:84] != be[80:84] and len(le) == len(be), "pymech wrote the two byte orders")
d = readre2(os.path.join(W, "ann-le.re2"))
check(d.nel == 4 and d.ncurv == 16, f"pymech reads its annulus back: {d.nel} elements, {d.ncurv} curves")

outs = {}
for fname, tags, ncurved in [] if a.part != "curved" else (("ann-le.re2", {"W": 12, "O": 4}, 4), ("ann-be.re2", {"W": 12, "O": 4}, 4),
                             ("shell-be.re2", {"W": 6, "O": 6}, 12)):
    for ranks in (1, 3):
        rc, out, err = hexcg(["mesh", "--file", fname, "--order", "4"], ranks)
        what = f"{fname} np{ranks}"
        if not check(rc == 0, f"{what}: rc {rc} {err!r}"):
            continue
        check(tags_of(out) == tags, f"{what}: tags {tags_of(out)}, written {tags}")
        check(field_of(out, "curved elements") is not None and
              field_of(out, "curved elements").split()[0] == str(ncurved), f"{what}: curved elements")
        outs[(fname, ranks)] = [x for x in out.splitlines()
                                if x.strip().startswith(("unique GLL", "Jacobian", "boundary tags", "vertices"))]
check(a.part != "curved" or outs.get(("ann-le.re2", 1)) == outs.get(("ann-be.re2", 1)),
      "the two byte orders give the same mesh")


def geom(fname, tag, pmax, ranks):
    p = subprocess.run([a.mpiexec, "-n", str(ranks), a.geom, fname, tag, str(pmax)], cwd=W, capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 0, f"t406-nek-geom {fname}: rc {p.returncode} {p.stderr!r}")
    return {int(x.split()[0]): (float(x.split()[1]), float(x.split()[2])) for x in p.stdout.split("\n") if x}


def exponential(err, what, floor, drop):
    """err[p] falls by at least `drop` every two orders until it reaches floor"""
    ps = sorted(err)
    for p in ps:
        if p + 2 in err and err[p] > floor:
            check(err[p + 2] < err[p] / drop or err[p + 2] < floor,
                  f"{what}: error {err[p + 2]:.3e} at p = {p + 2} after {err[p]:.3e} at p = {p} "
                  f"(expected a drop by {drop}: exponential convergence)")


for fname, vol, area, pmax, drop, last in [] if a.part != "curved" else (("ann-be.re2", 3 * math.pi, 4 * math.pi, 10, 50.0, 1e-11),
                                           ("shell-be.re2", 28 * math.pi / 3, 16 * math.pi, 12, 10.0, 3e-8)):
    for ranks in (1, 2):
        g = geom(fname, "O", pmax, ranks)
        ev = {p: abs(v[0] - vol) / vol for p, v in g.items() if p >= 2}
        ea = {p: abs(v[1] - area) / area for p, v in g.items() if p >= 2}
        exponential(ev, f"{fname} np{ranks} volume", 1e-13, drop)
        exponential(ea, f"{fname} np{ranks} area", 1e-13, drop)
        check(ev.get(pmax, 1) < last and ea.get(pmax, 1) < last,
              f"{fname} np{ranks}: relative volume / area errors {ev.get(pmax)}, {ea.get(pmax)} at p = {pmax} "
              f"(expected < {last}: a quadratic geometry stops near 1e-3)")

# a manufactured solution on the curved domains: -lap u = u for u = sin x cos y e^z
# (annulus), -lap u = -2 for u = x y + z^2 (shell)
for fname, rhs, ex, orders, drop, last in [] if a.part != "curved" else (
        ("ann-le.re2", "sin(x)*cos(y)*exp(z)", "sin(x)*cos(y)*exp(z)", (4, 6, 8, 10), 8.0, 1e-4),
        ("shell-be.re2", "-2", "x*y + z*z", (3, 5, 7, 9, 11), 4.0, 1e-3)):
    with open(os.path.join(W, fname + ".yaml"), "w") as f:
        f.write(f"mesh: {{type: nek, file: {fname}}}\norder: 2\nproblem:\n  rhs: '{rhs}'\n"
                f"  exact: '{ex}'\n  boundary:\n    - {{tags: [W, O], type: dirichlet, value: exact}}\n"
                "solver: {tol: 1.0e-13}\n")
    errs = {}
    for p in orders:
        rc, out, err = hexcg(["run", fname + ".yaml", "--set", f"order={p}", "--output", f"o-{fname}-{p}"],
                             2 if p % 2 else 1)
        errs[p] = error_max(out)
        check(rc == 0 and errs[p] is not None, f"{fname} p {p}: rc {rc} {err[-300:]!r}")
    if all(e is not None for e in errs.values()):
        for p, q in zip(orders, orders[1:]):
            check(errs[q] < errs[p] / drop, f"{fname}: max error {errs[q]:.3e} at p = {q} after {errs[p]:.3e} "
                  f"at p = {p} (expected a drop by {drop})")
        check(errs[orders[-1]] < last, f"{fname}: max error {errs[orders[-1]]:.3e} at p = {orders[-1]}")
    if fname == "ann-le.re2":  # a .re2 file named with mesh.type gmsh is read as the nek mesh it is
        with open(os.path.join(W, fname + ".yaml")) as f:
            text = f.read().replace("type: nek", "type: gmsh")
        with open(os.path.join(W, "as-gmsh.yaml"), "w") as f:
            f.write(text)
        rc, out, err = hexcg(["run", "as-gmsh.yaml", "--set", f"order={orders[0]}", "--output", "o-as-gmsh"], 1)
        check(rc == 0 and error_max(out) == errs[orders[0]] and "mesh         nek " in out,
              f"as gmsh: rc {rc}, max error {error_max(out)} (nek: {errs[orders[0]]}) {err[-300:]!r}")


# ---------------------------------------------------------------- 3. bad files
def patched(name, data):
    with open(os.path.join(W, name), "wb") as f:
        f.write(data)
    return name


def word(v):
    return struct.pack("<d", v)


nel = 4
curv0 = 84 + nel * 25 * 8            # the curved-side count
bc0 = curv0 + 8 + 16 * 64            # the boundary count
rec0 = bc0 + 8                       # the first boundary record
periodic = bytearray(le)             # the first boundary record becomes a P record
bad = {
    "truncated.re2": (le[: 84 + 2 * 200 + 13], ["byte offset", "truncated", "count lies"]),
    "marker.re2": (le[:80] + b"\x00\x00\x80\x3f" + le[84:], ["byte-order marker", "neither byte order"]),
    "count.re2": (le[:5] + b"%9d%3d%9d" % (40, 3, 40) + le[26:], ["header gives 40 element(s)", "count lies"]),
    "curve-elem.re2": (le[: curv0 + 8] + word(99) + le[curv0 + 16:],
                       ["curved-side record 1", "names element 99", "elements 1..4"]),
    "curve-type.re2": (le[: curv0 + 8 + 56] + b"e       " + le[curv0 + 8 + 64:],
                       ["curved-side record 1", "curve type 'e'", "supported: 'm' edge midpoint"]),
    "c-vertical.re2": (le[: curv0 + 16] + word(9) + le[curv0 + 24:],
                       ["curved-side record 1", "'C' arc on edge 9 of element 1", "not parallel to z"]),
    "p-nothing.re2": (le[:rec0 + 16] + word(99) + word(3) + le[rec0 + 32: rec0 + 56] + b"P       " + le[rec0 + 64:],
                      ["boundary record 1 of field 1", "points at element 99", "does not exist"]),
    "p-rotated.re2": (le[:rec0 + 16] + word(2) + word(5) + le[rec0 + 32: rec0 + 56] + b"P       " + le[rec0 + 64:],
                      ["boundary record 1", "not translates of each other", "element 2", "element 1"]),
    "header.re2": (b"#v009" + le[5:], ["not a binary .re2 mesh", "'#v009'"]),
}
for name, (data, want) in bad.items() if a.part == "bad" else ():
    patched(name, data)
    for ranks in (1, 2):
        rc, out, err = hexcg(["mesh", "--file", name, "--order", "2"], ranks)
        check(rc == 2 and name in err and all(w in err for w in want) and "Segmentation" not in err,
              f"bad {name} np{ranks}: rc {rc}, stderr {err!r} (expected {want})")
    with open(os.path.join(W, "bad.yaml"), "w") as f:
        f.write(f"mesh: {{type: nek, file: {name}}}\norder: 2\nproblem:\n  rhs: '1'\n  boundary:\n"
                "    - {tags: [W], type: dirichlet, value: 0}\n")
    rc, out, err = hexcg(["run", "bad.yaml", "--output", "o-bad-" + name], 1)
    check(rc == 2 and name in err and not os.path.exists(os.path.join(W, "o-bad-" + name)),
          f"bad {name} through hexcg run: rc {rc}, output written {os.path.exists(os.path.join(W, 'o-bad-' + name))}")
# a field the file lacks (the key and the option)
if a.part != "bad":
    finish(f"nek {a.part}: all as expected")
rc, out, err = hexcg(["mesh", "--file", "ann-le.re2", "--field", "2"], 1)
check(rc == 2 and "mesh.field is 2 but the file has 1 boundary field(s)" in err, f"--field 2: rc {rc} {err!r}")
with open(os.path.join(W, "field.yaml"), "w") as f:
    f.write("mesh: {type: nek, file: ann-le.re2, field: 3}\norder: 2\nproblem:\n  rhs: '1'\n  boundary:\n"
            "    - {tags: [W], type: dirichlet, value: 0}\n")
rc, out, err = hexcg(["run", "field.yaml", "--output", "o-field"], 1)
check(rc == 2 and "mesh.field is 3" in err, f"mesh.field 3: rc {rc} {err!r}")

# a code on a face between two elements (a fluid field's code at the solid): ignored with a note
cube = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]
two = [([(x + 1.0 * k, y, z) for x, y, z in cube], {}, codes) for k, codes in
       enumerate(({0: "W", 1: "W", 3: "W"}, {0: "W", 1: "W"}))]
writere2(os.path.join(W, "interior.re2"), make(two, "little"))
rc, out, err = hexcg(["mesh", "--file", "interior.re2", "--order", "2"], 1)
check(rc == 0 and "1 boundary code(s) of the field sit on faces between two elements (the first: 'W' on face 2 "
      "of element 1" in err and tags_of(out) == {"W": 4, "untagged": 6}, f"interior code: rc {rc} {out!r} {err!r}")

finish("nek bad: all as expected")
