#!/usr/bin/python3
"""The plots of jobs/collect.py checked from the figures themselves: each PNG
carries what it draws in its text chunk "hexcg:layout" (JSON, pixels from the
lower left; the series read back from the drawn artists).

    check_scaling_plots.py OUT     (the series of tests/app/check_scaling.sh)

scaling.png: two axes, time per iteration and efficiency (%), against the
rank count (the x label says ranks, the ticks are the rank counts); the ideal
line t1 r1 / r (strong; log-log) or t1 d / d1 (weak: t1 when the DOFs per
rank are equal); the efficiency drawn is ideal / measured and is
positive; error bars min..max over the repeats where --repeat > 1 (and
none for one run); each axes a sane part of the figure, no overlap; DOFs
per rank in the title, not on an axis. setup.png and time_split.png: a
layout with the rank axis."""
import csv
import json
import os
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import png_text  # noqa: E402

FAILS = []


def check(ok, what):
    if not ok:
        FAILS.append(what)
        print(f"FAIL: {what}")


def png_layout(path):
    if not os.path.isfile(path):
        return None  # the caller says which plot is missing (the old collect.py skipped them silently)
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    text = png_text(data)[1]
    return json.loads(text["hexcg:layout"]) if "hexcg:layout" in text else None


def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def sane_axes(name, lay, axes):
    W, H = lay["figure"][2], lay["figure"][3]
    for a in axes:
        x0, y0, x1, y1 = a["box"]
        check(0 <= x0 < x1 <= W and 0 <= y0 < y1 <= H, f"{name} {a['name']}: axes {a['box']} outside the figure {W}x{H}")
        check((x1 - x0) >= 0.55 * W, f"{name} {a['name']}: axes {x1 - x0:.0f} px wide of {W:.0f}: squeezed")
        # at least 2.5 inches (110 dpi) high: readable in a paper's column
        check((y1 - y0) >= 2.5 * 110, f"{name} {a['name']}: axes {y1 - y0:.0f} px high: squeezed")
        t = a["tight"]
        check(t[0] >= -1 and t[1] >= -1 and t[2] <= W + 1 and t[3] <= H + 1,
              f"{name} {a['name']}: labels cut off ({t} in {W}x{H})")
        check("ranks" in a["xlabel"].lower(), f"{name} {a['name']}: x label '{a['xlabel']}' does not say ranks")
        check(a["ylabel"].strip() != "", f"{name} {a['name']}: no y label")
    for i in range(len(axes)):
        for j in range(i + 1, len(axes)):
            p, q = axes[i]["tight"], axes[j]["tight"]
            check(not (p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]),
                  f"{name}: axes {axes[i]['name']} and {axes[j]['name']} overlap")


