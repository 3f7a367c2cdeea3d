#!/usr/bin/python3
"""A differential fuzzer of restarts (issue 53): interrupted and continued time
runs against the uninterrupted run of the same case.

Each round draws a small heat problem from a seed (a box or a deformed box,
the order, the BDF scheme, dt and the step count, how often outputs and
checkpoints are written, the projection space, the preconditioner, 1 or 2
ranks, a manufactured solution exp(-a t) sin(k1 x + c1) sin(k2 y + c2)
sin(k3 z + c3) with Dirichlet data) and solves it once uninterrupted (the
reference). Then the same case runs in segments: each segment is stopped at
a random place, by SIGTERM at a drawn step and PCG iteration on a drawn
rank (the HEXCG_TEST_SIGNAL hook: the run finishes the step, writes a
checkpoint and its outputs, exit 5), by SIGKILL of the whole launch after a
drawn delay (no outputs; only the last periodic checkpoint survives), or by
a real SIGTERM after a drawn delay (start-up, a solve, a checkpoint write,
the output commit: wherever it lands) sent to mpiexec, to the launch's
process group (each rank gets it twice: directly and forwarded by mpiexec),
through `timeout` (the same) or to each rank directly (issue 53 defect 17:
one signal delivered twice ended a run without its checkpoint); a SIGTERM
must end the segment with exit 5 (or 0 if it finished first), never by the
signal. Each is continued with --restart until a segment ends with exit 0.
In one round of four a continuation runs on the other rank count. --load N
runs N busy processes beside the runs (the defect showed under load).

The continued folder must hold:
- exit 0 at the end, and no staging folder left;
- on the same rank count, every steps.csv row equal to the reference's row
  of that step in every column but the timings (bit for bit: docs/time.md
  "Restart"), every series file's u equal to the reference's bit for bit,
  and the final step's file present; on another rank count the same within
  U_TOL of max|u| (the solves stop at rtol 1e-10; the rank count changes
  the summation order only);
- no row or file of a step the reference does not have;
- every step of the reference when no segment was killed by SIGKILL (after a
  SIGKILL, the killed segment's rows after the folder's last commit are
  lost: docs/time.md; the last step's solution is still there);
- after each SIGTERM a summary.yaml of that segment, interrupted or
  complete, or its "interrupted by" message (Hydra's own exit status is
  not the ranks' when the signal reached it: the folder decides), and no
  rank left running after mpiexec.

A failing round prints its seed, its case and the segments, and keeps its
folder: `diff_restart.py --seed S --rounds 1` replays it (the SIGKILL
delays are wall-clock times: a replay may stop elsewhere). Exit 1 on any
disagreement. docs/developer.md, "Differential fuzzing".
"""
import csv
import math
import os
import shutil
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import ROUND_OPTIONS, fuzz_rounds, setup  # noqa: E402

U_TOL = 1e-7
HOWS = ["signal", "signal", "kill", "term-mpiexec", "term-group", "term-timeout", "term-ranks", "end"]
TIMING = ("seconds", "projection_s", "run_id")  # differ between runs by design

a, _ = setup(options=ROUND_OPTIONS + (
    (("--load",), dict(type=int, default=0, help="busy processes beside the runs (signals under load)")),))


