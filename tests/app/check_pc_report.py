#!/usr/bin/python3
"""The preconditioner's report tree in summary.yaml (issue 28).

  check_pc_report.py KIND --hexcg H --mpiexec M --source S --work W [--ranks N]

KIND is pmg, pmg-additive, asm or jacobi. Runs the matching config of
configs/ on a small box (all-Dirichlet: the Q1 coarse level has (N-1)^3
rows) and checks preconditioner.report in summary.yaml: the common keys of
every node (type, description, setup_s, applies, apply_s), and the type's
own: for pmg per level order, DOFs, smoother, eigenvalue estimate, rho,
setup and per-cycle times, and the Q1 coarse level; for asm the fine and
coarse parts (the fine level's model bytes and GB/s agreeing with its time); for jacobi its unknowns and diagonal range. DOF counts must
equal the level's count ((N p + 1)^3 global GLL nodes), times be finite and
>= 0, eigenvalue estimates > 0. Exit 0 pass, 1 fail."""
import math
import os
import shutil
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import setup  # noqa: E402

N = 3  # elements per direction

CASES = {
    "pmg": ("pmg_box.yaml", 5, ["preconditioner.levels=[5,3,1]"]),
    "pmg-additive": ("pmg_box.yaml", 4, ["preconditioner.levels=auto", "preconditioner.cycle=additive"]),
    "asm": ("asm_box.yaml", 4, []),
    "jacobi": ("poisson_box.yaml", 3, ["preconditioner.type=jacobi"]),
}

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
    return cond


def seconds(node, key, where):
    v = node.get(key)
    if check(isinstance(v, (int, float)), f"{where}.{key}: {v!r} is not a number"):
        check(math.isfinite(v) and v >= 0, f"{where}.{key}: {v} is not a time >= 0")
    return v


def check_common(node, typ, where, summary):
    check(node.get("type") == typ, f"{where}.type: {node.get('type')!r}, want {typ}")
    check(isinstance(node.get("description"), str) and node["description"].startswith(typ),
          f"{where}.description: {node.get('description')!r}")
    seconds(node, "setup_s", where)
    seconds(node, "apply_s", where)
    check(isinstance(node.get("applies"), int) and node["applies"] >= summary["solver"]["iterations"],
          f"{where}.applies: {node.get('applies')!r}, fewer than the {summary['solver']['iterations']} iterations")
    # the node's figures are the summary's own (both max over ranks of the same clocks)
    pc = summary["preconditioner"]
    for k in ("setup_s", "apply_s"):
        a, b = node.get(k), pc.get(k)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            check(abs(a - b) <= 1e-6 * max(abs(b), 1e-300) + 1e-12,
                  f"{where}.{k} {a} differs from preconditioner.{k} {b}")


def dofs(p):
    return (N * p + 1) ** 3


def check_pmg(rep, summary, additive):
    check_common(rep, "pmg", "report", summary)
    check(rep.get("cycle") == ("additive" if additive else "multiplicative"), f"report.cycle: {rep.get('cycle')!r}")
    check(rep.get("precision") in ("fp32", "fp64"), f"report.precision: {rep.get('precision')!r}")
    seconds(rep, "cycle_s", "report")
    levels = rep.get("levels")
    if not check(isinstance(levels, list) and levels, f"report.levels: {levels!r}"):
        return
    orders = [lv.get("order") for lv in levels]
    check(orders[0] == summary["order"], f"report.levels[0].order {orders[0]} != the case's order {summary['order']}")
    check(all(isinstance(q, int) for q in orders) and orders == sorted(orders, reverse=True) and len(set(orders)) == len(orders),
          f"report.levels: orders {orders} do not decrease")
    check(levels[0].get("dofs") == summary["dofs"],
          f"report.levels[0].dofs {levels[0].get('dofs')} != summary dofs {summary['dofs']}")
    for i, lv in enumerate(levels):
        w = f"report.levels[{i}]"
        for k in ("order", "dofs", "smoother", "eig_estimate", "rho", "setup_s", "smooth_s", "transfer_s"):
            check(k in lv, f"{w}: no {k} in {sorted(lv)}")
        if isinstance(lv.get("order"), int):
            check(lv.get("dofs") == dofs(lv["order"]),
                  f"{w}.dofs {lv.get('dofs')} != (N p + 1)^3 = {dofs(lv['order'])} at p = {lv['order']}")
        check(isinstance(lv.get("smoother"), str) and "asm" in lv["smoother"], f"{w}.smoother: {lv.get('smoother')!r}")
        e, r = lv.get("eig_estimate"), lv.get("rho")
        if check(isinstance(e, float) and isinstance(r, float), f"{w}: eig_estimate {e!r}, rho {r!r}"):
            check(math.isfinite(e) and e > 0, f"{w}.eig_estimate {e} is not > 0")
            check(r >= e, f"{w}.rho {r} < eig_estimate {e} (rho carries the safety factor >= 1)")
        for k in ("setup_s", "smooth_s", "transfer_s"):
            seconds(lv, k, w)
        check(lv.get("setup_s", 0) > 0 and lv.get("smooth_s", 0) > 0, f"{w}: setup or smoothing time 0: {lv}")
    c = rep.get("coarse")
    if check(isinstance(c, dict), f"report.coarse: {c!r}"):
        check(c.get("order") == 1 and c.get("rows") == (N - 1) ** 3,
              f"report.coarse: order {c.get('order')}, rows {c.get('rows')} (want 1, {(N - 1) ** 3})")
        check(isinstance(c.get("amg_levels"), int) and c["amg_levels"] >= 1, f"report.coarse.amg_levels: {c.get('amg_levels')!r}")
        for k in ("setup_s", "apply_s", "copy_s"):
            seconds(c, k, "report.coarse")
        if additive:
            check(c.get("overlap") in (True, False), f"report.coarse.overlap: {c.get('overlap')!r}")


