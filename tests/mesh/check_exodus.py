#!/usr/bin/python3
"""Issue 51: the Exodus II reader (mesh/mesh_exodus.c) through the command line.

- Every file of ../shared/meshes/exodus (written by Cubit and MOOSE, not by this project) reads
  on 1, 2 and 3 ranks with the element count, the materials (blocks) with their element counts,
  the boundary tags (side sets) with their face counts and the unique GLL node count that an
  independent reader (netCDF4, Python) and an independent topology count give; u = x + 2y + 3z
  (in the discrete space: hex8 from order 2, hex27 from order 5) solves to round-off on each,
  and a smooth solution converges spectrally on the HEX27 box.
- Files written here by netCDF4 with what the shared ones lack: HEX20 (its 7 missing nodes from
  the serendipity map, checked on the --convert output), HEX8 and HEX27 blocks together, unnamed
  blocks and side sets (block_<id>, sideset_<id>), node sets (a note), the CDF-1, CDF-2 and CDF-5
  formats, and one side set per side number 1..6 checked by geometry (a Neumann solve whose
  flux differs per plane: a wrong side to face map gives a wrong answer).
- Bad files (truncated, a non-hex block, counts that lie, side sets naming elements that do not
  exist, nodes out of range, not netCDF, netCDF-4): exit 2, the file and the block, side set or
  variable named with the fix, nothing written.
- `hexcg mesh --convert out.msh` of box, Kershaw, Gmsh and Exodus meshes reads back with the same
  elements, tags, materials and GLL count, and the same case solves to the same error."""
import collections
import math
import os
import re
import sys

import numpy as np
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, failures, finish, hexcg, setup  # noqa: E402,F401

try:
    import netCDF4
except ImportError:  # scripts/bootstrap.sh installs python3-netcdf4
    print("FAIL: python3-netcdf4 is missing (scripts/bootstrap.sh installs it)", file=sys.stderr)
    sys.exit(1)

a, W = setup(options=[(("--meshes",), {"required": True}), (("--source",), {"required": True}),
                      (("--part",), {"choices": ["shared", "written", "bad", "convert", "all"], "default": "all"})])
PART = a.part
SHARED = sorted(os.path.join(a.meshes, f) for f in os.listdir(a.meshes) if f.endswith((".e", ".exo")))
check(len(SHARED) >= 3, f"the shared Exodus files in {a.meshes}: {SHARED}")

# Exodus side s (1..6) -> its corner nodes (0-based, Exodus order); the Exodus II manual's table
SIDE = {1: (0, 1, 5, 4), 2: (1, 2, 6, 5), 3: (2, 3, 7, 6), 4: (0, 4, 7, 3), 5: (0, 3, 2, 1), 6: (4, 5, 6, 7)}
EDGES = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7)]


def names(ds, var, n):
    if var not in ds.variables:
        return [""] * n
    return [b"".join(r).decode().strip("\0 ").strip() if r.dtype.kind == "S" else "" for r in ds[var][:]]


def exo_read(path):
    """the independent reading: corners (E x 8 node numbers), blocks [(name, count, nodes per el)],
    side sets [(name, [(elem, side)])], coordinates (N x 3)"""
    ds = netCDF4.Dataset(path)
    ds.set_auto_mask(False)
    if "coordx" in ds.variables:
        X = np.array([ds["coordx"][:], ds["coordy"][:], ds["coordz"][:]]).T
    else:
        X = np.array(ds["coord"][:]).T
    nb = len(ds.dimensions["num_el_blk"])
    ids = ds["eb_prop1"][:]
    bn = names(ds, "eb_names", nb)
    blocks, conn = [], []
    for i in range(nb):
        c = np.array(ds[f"connect{i + 1}"][:])
        blocks.append((bn[i] or f"block_{ids[i]}", len(c), c.shape[1]))
        conn += [tuple(int(v) for v in row[:8]) for row in c]
    sets = []
    if "num_side_sets" in ds.dimensions:
        ns = len(ds.dimensions["num_side_sets"])
        sids = ds["ss_prop1"][:]
        sn = names(ds, "ss_names", ns)
        for s in range(ns):
            el, sd = ds[f"elem_ss{s + 1}"][:], ds[f"side_ss{s + 1}"][:]
            sets.append((sn[s] or f"sideset_{sids[s]}", list(zip(el.tolist(), sd.tolist()))))
    ds.close()
    return conn, blocks, sets, X