def draw_case(rng):
    el = [rng.randint(1, 3) for _ in range(3)]
    order = rng.randint(3, 5)
    scheme = rng.choice(["bdf1", "bdf2", "bdf3"])
    dt = rng.choice([0.1, 0.05, 0.025, 0.02])
    nsteps = rng.randint(10, 30)  # a second or so: room for a signal to land inside
    k = [round(rng.uniform(0.5, 3.0), 3) for _ in range(3)]
    c = [round(rng.uniform(0.0, 1.0), 3) for _ in range(3)]
    rate = round(rng.uniform(0.2, 2.0), 3)
    exact = (f"exp(-{rate}*t)*sin({k[0]}*x + {c[0]})*sin({k[1]}*y + {c[1]})*sin({k[2]}*z + {c[2]})")
    mesh = {"type": "box", "elements": el}
    if rng.random() < 0.3:
        mesh["deform"] = round(rng.uniform(0.02, 0.1), 3)
    pc = rng.choice(["jacobi", "jacobi", "pmg", "asm"])
    case = {"mesh": mesh, "order": order,
            "time": {"scheme": scheme, "dt": dt, "end": float(f"{nsteps * dt:.10g}"), "initial": "exact",
                     "output_every": rng.randint(1, 3), "checkpoint_every": rng.randint(1, 4)},
            "problem": {"rhs": f"({k[0] ** 2 + k[1] ** 2 + k[2] ** 2 - rate!r})*{exact}", "exact": exact,
                        "boundary": [{"tags": ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"],
                                      "type": "dirichlet", "value": "exact"}]},
            "solver": {"tol": 1e-10, "max_iterations": 2000, "projection": rng.choice([0, 2, 4, 8])},
            "preconditioner": {"type": pc}}
    nel = el[0] * el[1] * el[2]
    ranks = rng.randint(1, min(2, nel))
    return case, nsteps, ranks, (f"box {el}{' deformed' if 'deform' in mesh else ''} p={order} {scheme} "
                                 f"dt {dt} x {nsteps} out/{case['time']['output_every']} "
                                 f"ck/{case['time']['checkpoint_every']} proj {case['solver']['projection']} "
                                 f"{pc} {ranks} rank(s)")


