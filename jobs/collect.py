#!/usr/bin/python3
"""Collect the summary.yaml of a scaling series into a CSV and plots, print
the parallel efficiencies and, given a stream fit, the model's prediction.

    jobs/collect.py strong|weak DIR [--fit stream_fit.yaml] [--comm comm.yaml]
                    [--no-plots]                  (DIR holds np<N>/summary.yaml)

Writes DIR/scaling.csv with columns
    ranks,order,elements,dofs,iterations,repeats,t_solve,t_per_iteration,
    t_per_iteration_min,t_per_iteration_max,dofs_per_rank,mdof_iter_per_s,
    ideal_t_per_iteration,efficiency,t_setup,t_pc_setup,t_operator,t_precond,
    t_reduction,t_exchange [,predicted_t_per_iteration,predicted_efficiency]
(the four split times are seconds per iteration, without any setup; t_setup
is the discretisation's setup, t_pc_setup the preconditioner's, in seconds,
once per run) and the plots, all against the MPI rank count:
DIR/scaling.png (top: time per iteration with the ideal line, log-log for
strong scaling; bottom: the efficiency in %, ideal / measured, with 100 %;
the model's prediction where there is one; min..max bars over the repeats),
DIR/setup.png (the two setups) and DIR/time_split.png (operator,
preconditioner, reductions, exchange per iteration for each rank count; the
preconditioner's setup is not in it). Each PNG carries what it shows (axes
boxes, titles, labels, scales, the drawn series: measured, ideal, model,
error bars) as JSON in its text chunk "hexcg:layout".
A rank count run several times (np<N>/r<k>/summary.yaml, jobs/scaling.sh
--repeat) gives the median of each time over the repeats, and the minimum
and maximum per iteration beside it (the plots' error bars).
Efficiency (time per iteration, so a change in iteration count does not hide
the parallel cost): strong  t1 * n1 / (tN * N); weak  (t1 / d1) / (tN / dN)
with d the DOFs per rank (t1 / tN when they are equal, as for generated
meshes; a Gmsh series refined by order has only about equal ones), both
relative to the smallest rank count. The prediction is jobs/model.py's
t(n, P) with the same formulas; without --fit (and no DIR/stream_fit.yaml)
there is none, and none for a series whose preconditioner is not jacobi
(the model counts a Jacobi-PCG iteration: refused with a message). A fit
that says stable: false is used with a warning.
Needs PyYAML and, for the plots, matplotlib: imported first; a missing one
is an error (exit 2) naming it, the interpreter and the fix (--no-plots
needs no matplotlib). Run it with the project's python (scripts/python.sh:
$HEXCG_PYTHON, else /usr/bin/python3), as jobs/scaling.sh does."""
import argparse
import csv
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
import model  # noqa: E402
import pyrequire  # noqa: E402

SPLIT = (("t_operator", "operator"), ("t_precond", "preconditioner"), ("t_reduction", "reductions"),
         ("t_exchange", "exchange"))


def ideal_time(mode, r0, r):
    """the time per iteration of perfect scaling from the first rank count: strong t1 r1 / r, weak
    t1 d / d1 (d the DOFs per rank: t1 when they are equal)"""
    if mode == "strong":
        return r0["t_per_iteration"] * r0["ranks"] / r["ranks"]
    return r0["t_per_iteration"] * r["dofs_per_rank"] / r0["dofs_per_rank"]


def _box(b):
    return [round(float(v), 1) for v in (b.x0, b.y0, b.x1, b.y1)]


