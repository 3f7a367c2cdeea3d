#!/usr/bin/python3
"""Independent check of the files t204-solution wrote: solution.h5 through
h5py, solution.xdmf as XML (xml.etree) whose every DataItem names an existing
dataset with the dimensions and number type it declares, and solution.xdmf
read by meshio (an independent XDMF reader, python3-meshio): the same
points, hexahedra and fields as the HDF5 file."""
import os
import sys
import xml.etree.ElementTree as ET

import h5py
import meshio
import numpy as np

root = sys.argv[1]
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what, file=sys.stderr)


for sub, with_exact in (("exact", True), ("noexact", False)):
    d = os.path.join(root, sub)
    with h5py.File(os.path.join(d, "solution.h5"), "r") as f:
        p = int(f.attrs["order"])
        E = int(f.attrs["num_elements"])
        npe = (p + 1) ** 3
        N, C = E * npe, E * p ** 3
        check(f.attrs["format"] in (b"hexcg-solution-1", "hexcg-solution-1"), f"format {f.attrs['format']!r}")
        check(f["mesh/coordinates"].shape == (N, 3), f"coordinates {f['mesh/coordinates'].shape}")
        check(f["mesh/connectivity"].shape == (C, 8), "connectivity shape")
        conn = f["mesh/connectivity"][...]
        check(conn.min() >= 0 and conn.max() < N, "connectivity indexes the nodes")
        ids = f["mesh/element_id"][...]
        check(sorted(ids.tolist()) == list(range(E)), f"element ids {ids}")
        u = f["fields/u"][...]
        xyz = f["mesh/coordinates"][...]
        ref = xyz[:, 0] + 2 * xyz[:, 1] + 3 * xyz[:, 2] + 1e-3 * np.repeat(ids, npe)
        check(np.allclose(u, ref, rtol=0, atol=1e-12), "u matches the synthetic field")
        check(("exact" in f["fields"]) == with_exact and ("error" in f["fields"]) == with_exact, "exact/error present")
        if with_exact:
            check(np.array_equal(f["fields/error"][...], u - f["fields/exact"][...]), "error = u - exact")
        # hexahedra have positive volume (VTK order: bottom face counter-clockwise seen from +z)
        a, b, c = (xyz[conn[:, 1]] - xyz[conn[:, 0]], xyz[conn[:, 3]] - xyz[conn[:, 0]], xyz[conn[:, 4]] - xyz[conn[:, 0]])
        check((np.einsum("ij,ij->i", np.cross(a, b), c) > 0).all(), "positive sub-hex volumes")
        check(f["fields/rank"].shape == (C,), "rank per sub-hex")

        tree = ET.parse(os.path.join(d, "solution.xdmf"))
        x = tree.getroot()
        check(x.tag == "Xdmf" and x.get("Version") == "3.0", "Xdmf 3.0 root")
        grid = x.find("Domain/Grid")
        topo = grid.find("Topology")
        check(topo.get("TopologyType") == "Hexahedron" and int(topo.get("NumberOfElements")) == C, "topology")
        check(grid.find("Geometry").get("GeometryType") == "XYZ", "geometry XYZ")
        names = [at.get("Name") for at in grid.findall("Attribute")]
        check(names == (["u", "exact", "error", "rank"] if with_exact else ["u", "rank"]), f"attributes {names}")
        for item in grid.iter("DataItem"):
            fname, path = item.text.strip().split(":", 1)
            check(fname == "solution.h5" and path in f, f"data item {item.text}")
            dims = tuple(int(v) for v in item.get("Dimensions").split())
            check(dims == f[path].shape, f"{path}: XDMF {dims} vs HDF5 {f[path].shape}")
            kind = "Float" if f[path].dtype.kind == "f" else "Int"
            check(item.get("NumberType") == kind and int(item.get("Precision")) == f[path].dtype.itemsize,
                  f"{path}: type {item.get('NumberType')}/{item.get('Precision')} vs {f[path].dtype}")
        for at in grid.findall("Attribute"):
            n = f[at.find("DataItem").text.split(":", 1)[1]].shape[0]
            check(n == (N if at.get("Center") == "Node" else C), f"attribute {at.get('Name')} length")

        try:
            m = meshio.read(os.path.join(d, "solution.xdmf"))
        except Exception as e:  # meshio raises its ReadError, or KeyError/ValueError on odd XML
            check(False, f"meshio cannot read solution.xdmf: {type(e).__name__} {e}")
            continue
        check(np.array_equal(m.points, xyz), "meshio: points")
        check(len(m.cells) == 1 and m.cells[0].type == "hexahedron" and np.array_equal(m.cells[0].data, conn),
              "meshio: one block of hexahedra, the connectivity")
        check(sorted(m.point_data) == sorted(["u", "exact", "error"] if with_exact else ["u"]),
              f"meshio: point data {sorted(m.point_data)}")
        check(np.array_equal(m.point_data["u"], u), "meshio: u")
        check(list(m.cell_data) == ["rank"] and np.array_equal(m.cell_data["rank"][0], f["fields/rank"][...]),
              "meshio: rank per cell")
sys.exit(1 if fails else 0)
