#!/usr/bin/python3
"""preconditioner type auto end to end (precond/pc_auto.c, docs/preconditioner.md "type: auto").

check_auto.py MPIEXEC HEXCG SOURCE WORK [RANKS]
Each case runs once with auto and once with the type it must match, and the residual histories
(history.csv, 17 digits) are compared:
  1. stays Jacobi (box 4^3, p = 5; Jacobi-PCG converges in under 30 iterations, well under the
     model's pmg cost): report choice jacobi, switched 0, and the history bit for bit that of
     type jacobi (auto runs Jacobi's fused update);
  2. switches (Kershaw 6^3, p = 5; Jacobi-PCG needs about 400): switched 1 at a check iteration
     (min_iterations + a multiple of 5), the history up to that iteration bit for bit Jacobi's,
     numbered 0..N without a gap or repeat, fewer iterations than Jacobi, converged, and the
     error against the exact solution that of type pmg to 1e-6 relative (both solve to 1e-8),
     and pmg's applies and setup timed as the preconditioner's, not as vector updates;
  3. forced (setup_cost 0, cycle_cost 0: pmg is free, so the first check switches) with
     min_iterations 7: the switch at iteration 7 exactly, for pcg, pcg1 and fcg;
  4. start: pmg with smoother_stages false: the history bit for bit that of type pmg (the same
     cycle from the start);
  5. a time run (heat, 3 BDF2 steps): converges, the error that of type jacobi to 1e-6;
  6. the smoother stages (start: pmg, Kershaw 6^3 p = 5, where pmg with Chebyshev-Jacobi needs
     about 3x the iterations of Chebyshev-Schwarz): the Schwarz smoothers modelled dear
     (schwarz_setup 1e9): never built, the history bit for bit that of type pmg with
     smoother.type cheby-jacobi; modelled free (schwarz_setup 0): built after schwarz_check
     iterations exactly, kept, fewer iterations than without; a Schwarz iteration modelled 10
     Jacobi-smoothed ones with the Schwarz iterations modelled few (schwarz_gain 0.001): built,
     then measured and left (back to Chebyshev-Jacobi after schwarz_check more); every one
     converged with the error of type pmg to 1e-6;
  7. start: asm (auto's default): with pmg modelled dear (pmg_setup 1e9) asm is kept after
     asm_check (10) iterations and the history is type asm's bit for bit; with pmg modelled free
     the switch comes at iteration 10 exactly, the first 11 residuals are asm's, and the solve
     converges with pmg's error; the report says start asm, choice and the decision;
  8. start: mesh (auto's default): pmg from the setup on Kershaw at order 6 (curved elements; the
     residuals type pmg's with mesh_degree 5 / mesh_degree_below 5 bit for bit, and not type pmg's
     default degree 3's; mesh_degree 3 / mesh_degree_below 3 gives those), asm first with pmg_order 7 and on the box (affine elements:
     type asm's residuals); the report's curved fraction (2/3 on Kershaw 6^3, 0 on the box).
Prints the table and "auto: ok"."""
import csv
import os
import re
import shutil
import subprocess
import sys

import yaml

mpiexec, hexcg, src, work = sys.argv[1:5]
ranks = sys.argv[5] if len(sys.argv) > 5 else "1"
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
fail = []
rows = []
stdout = {}


def run(name, case, sets):
    out = os.path.join(work, name)
    cmd = [mpiexec, "-n", ranks, hexcg, "run", os.path.join(src, case), "--output", out, "--force",
           "--set", "output.solution=false", "--set", "output.history=true"]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if p.returncode != 0:
        fail.append(f"{name}: exit {p.returncode}: {p.stderr.strip()[:600]}")
        return None, None
    summary = yaml.safe_load(open(os.path.join(out, "summary.yaml")))
    hist = []
    hfile = os.path.join(out, "history.csv")
    if os.path.exists(hfile):
        with open(hfile) as f:
            hist = [(int(r["iteration"]), r["residual"]) for r in csv.DictReader(f)]
    stdout[name] = p.stdout
    rows.append((name, summary["solver"]["iterations"], summary["preconditioner"]["report"].get("switched", "-")))
    return summary, hist


