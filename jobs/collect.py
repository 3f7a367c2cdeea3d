#!/usr/bin/python3
"""Collect the summary.yaml of a scaling series into a CSV and print the
parallel efficiencies.

    jobs/collect.py strong|weak DIR      (DIR holds np<N>/summary.yaml)

Writes DIR/scaling.csv with columns
    ranks,elements,dofs,iterations,t_solve,t_per_iteration,dofs_per_rank,
    mdof_iter_per_s,efficiency
Efficiency (time per iteration, so a change in iteration count does not hide
the parallel cost): strong  t1 * n1 / (tN * N); weak  t1 / tN, both relative
to the smallest rank count."""
import csv
import os
import re
import sys

import yaml


def main(argv):
    if len(argv) != 3 or argv[1] not in ("strong", "weak"):
        sys.stderr.write("usage: collect.py strong|weak DIR\n")
        return 2
    mode, top = argv[1], argv[2]
    rows = []
    for name in sorted(os.listdir(top) if os.path.isdir(top) else []):
        m = re.fullmatch(r"np(\d+)", name)
        path = os.path.join(top, name, "summary.yaml")
        if not m or not os.path.isfile(path):
            continue
        with open(path) as f:
            s = yaml.safe_load(f)
        try:
            it = int(s["solver"]["iterations"])
            t_solve = float(s["timers_s"]["solve"])
            rows.append({"ranks": int(s["ranks"]), "elements": int(s["mesh"]["elements"]), "dofs": int(s["dofs"]),
                         "iterations": it, "t_solve": t_solve,
                         "t_per_iteration": t_solve / max(it, 1)})
        except (KeyError, TypeError, ValueError) as e:
            sys.stderr.write(f"{path}: missing or malformed field ({e})\n")
            return 2
    if not rows:
        sys.stderr.write(f"{top}: no np<N>/summary.yaml found\n")
        return 2
    rows.sort(key=lambda r: r["ranks"])
    r0 = rows[0]
    for r in rows:
        r["dofs_per_rank"] = r["dofs"] / r["ranks"]
        r["mdof_iter_per_s"] = r["dofs"] / r["t_per_iteration"] / 1e6
        if mode == "strong":
            r["efficiency"] = r0["t_per_iteration"] * r0["ranks"] / (r["t_per_iteration"] * r["ranks"])
        else:
            r["efficiency"] = r0["t_per_iteration"] / r["t_per_iteration"]
    cols = ["ranks", "elements", "dofs", "iterations", "t_solve", "t_per_iteration", "dofs_per_rank",
            "mdof_iter_per_s", "efficiency"]
    out = os.path.join(top, "scaling.csv")
    tmp = out + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, out)
    print(f"{mode} scaling ({out})")
    print(f"{'ranks':>6} {'elements':>9} {'dofs':>10} {'its':>5} {'s/iter':>10} {'MDOF/s':>8} {'eff':>6}")
    for r in rows:
        print(f"{r['ranks']:>6} {r['elements']:>9} {r['dofs']:>10} {r['iterations']:>5} "
              f"{r['t_per_iteration']:>10.3e} {r['mdof_iter_per_s']:>8.2f} {r['efficiency']:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