def check_asm(rep, summary):
    check_common(rep, "asm", "report", summary)
    f = rep.get("fine")
    if check(isinstance(f, dict), f"report.fine: {f!r}"):
        check(f.get("order") == summary["order"] and f.get("dofs") == summary["dofs"] == dofs(summary["order"]),
              f"report.fine: order {f.get('order')}, dofs {f.get('dofs')} (summary {summary['order']}, {summary['dofs']})")
        check(f.get("solver") == "fdm", f"report.fine.solver: {f.get('solver')!r}")
        seconds(f, "setup_s", "report.fine")
        check(seconds(f, "apply_s", "report.fine") > 0, "report.fine.apply_s is 0")
        # the rate of the fine level's timing event: the FDM's model bytes (summed over the ranks)
        # over the slowest rank's fine-level seconds, the interval apply_s reports, so
        # gbs = bytes_per_apply / apply_s * 1e-9 (both printed to 7 digits: 1e-5 covers the rounding)
        b, g, t = f.get("bytes_per_apply"), f.get("gbs"), f.get("apply_s")
        if check(isinstance(b, float) and b > 0 and isinstance(g, float) and g > 0,
                 f"report.fine: bytes_per_apply {b!r}, gbs {g!r} (want > 0)") and isinstance(t, float) and t > 0:
            check(abs(g - b / t * 1e-9) <= 1e-5 * g, f"report.fine.gbs {g} != bytes_per_apply / apply_s = {b / t * 1e-9}")
    c = rep.get("coarse")
    if check(isinstance(c, dict), f"report.coarse: {c!r}"):
        check(c.get("rows") == (N - 1) ** 3, f"report.coarse.rows {c.get('rows')} != {(N - 1) ** 3}")
        for k in ("assembly_s", "amg_setup_s", "apply_s", "copy_s"):
            seconds(c, k, "report.coarse")
    eff = rep.get("overlap_efficiency")
    check(isinstance(eff, float) and eff > 0, f"report.overlap_efficiency: {eff!r}")
    pc = summary["preconditioner"]
    if isinstance(eff, float):
        check(abs(eff - pc["overlap_efficiency"]) <= 1e-5 * pc["overlap_efficiency"],
              f"report.overlap_efficiency {eff} != preconditioner.overlap_efficiency {pc['overlap_efficiency']}")
    seconds(rep, "total_apply_s", "report")


def check_jacobi(rep, summary):
    check_common(rep, "jacobi", "report", summary)
    check(rep.get("dofs") == summary["dofs"] == dofs(summary["order"]),
          f"report.dofs {rep.get('dofs')} != summary dofs {summary['dofs']}")
    lo, hi = rep.get("diagonal_min"), rep.get("diagonal_max")
    check(isinstance(lo, float) and isinstance(hi, float) and 0 < lo <= hi,
          f"report: diagonal range [{lo!r}, {hi!r}] is not 0 < min <= max")


def main():
    a, _ = setup(source=True, clean=False,
                 options=((("kind",), dict(choices=sorted(CASES))), (("--ranks",), dict(type=int, default=1))))
    config, p, sets = CASES[a.kind]
    a.source = os.path.abspath(a.source)
    work = os.path.join(os.path.abspath(a.work), f"{a.kind}-np{a.ranks}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, "out")
    cmd = [a.mpiexec, "-n", str(a.ranks), os.path.abspath(a.hexcg), "run", os.path.join(a.source, "configs", config),
           "--set", f"mesh.elements=[{N},{N},{N}]", "--set", f"order={p}", "--set", f"output.dir={out}",
           "--set", "output.progress_every=0", "--set", "output.solution=false"]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=240)
    if r.returncode != 0:
        print(f"FAIL: {' '.join(cmd)}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        return 1
    with open(os.path.join(out, "summary.yaml")) as f:
        summary = yaml.safe_load(f)
    rep = summary.get("preconditioner", {}).get("report")
    if not isinstance(rep, dict):
        print(f"FAIL: no preconditioner.report mapping in summary.yaml: {summary.get('preconditioner')!r}")
        return 1
    check(summary["ranks"] == a.ranks, f"ranks {summary['ranks']} != {a.ranks}")
    if a.kind.startswith("pmg"):
        check_pmg(rep, summary, a.kind == "pmg-additive")
    elif a.kind == "asm":
        check_asm(rep, summary)
    else:
        check_jacobi(rep, summary)
    for m in failures:
        print(f"FAIL: {m}")
    if failures:
        print(yaml.safe_dump(rep, sort_keys=False))
        return 1
    print(f"pc report ok ({a.kind}, {a.ranks} rank(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
