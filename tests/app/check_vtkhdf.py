#!/usr/bin/python3
"""output.format: vtkhdf read by ParaView itself (issue 51 point 4): Debian's
pvpython (python3-paraview, under xvfb-run: its ParaView 5.11 renders through
X only) opens hexcg's solution.hdf and the time series solution.hdf.series.

Checked: ParaView's reader, point and cell counts (E (p+1)^3 and E, the
hexcg summary's elements), the cell type (72, VTK_LAGRANGE_HEXAHEDRON), the
arrays (u, exact, error per point, rank per cell), the node order (in every
cell, VTK's PointIndexFromIJK against the nodes' places), the volume (the
unit cube, exactly: ParaView integrates a Lagrange cell over its linear
sub-cells, and on a box these are boxes) and the integral of u =
sin(pi x) sin(pi y) sin(pi z) against the exact (2/pi)^3: that quadrature on
the linear sub-cells of the GLL lattice is second order in their size, so
halving the elements must divide the error by 4 (3.5..4.5), and the
Richardson extrapolation of the two (the h^2 term removed) must agree with
(2/pi)^3 to 0.1 %; the time series' times and values (u(0) the initial condition,
max u = exp(-t) within the time error; each frame holds its fields only,
its mesh and rank external HDF5 links into series/mesh.hdf); the default
XDMF series (mesh once in series/mesh.h5) opened by ParaView's XDMF reader
with its times and arrays; a picture of u (test folder
u_vtkhdf.png: the cube cut open at x = 0.5), checked to hold a colour map."""
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, finish, hexcg, setup  # noqa: E402

a, W = setup()
os.environ["OMP_NUM_THREADS"] = "1"
here = os.path.dirname(os.path.abspath(__file__))
STEADY = """mesh: {{type: box, elements: [{n}, {n}, {n}]}}
order: 4
problem:
  rhs: "3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)"
  exact: "sin(pi*x)*sin(pi*y)*sin(pi*z)"
  boundary:
    - {{tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}}
solver: {{tol: 1.0e-10}}
output: {{format: vtkhdf}}
"""
HEAT = """mesh: {type: box, elements: [2, 2, 2]}
order: 4
time: {scheme: bdf2, dt: 0.05, end: 0.2, initial: exact, output_every: 2}
problem:
  rhs: "(3*pi^2 - 1)*exp(-t)*sin(pi*x)*sin(pi*y)*sin(pi*z)"
  exact: "exp(-t)*sin(pi*x)*sin(pi*y)*sin(pi*z)"
  boundary:
    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}
solver: {tol: 1.0e-10}
output: {format: vtkhdf, fields: [u, error, rank], precision: fp32}
"""
runs = {}
XDMF = HEAT.replace("output: {format: vtkhdf, fields: [u, error, rank], precision: fp32}", "output: {fields: [u, rank]}")
for name, text, ranks in (("box2", STEADY.format(n=2), 1), ("box4", STEADY.format(n=4), 2), ("heat", HEAT, 2),
                          ("xdmf", XDMF, 2)):
    path = os.path.join(W, name + ".yaml")
    open(path, "w").write(text)
    rc, so, se = hexcg(["run", path, "--output", name], ranks=ranks)
    check(rc == 0, f"{name}: exit {rc} {se[-1500:]}")
    runs[name] = so
for name in ("box2", "box4"):
    d = os.path.join(W, name)
    check(os.path.isfile(os.path.join(d, "solution.hdf")) and os.path.islink(os.path.join(d, "solution.hdf")) and
          not os.path.exists(os.path.join(d, "solution.h5")) and not os.path.exists(os.path.join(d, "solution.xdmf")),
          f"{name}: solution.hdf published as the set's file (no solution.h5, solution.xdmf): {os.listdir(d)}")
hd = os.path.join(W, "heat")
frames = sorted(os.listdir(os.path.join(hd, "series")))
check(frames == ["mesh.hdf", "solution_000000.hdf", "solution_000002.hdf", "solution_000004.hdf"],
      f"heat: the mesh and the frames {frames}")
series = json.load(open(os.path.join(hd, "solution.hdf.series")))
check([f["time"] for f in series["files"]] == [0, 0.1, 0.2] and
      [f["name"] for f in series["files"]] == ["series/" + f for f in frames[1:]], f"heat: solution.hdf.series {series}")
