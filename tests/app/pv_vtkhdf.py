"""Run by ParaView's pvpython (tests/app/check_vtkhdf.py): what ParaView
itself sees in VTKHDF files or file series of hexcg (and in an XDMF time
series: its times and arrays), one JSON line each ("PVJSON {...}"), and a
picture of u in the first (cut open at x = 0.5).
Debian's ParaView 5.11 renders through X only: run it under xvfb-run.
usage: xvfb-run -a pvpython pv_vtkhdf.py PNG FILE..."""
import json
import sys

from paraview import servermanager as sm
from paraview.simple import (Clip, ColorBy, GetActiveViewOrCreate, IntegrateVariables, OpenDataFile, ResetCamera,
                             SaveScreenshot, Show)
from vtkmodules.vtkCommonDataModel import vtkLagrangeHexahedron


def order_mismatches(d):
    """VTK's own node order against the nodes' places: in each cell of a box
    mesh (the GLL lattice), the node at the lattice place (i, j, k) of the
    cell's distinct coordinates must be VTK's node PointIndexFromIJK(i, j, k)"""
    bad = 0
    for c in range(d.GetNumberOfCells()):
        cell = d.GetCell(c)
        n = cell.GetNumberOfPoints()
        p = round(n ** (1 / 3)) - 1
        pts = [cell.GetPoints().GetPoint(m) for m in range(n)]
        axes = [sorted({round(q[a], 9) for q in pts}) for a in range(3)]
        if any(len(ax) != p + 1 for ax in axes):
            bad += n
            continue
        for m, q in enumerate(pts):
            i, j, k = (axes[a].index(round(q[a], 9)) for a in range(3))
            bad += vtkLagrangeHexahedron.PointIndexFromIJK(i, j, k, [p, p, p]) != m
    return bad


def frame(r, t):
    r.UpdatePipeline() if t is None else r.UpdatePipeline(t)
    d = sm.Fetch(r)
    pd, cd = d.GetPointData(), d.GetCellData()
    f = {"class": d.GetClassName(), "points": d.GetNumberOfPoints(), "cells": d.GetNumberOfCells(),
         "types": sorted({d.GetCellType(i) for i in range(d.GetNumberOfCells())}),
         "point_arrays": sorted(pd.GetArrayName(i) for i in range(pd.GetNumberOfArrays())),
         "cell_arrays": sorted(cd.GetArrayName(i) for i in range(cd.GetNumberOfArrays())),
         "u_range": list(pd.GetArray("u").GetRange()), "order_mismatches": order_mismatches(d)}
    if cd.GetArray("rank"):
        f["rank_range"] = list(cd.GetArray("rank").GetRange())
    iv = IntegrateVariables(Input=r)
    iv.UpdatePipeline() if t is None else iv.UpdatePipeline(t)
    o = sm.Fetch(iv)
    f["volume"] = o.GetCellData().GetArray("Volume").GetValue(0)
    f["integral_u"] = o.GetPointData().GetArray("u").GetValue(0)
    return f


def picture(r, png):
    view = GetActiveViewOrCreate("RenderView")
    view.ViewSize = [800, 600]
    clip = Clip(Input=r)
    clip.ClipType = "Plane"
    clip.ClipType.Origin = [0.5, 0.5, 0.5]
    clip.ClipType.Normal = [1.0, 0.0, 0.0]
    disp = Show(clip, view)
    ColorBy(disp, ("POINTS", "u"))
    disp.RescaleTransferFunctionToDataRange(True)
    disp.SetScalarBarVisibility(view, True)
    view.CameraPosition = [2.8, -1.6, 2.2]
    view.CameraFocalPoint = [0.5, 0.5, 0.5]
    view.CameraViewUp = [0, 0, 1]
    ResetCamera(view)
    SaveScreenshot(png, view, ImageResolution=[800, 600])


def xdmf_frame(r, t):
    """an XDMF time series (hexcg's default output): the arrays ParaView finds and u's range"""
    r.UpdatePipeline(t)
    return {"point_arrays": sorted(r.PointData.keys()), "cell_arrays": sorted(r.CellData.keys()),
            "u_range": list(r.PointData["u"].GetRange())}


for n, path in enumerate(sys.argv[2:]):
    r = OpenDataFile(path)
    if path.endswith(".xdmf"):
        times = list(r.TimestepValues)
        print("PVJSON " + json.dumps({"file": path, "reader": r.GetXMLName(), "times": times,
                                      "frames": [xdmf_frame(r, t) for t in times]}), flush=True)
        continue
    times = list(r.TimestepValues) if r.TimestepValues else []
    res = {"file": path, "reader": r.GetXMLName() if r else None, "times": times,
           "frames": [frame(r, t) for t in (times or [None])]}
    print("PVJSON " + json.dumps(res), flush=True)
    if n == 0:
        picture(r, sys.argv[1])
