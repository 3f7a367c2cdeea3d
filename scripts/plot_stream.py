#!/usr/bin/python3
"""Plot the output of `hexcg bench stream`: measured bandwidth (points) and
the fitted model W(B) = B / (T0 + B / Wmax) (lines) against the bytes moved
per launch, one colour per kernel, the same-run copy (BS1) as reference.

Usage: /usr/bin/python3 scripts/plot_stream.py --dir DIR [--out FILE.png]
Reads DIR/stream.csv and DIR/stream_fit.yaml; writes DIR/stream.png unless
--out is given. Needs Debian's python3-matplotlib (not a pyenv python).
"""
import argparse
import csv
import math
import os
import sys


def read_csv(path):
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.setdefault(r["kernel"], []).append((float(r["bytes"]), float(r["gbps"])))
    return rows


def read_fit(path):
    """Minimal reader for the fixed layout of stream_fit.yaml (PyYAML when
    available)."""
    try:
        import yaml  # noqa: F401

        with open(path) as f:
            doc = yaml.safe_load(f)
        out = {}
        for k, v in (doc.get("kernels") or {}).items():
            out[k] = v
        return doc, out
    except ImportError:
        pass
    doc, out, cur = {}, {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            ind = len(line) - len(line.lstrip(" "))
            key, _, val = line.strip().partition(":")
            val = val.strip().strip('"')
            if ind == 0:
                doc[key] = val
            elif ind == 2 and doc.get("kernels") == "" and not val:
                cur = out.setdefault(key, {})
            elif ind == 4 and cur is not None:
                try:
                    cur[key] = float(val.replace(".inf", "inf"))
                except ValueError:
                    cur[key] = val
    return doc, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="output directory of hexcg bench stream")
    ap.add_argument("--out", help="PNG to write (default DIR/stream.png)")
    a = ap.parse_args()
    import pyrequire  # beside this script: the module, the interpreter and the fix (exit 2)

    pyrequire.need("plot_stream.py", ["matplotlib"], "stream.png")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = read_csv(os.path.join(a.dir, "stream.csv"))
    doc, fits = read_fit(os.path.join(a.dir, "stream_fit.yaml"))
    fig, ax = plt.subplots(figsize=(9, 5.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (k, pts) in enumerate(rows.items()):
        pts.sort()
        c = colors[i % len(colors)]
        f = fits.get(k, {})
        label = "%s %s" % (k, f.get("name", ""))
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", ms=3.5, color=c)
        t0, w = f.get("t0_seconds"), f.get("wmax_gbps")
        if isinstance(t0, float) and isinstance(w, float) and w > 0 and math.isfinite(w):
            b0, b1 = pts[0][0], pts[-1][0]
            xs = [b0 * (b1 / b0) ** (j / 199.0) for j in range(200)]
            ys = [x / (t0 + x / (w * 1e9)) / 1e9 for x in xs]
            ax.plot(xs, ys, "-", lw=1.2, color=c)
            label += ": Wmax %.1f GB/s, T0 %.2f us" % (w, t0 * 1e6)
        ax.plot([], [], "o-", color=c, ms=3.5, label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes moved per launch (all ranks)")
    ax.set_ylabel("bandwidth [GB/s]")
    ax.set_title("hexcg bench stream: backend %s, %s rank(s), %s (points: measured, lines: "
                 "T0 + B/Wmax)" % (doc.get("backend", "?"), doc.get("ranks", "?"), doc.get("device", "")),
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    out = a.out or os.path.join(a.dir, "stream.png")
    fig.savefig(out, dpi=110, format="png")


if __name__ == "__main__":
    main()