fb = os.path.getsize(os.path.join(hd, "series", frames[1]))
mb = os.path.getsize(os.path.join(hd, "series", "mesh.hdf"))
check(f"output: {fb} bytes per frame (u, error, fp32), series/mesh.hdf {mb} bytes once" in runs["heat"],
      "heat: the log's bytes per frame")
try:
    import h5py
    with h5py.File(os.path.join(hd, "series", frames[2])) as f:
        check(f["VTKHDF/PointData/u"].dtype.itemsize == 4 and f["VTKHDF/Points"].dtype.itemsize == 8,
              "heat: output.precision fp32 writes the fields in float32, the points in float64")
        # the mesh once: a frame's mesh datasets and rank are external links into series/mesh.hdf
        links = {n: f["VTKHDF"].get(n, getlink=True) for n in ("Points", "Connectivity", "Offsets", "Types")}
        links["CellData/rank"] = f["VTKHDF/CellData"].get("rank", getlink=True)
        check(all(isinstance(k, h5py.ExternalLink) and k.filename == "mesh.hdf" for k in links.values()),
              f"heat: the frame links its mesh and rank to mesh.hdf: {links}")
        check(fb < 2 * 4 * 1000 + 8192, f"heat: a frame is its two float32 fields and HDF5's metadata: {fb} bytes")
except ImportError:
    check(False, "h5py missing (python3-h5py, scripts/bootstrap.sh)")

# interrupted after step 3 (exit 5) and continued: the uninterrupted run's series (the frames
# carried and written, the mesh written again by the continuation)
os.environ["HEXCG_TEST_SIGNAL"] = "3:1:0"
rc, so, se = hexcg(["run", os.path.join(W, "heat.yaml"), "--output", "heat-r"], ranks=2)
del os.environ["HEXCG_TEST_SIGNAL"]
check(rc == 5, f"heat interrupted at step 3: exit {rc} {se[-800:]}")
rc, so, se = hexcg(["run", os.path.join(W, "heat.yaml"), "--output", "heat-r", "--restart", "heat-r"], ranks=2)
check(rc == 0, f"heat continued: exit {rc} {se[-800:]}")
hr = os.path.join(W, "heat-r")
check(json.load(open(os.path.join(hr, "solution.hdf.series"))) == series and
      sorted(os.listdir(os.path.join(hr, "series"))) == frames, f"heat continued: {os.listdir(os.path.join(hr, 'series'))}")
try:
    import numpy as np
    for n in frames[1:]:
        with h5py.File(os.path.join(hd, "series", n)) as f, h5py.File(os.path.join(hr, "series", n)) as g:
            check(np.array_equal(f["VTKHDF/PointData/u"][:], g["VTKHDF/PointData/u"][:]),
                  f"heat continued: {n} holds the uninterrupted run's u")
    with h5py.File(os.path.join(hd, "series", "mesh.hdf")) as f, h5py.File(os.path.join(hr, "series", "mesh.hdf")) as g:
        check(np.array_equal(f["VTKHDF/Points"][:], g["VTKHDF/Points"][:]) and
              np.array_equal(f["VTKHDF/Connectivity"][:], g["VTKHDF/Connectivity"][:]), "heat continued: the same mesh")
except (ImportError, NameError) as e:
    check(False, f"numpy/h5py: {e}")

png = os.path.join(W, "u_vtkhdf.png")
files = [os.path.join(W, "box2", "solution.hdf"), os.path.join(W, "box4", "solution.hdf"),
         os.path.join(hd, "solution.hdf.series"), os.path.join(W, "xdmf", "solution.xdmf")]
p = subprocess.run(["xvfb-run", "-a", "pvpython", os.path.join(here, "pv_vtkhdf.py"), png] + files,
                   capture_output=True, text=True, timeout=240, cwd=W)