def rank_pids(root):
    """the hexcg processes under the launch (Hydra puts its proxy and each rank in a session of
    their own, so they are found by parentage, not by session or process group)"""
    p = subprocess.run(["ps", "-eo", "pid=,ppid=,comm="], capture_output=True, text=True)
    kids, comm = {}, {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) >= 3:
            kids.setdefault(int(f[1]), []).append(int(f[0]))
            comm[int(f[0])] = f[2]
    out, todo = [], [root]
    while todo:
        for c in kids.get(todo.pop(), []):
            todo.append(c)
            if comm.get(c) == "hexcg":
                out.append(c)
    return out


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def launch(work, out, ranks, restart, env_extra, how, delay):
    """one segment: its exit status (negative: killed by that signal) and stderr. how: run to the end
    ("end", "signal": the hook in env_extra), SIGKILL of the whole launch ("kill"), or SIGTERM after
    delay seconds to mpiexec ("term-mpiexec"), to the launch's process group, which reaches each rank
    twice, directly and through mpiexec ("term-group"), through `timeout`, which does the same
    ("term-timeout"), or to each rank directly ("term-ranks")"""
    cmd = [a.mpiexec, "-n", str(ranks), a.hexcg, "run", os.path.join(work, "case.yaml"), "--output", out,
           "--quiet"]
    cmd += ["--restart", out] if restart else ["--force"]
    if how == "term-timeout":
        cmd = ["timeout", "--preserve-status", "-s", "TERM", f"{delay:.3f}"] + cmd
    env = dict(os.environ, OMP_NUM_THREADS="1", **env_extra)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    wait = delay if how in ("kill", "term-mpiexec", "term-group", "term-ranks") else None
    ranks_seen = []
    if wait is not None:  # the delay counts from the ranks' start: a signal before it is Hydra's alone
        for _ in range(3000):
            ranks_seen = rank_pids(p.pid)
            if ranks_seen or p.poll() is not None:
                break
            time.sleep(0.01)
    try:
        so, se = p.communicate(timeout=wait if wait is not None else 300)
        return p.returncode, se
    except subprocess.TimeoutExpired:
        if how == "kill":
            ranks_seen = ranks_seen or rank_pids(p.pid)
            os.killpg(p.pid, signal.SIGKILL)
            for pid in ranks_seen:  # in sessions of their own: Hydra's SIGKILL does not wait for them
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            so, se = p.communicate()
            for _ in range(100):
                if not any(alive(q) for q in ranks_seen):
                    break
                time.sleep(0.05)
            return -9, se
        ranks_seen = ranks_seen or rank_pids(p.pid)
        if how == "term-mpiexec":
            p.send_signal(signal.SIGTERM)
        elif how == "term-group":  # as a Ctrl-C: mpiexec and each rank
            os.killpg(p.pid, signal.SIGTERM)
            for pid in ranks_seen:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        elif how == "term-ranks":
            for pid in ranks_seen:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        else:  # the run itself did not end in 300 s
            os.killpg(p.pid, signal.SIGKILL)
            so, se = p.communicate()
            return -1000, se
    try:
        so, se = p.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        so, se = p.communicate()
        return -1000, se + "\n(hung after the signal: killed after 300 s)"
    # Hydra's mpiexec, when the signal reached it, may leave before its ranks
    # (and report 0 or its own death): wait for them, they hold the folder
    for _ in range(600):
        if not any(alive(q) for q in ranks_seen):
            break
        time.sleep(0.1)
    else:
        for q in ranks_seen:
            try:
                os.kill(q, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return -1000, se + "\n(ranks still running 60 s after mpiexec ended: killed)"
    return p.returncode, se


def summary_of(out, since):
    """the committed summary.yaml written after `since` (None: none)"""
    path = os.path.join(out, "summary.yaml")
    try:
        if os.stat(path).st_mtime < since:
            return None
        with open(path) as f:
            return yaml.safe_load(f)
    except (OSError, yaml.YAMLError):
        return None


def read_folder(out):
    rows = {}
    with open(os.path.join(out, "steps.csv")) as f:
        for r in csv.DictReader(f):
            rows[int(r["step"])] = {k: v for k, v in r.items() if k not in TIMING}
    series = {}
    sd = os.path.join(out, "series")
    for n in sorted(os.listdir(sd)) if os.path.isdir(sd) else []:
        if not (n.startswith("solution_") and n.endswith(".h5")):
            continue
        with h5py.File(os.path.join(sd, n), "r") as f:
            eid = np.asarray(f["mesh/element_id"])
            u = np.asarray(f["fields/u"]).reshape(len(eid), -1)
        series[int(n[9:-3])] = u[np.argsort(eid)]
    return rows, series


def checkpoint_step(out):
    try:
        with open(os.path.join(out, "checkpoint", "checkpoint.yaml")) as f:
            for line in f:
                if line.startswith("step:"):
                    return int(line.split(":")[1])
    except (OSError, ValueError):
        pass
    return 0


def differ(ref, got, bitwise, killed, last):
    rr, rs = ref
    gr, gs = got
    if set(gr) - set(rr):
        return f"steps.csv rows of steps the reference does not have: {sorted(set(gr) - set(rr))}"
    if set(gs) - set(rs):
        return f"series files of steps the reference does not have: {sorted(set(gs) - set(rs))}"
    if not killed and set(gr) != set(rr):
        return f"steps.csv rows missing: {sorted(set(rr) - set(gr))}"
    if not killed and set(gs) != set(rs):
        return f"series files missing: {sorted(set(rs) - set(gs))}"
    if not killed and (not gr or max(gr) != last or sorted(gr) != list(range(min(gr), last + 1))):
        return f"steps.csv rows {sorted(gr)} are not a contiguous range ending at step {last}"
    if max(rs) not in gs:
        return f"the last step's series file (step {max(rs)}) is missing"
    for s, row in gr.items():
        for k, v in row.items():
            if bitwise:
                if v != rr[s][k]:
                    return f"steps.csv step {s}: {k} = {v}, uninterrupted {rr[s][k]}"
            elif k in ("step", "order") and v != rr[s][k]:
                return f"steps.csv step {s}: {k} = {v}, uninterrupted {rr[s][k]}"
    for s, u in gs.items():
        if bitwise:
            if not np.array_equal(u, rs[s]):
                return f"series step {s}: u differs from the uninterrupted run (max {np.abs(u - rs[s]).max():.3e})"
        else:
            umax = np.abs(rs[s]).max()
            du = np.abs(u - rs[s]).max()
            if not du <= U_TOL * umax:
                return f"series step {s}: max |u - u_ref| = {du:.3e} > {U_TOL:g} max|u| ({U_TOL * umax:.3e})"
    return None


load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.load)]
rounds = failures = runs = 0
for seed, rng, work in fuzz_rounds(a):
    rounds += 1
    case, nsteps, ranks, desc = draw_case(rng)
    with open(os.path.join(work, "case.yaml"), "w") as f:
        yaml.safe_dump(case, f, sort_keys=False)
    bad, log = [], []
    t0 = time.time()
    rc, se = launch(work, os.path.join(work, "ref"), ranks, False, {}, "end", None)
    t_ref = time.time() - t0
    runs += 1
    if rc != 0:
        bad.append(f"reference: exit {rc}: {se.strip()[-400:]}")
    else:
        ref = read_folder(os.path.join(work, "ref"))
        last = max(ref[0])
        other = rng.random() < 0.25
        out = os.path.join(work, "cont")
        killed = started = False
        for seg in range(6):
            r = ranks if not (other and seg > 0) else (1 if ranks == 2 else 2)
            env, delay = {}, None
            how = rng.choice(HOWS) if seg < 4 else "end"
            at = checkpoint_step(out) if started else 0  # where this segment starts
            if how == "signal":
                env["HEXCG_TEST_SIGNAL"] = (f"{rng.randint(min(at + 1, nsteps), nsteps)}:{rng.randint(0, 3)}:"
                                            f"{rng.randint(0, r - 1)}")
            elif how != "end":  # anywhere in a launch: start-up, solves, checkpoints, the commit
                # (0.1 s at least: a signal before the process reaches main() kills it, by the
                # kernel's default action; hexcg's handlers are its first statement)
                delay = max(0.1, rng.uniform(0.05, 0.7) * t_ref)
            t_seg = time.time() - 1.0  # file times: whole seconds on some file systems
            rc, se = launch(work, out, r, started, env, how, delay)
            runs += 1
            if how.startswith("term"):
                # Hydra's status is not the ranks' when the signal reached it
                # (docs/reliability.md): what the ranks left decides
                s_ = summary_of(out, t_seg)
                if s_ and s_.get("time", {}).get("interrupted"):
                    rc = 5
                elif s_ and s_.get("solver", {}).get("converged") is not None:
                    rc = 0
            log.append(f"segment {seg}: {r} rank(s), {how} {env.get('HEXCG_TEST_SIGNAL', '')}"
                       f"{'%.2f s' % delay if delay else ''} -> exit {rc}")
            if rc == -9:
                killed = True
                # a launch killed before its first checkpoint leaves nothing to continue from
                started = started or os.path.exists(os.path.join(out, "checkpoint", "checkpoint.yaml"))
                continue
            if how.startswith("term") and rc in (0, 5) and not summary_of(out, t_seg) and \
                    "interrupted by" not in se:
                bad.append(f"segment {seg}: {how}: exit {rc} but no summary.yaml of this segment and no "
                           f"interruption message: {se.strip()[-400:]}")
                break
            if rc == 5:  # interrupted: a checkpoint of the last step solved
                started = True
                continue
            if rc != 0:
                bad.append(f"segment {seg}: exit {rc}: {se.strip()[-600:]}")
            break
        else:
            bad.append("no segment finished")
        if not bad:
            if os.path.exists(os.path.join(out, ".hexcg-new")):
                bad.append("a staging folder .hexcg-new is left after the last segment")
            else:
                why = differ(ref, read_folder(out), not other, killed, last)
                if why:
                    bad.append(why)
    if bad:
        failures += 1
        print(f"FAIL seed {seed}: {desc}\n  case: {os.path.join(work, 'case.yaml')}")
        for line in log + bad:
            print("  " + line)
    else:
        print(f"ok   seed {seed}: {desc}; {len(log)} segments ({', '.join(s.split(': ', 1)[1] for s in log)})")
        shutil.rmtree(work)
    sys.stdout.flush()
for q in load:
    q.kill()
print(f"{rounds} rounds, {runs} runs, {failures} failing rounds (seeds {a.seed}..{a.seed + rounds - 1})")
print(f"{rounds - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
