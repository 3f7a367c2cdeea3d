#!/usr/bin/python3
"""Time-dependent runs (issue 30, docs/time.md), end to end through `hexcg run`.

Modes:
  rates    BDF1/2/3 on the manufactured solution
           u = exp(-t) sin(pi x) sin(pi y) sin(pi z) + cos(t) (x y + z)
           (time-dependent Dirichlet data: value exact) at p = 8 on 2^3
           elements (spatial error ~1e-9, far below the temporal one): the
           error at t = 1 falls at the rate 1, 2, 3 (within 10 %) as dt halves;
           BDF2 started by BDF1 (initial: an expression, 2 setups) too, and
           BDF2 with a time-dependent Neumann flux on one face
           (and BDF2 with a time-dependent Robin value)
  restart  6 steps, then --restart to 12: the same steps.csv rows (the
           earlier segment's kept), history, series and solution.xdmf, and the
           same final solution bits (checkpoint checksum) as 12 steps in one
           run; a 1-rank checkpoint continued on 2 ranks: the solution within
           the tolerance; time.initial from a solution.h5 (read on 2 ranks)
  signal   SIGTERM to one rank of 2 during the steps: exit 5, a checkpoint,
           summary.yaml interrupted, --restart finishes to the uninterrupted
           answer; with the hook HEXCG_TEST_SIGNAL the signal lands mid-solve
           at a chosen iteration: the step is finished (checkpoint at that
           step), the printed "continue with" command gives the uninterrupted
           run's outputs in the same folder; in the first step (initial not
           exact); a second signal while the step finishes kills, the
           checkpoint of the step before is there; --restart of a finished
           run changes nothing
  refuse   a truncated, a corrupted, a foreign-case (dt), a foreign-mesh and a
           missing checkpoint are refused (exit 2) naming the difference, the
           output folder untouched, series/ and solution.xdmf included (a
           steady case using t: tests/cases/100; a coefficient using t:
           tests/cases/140-142)
  job      jobs/heat.sbatch with a fake srun/scontrol: SIGUSR1 -> exit 5 ->
           requeue -> --restart -> the uninterrupted answer
  xdmf     (python with meshio and h5py) the temporal collection: times,
           fields, the series files
Usage: check_time.py MODE --hexcg H --mpiexec M --work W [--python P]"""
import argparse
import csv
import math
import re
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import summary_section  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("mode")
ap.add_argument("--hexcg", required=True)
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--work", required=True)
ap.add_argument("--python", default=None)
a = ap.parse_args()
W = os.path.join(a.work, a.mode)
shutil.rmtree(W, ignore_errors=True)
os.makedirs(W)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


CASE = """mesh: {{type: box, elements: [{ne}, {ne}, {ne}]}}
order: {p}
time:
  scheme: {scheme}
  dt: {dt}
  {stop}
  initial: {initial}
  output_every: {oe}
  checkpoint_every: {ce}
problem:
  rhs: "(3*pi^2 - 1)*exp(-t)*sin(pi*x)*sin(pi*y)*sin(pi*z) - sin(t)*(x*y + z)"
  exact: "exp(-t)*sin(pi*x)*sin(pi*y)*sin(pi*z) + cos(t)*(x*y + z)"
  boundary:
    - {{tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}}
solver: {{tol: {tol}, max_iterations: 2000, projection: {proj}}}
preconditioner: {{type: jacobi}}
"""


def case(name, scheme="bdf2", dt=0.1, steps=None, end=1.0, initial="exact", p=8, ne=2, oe=0, ce=0, tol=1e-12,
         proj=8):
    path = os.path.join(W, name + ".yaml")
    stop = f"steps: {steps}" if steps else f"end: {end}"
    with open(path, "w") as f:
        f.write(CASE.format(scheme=scheme, dt=dt, stop=stop, initial=initial, p=p, ne=ne, oe=oe, ce=ce, tol=tol,
                            proj=proj))
    return path


def run(args, ranks=1, timeout=300):
    p = subprocess.run([a.mpiexec, "-n", str(ranks), a.hexcg, "run"] + args, capture_output=True, text=True,
                       timeout=timeout, env=dict(os.environ, OMP_NUM_THREADS="1"))
    return p.returncode, p.stdout, p.stderr


def tree(d):
    """every file under d (relative path -> bytes)"""
    r = {}
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            r[os.path.relpath(p, d)] = open(p, "rb").read()
    return r


TIMING = ("seconds", "projection_s", "run_id")  # and the run id: each run has its own


def same_rows(ra, rb):
    """steps.csv rows equal in everything but the timings and the run id"""
    return len(ra) == len(rb) and all({k: v for k, v in x.items() if k not in TIMING} ==
                                      {k: v for k, v in y.items() if k not in TIMING} for x, y in zip(ra, rb))


def history_rows(out):
    """history.csv without the wall-clock column"""
    with open(os.path.join(out, "history.csv")) as f:
        return [ln.rsplit(",", 1)[0] for ln in f.read().splitlines()]


def same_h5(x, y):
    """the same datasets with the same values (the bytes of two HDF5 files with equal data differ)"""
    try:
        import h5py
        import numpy as np
    except ImportError:
        return subprocess.run(["h5diff", x, y], capture_output=True).returncode == 0
    with h5py.File(x) as fa, h5py.File(y) as fb:
        na, nb = [], []
        fa.visit(na.append), fb.visit(nb.append)
        return sorted(na) == sorted(nb) and all(
            not isinstance(fa[n], h5py.Dataset) or np.array_equal(fa[n][()], fb[n][()]) for n in na)


def steps_of(out):
    with open(os.path.join(out, "steps.csv")) as f:
        return list(csv.DictReader(f))


def yaml_kv(path):
    d = {}
    for line in open(path):
        if ": " in line:
            k, v = line.rstrip("\n").split(": ", 1)
            d[k] = v
    return d