pv = [json.loads(ln[7:]) for ln in p.stdout.splitlines() if ln.startswith("PVJSON ")]
check(p.returncode == 0 and len(pv) == 4, f"pvpython: exit {p.returncode} {p.stdout[-1500:]} {p.stderr[-2500:]}")
if len(pv) == 4:
    # the default format's lean series (the mesh and rank in series/mesh.h5, u in each frame):
    # ParaView's XDMF reader finds the times and both arrays
    x = pv[3]
    check(x["times"] == [0.0, 0.1, 0.2] and all(f["point_arrays"] == ["u"] and f["cell_arrays"] == ["rank"]
                                                 for f in x["frames"]) and
          [round(f["u_range"][1], 3) for f in x["frames"]] == [1.0, round(math.exp(-0.1), 3), round(math.exp(-0.2), 3)],
          f"xdmf: ParaView's times and arrays {x}")
    exact = (2 / math.pi) ** 3
    err = {}
    for name, E, res in (("box2", 8, pv[0]), ("box4", 64, pv[1])):
        f = res["frames"][0]
        print(name, json.dumps(f))
        check(res["reader"] == "HDFReader" and f["class"] == "vtkUnstructuredGrid", f"{name}: reader {res['reader']}")
        check(f["points"] == E * 125 and f["cells"] == E and f["types"] == [72],
              f"{name}: {f['points']} points, {f['cells']} cells of types {f['types']} (want {E * 125}, {E}, [72])")
        check(f["point_arrays"] == ["error", "exact", "u"] and f["cell_arrays"] == ["rank"],
              f"{name}: arrays {f['point_arrays']} {f['cell_arrays']}")
        check(f["order_mismatches"] == 0, f"{name}: {f['order_mismatches']} nodes out of VTK's Lagrange order")
        check(abs(f["volume"] - 1) < 1e-12, f"{name}: volume {f['volume']!r}, not 1")
        err[name] = abs(f["integral_u"] - exact)
    check(pv[1]["frames"][0]["rank_range"] == [0, 1], f"box4 on 2 ranks: rank {pv[1]['frames'][0].get('rank_range')}")
    ratio = err["box2"] / err["box4"] if err["box4"] > 0 else float("inf")
    print(f"integral of u: errors {err['box2']:.3e} (2^3), {err['box4']:.3e} (4^3), ratio {ratio:.2f}; "
          f"exact {exact:.12f}")
    check(3.5 <= ratio <= 4.5, f"ParaView's integral of u: second order in the sub-cell size (ratio {ratio:.2f})")
    # with the h^2 term gone (Richardson), what is left is of higher order: well below the 1.2 % of 4^3
    rich = (4 * pv[1]["frames"][0]["integral_u"] - pv[0]["frames"][0]["integral_u"]) / 3
    check(abs(rich - exact) < 1e-3 * exact, f"ParaView's integral of u, extrapolated: {rich!r} against {exact!r}")
    h = pv[2]
    print("heat", json.dumps(h))
    check(h["times"] == [0.0, 0.1, 0.2], f"heat: ParaView's times {h['times']}")
    if len(h["frames"]) == 3:
        for t, f in zip((0.0, 0.1, 0.2), h["frames"]):
            check(f["points"] == 8 * 125 and f["cells"] == 8 and f["order_mismatches"] == 0 and
                  f["point_arrays"] == ["error", "u"] and f["cell_arrays"] == ["rank"],
                  f"heat t = {t}: {f['points']} points, {f['cells']} cells, arrays {f['point_arrays']}")
            # the centre node (0.5, 0.5, 0.5) is a GLL node: max u = exp(-t) there, the initial
            # condition exactly at t = 0 (float32: 6e-8), BDF2's error at dt = 0.05 after
            top = f["u_range"][1]
            tol = 1e-7 if t == 0 else 2e-3
            check(abs(top - math.exp(-t)) <= tol, f"heat t = {t}: max u {top!r} against exp(-t) {math.exp(-t)!r}")
try:
    import matplotlib.image
    import numpy as np
    img = matplotlib.image.imread(png)
    colours = len(np.unique((img[:, :, :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    check(img.shape[:2] == (600, 800) and colours > 200, f"the picture {png}: {img.shape}, {colours} colours")
    print(f"picture: {png} ({colours} colours)")
except (ImportError, FileNotFoundError, OSError) as e:
    check(False, f"the picture {png}: {e}")
finish("vtkhdf: ParaView reads it")
