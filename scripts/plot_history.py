#!/usr/bin/python3
"""Draw two residual histories (semilog) into a PNG: what `hexcg compare
--plot FILE.png` runs. Reads hexcg's history.csv or history.h5 (h5py).

  plot_history.py --run HIST [--run-label L] --baseline HIST [--baseline-label L]
                  [--mark ITERATION] [--rtol R --floor F] [--x iteration|time] --output FILE.png

Top: both curves (residual / initial residual). Bottom: |run - baseline| /
baseline_0 row by row and, given --rtol/--floor, the allowance
R * max(b_i, F * b_0) / b_0 of `hexcg compare`. --x time draws against the
history's time_s (seconds since the run started) instead of the iteration.
Each curve is labelled with its run's case name (summary.yaml beside the
history), every key of the effective case (case.yaml beside it) whose value
differs between the two runs (--keys: the list `hexcg compare` found,
problem keys first; else found here the same way) and its rank count, e.g.
"poisson_box (order=5; 1 rank)"; the labels are printed as
"labels: RUN | BASELINE".

Layout: the two axes keep their size (7 x 3.6 and 7 x 2.4 inches); the
legend sits below them, its long labels wrapped, and the figure grows by its
height. The PNG carries the layout in a text chunk "hexcg:layout" (JSON:
the figure, each axes' box with its tick labels, the legend's box, in
pixels from the lower left) for tests.

Needs numpy and matplotlib (Debian's /usr/bin/python3 has them)."""
import argparse
import csv
import json
import os
import sys
import textwrap


def load(path, x="iteration"):
    """(x values, relative residuals r_i / r_0, residuals) of a history file."""
    with open(path, "rb") as f:
        sig = f.read(8)
    key = "time_s" if x == "time" else "iteration"
    if sig == b"\x89HDF\r\n\x1a\n":
        import h5py

        with h5py.File(path, "r") as h:
            if key not in h:
                sys.exit(f"plot_history.py: {path} has no '{key}'")
            it = [float(v) for v in h[key][()]]
            res = [float(v) for v in h["residual"][()]]
    else:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        if rows and key not in rows[0]:
            sys.exit(f"plot_history.py: {path} has no '{key}' column")
        it = [float(r[key]) for r in rows]
        res = [float(r["residual"]) for r in rows]
    if x != "time":
        it = [int(v) for v in it]
    r0 = res[0] if res and res[0] > 0 else 1.0
    return it, [r / r0 for r in res], res


def has_map(v):
    return isinstance(v, dict) or (isinstance(v, list) and any(has_map(x) for x in v))


def flat(d, pre=""):
    """a nested case mapping as {"a.b": value}, a list that holds mappings by
    index ("problem.boundary[0].type"), as hexcg compare reads case.yaml"""
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(flat(v, f"{pre}.{k}" if pre else str(k)))
    elif isinstance(d, list) and has_map(d):
        for i, v in enumerate(d):
            out.update(flat(v, f"{pre}[{i}]"))
    else:
        out[pre] = d
    return out


def key_class(k):
    """0 not compared (output), 1 problem (the PDE and its discretisation), 2 solver: hx_cmp_key_class"""
    if k == "output" or k.startswith("output.") or k in ("time.output_every", "time.checkpoint_every",
                                                          "time.error_every"):
        return 0
    if k == "mesh.partitioner":
        return 2
    if k == "order" or k.startswith(("mesh.", "problem.", "time.")):
        return 1
    return 2


def show(v):
    if v is None:
        return "-"
    if isinstance(v, list):
        return "[" + ", ".join(show(x) for x in v) + "]"
    return str(v)


def labels(run, base, run_label, base_label, keys=None):
    """case name plus the effective-case keys that differ (from the files beside the histories):
    keys (hexcg compare's list, problem keys first) or, without it, found here"""
    try:
        import yaml
    except ImportError:
        return run_label, base_label
    info = []
    for path in (run, base):
        d = os.path.dirname(path) or "."
        name, case, ranks = None, {}, None
        try:
            with open(os.path.join(d, "summary.yaml")) as f:
                s = yaml.safe_load(f) or {}
                name, ranks = s.get("case"), s.get("ranks")
        except (OSError, yaml.YAMLError, AttributeError):
            pass
        try:
            with open(os.path.join(d, "case.yaml")) as f:
                case = flat(yaml.safe_load(f) or {})
        except (OSError, yaml.YAMLError):
            pass
        info.append((name, case, ranks))
    if keys is None:
        order = list(info[0][1]) + [k for k in info[1][1] if k not in info[0][1]]
        diff = [k for k in order if key_class(k) and info[0][1].get(k) != info[1][1].get(k)]
        diff = ([k for k in diff if key_class(k) == 1] + [k for k in diff if key_class(k) == 2]
                if info[0][1] and info[1][1] else [])
    else:
        diff = keys
    out = []
    for (name, case, ranks), other, fallback in zip(info, (info[1][1], info[0][1]), (run_label, base_label)):
        # the keys both cases have, with this run's value; the keys only this one has (a preconditioner's
        # own keys) counted, so that the one that matters (preconditioner.type) is not buried
        both = [f"{k}={show(case.get(k))}" for k in diff if k in case and k in other]
        mine = [k for k in diff if k in case and k not in other]
        if mine:
            both.append(f"+{len(mine)} key{'s' if len(mine) > 1 else ''} only this case has")
        changed = ", ".join(both)
        # the rank count too: a 1 vs 2 rank comparison would read "pmg_box | pmg_box"
        nr = f"{ranks} rank{'s' if ranks != 1 else ''}" if isinstance(ranks, int) else ""
        extra = "; ".join(x for x in (changed, nr) if x)
        head = name or fallback
        out.append(f"{head} ({extra})" if extra else head)
    return out[0], out[1]