def summary_time(out):
    return summary_section(os.path.join(out, "summary.yaml"), "time")


def finish():
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        sys.exit(1)
    print(f"{a.mode}: passed")
    sys.exit(0)


if a.mode == "rates":
    for k in (1, 2, 3):
        errs = []
        for dt in (0.1, 0.05, 0.025):
            out = os.path.join(W, f"bdf{k}-{dt}")
            rc, so, se = run([case(f"bdf{k}-{dt}", scheme=f"bdf{k}", dt=dt), "--output", out])
            if not check(rc == 0, f"bdf{k} dt {dt}: exit {rc}: {se[-2000:]}"):
                continue
            rows = steps_of(out)
            check(abs(float(rows[-1]["time"]) - 1.0) < 1e-12, f"bdf{k} dt {dt}: last step at t = {rows[-1]['time']}")
            errs.append(float(rows[-1]["error_l2"]))
            st = summary_time(out)
            check(st.get("setups") == "1", f"bdf{k} dt {dt}: exact start-up needs one setup, got {st.get('setups')}")
            # the time per iteration counts every step's PCG start (issue 54 point 5: steps of 0
            # iterations still apply the operator and the preconditioner once)
            m = re.search(r"time per iteration: \S+ s \(the solve's time / (\d+) iterations, (\d+) PCG "
                          r"starts? included.*per apply \((\d+) applies\)", so)
            if check(m is not None, f"bdf{k} dt {dt}: no time per iteration line: {so[-1500:]}"):
                its, starts, applies = (int(g) for g in m.groups())
                check(its == sum(int(r["iterations"]) for r in rows) and starts >= len(rows) and applies == its + starts,
                      f"bdf{k} dt {dt}: {its} iterations, {starts} starts, {applies} applies for {len(rows)} steps "
                      f"of {sum(int(r['iterations']) for r in rows)} iterations")
            # the estimated iterations saved: log(gain) / log(rho), rho the step's mean contraction
            total = 0.0
            for r in rows:
                its, g = int(r["iterations"]), float(r["projection_gain"])
                r0, r1, sv = float(r["initial_residual"]), float(r["final_residual"]), float(r["iterations_saved"])
                want = 0.0
                if 0 < g < 1 and its > 0 and r0 > 0 and r1 > 0 and (r1 / r0) ** (1 / its) < 1:
                    want = math.log(g) / math.log((r1 / r0) ** (1 / its))
                check(abs(sv - want) <= 1e-3 + 1e-9 * want, f"bdf{k} dt {dt} step {r['step']}: iterations_saved {sv}, "
                                                           f"want {want:.4f}")
                total += sv
            # the projection's own seconds: a part of the step's, summed in summary.yaml
            ps = [float(r["projection_s"]) for r in rows]
            check(all(0 < p_ <= float(r["seconds"]) for p_, r in zip(ps, rows)),
                  f"bdf{k} dt {dt}: 0 < projection_s <= seconds per step")
            check(abs(float(st.get("projection_s", "nan")) - sum(ps)) <= 1e-5 * len(rows) + 1e-6 * sum(ps),
                  f"bdf{k} dt {dt}: summary projection_s {st.get('projection_s')} vs the steps' sum {sum(ps)}")
            check(abs(float(st.get("iterations_saved", "nan")) - total) <= 1e-3 * len(rows) + 1e-9,
                  f"bdf{k} dt {dt}: summary iterations_saved {st.get('iterations_saved')} vs the steps' sum {total}")
        if len(errs) == 3:
            rates = [math.log2(errs[i] / errs[i + 1]) for i in range(2)]
            print(f"BDF{k}: errors at t = 1 {errs}, rates {rates}")
            check(all(abs(r - k) <= 0.1 * k for r in rates), f"BDF{k}: rates {rates} (want {k} within 10 %)")
    # BDF2 started by BDF1 (no exact start-up data): the order rises after one step, one more setup
    errs = []
    for dt in (0.1, 0.05, 0.025):
        out = os.path.join(W, f"start-{dt}")
        init = '"sin(pi*x)*sin(pi*y)*sin(pi*z) + x*y + z"'
        rc, so, se = run([case(f"start-{dt}", scheme="bdf2", dt=dt, initial=init), "--output", out])
        if not check(rc == 0, f"bdf2 start-up dt {dt}: exit {rc}: {se[-2000:]}"):
            continue
        rows = steps_of(out)
        check(rows[0]["order"] == "1" and rows[1]["order"] == "2", "bdf2 start-up: orders 1, 2")
        check(summary_time(out).get("setups") == "2", "bdf2 start-up: 2 setups")
        errs.append(float(rows[-1]["error_l2"]))
    if len(errs) == 3:
        rates = [math.log2(errs[i] / errs[i + 1]) for i in range(2)]
        print(f"BDF2 from BDF1: errors {errs}, rates {rates}")
        check(all(abs(r - 2) <= 0.2 for r in rates), f"BDF2 from BDF1: rates {rates}")
    def bdf2_rate_on_xmax(name, what, cond):
        """BDF2 at rate 2 (within 10 %) with the x = 1 face's condition `cond` (its YAML map)"""
        errs = []
        for dt in (0.1, 0.05, 0.025):
            out = os.path.join(W, f"{name}-{dt}")
            c = open(case(f"{name}-{dt}", scheme="bdf2", dt=dt)).read().replace(
                "    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}",
                "    - {tags: [xmin, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}\n"
                "    - {tags: [xmax], " + cond + "}")
            path = os.path.join(W, f"{name}-{dt}.yaml")
            open(path, "w").write(c)
            rc, so, se = run([path, "--output", out])
            if not check(rc == 0, f"bdf2 {name} dt {dt}: exit {rc}: {se[-2000:]}"):
                continue
            errs.append(float(steps_of(out)[-1]["error_l2"]))
        if len(errs) == 3:
            rates = [math.log2(errs[i] / errs[i + 1]) for i in range(2)]
            print(f"BDF2 with {what}: errors {errs}, rates {rates}")
            check(all(abs(r - 2) <= 0.2 for r in rates), f"BDF2 {name}: rates {rates}")

    # a time-dependent Neumann flux on xmax: kappa du/dx at x = 1
    bdf2_rate_on_xmax("neumann", "a time-dependent Neumann flux",
                      "type: neumann, value: \"-pi*exp(-t)*sin(pi*y)*sin(pi*z) + cos(t)*y\"")
    # projection: 0 costs nothing: projection_s is 0 on every step
    out = os.path.join(W, "noproj")
    rc, so, se = run([case("noproj", scheme="bdf2", dt=0.1, proj=0), "--output", out])
    if check(rc == 0, f"projection 0: exit {rc} {se[-1000:]}"):
        check(all(float(r["projection_s"]) == 0 for r in steps_of(out)) and
              float(summary_time(out)["projection_s"]) == 0, "projection 0: projection_s 0")
    # a time-dependent Robin value on xmax: kappa du/dx + 2 u = g(t) at x = 1 (u = cos(t) (y + z) there)
    bdf2_rate_on_xmax("robin", "a time-dependent Robin value",
                      "type: robin, alpha: 2, "
                      "value: \"-pi*exp(-t)*sin(pi*y)*sin(pi*z) + cos(t)*y + 2*cos(t)*(y + z)\"")
    finish()

