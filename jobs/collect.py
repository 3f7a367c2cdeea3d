#!/usr/bin/env python3
"""Collect the summary.yaml of a scaling series into a CSV and plots, print
the parallel efficiencies and, given a stream fit, the model's prediction.

    jobs/collect.py strong|weak DIR [--fit stream_fit.yaml] [--comm comm.yaml]
                    [--no-plots]                  (DIR holds np<N>/summary.yaml)

Writes DIR/scaling.csv with columns
    ranks,order,elements,dofs,iterations,repeats,t_solve,t_per_iteration,
    t_per_iteration_min,dofs_per_rank,mdof_iter_per_s,efficiency,t_setup,
    t_pc_setup,t_operator,t_precond,t_reduction,t_exchange
    [,predicted_t_per_iteration,predicted_efficiency]
(the four split times are seconds per iteration, without any setup; t_setup
is the discretisation's setup, t_pc_setup the preconditioner's, in seconds,
once per run), DIR/scaling.png (time per iteration, efficiency with the
prediction beside it, DOFs per rank, setup, against the rank count) and
DIR/time_split.png (operator, preconditioner, reductions, exchange per
iteration for each rank count; the preconditioner's setup is not in it).
A rank count run several times (np<N>/r<k>/summary.yaml, jobs/scaling.sh
--repeat) gives the median of each time over the repeats, and the minimum
per iteration beside it.
Efficiency (time per iteration, so a change in iteration count does not hide
the parallel cost): strong  t1 * n1 / (tN * N); weak  (t1 / d1) / (tN / dN)
with d the DOFs per rank (t1 / tN when they are equal, as for generated
meshes; a Gmsh series refined by order has only about equal ones), both
relative to the smallest rank count. The prediction is jobs/model.py's
t(n, P) with the same formulas; without --fit (and no DIR/stream_fit.yaml)
there is none, and none for a series whose preconditioner is not jacobi
(the model counts a Jacobi-PCG iteration: refused with a message). A fit
that says stable: false is used with a warning.
Plots need Debian's python3-matplotlib; without it they are skipped with a
warning."""
import argparse
import csv
import os
import re
import statistics
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402

SPLIT = (("t_operator", "operator"), ("t_precond", "preconditioner"), ("t_reduction", "reductions"),
         ("t_exchange", "exchange"))


def plot(mode, top, rows, pred):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.stderr.write(f"collect.py: no plots ({e}); the CSV is written\n")
        return
    ranks = [r["ranks"] for r in rows]
    fig, ax = plt.subplots(1, 4, figsize=(17, 3.8))
    ax[0].plot(ranks, [r["t_per_iteration"] for r in rows], "o-", label="measured")
    if pred:
        ax[0].plot(ranks, [r["predicted_t_per_iteration"] for r in rows], "s--", label="model")
    ax[0].set_ylabel("seconds per iteration")
    ax[1].plot(ranks, [r["efficiency"] for r in rows], "o-", label="measured")
    if pred:
        ax[1].plot(ranks, [r["predicted_efficiency"] for r in rows], "s--", label="model")
    ax[1].axhline(0.8, color="grey", lw=0.8, ls=":")
    ax[1].set_ylabel(f"{mode} efficiency")
    ax[1].set_ylim(0, 1.2)
    ax[2].plot(ranks, [r["dofs_per_rank"] for r in rows], "o-")
    if pred and pred.get("n08"):
        ax[2].axhline(pred["n08"], color="C1", ls="--", label=f"model n_0.8 = {pred['n08']:.3g}")
    ax[2].set_ylabel("DOFs per rank")
    ax[3].plot(ranks, [r["t_setup"] for r in rows], "o-", label="discretisation")
    ax[3].plot(ranks, [r["t_pc_setup"] for r in rows], "s-", label="preconditioner")
    ax[3].set_ylabel("setup seconds (once per run)")
    for a in ax:
        a.set_xlabel("ranks")
        a.set_xscale("log", base=2)
        a.set_xticks(ranks, [str(r) for r in ranks])
        if a.get_legend_handles_labels()[0]:
            a.legend(fontsize=8)
    ax[0].set_yscale("log")
    ax[2].set_yscale("log")
    fig.suptitle(f"hexcg {mode} scaling ({rows[0]['dofs']} DOFs at {rows[0]['ranks']} rank(s))")
    fig.tight_layout()
    fig.savefig(os.path.join(top, "scaling.png"), dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 4))
    x = list(range(len(rows)))
    bottom = [0.0] * len(rows)
    for key, label in SPLIT:
        v = [r[key] for r in rows]
        ax.bar(x, v, bottom=bottom, label=label)
        bottom = [b + y for b, y in zip(bottom, v)]
    ax.plot(x, [r["t_per_iteration"] for r in rows], "k_", ms=30, label="solve / iteration")
    ax.set_xticks(x, [str(r) for r in ranks])
    ax.set_xlabel("ranks")
    ax.set_ylabel("seconds per iteration")
    ax.set_title(f"time split per iteration (setup apart), {mode} scaling")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(top, "time_split.png"), dpi=110)
    plt.close(fig)


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
        if mode == "strong":
            r["efficiency"] = r0["t_per_iteration"] * r0["ranks"] / (r["t_per_iteration"] * r["ranks"])
        else:
            r["efficiency"] = (r0["t_per_iteration"] / r0["dofs_per_rank"]) / (r["t_per_iteration"] / r["dofs_per_rank"])
    cols = ["ranks", "order", "elements", "dofs", "iterations", "repeats", "t_solve", "t_per_iteration",
            "t_per_iteration_min", "dofs_per_rank", "mdof_iter_per_s", "efficiency", "t_setup",
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