def box(b):
    return [round(float(v), 1) for v in (b.x0, b.y0, b.x1, b.y1)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True)
    ap.add_argument("--run-label", default="run")
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--baseline-label", default="baseline")
    ap.add_argument("--mark", type=int, help="iteration of the first difference over the tolerance")
    ap.add_argument("--rtol", type=float)
    ap.add_argument("--floor", type=float)
    ap.add_argument("--x", choices=("iteration", "time"), default="iteration")
    ap.add_argument("--keys", help="comma-separated case keys that differ (hexcg compare's list)")
    ap.add_argument("--output", required=True)
    a = ap.parse_args()
    import pyrequire  # beside this script: the module, the interpreter and the fix (exit 2)

    pyrequire.need("plot_history.py", ["matplotlib"], "the plot of hexcg compare --plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ib, rb, bres = load(a.baseline, a.x)
    ir, rr, rres = load(a.run, a.x)
    keys = [k for k in a.keys.split(",") if k] if a.keys is not None else None
    rl, bl = labels(a.run, a.baseline, a.run_label, a.baseline_label, keys)
    print(f"labels: {rl} | {bl}")
    nb, nr = len(bres) - 1, len(rres) - 1
    # fixed axes sizes (inches); the legend goes below, the figure grows with it
    W, L, R, T, AH, GAP, DH, XL = 7.5, 0.9, 0.25, 0.4, 3.6, 0.15, 2.4, 0.55
    fig = plt.figure(figsize=(W, T + AH + GAP + DH + XL), dpi=100)
    ax = fig.add_axes([0, 0, 1, 1])
    dx = fig.add_axes([0, 0, 1, 1], sharex=ax)
    ax.semilogy(ib, rb, "-", color="0.55", lw=3, label=f"baseline: {bl} ({nb} it.)")
    ax.semilogy(ir, rr, "-", color="C0", lw=1.2, label=f"run: {rl} ({nr} it.)")
    n = min(len(bres), len(rres))
    b0 = bres[0] if bres and bres[0] > 0 else 1.0
    diff = [abs(rres[i] - bres[i]) / b0 for i in range(n)]
    pos = [(ib[i], d) for i, d in enumerate(diff) if d > 0]
    if pos:
        dx.semilogy([p[0] for p in pos], [p[1] for p in pos], ".", color="C0", ms=3, label="|run - baseline| / b_0")
    else:
        dx.text(0.5, 0.5, "identical residuals", transform=dx.transAxes, ha="center")
    if a.rtol and a.floor is not None:
        allow = [a.rtol * max(bres[i], a.floor * b0) / b0 for i in range(n)]
        dx.semilogy(ib[:n], allow, "-", color="C1", lw=1, label=f"allowed: rtol {a.rtol:g} * max(b, {a.floor:g} b_0)")
    for x in ([a.mark] if a.mark is not None and a.x == "iteration" else []):
        for axis in (ax, dx):
            axis.axvline(x, color="C3", ls="--", lw=1, label=f"first difference over tolerance (it. {x})"
                         if axis is ax else None)
    ax.set_ylabel("residual / initial residual")
    dx.set_xlabel("time_s: seconds since the run started" if a.x == "time" else "iteration")
    dx.set_ylabel("difference / b_0")
    ax.tick_params(labelbottom=False)
    for axis in (ax, dx):
        axis.grid(True, which="both", alpha=0.3)
    ax.set_title("hexcg compare: residual histories", fontsize=10)
    handles, texts = [], []
    for axis in (ax, dx):
        h, t = axis.get_legend_handles_labels()
        handles += h
        texts += ["\n".join(textwrap.wrap(x, 95, subsequent_indent="    ")) for x in t]
    leg = fig.legend(handles, texts, loc="lower left", fontsize=8, frameon=True, borderaxespad=0.2)
    fig.canvas.draw()
    lh = leg.get_window_extent().height / fig.dpi  # inches
    H = T + AH + GAP + DH + XL + lh + 0.3
    fig.set_size_inches(W, H)
    bottom = lh + 0.3 + XL  # the lower axes above the legend and the x label

    def frac(x0, y0, w, h):
        return [x0 / W, y0 / H, w / W, h / H]

    dx.set_position(frac(L, bottom, W - L - R, DH))
    ax.set_position(frac(L, bottom + DH + GAP, W - L - R, AH))
    leg.set_bbox_to_anchor((L / W, 0.1 / H), transform=fig.transFigure)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    layout = {"figure": [0, 0, round(fig.bbox.width, 1), round(fig.bbox.height, 1)],
              "axes": [box(ax.bbox), box(dx.bbox)],
              "axes_tight": [box(ax.get_tightbbox(r)), box(dx.get_tightbbox(r))],
              "legend": box(leg.get_window_extent(r)), "labels": [rl, bl]}
    try:
        fig.savefig(a.output, metadata={"hexcg:layout": json.dumps(layout)})
    except OSError as e:
        sys.exit(f"plot_history.py: cannot write {a.output}: {e}")


if __name__ == "__main__":
    main()