if a.mode == "restart":
    full, half, cont, cont2 = (os.path.join(W, n) for n in ("full", "half", "cont", "cont2"))
    c12 = case("c12", scheme="bdf3", dt=0.05, steps=12, p=5, ne=3, tol=1e-10, ce=4, oe=2)
    c6 = case("c6", scheme="bdf3", dt=0.05, steps=6, p=5, ne=3, tol=1e-10, ce=4, oe=2)
    rc, so, se = run([c12, "--output", full])
    check(rc == 0, f"12 steps: exit {rc} {se[-2000:]}")
    rc, so, se = run([c6, "--output", half])
    check(rc == 0 and os.path.isfile(os.path.join(half, "checkpoint", "checkpoint.yaml")),
          f"6 steps: exit {rc}, checkpoint written {se[-2000:]}")
    shutil.copytree(half, cont)
    rc, so, se = run([c12, "--output", cont, "--restart", cont])
    check(rc == 0 and "restart: step 6" in so, f"restart: exit {rc} {so[-1000:]} {se[-2000:]}")
    if rc == 0:
        rf, rc_ = steps_of(full), steps_of(cont)
        # the continued run keeps the first segment's outputs: the folder holds the whole run
        check([r["step"] for r in rc_] == [str(i) for i in range(3, 13)], f"restart steps {[r['step'] for r in rc_]}")
        check(same_rows(rf, rc_), "steps 3..12 (3..6 carried, 7..12 continued): the uninterrupted run's rows")
        check(history_rows(full) == history_rows(cont), "history.csv: the uninterrupted run's rows")
        check(sorted(os.listdir(os.path.join(cont, "series"))) == sorted(os.listdir(os.path.join(full, "series")))
              == ["mesh.h5"] + [f"solution_{i:06d}.h5" for i in (0, 4, 6, 8, 10, 12)],
              "series: the mesh once, steps 0 (the initial state), 4, 6, .., 12")
        check(all(same_h5(os.path.join(cont, "series", f), os.path.join(full, "series", f))
                  for f in os.listdir(os.path.join(full, "series"))), "series: the uninterrupted run's values")
        check(open(os.path.join(cont, "solution.xdmf")).read() == open(os.path.join(full, "solution.xdmf")).read(),
              "solution.xdmf: the uninterrupted run's temporal collection")
        sf, sc = summary_time(full), summary_time(cont)
        check(all(sf[k] == sc[k] for k in ("first_step", "last_step", "iterations", "outputs")),
              f"summary time: the whole run's totals ({sf} / {sc})")
        ca = yaml_kv(os.path.join(full, "checkpoint", "checkpoint.yaml"))
        cb = yaml_kv(os.path.join(cont, "checkpoint", "checkpoint.yaml"))
        check(ca["step"] == cb["step"] == "12", "both checkpoints at step 12")
        check(ca["u_0"] == cb["u_0"] and ca["u_1"] == cb["u_1"] and ca["u_2"] == cb["u_2"],
              f"the final solution bit for bit (checksums {ca['u_0']} {cb['u_0']})")
    # killed between the renames of a checkpoint write: checkpoint/ gone, checkpoint.old complete,
    # checkpoint.new half written; the restart takes checkpoint.old, to the same bits
    cont3 = os.path.join(W, "cont3")
    shutil.copytree(half, cont3)
    os.rename(os.path.join(cont3, "checkpoint"), os.path.join(cont3, "checkpoint.old"))
    os.makedirs(os.path.join(cont3, "checkpoint.new"))
    open(os.path.join(cont3, "checkpoint.new", "checkpoint.yaml"), "w").write("format: hexcg-checkpoint-1\nstep: 9\n")
    rc, so, se = run([c12, "--output", cont3, "--restart", cont3])
    check(rc == 0 and "checkpoint.old" in so and "restart: step 6" in so, f"from checkpoint.old: exit {rc} {so[-800:]}")
    if rc == 0:
        check(yaml_kv(os.path.join(cont3, "checkpoint", "checkpoint.yaml"))["u_0"] ==
              yaml_kv(os.path.join(full, "checkpoint", "checkpoint.yaml"))["u_0"],
              "continued from checkpoint.old: the uninterrupted run's bits")
    # the 1-rank checkpoint continued on 2 ranks: within the tolerance
    shutil.copytree(half, cont2)
    rc, so, se = run([c12, "--output", cont2, "--restart", cont2], ranks=2)
    check(rc == 0, f"restart on 2 ranks: exit {rc} {se[-2000:]}")
    if rc == 0:
        e1 = float(steps_of(full)[-1]["error_l2"])
        e2 = float(steps_of(cont2)[-1]["error_l2"])
        check(abs(e1 - e2) <= 1e-6 * e1, f"2-rank continuation: error {e2} against {e1}")
        # the solution itself, node by node (matched by element id: the two partitions order the
        # elements differently; a checkpoint holds the ids and u only): each step solves to rtol 1e-10 and the shifted operator (beta0/dt =
        # 36.7) is well conditioned at p = 5 (condition number < 1e2), so 1e-8 max|u| is the tolerance
        try:
            import h5py
            import numpy as np
        except ImportError:
            h5py = None
            print("note: no h5py, the 2-rank continuation's solution compared by its error norm only")
        if h5py:
            def nodes(out):
                with h5py.File(os.path.join(out, "checkpoint", "u_0.h5")) as f:
                    g, u = f["mesh/element_id"][:], f["fields/u"][:]
                k = np.argsort(g, kind="stable")
                return g[k], u.reshape(len(g), -1)[k].ravel()
            xa, ua = nodes(full)
            xb, ub = nodes(cont2)
            dev = float(np.abs(ua - ub).max()) if xa.shape == xb.shape else float("inf")
            check(xa.shape == xb.shape and np.array_equal(xa, xb) and dev <= 1e-8 * np.abs(ua).max(),
                  f"2-rank continuation: max|u - u_ref| = {dev} (max|u| {np.abs(ua).max()})")
            print(f"2-rank continuation: max|u - u_ref| = {dev:.3g}, max|u| = {np.abs(ua).max():.3g}")
    # time.initial from a solution.h5: a steady run's x y + z (harmonic, exact at p = 5 to the
    # tolerance) as u(0) gives the run that starts from the expression x y + z
    st = os.path.join(W, "steady.yaml")
    open(st, "w").write("mesh: {type: box, elements: [3, 3, 3]}\norder: 5\nproblem:\n  rhs: \"0\"\n"
                        "  exact: \"x*y + z\"\n  boundary:\n    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], "
                        "type: dirichlet, value: exact}\nsolver: {tol: 1.0e-12}\n")
    rc, so, se = run([st, "--output", os.path.join(W, "steady")])
    check(rc == 0, f"steady x y + z: exit {rc} {se[-1000:]}")
    h5 = os.path.join(W, "steady", "solution.h5")
    fa = case("fromfile", scheme="bdf1", dt=0.05, steps=3, p=5, ne=3, tol=1e-12, initial=f'"{h5}"')
    fb = case("fromexpr", scheme="bdf1", dt=0.05, steps=3, p=5, ne=3, tol=1e-12, initial='"x*y + z"')
    rc1, so, se1 = run([fa, "--output", os.path.join(W, "fromfile")], ranks=2)
    rc2, so, se2 = run([fb, "--output", os.path.join(W, "fromexpr")])
    if check(rc1 == 0 and rc2 == 0, f"initial from a file / an expression: exit {rc1} {rc2} {se1[-1000:]}"):
        ea = [float(r["error_l2"]) for r in steps_of(os.path.join(W, "fromfile"))]
        eb = [float(r["error_l2"]) for r in steps_of(os.path.join(W, "fromexpr"))]
        check(len(ea) == 3 and all(abs(x - y) <= 1e-9 * y for x, y in zip(ea, eb)),
              f"initial: solution.h5 (2 ranks) against the expression: errors {ea} {eb}")
    finish()

