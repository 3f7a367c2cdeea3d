#!/usr/bin/python3
"""Draw two residual histories (semilog) into a PNG: what `hexcg compare
--plot FILE.png` runs. Reads hexcg's history.csv or history.h5 (h5py).

  plot_history.py --run HIST [--run-label L] --baseline HIST [--baseline-label L]
                  [--mark ITERATION] [--rtol R --floor F] --output FILE.png

Top: both curves (residual / initial residual). Bottom: |run - baseline| /
baseline_0 row by row and, given --rtol/--floor, the allowance
R * max(b_i, F * b_0) / b_0 of `hexcg compare`.

Needs numpy and matplotlib (Debian's /usr/bin/python3 has them)."""
import argparse
import csv
import sys


def load(path):
    """(iterations, relative residuals r_i / r_0) of a history file."""
    with open(path, "rb") as f:
        sig = f.read(8)
    if sig == b"\x89HDF\r\n\x1a\n":
        import h5py

        with h5py.File(path, "r") as h:
            it = [int(v) for v in h["iteration"][()]]
            res = [float(v) for v in h["residual"][()]]
    else:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        it = [int(float(r["iteration"])) for r in rows]
        res = [float(r["residual"]) for r in rows]
    r0 = res[0] if res and res[0] > 0 else 1.0
    return it, [r / r0 for r in res], res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True)
    ap.add_argument("--run-label", default="run")
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--baseline-label", default="baseline")
    ap.add_argument("--mark", type=int, help="iteration of the first difference over the tolerance")
    ap.add_argument("--rtol", type=float)
    ap.add_argument("--floor", type=float)
    ap.add_argument("--output", required=True)
    a = ap.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.exit(f"plot_history.py: matplotlib is not available for {sys.executable}: {e}")
    ib, rb, bres = load(a.baseline)
    ir, rr, rres = load(a.run)
    fig, (ax, dx) = plt.subplots(2, 1, figsize=(7, 6.5), dpi=100, sharex=True,
                                 gridspec_kw={"height_ratios": [3, 2]})
    ax.semilogy(ib, rb, "-", color="0.55", lw=3, label=f"baseline: {a.baseline_label} ({ib[-1]} it.)")
    ax.semilogy(ir, rr, "-", color="C0", lw=1.2, label=f"run: {a.run_label} ({ir[-1]} it.)")
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
    for x in ([a.mark] if a.mark is not None else []):
        for axis in (ax, dx):
            axis.axvline(x, color="C3", ls="--", lw=1, label=f"first difference over tolerance (it. {x})"
                         if axis is ax else None)
    ax.set_ylabel("residual / initial residual")
    dx.set_xlabel("iteration")
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