def _axes_layout(fig, ax, name):
    """what the axes show, read back from its artists (tests check the figure, not collect.py's data)"""
    r = fig.canvas.get_renderer()
    out = {"name": name, "box": _box(ax.bbox), "tight": _box(ax.get_tightbbox(r)), "title": ax.get_title(),
           "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(), "xscale": ax.get_xscale(),
           "yscale": ax.get_yscale(), "ylim": [float(v) for v in ax.get_ylim()], "series": {}}
    for line in ax.get_lines():
        gid = line.get_gid()
        if gid:
            xy = line.get_xydata()
            out["series"][gid] = {"label": line.get_label(), "x": [float(v) for v in xy[:, 0]],
                                  "y": [float(v) for v in xy[:, 1]]}
    for col in ax.collections:
        if col.get_gid() == "errorbars":
            # one vertical segment per rank count: [x, low, high]
            out["series"]["errorbars"] = [[float(seg[0][0]), float(min(seg[0][1], seg[1][1])),
                                           float(max(seg[0][1], seg[1][1]))] for seg in col.get_segments()]
    return out


def _save(fig, top, name, mode, axes, **extra):
    """the figure laid out as top/NAME.png, with its layout (what each of axes, a list of (axes, name),
    shows) in the PNG's metadata hexcg:layout (matplotlib imported by plot())"""
    import json

    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.canvas.draw()
    layout = {"figure": [0, 0, round(fig.bbox.width, 1), round(fig.bbox.height, 1)], "mode": mode}
    layout.update(extra)
    layout["axes"] = [_axes_layout(fig, a, n) for a, n in axes]
    fig.savefig(os.path.join(top, name + ".png"), dpi=110, metadata={"hexcg:layout": json.dumps(layout)})
    plt.close(fig)


def _errorbar(ax, x, y, lo, hi, **kw):
    """measured medians with min..max bars (lo, hi: None when there are no repeats)"""
    line = ax.plot(x, y, "o-", color="C0", lw=1.8, ms=6, label=kw.pop("label"), gid="measured")[0]
    if lo is not None:
        c = ax.vlines(x, lo, hi, color="C0", lw=1.4)
        c.set_gid("errorbars")
        ax.plot(x + x, lo + hi, "_", color="C0", ms=10, mew=1.4)  # the bars' caps
    return line