if a.mode == "signal":
    c = case("sig", scheme="bdf2", dt=0.002, steps=150, p=5, ne=3, tol=1e-10, ce=0, oe=50)
    out, ref = os.path.join(W, "sig"), os.path.join(W, "ref")

    def started(out):
        """the case c on 2 ranks writing to out, once it has printed step 5 (or 120 s passed)"""
        p = subprocess.Popen([a.mpiexec, "-n", "2", a.hexcg, "run", c, "--output", out], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
        t0 = time.time()
        for line in p.stdout:
            if line.startswith("step 5 ") or time.time() - t0 > 120:
                break
        return p

    p = started(out)
    pids = []
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and open(f"/proc/{d}/comm").read().strip() == "hexcg" and \
                    os.fsencode(out) in open(f"/proc/{d}/cmdline", "rb").read().split(b"\0"):
                pids.append(int(d))
        except OSError:
            pass
    check(len(pids) == 2, f"2 ranks running ({pids})")
    if pids:
        os.kill(sorted(pids)[1], signal.SIGTERM)
    rest, err = p.communicate(timeout=120)
    check(p.returncode == 5, f"SIGTERM: exit {p.returncode}, expected 5: {err[-2000:]}")
    check("interrupted by SIGTERM" in err and "--restart" in err, f"message {err!r}")
    ck = os.path.join(out, "checkpoint", "checkpoint.yaml")
    if check(os.path.isfile(ck) and os.path.isfile(os.path.join(out, "summary.yaml")), "checkpoint and summary"):
        st = summary_time(out)
        step = int(yaml_kv(ck)["step"])
        check(st["interrupted"] == "true" and int(st["last_step"]) == step and 5 <= step < 150,
              f"summary time {st}, checkpoint step {step}")
        check(len(steps_of(out)) == step - 1, "steps.csv holds the completed steps (2..)")
        rc, so, se = run([c, "--output", out, "--restart", out], ranks=2)
        check(rc == 0, f"restart after SIGTERM: exit {rc} {se[-2000:]}")
        rc, so, se = run([c, "--output", ref], ranks=2)
        check(rc == 0, f"uninterrupted: exit {rc}")
        if rc == 0:
            a_, b_ = yaml_kv(os.path.join(out, "checkpoint", "checkpoint.yaml")), yaml_kv(
                os.path.join(ref, "checkpoint", "checkpoint.yaml"))
            check(a_["u_0"] == b_["u_0"], "continued after SIGTERM: the uninterrupted run's solution bit for bit")

    # SIGTERM to the launcher (as `timeout`, a batch system or `kill` of the job send it): the launcher
    # forwards it, and the message names SIGTERM, not SIGINT (issue 54 point 5)
    out_l = os.path.join(W, "sig-launcher")
    p = started(out_l)
    p.send_signal(signal.SIGTERM)
    rest, err = p.communicate(timeout=120)
    # (the launcher's own exit status is Hydra's: 5 from the ranks, or 0 when it was signalled
    # itself first; seen both, so only hexcg's message is checked)
    check("interrupted by SIGTERM" in err and "SIGINT" not in err + rest,
          f"SIGTERM to mpiexec: exit {p.returncode}, message {err[-1500:]!r}")

    # deterministic: the hook raises SIGTERM on rank 1 after iteration 3 of step 5 (mid-solve)
    def hooked(cpath, out, hook):
        return subprocess.run([a.mpiexec, "-n", "2", a.hexcg, "run", cpath, "--output", out], capture_output=True,
                              text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1",
                                                               HEXCG_TEST_SIGNAL=hook))

    def follow(err):  # run the "continue with" command exactly as printed
        cmd = err.split("continue with: ", 1)[1].split("\n", 1)[0].split()
        check(cmd[:2] == ["hexcg", "run"], f"continue command {cmd}")
        # the quotes of --set values are the shell's (none here)
        return run(cmd[2:], ranks=2)

    for label, init, first in (("exact", "exact", 2), ("first", '"x*y + z"', 1)):
        cs_ = case(f"h-{label}", scheme="bdf2", dt=0.01, steps=12, p=4, ne=3, tol=1e-10, oe=3, initial=init)
        href, hint = os.path.join(W, f"h-{label}-ref"), os.path.join(W, f"h-{label}")
        rc, so, se = run([cs_, "--output", href], ranks=2)
        check(rc == 0, f"{label}: uninterrupted: exit {rc} {se[-1000:]}")
        at = 5 if label == "exact" else 1  # the first solved step: the initial state is all there is before it
        p_ = hooked(cs_, hint, f"{at}:3:1")
        check(p_.returncode == 5, f"{label}: hook at step {at}: exit {p_.returncode} {p_.stderr[-1500:]}")
        check(f"signal during step {at}: checkpoint of step {at - 1} written; finishing step {at}" in p_.stdout,
              f"{label}: the signal landed mid-solve and the step was finished: {p_.stdout[-1500:]}")
        ckp = os.path.join(hint, "checkpoint", "checkpoint.yaml")
        if not check(os.path.isfile(ckp) and yaml_kv(ckp)["step"] == str(at), f"{label}: checkpoint at step {at}"):
            continue
        check(f"interrupted by SIGTERM after step {at}" in p_.stderr and f"--output {hint} --restart {hint}" in
              p_.stderr, f"{label}: the message names the step and a command with --output: {p_.stderr[-800:]}")
        st = summary_time(hint)
        check(st["interrupted"] == "true" and st["last_step"] == str(at), f"{label}: summary {st}")
        check([r["step"] for r in steps_of(hint)] == [str(i) for i in range(first, at + 1)],
              f"{label}: steps.csv holds steps {first}..{at} (the finished one included)")
        rc, so, se = follow(p_.stderr)
        check(rc == 0, f"{label}: the printed continue command: exit {rc} {se[-1500:]}")
        if rc == 0:
            check(yaml_kv(ckp)["u_0"] == yaml_kv(os.path.join(href, "checkpoint", "checkpoint.yaml"))["u_0"],
                  f"{label}: the uninterrupted run's final solution bit for bit")
            check(same_rows(steps_of(hint), steps_of(href)), f"{label}: steps.csv: the uninterrupted run's rows")
            check(history_rows(hint) == history_rows(href), f"{label}: history.csv: the uninterrupted run's rows")
            fs = sorted(os.listdir(os.path.join(href, "series")))
            check(sorted(os.listdir(os.path.join(hint, "series"))) == fs and
                  all(same_h5(os.path.join(hint, "series", f), os.path.join(href, "series", f)) for f in fs),
                  f"{label}: series/: the uninterrupted run's files and values")
            check(open(os.path.join(hint, "solution.xdmf")).read() == open(os.path.join(href, "solution.xdmf")).read(),
                  f"{label}: solution.xdmf: the uninterrupted run's collection")
        if label != "exact":
            continue
        # a second signal while step 5 finishes ends the process; the checkpoint of step 4 is there
        kill2 = os.path.join(W, "h-kill2")
        p_ = hooked(cs_, kill2, "5:3:1:2")
        check(p_.returncode not in (0, 5), f"second signal: exit {p_.returncode} (the process ends)")
        ck2 = os.path.join(kill2, "checkpoint", "checkpoint.yaml")
        if check(os.path.isfile(ck2) and yaml_kv(ck2)["step"] == "4", "second signal: the checkpoint of step 4"):
            rc, so, se = run([cs_, "--output", kill2, "--restart", kill2], ranks=2)
            check(rc == 0 and yaml_kv(ck2)["u_0"] == yaml_kv(os.path.join(href, "checkpoint", "checkpoint.yaml"))[
                "u_0"], f"continued from step 4: the uninterrupted bits (exit {rc} {se[-800:]})")
        # --restart of a run that is complete: exit 0, nothing changed
        done = os.path.join(W, "h-done")
        shutil.copytree(href, done)
        before = tree(done)
        rc, so, se = run([cs_, "--output", done, "--restart", done], ranks=2)
        check(rc == 0 and "the run is complete; nothing solved, nothing written" in so,
              f"--restart of a finished run: exit {rc} {so[-600:]} {se[-600:]}")
        check(tree(done) == before, "--restart of a finished run: every file as it was")
    finish()