def report(s):
    return s["preconditioner"]["report"]


BOX = ["configs/poisson_box.yaml", ["mesh.elements=[4,4,4]", "order=5"]]
KER = ["configs/kershaw.yaml", ["mesh.elements=[6,6,6]", "order=5"]]

# 1. stays Jacobi
a, ha = run("box-auto", BOX[0], BOX[1] + ["preconditioner.type=auto", "preconditioner.start=jacobi"])
j, hj = run("box-jacobi", BOX[0], BOX[1] + ["preconditioner.type=jacobi"])
if a and j:
    r = report(a)
    if r["choice"] != "jacobi" or r["switched"] != 0:
        fail.append(f"box: auto chose {r['choice']} (switched {r['switched']}), expected to stay with jacobi")
    if ha != hj:
        fail.append(f"box: auto's history ({len(ha)} rows) is not Jacobi-PCG's ({len(hj)} rows) bit for bit")

# 2. switches
a, ha = run("kershaw-auto", KER[0], KER[1] + ["preconditioner.type=auto", "preconditioner.start=jacobi"])
j, hj = run("kershaw-jacobi", KER[0], KER[1] + ["preconditioner.type=jacobi"])
g, hg = run("kershaw-pmg", KER[0], KER[1] + ["preconditioner.type=pmg"])
if a and j and g:
    r = report(a)
    k = r.get("switch_iteration", -1)
    mi = r["model"]["min_iterations"]
    if r["switched"] != 1 or r["choice"] != "pmg":
        fail.append(f"kershaw: auto did not switch (choice {r['choice']})")
    elif k < mi or (k - mi) % 5:
        fail.append(f"kershaw: switch at iteration {k}, not a check (min_iterations {mi} + 5 m)")
    if [it for it, _ in ha] != list(range(len(ha))):
        fail.append("kershaw: auto's history is not numbered 0..N")
    if k > 0 and ha[: k + 1] != hj[: k + 1]:
        fail.append(f"kershaw: auto's first {k + 1} residuals are not Jacobi-PCG's bit for bit")
    n_a, n_j = a["solver"]["iterations"], j["solver"]["iterations"]
    if not a["solver"]["converged"] or n_a >= n_j or len(ha) != n_a + 1:
        fail.append(f"kershaw: auto {n_a} iterations (converged {a['solver']['converged']}), Jacobi {n_j}, "
                    f"{len(ha)} history rows")
    ea, eg = a["error"]["l2"], g["error"]["l2"]
    if abs(ea - eg) > 1e-6 * eg:
        fail.append(f"kershaw: auto's L2 error {ea:.10e} is not pmg's {eg:.10e}")
    for key in ("kappa", "jacobi_iterations", "pmg_cost"):
        if not r["estimate"].get(key, 0) > 0:
            fail.append(f"kershaw: report estimate.{key} = {r['estimate'].get(key)}")
    # the time table: after the switch pmg is applied apart from the vector updates (not inside
    # Jacobi's fused update), so its applies and its setup are in timers_s.preconditioner and
    # out of timers_s.vector (a few axpys per iteration: far below pmg's cycles)
    t, pm = a["timers_s"], r["pmg"]
    t_pmg = pm["applies"] * pm["apply_s"]
    if not t["preconditioner"] >= 0.99 * (t_pmg + r["measured"]["pmg_setup_s"]):
        fail.append(f"kershaw: timers_s.preconditioner {t['preconditioner']:.4g} s < pmg's applies {t_pmg:.4g} s "
                    f"+ its setup {r['measured']['pmg_setup_s']:.4g} s")
    # the printed summary splits the applies by phase (issue 54 point 5: one mean mixed them)
    m = re.search(r"jacobi (\d+) applies, (\S+) s per apply; pmg setup \S+ s \(during the solve\), (\d+) applies, "
                  r"(\S+) s per apply", stdout["kershaw-auto"])
    if not m:
        fail.append("kershaw: the summary does not split auto's applies by phase:\n" + stdout["kershaw-auto"][-1500:])
    else:
        nj, tj, npm, tpm = int(m[1]), float(m[2]), int(m[3]), float(m[4])
        if nj + npm != r["applies"] or npm != pm["applies"] or abs(tpm - pm["apply_s"]) > 1e-3 * pm["apply_s"] \
                or not 0 < tj < tpm:
            fail.append(f"kershaw: phases jacobi {nj} x {tj:.3e} s, pmg {npm} x {tpm:.3e} s against the report's "
                        f"{r['applies']} applies, pmg {pm['applies']} x {pm['apply_s']:.3e} s")
    if not t["vector"] < 0.5 * t_pmg:
        fail.append(f"kershaw: timers_s.vector {t['vector']:.4g} s holds pmg's applies ({t_pmg:.4g} s)")