def plot(mode, top, rows, pred):
    """scaling.png (time per iteration and efficiency against the rank count, with the ideal line,
    the repeats' min..max bars and the model's prediction where there is one), setup.png,
    time_split.png; each PNG carries what it shows in a text chunk "hexcg:layout" (JSON)"""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

    plt.rcParams.update({"font.size": 11, "axes.titlesize": 12, "legend.fontsize": 9.5})
    r0 = rows[0]
    ranks = [r["ranks"] for r in rows]
    reps = min(r["repeats"] for r in rows)
    bars = reps > 1
    t = [r["t_per_iteration"] for r in rows]
    ideal = [ideal_time(mode, r0, r) for r in rows]
    lo = [r["t_per_iteration_min"] for r in rows] if bars else None
    hi = [r["t_per_iteration_max"] for r in rows] if bars else None
    how = (f"median of {reps} runs, bars: min..max" if bars else "one run per rank count")
    equal_d = max(r["dofs_per_rank"] for r in rows) <= 1.001 * min(r["dofs_per_rank"] for r in rows)
    if mode == "strong":
        size = f"{r0['dofs']:,} DOFs (order {r0['order']}, {r0['elements']:,} elements)"
    elif equal_d:
        size = f"{r0['dofs_per_rank']:,.0f} DOFs per rank (order {r0['order']}, {r0['elements']:,} elements on {r0['ranks']} rank{'s' if r0['ranks'] > 1 else ''})"
    else:
        dpr = [r["dofs_per_rank"] for r in rows]
        size = (f"about {r0['dofs_per_rank']:,.0f} DOFs per rank ({min(dpr):,.0f} to {max(dpr):,.0f}, "
                f"order {r0['order']} to {rows[-1]['order']})")
    fig, (ax, ex) = plt.subplots(2, 1, figsize=(7.0, 8.6), sharex=True)
    _errorbar(ax, ranks, t, lo, hi, label=f"measured ({how})")
    ideal_label = ("ideal: $t_1 r_1 / r$" if mode == "strong" else
                   "ideal: $t_1$ (constant)" if equal_d else "ideal: $t_1 d / d_1$ (d: DOFs per rank)")
    ax.plot(ranks, ideal, "--", color="0.35", lw=1.4, label=ideal_label, gid="ideal")
    if pred:
        ax.plot(ranks, [r["predicted_t_per_iteration"] for r in rows], "s:", color="C1", ms=5,
                label="model (jobs/model.py)", gid="model")
    ax.set_ylabel("time per iteration (s)")
    ax.set_title(("Strong" if mode == "strong" else "Weak") + " scaling: time per iteration")
    ax.set_xscale("log", base=2)
    if mode == "strong" or max(t + ideal) / min(t + ideal) > 10:
        ax.set_yscale("log")
        # labelled ticks at 1, 2, 5 x 10^k: a strong series spans less than a decade at a few ranks
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        ax.set_ylim(0, 1.15 * max(t + ideal + (hi or [])))
    eff = [100.0 * i / m for i, m in zip(ideal, t)]
    elo = [100.0 * i / m for i, m in zip(ideal, hi)] if bars else None
    ehi = [100.0 * i / m for i, m in zip(ideal, lo)] if bars else None
    _errorbar(ex, ranks, eff, elo, ehi, label="measured: ideal / measured time")
    ex.plot(ranks, [100.0] * len(ranks), "--", color="0.35", lw=1.4, label="ideal: 100 %", gid="ideal")
    if pred:
        n08 = f", $n_{{0.8}}$ = {pred['n08']:.3g} DOFs per rank" if pred.get("n08") else ""
        ex.plot(ranks, [100.0 * r["predicted_efficiency"] for r in rows], "s:", color="C1", ms=5,
                label=f"model{n08}", gid="model")
    ex.set_ylabel(("parallel" if mode == "strong" else "weak-scaling") + " efficiency (%)")
    ex.set_title(("Parallel" if mode == "strong" else "Weak-scaling") + " efficiency")
    ex.set_ylim(0, max(110.0, 1.1 * max(eff + (ehi or []))))
    for a in (ax, ex):
        a.set_xlabel("MPI ranks")  # on both: each panel can stand alone in a paper
    for a in (ax, ex):
        a.set_xticks(ranks, [str(r) for r in ranks])
        a.xaxis.set_minor_locator(NullLocator())
        a.grid(True, which="major", alpha=0.3)
        a.legend(loc="best", framealpha=0.9)
    ax.tick_params(labelbottom=True)
    fig.suptitle(f"hexcg {mode} scaling, {size}", fontsize=11)
    _save(fig, top, "scaling", mode, [(ax, "time"), (ex, "efficiency")], suptitle=fig._suptitle.get_text(),
          repeats=reps, errorbars="min..max over the repeats around the median" if bars else None)

    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    ax.plot(ranks, [r["t_setup"] for r in rows], "o-", label="discretisation (mesh, gather-scatter, operator)",
            gid="setup")
    ax.plot(ranks, [r["t_pc_setup"] for r in rows], "s-", label="preconditioner", gid="pc_setup")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ranks, [str(r) for r in ranks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("MPI ranks")
    ax.set_ylabel("setup time, once per run (s)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Setup ({mode} scaling, {'median of %d runs' % reps if bars else 'one run per rank count'})")
    ax.grid(True, alpha=0.3)
    ax.legend()
    _save(fig, top, "setup", mode, [(ax, "setup")])

    fig, ax = plt.subplots(figsize=(8.6, 4.6))
    x = list(range(len(rows)))
    bottom = [0.0] * len(rows)
    for key, label in SPLIT:
        v = [r[key] for r in rows]
        ax.bar(x, v, bottom=bottom, width=0.6, label=label)
        bottom = [b + y for b, y in zip(bottom, v)]
    ax.plot(x, t, "k_", ms=40, mew=2, label="solve / iteration (median)", gid="measured")
    ax.set_xticks(x, [str(r) for r in ranks])
    ax.set_xlabel("MPI ranks")
    ax.set_ylabel("time per iteration (s)")
    ax.set_title(f"Time per iteration by part (setup apart), {mode} scaling")
    ax.legend(fontsize=9, markerscale=0.35, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside: no bar hidden
    _save(fig, top, "time_split", mode, [(ax, "time_split")])


def one_run(s):
    """the figures of one summary.yaml; timers_s.preconditioner holds the applies only (the setup is
    preconditioner.setup_s, in the setup timer): per iteration as it is"""
    it = int(s["solver"]["iterations"])
    tm = s["timers_s"]
    pc = s.get("preconditioner") or {}
    pc_setup = float(pc.get("setup_s", 0.0) or 0.0)
    t_solve = float(tm["solve"])
    row = {"ranks": int(s["ranks"]), "elements": int(s["mesh"]["elements"]), "dofs": int(s["dofs"]),
           "order": int(s.get("order", 7)), "iterations": it, "t_solve": t_solve,
           "t_per_iteration": t_solve / max(it, 1), "t_setup": float(tm.get("setup", 0.0)), "t_pc_setup": pc_setup,
           "preconditioner": str((s.get("solver") or {}).get("preconditioner", "jacobi"))}
    for key, name in SPLIT:
        row[key] = float(tm.get(name, 0.0)) / max(it, 1)
    return row


def main(argv):
    ap = argparse.ArgumentParser(prog="collect.py", description="collect a scaling series")
    ap.add_argument("mode", choices=("strong", "weak"))
    ap.add_argument("dir")
    ap.add_argument("--fit", help="stream_fit.yaml of hexcg bench stream (default: DIR/stream_fit.yaml if any)")
    ap.add_argument("--comm", help="comm.yaml of hexcg bench comm (default: DIR/comm.yaml if any)")
    ap.add_argument("--no-plots", action="store_true")
    try:
        a = ap.parse_args(argv[1:])
    except SystemExit as e:
        return 2 if e.code else 0
    mode, top = a.mode, a.dir
    # every module up front: a plot asked for and impossible is an error, never a skipped plot
    pyrequire.need("collect.py", ["yaml"], "reading the summaries")
    if not a.no_plots:
        pyrequire.need("collect.py", ["matplotlib"], "the plots", "; or pass --no-plots for the CSV and table alone")
    import yaml
    rows = []
    for name in sorted(os.listdir(top) if os.path.isdir(top) else []):
        m = re.fullmatch(r"np(\d+)", name)
        if not m:
            continue
        d = os.path.join(top, name)
        paths = [os.path.join(d, "summary.yaml")] if os.path.isfile(os.path.join(d, "summary.yaml")) else [
            os.path.join(d, r, "summary.yaml") for r in sorted(os.listdir(d))
            if re.fullmatch(r"r\d+", r) and os.path.isfile(os.path.join(d, r, "summary.yaml"))]
        if not paths:
            continue
        reps = []
        for path in paths:
            with open(path) as f:
                s = yaml.safe_load(f)
            try:
                reps.append(one_run(s))
            except (KeyError, TypeError, ValueError) as e:
                sys.stderr.write(f"{path}: missing or malformed field ({e})\n")
                return 2
        if len({(r["ranks"], r["dofs"], r["iterations"]) for r in reps}) != 1:
            sys.stderr.write(f"{d}: the repeats differ in ranks, DOFs or iterations\n")
            return 2
        row = dict(reps[0])
        for key in ("t_solve", "t_per_iteration", "t_setup", "t_pc_setup") + tuple(k for k, _ in SPLIT):
            row[key] = statistics.median(r[key] for r in reps)
        row["t_per_iteration_min"] = min(r["t_per_iteration"] for r in reps)
        row["t_per_iteration_max"] = max(r["t_per_iteration"] for r in reps)
        row["repeats"] = len(reps)
        rows.append(row)
    if not rows:
        sys.stderr.write(f"{top}: no np<N>/summary.yaml found\n")
        return 2
    rows.sort(key=lambda r: r["ranks"])
    r0 = rows[0]
    for r in rows:
        r["dofs_per_rank"] = r["dofs"] / r["ranks"]
    for r in rows:
        r["mdof_iter_per_s"] = r["dofs"] / r["t_per_iteration"] / 1e6
        # strong t1 r1 / (tN N), weak (t1 / d1) / (tN / dN): the ideal time over the measured one
        r["ideal_t_per_iteration"] = ideal_time(mode, r0, r)
        r["efficiency"] = r["ideal_t_per_iteration"] / r["t_per_iteration"]
    cols = ["ranks", "order", "elements", "dofs", "iterations", "repeats", "t_solve", "t_per_iteration",
            "t_per_iteration_min", "t_per_iteration_max", "dofs_per_rank", "mdof_iter_per_s", "ideal_t_per_iteration",
            "efficiency", "t_setup",
            "t_pc_setup"] + [k for k, _ in SPLIT]
    pred = None
    fit = a.fit or (os.path.join(top, "stream_fit.yaml") if os.path.isfile(os.path.join(top, "stream_fit.yaml")) else None)
    comm = a.comm or (os.path.join(top, "comm.yaml") if os.path.isfile(os.path.join(top, "comm.yaml")) else None)
    pcs = sorted({r["preconditioner"] for r in rows})
    if fit and pcs != ["jacobi"]:
        # model.py counts the bytes of a Jacobi-PCG iteration; drawn beside a pmg (or Schwarz)
        # series it would be off by the V-cycle's cost, 16-22 fine applies: no prediction at all
        sys.stderr.write(f"collect.py: no prediction: jobs/model.py models a Jacobi-PCG iteration and this series "
                         f"ran preconditioner {', '.join(pcs)}; the fit {fit} is not used (run the series with "
                         f"--set preconditioner.type=jacobi for a prediction, docs/scaling.md \"The model's "
                         f"inputs for pmg\")\n")
        fit = None
    if fit:
        try:
            m = model.from_files(fit, comm, order=r0["order"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.stderr.write(f"collect.py: cannot use the fit: {e}\n")
            return 2
        for r in rows:
            r["predicted_t_per_iteration"] = m.t_iter(r["dofs_per_rank"], r["ranks"])
        for r in rows:
            r["predicted_efficiency"] = (rows[0]["predicted_t_per_iteration"] / r["predicted_t_per_iteration"]
                                         * (rows[0]["ranks"] / r["ranks"] if mode == "strong" else 1.0))
        pred = {"n08": m.n08(max(rows[-1]["ranks"], 2)), "fit": fit, "comm": comm}
        if model.load_yaml(fit).get("stable") is False:
            sys.stderr.write(f"collect.py: warning: {fit} says stable: false (hexcg bench stream saw an unstable "
                             f"machine: UNSTABLE, docs/benchmarks.md): the prediction is as unreliable as its fit\n")
        cols += ["predicted_t_per_iteration", "predicted_efficiency"]
    out = os.path.join(top, "scaling.csv")
    tmp = out + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, out)
    print(f"{mode} scaling ({out})")
    print(f"{'ranks':>6} {'p':>3} {'elements':>9} {'dofs':>10} {'its':>5} {'s/iter':>10} {'min':>10} {'MDOF/s':>8} "
          f"{'eff':>6} {'setup s':>8} {'pc setup':>8}" + (f" {'model s/iter':>12} {'model eff':>9}" if pred else ""))
    for r in rows:
        print(f"{r['ranks']:>6} {r['order']:>3} {r['elements']:>9} {r['dofs']:>10} {r['iterations']:>5} "
              f"{r['t_per_iteration']:>10.3e} {r['t_per_iteration_min']:>10.3e} {r['mdof_iter_per_s']:>8.2f} "
              f"{r['efficiency']:>6.2f} {r['t_setup']:>8.3f} {r['t_pc_setup']:>8.3f}"
              + (f" {r['predicted_t_per_iteration']:>12.3e} {r['predicted_efficiency']:>9.2f}" if pred else ""))
    if pred:
        print(f"model: n_0.8 = {pred['n08']:.4g} DOFs per rank (fit {pred['fit']}, comm {pred['comm'] or 'none'})")
    if not a.no_plots:
        plot(mode, top, rows, pred)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