def series(out, mode, sub, repeats):
    top = os.path.join(out, sub, mode) if sub else os.path.join(out, mode)
    name = f"{top}/scaling.png"
    rows = list(csv.DictReader(open(f"{top}/scaling.csv")))
    ranks = [int(r["ranks"]) for r in rows]
    t = [float(r["t_per_iteration"]) for r in rows]
    d = [float(r["dofs_per_rank"]) for r in rows]
    lay = png_layout(name)
    check(lay is not None, f"{name}: missing, or no hexcg:layout text chunk")
    if lay is None:
        return
    axes = {a["name"]: a for a in lay["axes"]}
    check(sorted(axes) == ["efficiency", "time"], f"{name}: axes {sorted(axes)}")
    sane_axes(name, lay, lay["axes"])
    tm, ef = axes["time"], axes["efficiency"]
    # the ideal line: t1 r1 / r (strong), t1 d / d1 (weak)
    ideal = [t[0] * ranks[0] / r if mode == "strong" else t[0] * di / d[0] for r, di in zip(ranks, d)]
    il = tm["series"].get("ideal")
    check(il is not None, f"{name}: no ideal line")
    if il:
        check(il["x"] == ranks, f"{name}: ideal line at x {il['x']}, not the ranks {ranks}")
        check(all(close(a, b) for a, b in zip(il["y"], ideal)) and len(il["y"]) == len(ideal),
              f"{name}: ideal line {il['y']} != {ideal}")
    me = tm["series"].get("measured")
    check(me is not None and me["x"] == ranks and all(close(a, b) for a, b in zip(me["y"], t)),
          f"{name}: measured {me} != {t}")
    if mode == "strong":
        check(tm["xscale"] == "log" and tm["yscale"] == "log", f"{name}: strong time not log-log: "
              f"{tm['xscale']}, {tm['yscale']}")
    check("(s)" in tm["ylabel"], f"{name}: time axis without unit: '{tm['ylabel']}'")
    check("%" in ef["ylabel"], f"{name}: efficiency axis without unit: '{ef['ylabel']}'")
    # the efficiency drawn is ideal / measured (positive and finite; no upper bound: it is a ratio of
    # timings, and on a loaded machine a larger run can be the faster one, 169 % seen under the
    # sanitizer pass)
    em = ef["series"].get("measured")
    check(em is not None and em["x"] == ranks, f"{name}: efficiency series {em}")
    if em and il and me:
        want = [100.0 * i / m for i, m in zip(il["y"], me["y"])]
        check(all(close(a, b) for a, b in zip(em["y"], want)), f"{name}: efficiency {em['y']} != ideal/measured {want}")
        check(all(0.0 < v < float("inf") for v in em["y"]), f"{name}: efficiency {em['y']} not positive and finite")
        check(close(em["y"][0], 100.0), f"{name}: efficiency at the first rank count {em['y'][0]} != 100 %")
        check(all(close(float(r["efficiency"]) * 100.0, v) for r, v in zip(rows, em["y"])),
              f"{name}: the CSV's efficiency differs from the plot's")
    ei = ef["series"].get("ideal")
    check(ei is not None and all(close(v, 100.0) for v in ei["y"]), f"{name}: no 100 % line: {ei}")
    # the x axis is the rank count; the DOFs per rank are in the title (weak)
    if mode == "weak":
        check("DOFs per rank" in lay["suptitle"], f"{name}: title '{lay['suptitle']}' does not say the DOFs per rank")
    for a in lay["axes"]:
        check("dof" not in a["ylabel"].lower() and "dof" not in a["xlabel"].lower(),
              f"{name} {a['name']}: a DOFs axis ({a['xlabel']}, {a['ylabel']})")
    # error bars: min..max of the repeats around the median
    bars = tm["series"].get("errorbars")
    if repeats > 1:
        check(lay.get("errorbars") and "min..max" in lay["errorbars"], f"{name}: errorbars says {lay.get('errorbars')}")
        check(bars is not None and len(bars) == len(ranks), f"{name}: error bars {bars} for {len(ranks)} rank counts")
        if bars:
            for r, b, tt in zip(rows, bars, t):
                runs = []
                for k in range(1, repeats + 1):
                    s = yaml.safe_load(open(f"{top}/np{r['ranks']}/r{k}/summary.yaml"))
                    runs.append(s["timers_s"]["solve"] / s["solver"]["iterations"])
                check(b[0] == int(r["ranks"]) and close(b[1], min(runs)) and close(b[2], max(runs)),
                      f"{name}: error bar {b} != min..max {min(runs)}..{max(runs)} at {r['ranks']} ranks")
                check(b[1] <= tt * (1 + 1e-12) and tt <= b[2] * (1 + 1e-12), f"{name}: median {tt} outside its bar {b}")
        eb = ef["series"].get("errorbars")
        check(eb is not None and len(eb) == len(ranks), f"{name}: no efficiency error bars")
    else:
        check(bars is None and lay.get("errorbars") is None, f"{name}: error bars with one run: {bars}")
    for png in ("setup.png", "time_split.png"):
        lay2 = png_layout(f"{top}/{png}")
        check(lay2 is not None, f"{top}/{png}: no hexcg:layout")
        if lay2:
            sane_axes(f"{top}/{png}", lay2, lay2["axes"])


def main(out):
    series(out, "strong", None, 1)
    series(out, "weak", None, 1)
    series(out, "strong", "rep", 2)
    series(out, "weak", "gmsh", 2)  # DOFs per rank about equal: the ideal line is t1 d / d1
    if FAILS:
        sys.exit(f"{len(FAILS)} plot check(s) failed")
    print("scaling plots ok")


if __name__ == "__main__":
    main(sys.argv[1])