# 3. forced switch at min_iterations, for every Krylov method
for solver in ("pcg", "pcg1", "fcg"):
    a, ha = run(f"forced-{solver}", KER[0], KER[1] + [
        "preconditioner.type=auto", "preconditioner.start=jacobi", "preconditioner.setup_cost=0",
        "preconditioner.cycle_cost=0",
        "preconditioner.min_iterations=7", f"solver.type={solver}"])
    if not a:
        continue
    r = report(a)
    if r.get("switch_iteration") != 7:
        fail.append(f"forced {solver}: switch at {r.get('switch_iteration')}, expected 7")
    if not a["solver"]["converged"] or [it for it, _ in ha] != list(range(len(ha))):
        fail.append(f"forced {solver}: not converged, or the history is not numbered 0..N")
    if g and abs(a["error"]["l2"] - g["error"]["l2"]) > 1e-6 * g["error"]["l2"]:
        fail.append(f"forced {solver}: L2 error {a['error']['l2']:.10e}, pmg's {g['error']['l2']:.10e}")

# 4. start: pmg
a, ha = run("kershaw-start-pmg", KER[0], KER[1] + ["preconditioner.type=auto", "preconditioner.start=pmg",
                                                    "preconditioner.smoother_stages=false"])
if a and g and ha != hg:
    fail.append(f"start pmg: history ({len(ha)} rows) is not pmg's ({len(hg)} rows) bit for bit")

# 5. time run: each step a solve with the same preconditioner object
a, _ = run("heat-auto", "configs/heat_box.yaml", ["preconditioner.type=auto", "preconditioner.start=jacobi",
                                                  "time.end=0.15"])
j, _ = run("heat-jacobi", "configs/heat_box.yaml", ["preconditioner.type=jacobi", "time.end=0.15"])
if a and j:
    if not a["solver"]["converged"] or a["time"]["last_step"] != 3:
        fail.append(f"heat: not converged, or stopped at step {a['time']['last_step']} of 3")
    if abs(a["error"]["l2"] - j["error"]["l2"]) > 1e-6 * j["error"]["l2"]:
        fail.append(f"heat: L2 error {a['error']['l2']:.10e}, Jacobi-PCG's {j['error']['l2']:.10e}")

# 6. the smoother stages
AUTO_PMG = ["preconditioner.type=auto", "preconditioner.start=pmg", "preconditioner.schwarz_check=3"]
cj, hcj = run("kershaw-cheby-jacobi", KER[0], KER[1] + ["preconditioner.type=pmg",
                                                         "preconditioner.smoother.type=cheby-jacobi"])