def expect(conn, blocks, sets):
    """what hexcg must report: element count, materials {name: elements}, tags {name: faces},
    and the unique GLL node count as a function of p"""
    fkeys = [[frozenset(e[k] for k in SIDE[s]) for s in range(1, 7)] for e in conn]
    nface = collections.Counter(k for fk in fkeys for k in fk)
    tag_of = {}
    for name, sides in sets:  # a face in two side sets: the last one's
        for el, sd in sides:
            tag_of[frozenset(conn[el - 1][k] for k in SIDE[sd])] = name
    tags = collections.OrderedDict((name, 0) for name, _ in sets)
    untagged = 0
    for fk in fkeys:
        for k in fk:
            if k in tag_of:
                tags[tag_of[k]] += 1
            elif nface[k] == 1:
                untagged += 1
    if untagged:
        tags["untagged"] = untagged
    mats = collections.OrderedDict()
    for name, n, _ in blocks:
        mats[name] = mats.get(name, 0) + n
    V = len({v for e in conn for v in e})
    Ed = len({frozenset((e[i], e[j])) for e in conn for i, j in EDGES})
    F = len(nface)
    E = len(conn)
    return E, mats, tags, lambda p: V + Ed * (p - 1) + F * (p - 1) ** 2 + E * (p - 1) ** 3


def report(so):
    r = {}
    m = re.search(r"^  elements +(\d+)", so, re.M)
    r["E"] = int(m.group(1)) if m else None
    m = re.search(r"unique GLL nodes +(\d+) at order (\d+)", so)
    r["N"] = int(m.group(1)) if m else None
    m = re.search(r"^  materials +(.*)$", so, re.M)
    r["mats"] = collections.OrderedDict((n, int(c)) for n, c in re.findall(r"(\S+) \((\d+) elements\)", m.group(1))) if m else None
    m = re.search(r"^  boundary tags +(.*)$", so, re.M)
    r["tags"] = collections.OrderedDict((n, int(c)) for n, c in re.findall(r"(\S+) \((\d+) faces\)", m.group(1))) if m else None
    return r


def case(name, mesh, order, tags, exact="x + 2*y + 3*z", rhs="0", extra=""):
    with open(os.path.join(W, name + ".yaml"), "w") as f:
        f.write(f"mesh: {mesh}\norder: {order}\nproblem:\n  rhs: '{rhs}'\n  exact: '{exact}'\n  boundary:\n"
                f"    - {{tags: [{', '.join(tags)}], type: dirichlet, value: exact}}\n{extra}"
                "solver: {tol: 1.0e-13, max_iterations: 4000}\n")
    return name + ".yaml"


def solve(yml, ranks, label):
    out = "o-" + yml[:-5] + f"-np{ranks}"
    rc, so, se = hexcg(["run", yml, "--output", out], ranks, timeout=300)
    if not check(rc == 0, f"{label}: run rc {rc} {se[-1500:]!r}"):
        return None
    return yaml.safe_load(open(os.path.join(W, out, "summary.yaml")))["error"]


