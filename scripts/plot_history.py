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
history) and the keys of the effective case (case.yaml beside it) whose
values differ between the two runs and its rank count, e.g.
"poisson_box (order=5; 1 rank)"; the labels
are printed as "labels: RUN | BASELINE".

Needs numpy and matplotlib (Debian's /usr/bin/python3 has them)."""
import argparse
import csv
import os
import sys


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


def flat(d, pre=""):
    """a nested case mapping as {"a.b": value}"""
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(flat(v, f"{pre}{k}."))
    else:
        out[pre[:-1]] = d
    return out


def labels(run, base, run_label, base_label):
    """case name plus the effective-case keys that differ (from the files beside the histories)"""
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
        info.append((name, {k: v for k, v in case.items() if not k.startswith("output.")}, ranks))
    keys = sorted(set(info[0][1]) | set(info[1][1]))
    diff = [k for k in keys if info[0][1].get(k) != info[1][1].get(k)] if info[0][1] and info[1][1] else []
    out = []
    for (name, case, ranks), fallback in zip(info, (run_label, base_label)):
        if not name:
            out.append(fallback)
            continue
        changed = ", ".join(f"{k}={case.get(k, '-')}" for k in diff[:4]) + (", ..." if len(diff) > 4 else "")
        # the rank count too: a 1 vs 2 rank comparison would read "pmg_box | pmg_box"
        nr = f"{ranks} rank{'s' if ranks != 1 else ''}" if isinstance(ranks, int) else ""
        extra = "; ".join(x for x in (changed, nr) if x)
        out.append(f"{name} ({extra})" if extra else name)
    return out[0], out[1]


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
    ap.add_argument("--output", required=True)
    a = ap.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.exit(f"plot_history.py: matplotlib is not available for {sys.executable}: {e}")
    ib, rb, bres = load(a.baseline, a.x)
    ir, rr, rres = load(a.run, a.x)
    rl, bl = labels(a.run, a.baseline, a.run_label, a.baseline_label)
    print(f"labels: {rl} | {bl}")
    nb, nr = len(bres) - 1, len(rres) - 1
    fig, (ax, dx) = plt.subplots(2, 1, figsize=(7, 6.5), dpi=100, sharex=True,
                                 gridspec_kw={"height_ratios": [3, 2]})
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
    for axis in (ax, dx):
        axis.grid(True, which="both", alpha=0.3)
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=8)
    ax.set_title("hexcg compare: residual histories", fontsize=10)
    fig.tight_layout()
    try:
        fig.savefig(a.output)
    except OSError as e:
        sys.exit(f"plot_history.py: cannot write {a.output}: {e}")


if __name__ == "__main__":
    main()