never, hn = run("stages-never", KER[0], KER[1] + AUTO_PMG + ["preconditioner.schwarz_setup=1e9"])
if never and cj:
    sch = report(never)["schwarz"]
    if sch["decision"] != "not paid" or report(never)["smoother"] != "cheby-jacobi" or hn != hcj:
        fail.append(f"stages never: decision {sch['decision']}, smoother {report(never)['smoother']}, "
                    f"history {'equal to' if hn == hcj else 'not'} cheby-jacobi pmg's")
taken, ht = run("stages-taken", KER[0], KER[1] + AUTO_PMG + ["preconditioner.schwarz_setup=0"])
if taken and never:
    r = report(taken)
    sch = r["schwarz"]
    if sch["decision"] != "taken" or sch.get("from_iteration") != 4 or r["smoother"] != "cheby-asm":
        fail.append(f"stages taken: decision {sch['decision']} from {sch.get('from_iteration')} (expected 4: "
                    f"schwarz_check 3 after the first), smoother {r['smoother']}")
    if ht[:5] != hcj[:5] or [it for it, _ in ht] != list(range(len(ht))):
        fail.append("stages taken: the first 4 residuals are not cheby-jacobi pmg's, or the history has a gap")
    if not taken["solver"]["iterations"] < never["solver"]["iterations"]:
        fail.append(f"stages taken: {taken['solver']['iterations']} iterations, not fewer than Chebyshev-Jacobi's "
                    f"{never['solver']['iterations']}")
    names = [st["name"] for st in r["stages"]]
    # the stages count the iterations the preconditioner observed: all but the converging one
    if names != ["pmg-jacobi", "pmg-asm"] or sum(st["iterations"] for st in r["stages"]) != \
            taken["solver"]["iterations"] - 1:
        fail.append(f"stages taken: stages {r['stages']} against {taken['solver']['iterations']} iterations")
left, hl = run("stages-left", KER[0], KER[1] + AUTO_PMG + [
    "preconditioner.schwarz_setup=0", "preconditioner.schwarz_cycle=10", "preconditioner.schwarz_gain=0.001"])
if left:
    r = report(left)
    sch = r["schwarz"]
    if sch["decision"] != "tried, left" or sch.get("back_iteration") != 8 or r["smoother"] != "cheby-jacobi":
        fail.append(f"stages left: decision {sch['decision']}, back at {sch.get('back_iteration')} (expected 8), "
                    f"smoother {r['smoother']}")
for name, s_ in (("never", never), ("taken", taken), ("left", left)):
    if s_ and g and (not s_["solver"]["converged"] or abs(s_["error"]["l2"] - g["error"]["l2"]) > 1e-6 * g["error"]["l2"]):
        fail.append(f"stages {name}: converged {s_['solver']['converged']}, L2 error {s_['error']['l2']:.10e}, "
                    f"pmg's {g['error']['l2']:.10e}")

# 7. start: asm
asm, hasm = run("kershaw-asm", KER[0], KER[1] + ["preconditioner.type=asm"])
kept, hk = run("asm-kept", KER[0], KER[1] + ["preconditioner.type=auto", "preconditioner.start=asm",
                                              "preconditioner.pmg_setup=1e9"])
if kept and asm:
    r = report(kept)
    if r["start"] != "asm" or r["choice"] != "asm" or r["switched"] != 0 or r["checks"] != 1 or hk != hasm:
        fail.append(f"asm kept: start {r['start']}, choice {r['choice']}, switched {r['switched']}, checks "
                    f"{r['checks']}, history {'equal to' if hk == hasm else 'not'} type asm's")
    if not r["estimate"]["asm_iterations"] > 0 or not r["estimate"]["pmg_cost"] >= 1e9:
        fail.append(f"asm kept: estimate {r['estimate']}")
to_pmg, hp = run("asm-to-pmg", KER[0], KER[1] + ["preconditioner.type=auto", "preconditioner.start=asm",
                                                   "preconditioner.pmg_setup=0",
                                                   "preconditioner.pmg_cycle=0.001"])