# ------------------------------------------------------------------ files written here
def write_exo(path, X, blocks, sidesets=(), nodesets=0, fmt="NETCDF3_64BIT_OFFSET", names=True, lie=None):
    """an Exodus II file by netCDF4: blocks [(id, name, type, conn (1-based, Exodus order))],
    sidesets [(id, name, [(elem, side)])]; lie: {dimension: value} overrides"""
    ds = netCDF4.Dataset(path, "w", format=fmt)
    lie = lie or {}
    nel = sum(len(c) for _, _, _, c in blocks)
    dims = {"len_string": 33, "len_line": 81, "four": 4, "len_name": 33, "num_dim": 3, "num_nodes": len(X),
            "num_elem": nel, "num_el_blk": len(blocks)}
    if sidesets:
        dims["num_side_sets"] = len(sidesets)
    if nodesets:
        dims["num_node_sets"] = nodesets
    dims.update({k: v for k, v in lie.items() if k in dims})
    for k, v in dims.items():
        ds.createDimension(k, v)
    ds.createDimension("time_step", None)
    ds.createVariable("time_whole", "f8", ("time_step",))
    ds.api_version = ds.version = np.float32(8.0)
    ds.floating_point_word_size = 8
    ds.file_size = 1
    for d, n in enumerate("xyz"):
        v = ds.createVariable("coord" + n, "f8", ("num_nodes",))
        v[:] = X[:, d]
    ds.createVariable("eb_prop1", "i4", ("num_el_blk",))[:] = [b[0] for b in blocks]
    ds["eb_prop1"].setncattr("name", "ID")
    if names:
        v = ds.createVariable("eb_names", "S1", ("num_el_blk", "len_name"))
        v[:] = netCDF4.stringtochar(np.array([b[1] for b in blocks], dtype="S33"))
    for i, (bid, bname, typ, c) in enumerate(blocks):
        c = np.asarray(c)
        ds.createDimension(f"num_el_in_blk{i + 1}", len(c))
        ds.createDimension(f"num_nod_per_el{i + 1}", c.shape[1])
        v = ds.createVariable(f"connect{i + 1}", "i4", (f"num_el_in_blk{i + 1}", f"num_nod_per_el{i + 1}"))
        v.elem_type = typ
        v[:] = c
    if sidesets:
        ds.createVariable("ss_prop1", "i4", ("num_side_sets",))[:] = [s[0] for s in sidesets]
        if names:
            v = ds.createVariable("ss_names", "S1", ("num_side_sets", "len_name"))
            v[:] = netCDF4.stringtochar(np.array([s[1] for s in sidesets], dtype="S33"))
        for s, (_, _, sides) in enumerate(sidesets):
            ds.createDimension(f"num_side_ss{s + 1}", len(sides))
            ds.createVariable(f"elem_ss{s + 1}", "i4", (f"num_side_ss{s + 1}",))[:] = [e for e, _ in sides]
            ds.createVariable(f"side_ss{s + 1}", "i4", (f"num_side_ss{s + 1}",))[:] = [sd for _, sd in sides]
    for s in range(nodesets):
        ds.createDimension(f"num_nod_ns{s + 1}", 1)
        ds.createVariable(f"node_ns{s + 1}", "i4", (f"num_nod_ns{s + 1}",))[:] = [1]
    ds.close()


# Exodus HEX27 node positions (a, b, c) in {0, 1, 2}^3, node i (0-based); HEX20 = the first 20
POS27 = [(0, 0, 0), (2, 0, 0), (2, 2, 0), (0, 2, 0), (0, 0, 2), (2, 0, 2), (2, 2, 2), (0, 2, 2),
         (1, 0, 0), (2, 1, 0), (1, 2, 0), (0, 1, 0), (0, 0, 1), (2, 0, 1), (2, 2, 1), (0, 2, 1),
         (1, 0, 2), (2, 1, 2), (1, 2, 2), (0, 1, 2),
         (1, 1, 1), (1, 1, 0), (1, 1, 2), (0, 1, 1), (2, 1, 1), (1, 0, 1), (1, 2, 1)]