if a.mode == "refuse":
    c = case("c", scheme="bdf2", dt=0.05, steps=4, p=4, ne=2, tol=1e-10)
    base = os.path.join(W, "base")
    rc, so, se = run([c, "--output", base])
    check(rc == 0, f"base run: exit {rc} {se}")

    def refused(name, mutate, want, case_path=c):
        d = os.path.join(W, name)
        shutil.copytree(base, d)
        mutate(d)
        before = tree(d)
        rc, so, se = run([case_path, "--output", d, "--restart", d])
        check(rc == 2 and want in se, f"{name}: exit {rc}, stderr {se!r} (want {want!r})")
        check("series/solution_000004.h5" in before and "solution.xdmf" in before and tree(d) == before,
              f"{name}: the output folder untouched: checkpoint, series/, solution.xdmf, steps.csv, summary.yaml")

    def truncate(d):
        p = os.path.join(d, "checkpoint", "u_0.h5")
        data = open(p, "rb").read()
        open(p, "wb").write(data[: len(data) // 2])

    def corrupt(d):  # bytes of the file flipped: HDF5 refuses it, or the checksum does
        p = os.path.join(d, "checkpoint", "u_1.h5")
        data = bytearray(open(p, "rb").read())
        for i in range(len(data) // 3, len(data), 97):
            data[i] ^= 0x40
        open(p, "wb").write(bytes(data))

    def checksum(d):  # a value changed: the checksum checkpoint.yaml records differs
        p = os.path.join(d, "checkpoint", "checkpoint.yaml")
        lines = open(p).read().splitlines(True)
        lines = [ln[:-2] + ("0" if ln[-2] != "0" else "1") + "\n" if ln.startswith("u_1:") else ln for ln in lines]
        # checkpoint.yaml's own checksum made to match (FNV-1a 64 of the lines above it), so
        # that the data file's check is what refuses it
        text = "".join(ln for ln in lines if not ln.startswith("checksum:") and ln != "end: true\n")
        h = 14695981039346656037
        for byte in text.encode():
            h = ((h ^ byte) * 1099511628211) % (1 << 64)
        open(p, "w").write(text + f"checksum: {h:016x}\nend: true\n")

    def trunc_yaml(d):
        p = os.path.join(d, "checkpoint", "checkpoint.yaml")
        data = open(p).read()
        open(p, "w").write(data[: data.index("u_0:")])

    refused("truncated", truncate, "cannot read u_0.h5")
    refused("corrupted", corrupt, "u_1.h5")
    refused("checksum", checksum, "u_1.h5 is damaged")
    refused("yaml-truncated", trunc_yaml, "checkpoint.yaml is truncated")
    refused("other-dt", lambda d: None, "time.dt differs", case("dt", scheme="bdf2", dt=0.025, steps=4, p=4, ne=2))
    refused("other-mesh", lambda d: None, "mesh differs", case("mesh", scheme="bdf2", dt=0.05, steps=4, p=4, ne=3))
    refused("other-scheme", lambda d: None, "time.scheme differs", case("sch", scheme="bdf1", dt=0.05, steps=4, p=4))
    rc, so, se = run([c, "--output", os.path.join(W, "none"), "--restart", os.path.join(W, "nowhere")])
    check(rc == 2 and "no checkpoint there" in se, f"missing checkpoint: {rc} {se!r}")
    # the result set: --force replaces the series folder as a whole; a steady run into the folder
    # removes series/ and steps.csv (not in its set) and keeps checkpoint/
    check(sorted(os.listdir(os.path.join(base, "series"))) == ["mesh.h5", "solution_000004.h5"],
          "series: the mesh and the last step only (output_every 0: no t = 0 frame)")
    rc, so, se = run([c, "--output", base, "--force", "--set", "time.output_every=1"])
    check(rc == 0 and sorted(os.listdir(os.path.join(base, "series"))) ==
          ["mesh.h5"] + [f"solution_00000{i}.h5" for i in (0, 2, 3, 4)], f"--force: the new series ({rc} {se[-500:]})")
    steady = os.path.join(W, "steady.yaml")
    open(steady, "w").write("mesh: {type: box, elements: [2, 2, 2]}\norder: 2\nproblem:\n  rhs: \"1\"\n  boundary:\n"
                            "    - {tags: [xmin], type: dirichlet, value: 0}\n")
    rc, so, se = run([steady, "--output", base, "--force"])
    left = sorted(os.listdir(base))
    check(rc == 0 and "series" not in left and "steps.csv" not in left and "checkpoint" in left and
          "solution.h5" in left, f"a steady run over a time run's results: {left} ({rc} {se[-500:]})")
    finish()

if a.mode == "xdmf":
    # issue 54: the mesh once (series/mesh.h5), the frames hold the fields only, the initial state
    # as the first frame, output.fields and output.precision, the bytes per frame reported
    c = case("x", scheme="bdf2", dt=0.1, steps=7, p=3, ne=2, oe=3, tol=1e-10)
    out = os.path.join(W, "x")
    rc, so, se = run([c, "--output", out, "--set", "output.fields=[u, exact, error]"], ranks=2)
    check(rc == 0, f"run: exit {rc} {se}")
    check(sorted(os.listdir(os.path.join(out, "series"))) ==
          ["mesh.h5", "solution_000000.h5", "solution_000003.h5", "solution_000006.h5", "solution_000007.h5"],
          "series: the mesh, t = 0, steps 3, 6 and the last, 7")
    st = summary_time(out)
    fb = os.path.getsize(os.path.join(out, "series", "solution_000003.h5"))
    mb = os.path.getsize(os.path.join(out, "series", "mesh.h5"))
    check(st.get("frame_bytes") == str(fb) and st.get("mesh_bytes") == str(mb),
          f"summary.yaml time.frame_bytes {st.get('frame_bytes')} / mesh_bytes {st.get('mesh_bytes')}: the files' "
          f"sizes {fb} / {mb}")
    check(f"output: {fb} bytes per frame (u, exact, error, fp64), series/mesh.h5 {mb} bytes once" in so,
          "the log reports the bytes per frame")
    script = r"""
import sys, meshio, h5py, numpy as np
out = sys.argv[1]
r = meshio.xdmf.TimeSeriesReader(out + "/solution.xdmf")
pts, cells = r.read_points_cells()
assert r.num_steps == 4, r.num_steps
assert cells[0].type == "hexahedron" and len(cells[0].data) == 8 * 27, (cells[0].type, len(cells[0].data))
x, y, z = pts[:, 0], pts[:, 1], pts[:, 2]
for k, (step, t) in enumerate([(0, 0.0), (3, 0.3), (6, 0.6), (7, 0.7)]):
    tt, pd, cd = r.read_data(k)
    assert abs(tt - t) < 1e-12, (tt, t)
    assert sorted(pd) == ["error", "exact", "u"], sorted(pd)
    ex = np.exp(-t) * np.sin(np.pi * x) * np.sin(np.pi * y) * np.sin(np.pi * z) + np.cos(t) * (x * y + z)
    assert np.abs(pd["exact"] - ex).max() < 1e-12
    assert np.abs(pd["u"] - ex).max() < 1e-2, np.abs(pd["u"] - ex).max()
    if step == 0:  # the initial condition (time.initial: exact), the same evaluation bit for bit
        assert np.array_equal(pd["u"], pd["exact"]) and not pd["error"].any()
    with h5py.File("%s/series/solution_%06d.h5" % (out, step)) as f:
        assert np.array_equal(f["fields/u"][:], pd["u"])
        assert "coordinates" not in f["mesh"] and "connectivity" not in f["mesh"], list(f["mesh"])
        assert f.attrs["run_id"]
with h5py.File(out + "/series/mesh.h5") as f:
    assert f["mesh/coordinates"].shape == (8 * 64, 3) and "u" not in f.get("fields", {}), list(f)
print("meshio/h5py: 4 outputs at t = 0, 0.3, 0.6, 0.7; the frames without the mesh")
"""
    p = subprocess.run([a.python, "-c", script, out], capture_output=True, text=True)
    print(p.stdout, p.stderr)
    check(p.returncode == 0, f"meshio/h5py: {p.stderr[-2000:]}")
    # the lean default (u only) and fp32: the field bytes halve, the rest of the file is the same
    sizes = {}
    for prec in ("fp64", "fp32"):
        o = os.path.join(W, "lean-" + prec)
        rc, so, se = run([c, "--output", o, "--set", "output.precision=" + prec], ranks=2)
        check(rc == 0, f"{prec}: exit {rc} {se[-1000:]}")
        sizes[prec] = os.path.getsize(os.path.join(o, "series", "solution_000003.h5"))
        check(os.path.getsize(os.path.join(o, "series", "mesh.h5")) == mb, f"{prec}: the same mesh file")
        check(f"output: {sizes[prec]} bytes per frame (u, {prec})" in so, f"{prec}: the log's bytes per frame")
        check(f"(solution yes: xdmf, {prec}, fields u; history" in so, f"{prec}: the run's header names the format, "
              f"precision and fields: {so[:1500]}")
    # the same files on 1 rank: rows in global element order, not the partition's (a restart on
    # another rank count appends its frames to the earlier segment's mesh and frames)
    o1 = os.path.join(W, "lean-np1")
    rc, so, se = run([c, "--output", o1], ranks=1)
    check(rc == 0, f"1 rank: exit {rc} {se[-1000:]}")
    script = r"""
import sys, h5py, numpy as np
a, b = sys.argv[1:]
with h5py.File(a + "/series/mesh.h5") as f, h5py.File(b + "/series/mesh.h5") as g:
    for n in ("mesh/coordinates", "mesh/connectivity", "mesh/element_id"):
        assert np.array_equal(f[n][()], g[n][()]), n
with h5py.File(a + "/series/solution_000006.h5") as f, h5py.File(b + "/series/solution_000006.h5") as g:
    assert np.array_equal(f["mesh/element_id"][()], g["mesh/element_id"][()])
    d = np.abs(f["fields/u"][()] - g["fields/u"][()]).max()
    assert d < 1e-8, d
print("1 and 2 ranks: the same mesh.h5, the same rows")
"""
    p = subprocess.run([a.python, "-c", script, o1, os.path.join(W, "lean-fp64")], capture_output=True, text=True)
    print(p.stdout, p.stderr)
    check(p.returncode == 0, f"1 and 2 ranks: {p.stderr[-1500:]}")
    # interrupted after step 4 and continued with other fields and precision: the collection
    # describes each frame as it is (the carried ones u in fp64, the new ones u, exact, error in fp32)
    om = os.path.join(W, "mixed")
    os.environ["HEXCG_TEST_SIGNAL"] = "4:1:0"
    rc, so, se = run([c, "--output", om])
    del os.environ["HEXCG_TEST_SIGNAL"]
    check(rc == 5, f"mixed: interrupted at step 4: exit {rc} {se[-500:]}")
    rc, so, se = run([c, "--output", om, "--restart", om, "--set", "output.fields=[u, exact, error]", "--set",
                      "output.precision=fp32"])
    check(rc == 0, f"mixed: continued: exit {rc} {se[-500:]}")
    script = r"""
import sys, meshio
r = meshio.xdmf.TimeSeriesReader(sys.argv[1] + "/solution.xdmf")
r.read_points_cells()
got = []
for k in range(r.num_steps):
    t, pd, cd = r.read_data(k)
    got.append((round(t, 12), sorted(pd), sorted({str(v.dtype) for v in pd.values()})))
want = [(0.0, ["u"], ["float64"]), (0.3, ["u"], ["float64"]),
        (0.6, ["error", "exact", "u"], ["float32"]), (0.7, ["error", "exact", "u"], ["float32"])]
assert got == want, got
print("mixed segments: each frame described as it is")
"""
    p = subprocess.run([a.python, "-c", script, om], capture_output=True, text=True)
    print(p.stdout, p.stderr)
    check(p.returncode == 0, f"mixed segments: {p.stderr[-1500:]}")
    # a steady run's solution.h5/solution.xdmf honour output.fields and output.precision too
    st = os.path.join(W, "steady.yaml")
    open(st, "w").write("mesh: {type: box, elements: [2, 2, 2]}\norder: 3\nproblem:\n  rhs: \"0\"\n"
                        "  exact: \"x*y + z\"\n  boundary:\n    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], "
                        "type: dirichlet, value: exact}\noutput: {fields: [u, rank], precision: fp32}\n")
    rc, so, se = run([st, "--output", os.path.join(W, "steady")], ranks=2)
    check(rc == 0, f"steady: exit {rc} {se[-500:]}")
    script = r"""
import sys, meshio, h5py
m = meshio.read(sys.argv[1] + "/solution.xdmf")
assert sorted(m.point_data) == ["u"] and str(m.point_data["u"].dtype) == "float32", m.point_data
assert sorted(m.cell_data) == ["rank"], m.cell_data
with h5py.File(sys.argv[1] + "/solution.h5") as f:
    assert sorted(f["fields"]) == ["rank", "u"] and f["mesh/coordinates"].dtype == "float64", list(f["fields"])
print("steady: u in float32 and rank, no exact or error")
"""
    p = subprocess.run([a.python, "-c", script, os.path.join(W, "steady")], capture_output=True, text=True)
    print(p.stdout, p.stderr)
    check(p.returncode == 0, f"steady fields: {p.stderr[-1500:]}")
    n = 8 * 64  # E (p+1)^3 values of u
    check(sizes["fp64"] - sizes["fp32"] == 4 * n, f"fp32 halves u's bytes: {sizes} (u is {8 * n} bytes in fp64)")
    check(fb - sizes["fp64"] == 2 * 8 * n, f"the lean default drops exact and error: {fb} -> {sizes['fp64']}")
    check(sizes["fp32"] < 4 * n + 8 * 8 + 8192, f"a frame is its field, the element ids and HDF5's metadata (about 7 kB): {sizes['fp32']} bytes")
    finish()

if a.mode == "job":
    # jobs/heat.sbatch outside Slurm: a fake srun runs hexcg and sends it SIGUSR1 after step 5 on
    # the first start (as --signal=USR1@120 would), a fake scontrol records the requeue; the
    # second start (SLURM_RESTART_COUNT=1) must continue with --restart to the uninterrupted bits
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    bindir = os.path.join(W, "bin")
    os.makedirs(bindir)
    open(os.path.join(bindir, "srun"), "w").write(f'''#!/usr/bin/python3
import os, signal, subprocess, sys
args = [x for x in sys.argv[1:] if not x.startswith("--mpi=")]
p = subprocess.Popen(["{a.mpiexec}", "-n", "2"] + args, stdout=subprocess.PIPE, text=True)
for line in p.stdout:
    sys.stdout.write(line)
    if os.environ.get("SLURM_RESTART_COUNT", "0") == "0" and line.startswith("step 5 "):
        for d in os.listdir("/proc"):
            try:
                # only this job's ranks (their command line holds the case), not
                # the hexcg runs of other tests running beside this one
                mine = os.environ["HEXCG_CASE"] in open("/proc/%s/cmdline" % d, errors="replace").read().split(chr(0))
                if d.isdigit() and open("/proc/%s/comm" % d).read().strip() == "hexcg" and mine:
                    os.kill(int(d), signal.SIGUSR1)
            except OSError:
                pass
sys.exit(p.wait())
''')
    open(os.path.join(bindir, "scontrol"), "w").write(f"#!/bin/sh\necho \"$@\" >> {W}/scontrol.log\n")
    for f in ("srun", "scontrol"):
        os.chmod(os.path.join(bindir, f), 0o755)
    c = case("job", scheme="bdf2", dt=0.002, steps=40, p=5, ne=3, tol=1e-10)
    out, ref = os.path.join(W, "out"), os.path.join(W, "ref")
    env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"], SLURM_JOB_ID="4242", SLURM_NTASKS="2",
               HEXCG_CASE=c, HEXCG_OUT=out, HEXCG_BIN=a.hexcg, HEXCG_ROOT=src, OMP_NUM_THREADS="1")
    job = os.path.join(src, "jobs", "heat.sbatch")
    p1 = subprocess.run(["bash", job], env=env, capture_output=True, text=True, timeout=300)
    log = open(os.path.join(W, "scontrol.log")).read() if os.path.exists(os.path.join(W, "scontrol.log")) else ""
    check(p1.returncode == 0 and "requeue 4242" in log and "checkpointed" in p1.stdout,
          f"first start: exit {p1.returncode}, scontrol {log!r}, {p1.stdout[-500:]} {p1.stderr[-1000:]}")
    p2 = subprocess.run(["bash", job], env=dict(env, SLURM_RESTART_COUNT="1"), capture_output=True, text=True,
                        timeout=300)
    check(p2.returncode == 0 and "--restart" in p2.stdout and "finished" in p2.stdout,
          f"requeued start: exit {p2.returncode} {p2.stdout[-800:]} {p2.stderr[-1000:]}")
    check(open(os.path.join(W, "scontrol.log")).read().count("requeue") == 1, "requeued once only")
    rc, so, se = run([c, "--output", ref], ranks=2)
    if check(rc == 0 and p2.returncode == 0, "uninterrupted run"):
        check(yaml_kv(os.path.join(out, "checkpoint", "checkpoint.yaml"))["u_0"] ==
              yaml_kv(os.path.join(ref, "checkpoint", "checkpoint.yaml"))["u_0"],
              "requeued job: the uninterrupted run's solution bit for bit")
    finish()

print(f"unknown mode {a.mode}", file=sys.stderr)
sys.exit(2)