if to_pmg and asm and g:
    r = report(to_pmg)
    if r["choice"] != "pmg" or r["switched"] != 1 or r.get("switch_iteration") != 10:
        fail.append(f"asm to pmg: choice {r['choice']}, switched {r['switched']} at {r.get('switch_iteration')}, "
                    "expected pmg from iteration 10")
    if hp[:11] != hasm[:11] or [it for it, _ in hp] != list(range(len(hp))):
        fail.append("asm to pmg: the first 11 residuals are not asm's, or the history is not numbered 0..N")
    if not to_pmg["solver"]["converged"] or abs(to_pmg["error"]["l2"] - g["error"]["l2"]) > 1e-6 * g["error"]["l2"]:
        fail.append(f"asm to pmg: L2 error {to_pmg['error']['l2']:.10e}, pmg's {g['error']['l2']:.10e}")
    if [st["name"] for st in r["stages"]] != ["asm", "pmg"] or r["stages"][0]["iterations"] != 10 or \
            r["stages"][1]["iterations"] != to_pmg["solver"]["iterations"] - 11:
        fail.append(f"asm to pmg: stages {r['stages']}")

# 8. start: mesh (auto's default): order 6 on the (curved) Kershaw mesh: pmg from the start, bit for
# bit type pmg; the same on the box (affine elements), or with pmg_order 7: asm first
K6 = [KER[0], ["mesh.elements=[6,6,6]", "order=6"]]
B6 = [BOX[0], ["mesh.elements=[4,4,4]", "order=6"]]
DEG55 = ["preconditioner.smoother.degree=5", "preconditioner.smoother.degree_below=5"]
DEG33 = ["preconditioner.mesh_degree=3", "preconditioner.mesh_degree_below=3"]
for name, case, sets, expect, ref, ref_sets in (
        ("mesh-kershaw", K6, [], "pmg", "pmg", DEG55),
        ("mesh-kershaw-deg3", K6, DEG33, "pmg", "pmg", []),
        ("mesh-kershaw-order7", K6, ["preconditioner.pmg_order=7"], "asm", None, []),
        ("mesh-box", B6, [], "asm", "asm", [])):
    m_, hm = run(name, case[0], case[1] + ["preconditioner.type=auto"] + sets)
    if not m_:
        continue
    r = report(m_)
    # the box: every element affine; Kershaw 6^3 (eps 0.3): 2/3 of them curved
    curved_ok = r["curved_fraction"] == 0.0 if case is B6 else 0.5 < r["curved_fraction"] <= 1.0
    if r["start"] != "mesh" or r["mesh_start"] != expect or not curved_ok:
        fail.append(f"{name}: start {r['start']}, mesh_start {r['mesh_start']} (expected {expect}), curved "
                    f"{r['curved_fraction']}")
    if expect == "pmg" and (r.get("mesh_degree"), r.get("mesh_degree_below")) != \
            ((3, 3) if sets == DEG33 else (5, 5)):
        fail.append(f"{name}: report mesh_degree {r.get('mesh_degree')} / {r.get('mesh_degree_below')}")
    if ref:
        rs, hr = run(name + "-ref", case[0], case[1] + [f"preconditioner.type={ref}"] + ref_sets)
        if rs and hm[:11] != hr[:11]:
            fail.append(f"{name}: the first residuals are not type {ref}'s {ref_sets} bit for bit")
        if rs and ref_sets:  # the degrees matter: type pmg's default (degree 3) differs
            rd, hd = run(name + "-ref-deg3", case[0], case[1] + [f"preconditioner.type={ref}"])
            if rd and hm[:11] == hd[:11]:
                fail.append(f"{name}: the residuals are type {ref}'s default degree 3's: mesh_degree not used")

print(f"{'run':24s} {'iterations':>10s} {'switched':>8s}")
for name, its, sw in rows:
    print(f"{name:24s} {its:10d} {sw!s:>8s}")
if fail:
    print("FAILED:\n  " + "\n  ".join(fail))
    sys.exit(1)
print("auto: ok")