def lattice_mesh(n, npe, deform=None, h=1.0):
    """n^3 elements of size h on [0, n h]^3 (x fastest), nodes on the half-lattice; npe 8, 20, 27"""
    ids, X = {}, []
    pos = [tuple(q // 2 for q in p_) for p_ in POS27[:8]] if npe == 8 else POS27[:npe]
    step = 1 if npe == 8 else 2
    conn = []
    for k in range(n):
        for j in range(n):
            for i in range(n):
                row = []
                for p_ in pos:
                    q = (step * i + p_[0], step * j + p_[1], step * k + p_[2])
                    if q not in ids:
                        ids[q] = len(X) + 1
                        x = np.array(q, float) * h / step
                        X.append(deform(x) if deform else x)
                    row.append(ids[q])
                conn.append(row)
    return np.array(X), conn


def plane_sets(conn, X, n, h=1.0):
    """one side set per plane of the cube [0, n h]^3, from the side table and the geometry"""
    out = {nm: [] for nm in ("xmin", "xmax", "ymin", "ymax", "zmin", "zmax")}
    for e, c in enumerate(conn):
        for s, loc in SIDE.items():
            P = X[[c[k] - 1 for k in loc]]
            for d in range(3):
                for side, val in (("min", 0.0), ("max", n * h)):
                    if np.allclose(P[:, d], val):
                        out["xyz"[d] + side].append((e + 1, s))
    return out


def deform(x):
    return np.array([x[0] + 0.06 * math.sin(math.pi * x[1] / 2) * math.sin(math.pi * x[2] / 2),
                     x[1] + 0.06 * math.sin(math.pi * x[0] / 2) * math.sin(math.pi * x[2] / 2),
                     x[2] + 0.06 * math.sin(math.pi * x[0] / 2) * math.sin(math.pi * x[1] / 2)])


# HEX20 (curved), unnamed side set and block (the sideset_<id>, block_<id> names), node sets
X20, c20 = lattice_mesh(2, 20, deform)
X8, c8 = lattice_mesh(2, 8)
f20 = os.path.join(W, "hex20.e")
# the 24 boundary sides of the 2x2x2 cube (same element order for every npe)
allb = sorted(sd for sides in plane_sets(c8, X8, 2).values() for sd in sides)
write_exo(f20, X20, [(12, "", "HEX20", c20)], [(40, "", allb)], nodesets=2)


box27 = os.path.join(a.meshes, "box_hex27.e")

if PART in ("shared", "all"):
    # ------------------------------------------------------------------ the shared files
    for path in SHARED:
        base = os.path.basename(path)
        conn, blocks, sets, X = exo_read(path)
        E, mats, tags, ngll = expect(conn, blocks, sets)
        quad = any(npe != 8 for _, _, npe in blocks)
        if base == "box_hex27.e":  # the side set names by geometry, in the independent reading
            lo, hi = X.min(0), X.max(0)
            planes = {"left": (0, lo[0]), "right": (0, hi[0]), "bottom": (1, lo[1]), "top": (1, hi[1]),
                      "back": (2, lo[2]), "front": (2, hi[2])}
            for name, sides in sets:
                d, v = planes[name]
                pts = [X[conn[el - 1][k] - 1] for el, sd in sides for k in SIDE[sd]]
                check(np.allclose([p[d] for p in pts], v), f"{base}: side set {name} not on its plane")
        p = 3
        for ranks in (1, 2, 3):
            rc, so, se = hexcg(["mesh", "--file", path, "--order", str(p)], ranks)
            if not check(rc == 0, f"{base} np{ranks}: hexcg mesh rc {rc} {se[-1500:]!r}"):
                continue
            r = report(so)
            check(r["E"] == E, f"{base} np{ranks}: {r['E']} elements, netCDF4 reads {E}")
            check(r["N"] == ngll(p), f"{base} np{ranks}: {r['N']} unique GLL nodes at order {p}, topology gives {ngll(p)}")
            check(r["mats"] == mats, f"{base} np{ranks}: materials {r['mats']}, netCDF4 reads {dict(mats)}")
            check(r["tags"] == tags, f"{base} np{ranks}: tags {r['tags']}, expected {dict(tags)}")
            check(("hex27 elements" if quad else "hex8 elements") in so, f"{base} np{ranks}: element kind: {so[:200]!r}")
            if "untagged" in tags:  # boundary faces in no side set: said so, in Exodus words
                check(f"{tags['untagged']} of " in so and "carry no side set" in so,
                      f"{base} np{ranks}: the untagged note: {so[-800:]!r}")
        # u linear: in the discrete space (hex8: from order 2, hex27: from order 5 the quadrature of the
        # stiffness is exact for it), so round-off only
        order = 5 if quad else 2
        yml = case("lin-" + base[:-2], f"{{type: exodus, file: {path}}}", order, list(tags))
        for ranks in ((1, 3) if quad else (2,)):
            err = solve(yml, ranks, f"{base} linear np{ranks}")
            if err:
                scale = float(np.abs(X @ [1, 2, 3]).max())
                check(err["max"] < 1e-9 * scale, f"{base} np{ranks}: u = x + 2y + 3z max error {err['max']} (round-off expected)")


if PART in ("shared", "all"):
    # a smooth solution on the HEX27 box: spectral convergence in p
    if os.path.exists(box27):
        _, _, sets27, _ = exo_read(box27)
        errs = []
        for p in (2, 4, 6):
            yml = case(f"smooth-p{p}", f"{{type: exodus, file: {box27}}}", p, [n for n, _ in sets27],
                       exact="sin(2*x)*exp(y)*cos(z)", rhs="4*sin(2*x)*exp(y)*cos(z)")
            err = solve(yml, 2, f"box_hex27 smooth p{p}")
            errs.append(err["max"] if err else float("nan"))
        check(errs[1] < errs[0] / 30 and errs[2] < errs[1] / 30 and errs[2] < 1e-6,
              f"box_hex27: smooth solution errors at p = 2, 4, 6: {errs} (spectral convergence expected)")


if PART in ("written", "all"):
    # side numbering by geometry: a 2x2x2 HEX8 cube, one side set per plane; Dirichlet on xmin only,
    # Neumann kappa du/dn = the flux of u = x + 2y + 3z on each other plane
    Xc, cc = lattice_mesh(2, 8)
    ps = plane_sets(cc, Xc, 2)
    for fmt, tag in (("NETCDF3_CLASSIC", "cdf1"), ("NETCDF3_64BIT_OFFSET", "cdf2"), ("NETCDF3_64BIT_DATA", "cdf5"),
                     ("NETCDF4", "nc4"), ("NETCDF4_CLASSIC", "nc4c")):
        f = os.path.join(W, f"sides-{tag}.exo")
        write_exo(f, Xc, [(7, "cube", "HEX8", cc)], [(i + 1, nm, s) for i, (nm, s) in enumerate(ps.items())], fmt=fmt)
        rc, so, se = hexcg(["mesh", "--file", f, "--order", "2"], 2)
        r = report(so)
        check(rc == 0 and r["tags"] == {nm: 4 for nm in ps} and r["mats"] == {"cube": 8},
              f"sides {tag}: rc {rc} tags {r.get('tags')} mats {r.get('mats')} {se[-800:]!r}")
    flux = {"xmax": "1", "ymin": "-2", "ymax": "2", "zmin": "-3", "zmax": "3"}
    extra = "".join(f"    - {{tags: [{t}], type: neumann, value: {v}}}\n" for t, v in flux.items())
    with open(os.path.join(W, "sides.yaml"), "w") as fh:
        fh.write("mesh: {type: exodus, file: sides-cdf1.exo}\norder: 3\nproblem:\n  rhs: '0'\n"
                 "  exact: 'x + 2*y + 3*z'\n  boundary:\n    - {tags: [xmin], type: dirichlet, value: exact}\n" + extra +
                 "solver: {tol: 1.0e-13, max_iterations: 2000}\n")
    for ranks in (1, 3):
        err = solve("sides.yaml", ranks, f"sides np{ranks}")
        if err:
            check(err["max"] < 1e-9, f"sides np{ranks}: max error {err['max']} (a side mapped to the wrong face?)")
    # the shared files rewritten as netCDF-4 (HDF5, deflated): the same report as the classic originals
    for path in SHARED:
        src = netCDF4.Dataset(path)
        src.set_auto_mask(False)
        out4 = os.path.join(W, "nc4-" + os.path.basename(path))
        dst = netCDF4.Dataset(out4, "w", format="NETCDF4")
        for n_, d_ in src.dimensions.items():
            dst.createDimension(n_, None if d_.isunlimited() else len(d_))
        for n_, v_ in src.variables.items():
            o_ = dst.createVariable(n_, v_.dtype, v_.dimensions, zlib=True)
            o_.setncatts({k: v_.getncattr(k) for k in v_.ncattrs()})
            o_[:] = v_[:]
        src.close()
        dst.close()
        rc0, so0, _ = hexcg(["mesh", "--file", path, "--order", "2"], 2)
        rc4, so4, se4 = hexcg(["mesh", "--file", out4, "--order", "2"], 2)
        check(rc0 == 0 and rc4 == 0 and report(so4) == report(so0) and report(so0)["E"],
              f"netCDF-4 copy of {path}: rc {rc4} {report(so4)} against {report(so0)} {se4[-600:]!r}")

    # mesh.type gmsh with a .exo file reads it as Exodus; side set pairs in mesh.periodic (matched by
    # translation as for Gmsh): x wraps, 4 x 5 x 5 unique GLL nodes at order 2 instead of 5^3
    with open(os.path.join(W, "per.yaml"), "w") as fh:
        fh.write("mesh: {type: gmsh, file: sides-cdf2.exo, periodic: [[xmin, xmax]]}\norder: 2\nproblem:\n"
                 "  rhs: '0'\n  exact: '2*y + 3*z'\n  boundary:\n"
                 "    - {tags: [ymin, ymax, zmin, zmax], type: dirichlet, value: exact}\n"
                 "solver: {tol: 1.0e-13, max_iterations: 2000}\n")
    for ranks in (1, 2):
        rc, so, se = hexcg(["mesh", "per.yaml"], ranks)
        r = report(so)
        check(rc == 0 and "Exodus II file" in so and re.search(r"periodic face pairs +4 ", so) and r["N"] == 100,
              f"periodic exodus np{ranks}: rc {rc} {r} {so[-600:]!r} {se[-600:]!r}")
    err = solve("per.yaml", 2, "periodic exodus")
    if err:
        check(err["max"] < 1e-10, f"periodic exodus: max error {err['max']}")


    conn20, blocks20, sets20, _ = exo_read(f20)
    E20, mats20, tags20, ngll20 = expect(conn20, blocks20, sets20)
    for ranks in (1, 2, 3):
        rc, so, se = hexcg(["mesh", "--file", f20, "--order", "4"], ranks)
        r = report(so)
        check(rc == 0 and r["E"] == 8 and r["N"] == ngll20(4) and r["mats"] == {"block_12": 8}
              and r["tags"] == {"sideset_40": 24} and "hex27 elements" in so,
              f"hex20 np{ranks}: rc {rc} {r} {se[-800:]!r}")
        check("2 node set(s) ignored" in se, f"hex20 np{ranks}: node set note missing: {se!r}")
    err = solve(case("hex20", f"{{type: exodus, file: {f20}}}", 5, ["sideset_40"]), 2, "hex20 linear")
    if err:
        check(err["max"] < 1e-10, f"hex20: u = x + 2y + 3z max error {err['max']}")
    # the 7 nodes hexcg adds: -1/4 the face's (element's) corners + 1/2 (1/4) its mid-edge nodes
    rc, so, se = hexcg(["mesh", "--file", f20, "--order", "2", "--convert", "hex20.msh"], 1)
    if check(rc == 0 and os.path.exists(os.path.join(W, "hex20.msh")), f"hex20 convert: rc {rc} {se!r}"):
        import meshio
        mm = meshio.read(os.path.join(W, "hex20.msh"))
        hexes = [c.data for c in mm.cells if c.type == "hexahedron27"][0]
        # meshio's hexahedron27 order is VTK's: 20 edge nodes as Exodus, then faces x-, x+, y-, y+, z-, z+, centre
        vtk_face = {20: (0, 1, 1), 21: (2, 1, 1), 22: (1, 0, 1), 23: (1, 2, 1), 24: (1, 1, 0), 25: (1, 1, 2), 26: (1, 1, 1)}
        worst = 0.0
        for e, row in enumerate(c20):
            P = {POS27[i]: X20[row[i] - 1] for i in range(20)}
            for vi, q in vtk_face.items():
                fix = [d for d in range(3) if q[d] != 1]
                if fix:  # face centre
                    cor = [p_ for p_ in P if all(p_[d] != 1 for d in range(3)) and p_[fix[0]] == q[fix[0]]]
                    mid = [p_ for p_ in P if sum(p_[d] == 1 for d in range(3)) == 1 and p_[fix[0]] == q[fix[0]]]
                    want = -0.25 * sum(P[p_] for p_ in cor) + 0.5 * sum(P[p_] for p_ in mid)
                else:
                    want = -0.25 * sum(P[p_] for p_ in P if 1 not in p_) + 0.25 * sum(P[p_] for p_ in P if 1 in p_)
                # hexcg writes elements in file order; find this element by its first corner
                got = mm.points[hexes[e][vi]]
                worst = max(worst, float(np.abs(got - want).max()))
        check(worst < 1e-12, f"hex20: the added nodes differ from the serendipity map by {worst}")

    # HEX8 and HEX27 blocks together (the HEX8 block made triquadratic by its trilinear map), and
    # duplicate block names merged
    X27, c27 = lattice_mesh(2, 27)
    ids27 = {tuple(np.round(x * 2).astype(int)): i + 1 for i, x in enumerate(X27)}
    c8on27 = [[ids27[tuple(np.round(X8[v - 1] * 2).astype(int))] for v in row] for row in c8]
    fm = os.path.join(W, "mixed.e")
    write_exo(fm, X27, [(1, "lin", "HEX8", c8on27[:4]), (2, "quad", "HEX27", c27[4:])],
              [(1, "all", allb)])
    rc, so, se = hexcg(["mesh", "--file", fm, "--order", "3"], 2)
    r = report(so)
    # the GLL count of the 2x2x2 cube: 7^3 at order 3
    check(rc == 0 and r["mats"] == {"lin": 4, "quad": 4} and r["N"] == 7 ** 3 and "hex27" in so,
          f"mixed: rc {rc} {r} {se[-800:]!r}")
    err = solve(case("mixed", f"{{type: exodus, file: {fm}}}", 5, ["all"]), 3, "mixed")
    if err:
        check(err["max"] < 1e-10, f"mixed: max error {err['max']}")


if PART in ("bad", "all"):
    # ------------------------------------------------------------------ bad files: exit 2, named, no output
    bad = {}
    with open(box27 if os.path.exists(box27) else f20, "rb") as fh:
        data = fh.read()
    with open(os.path.join(W, "trunc.e"), "wb") as fh:
        fh.write(data[: len(data) // 2])
    bad["trunc.e"] = [r"trunc\.e", r"truncated"]
    with open(os.path.join(W, "head.e"), "wb") as fh:
        fh.write(data[:100])
    bad["head.e"] = [r"head\.e", r"truncated or corrupt"]
    with open(os.path.join(W, "text.e"), "w") as fh:
        fh.write("not a mesh\n")
    bad["text.e"] = [r"text\.e", r"not an Exodus II file"]
    tet = [[1, 2, 4, 5]]
    write_exo(os.path.join(W, "tet.e"), X8, [(1, "hexes", "HEX8", c8), (9, "tets", "TETRA4", tet)])
    bad["tet.e"] = [r"tet\.e", r"block 2, id 9, 'tets'", r"TETRA4", r"all-hex"]
    write_exo(os.path.join(W, "lie.e"), X8, [(1, "b", "HEX8", c8)], lie={"num_elem": 9})
    bad["lie.e"] = [r"lie\.e", r"hold 8 elements but num_elem says 9"]
    write_exo(os.path.join(W, "ghost.e"), X8, [(1, "b", "HEX8", c8)], [(3, "wall", [(1, 5), (99, 2)])])
    bad["ghost.e"] = [r"ghost\.e", r"side set 1, id 3, 'wall'", r"entry 2 names element 99", r"elements 1\.\.8"]
    write_exo(os.path.join(W, "side7.e"), X8, [(1, "b", "HEX8", c8)], [(3, "wall", [(1, 7)])])
    bad["side7.e"] = [r"side7\.e", r"side 7", r"1\.\.6"]
    cbad = [list(r) for r in c8]
    cbad[3][2] = len(X8) + 5
    write_exo(os.path.join(W, "node.e"), X8, [(1, "b", "HEX8", cbad)])
    bad["node.e"] = [r"node\.e", r"element 4 of block 1", r"names node %d" % (len(X8) + 5)]
    write_exo(os.path.join(W, "nc4full.e"), X8, [(1, "b", "HEX8", c8)], fmt="NETCDF4")
    with open(os.path.join(W, "nc4full.e"), "rb") as fh:
        d4 = fh.read()
    with open(os.path.join(W, "nc4.e"), "wb") as fh:
        fh.write(d4[: len(d4) // 2])
    bad["nc4.e"] = [r"nc4\.e", r"netCDF-4 \(HDF5\) file that HDF5 cannot open", r"truncated or corrupt"]
    for fname, pats in bad.items():
        for ranks in (1, 2):
            rc, so, se = hexcg(["mesh", "--file", fname], ranks)
            check(rc == 2 and all(re.search(p_, se) for p_ in pats),
                  f"bad {fname} np{ranks}: rc {rc}, want 2 and {pats} in {se[-1200:]!r}")
        yml = case("bad-" + fname[:-2], f"{{type: exodus, file: {fname}}}", 2, ["xmin"])
        rc, so, se = hexcg(["run", yml, "--output", "o-bad"], 2)
        check(rc == 2 and not os.path.exists(os.path.join(W, "o-bad")) and "Traceback" not in se,
              f"bad {fname} run: rc {rc} {se[-600:]!r}")


if PART in ("convert", "all"):
    # ------------------------------------------------------------------ --convert round trips
    gm = os.path.join(a.source, "configs", "meshes")
    gfiles = [os.path.join(gm, "two_materials.msh")] if os.path.exists(os.path.join(gm, "two_materials.msh")) else []
    sources = [("box", ["--type", "box", "--elements", "3,2,2"], "{type: box, elements: [3, 2, 2]}",
                ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"]),
               ("kershaw", ["--type", "kershaw", "--elements", "6,2,2", "--eps", "0.5"],
                "{type: kershaw, elements: [6, 2, 2], eps: 0.5}", ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"]),
               ("exodus27", ["--file", box27], f"{{type: exodus, file: {box27}}}", None),
               ("hex20", ["--file", f20], f"{{type: exodus, file: {f20}}}", None)]
    if len(SHARED) > 1:
        sources.append(("brick", ["--file", SHARED[1]], f"{{type: exodus, file: {SHARED[1]}}}", None))
    if gfiles:
        sources.append(("gmsh", ["--file", gfiles[0]], f"{{type: gmsh, file: {gfiles[0]}}}", None))
    check(gfiles, f"no Gmsh mesh in {gm} for the round trip")
    for label, args, mesh, tg in sources:
        out = f"conv-{label}.msh"
        rc, so, se = hexcg(["mesh"] + args + ["--order", "3", "--convert", out], 2)
        if not check(rc == 0 and os.path.exists(os.path.join(W, out)), f"convert {label}: rc {rc} {se[-800:]!r}"):
            continue
        r0 = report(so)
        rc, so2, se2 = hexcg(["mesh", "--file", out, "--order", "3"], 3 if (r0["E"] or 0) >= 3 else 1)
        r1 = report(so2)
        check(rc == 0 and r1 == r0, f"convert {label}: read back {r1}, the source {r0} {se2[-600:]!r}")
        tags_ = tg or [t for t in r0["tags"]]
        e0 = solve(case(f"rt-{label}-a", mesh, 3, tags_, exact="sin(x)*exp(y)*cos(z)", rhs="sin(x)*exp(y)*cos(z)"), 2,
                   f"round trip {label} source")
        e1 = solve(case(f"rt-{label}-b", f"{{type: gmsh, file: {out}}}", 3, tags_, exact="sin(x)*exp(y)*cos(z)",
                        rhs="sin(x)*exp(y)*cos(z)"), 2, f"round trip {label} converted")
        if e0 and e1:
            print(f"convert {label}: max error {e0['max']:.6e} on the source, {e1['max']:.6e} converted")
            check(abs(e0["max"] - e1["max"]) <= 1e-9 * max(e0["max"], 1e-300) + 1e-14,
                  f"convert {label}: max error {e0['max']} on the source, {e1['max']} on the converted file")

finish("all Exodus II reader and --convert checks passed")
