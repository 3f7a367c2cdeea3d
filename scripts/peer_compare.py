#!/usr/bin/env python3
"""hexcg against the deal.II peer (../shared/peers/), side by side in one run.

For each reference case the two codes run alternately (hexcg, deal.II,
hexcg, ... `--rounds` times each, one process after the other), on the same
mesh, order, DOF count and rank count, and the script prints per case:
iterations, setup, solve and time to solution of each (median and spread
over the rounds), and the ratio hexcg / deal.II of the time to solution,
computed round by round (each hexcg run against the deal.II run beside it)
so that the machine's drift cancels. Time to solution is deal.II's tts_s
(setup + first solve) against hexcg's timers_s setup + solve from
summary.yaml.

  scripts/peer_compare.py --peer-dir ../peer-build                      # hexcg's default vs GMG
  scripts/peer_compare.py --peer-dir ../peer-build --jacobi             # Jacobi-PCG both
  scripts/peer_compare.py --peer-dir ../peer-build --set preconditioner.type=auto

deal.II is not a dependency of hexcg: build the peer as ../shared/peers/README.md says.
The figures go into docs/performance.md with the command line that made them.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (hexcg case, --set options, deal.II options)
CASES = {
    "kershaw-p7": ("configs/kershaw.yaml", [], ["-p", "7", "-s", "3", "-n", "2", "-kershaw", "0.3"]),
    "kershaw-p3": ("configs/kershaw.yaml", ["order=3", "mesh.elements=[24,24,24]"],
                   ["-p", "3", "-s", "3", "-n", "3", "-kershaw", "0.3"]),
    "box-p7": ("configs/poisson_box.yaml", ["mesh.elements=[16,16,16]"], ["-p", "7", "-s", "1", "-n", "4"]),
    # f = 1 with u = 0 on the boundary: many modes (the peer's -rhs one)
    "box-p7-one": ("configs/poisson_box.yaml",
                   ["mesh.elements=[16,16,16]", "problem.rhs=1", "problem.exact=null",
                    "problem.boundary=[{tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: 0}]"],
                   ["-p", "7", "-s", "1", "-n", "4", "-rhs", "one"]),
}


def parse_peer(text):
    """the figures of the driver's RESULT block"""
    out = {}
    for key in ("iters", "setup_s", "solve_s", "tts_s", "first_solve_s", "first_iters", "dofs", "VmHWM_sum_MB"):
        m = re.search(r"\b" + key + r"=([0-9.eE+-]+)", text)
        if m:
            out[key] = float(m.group(1))
    if "tts_s" not in out or "first_iters" not in out:
        raise ValueError("no RESULT block with tts_s and first_iters in the peer's output:\n" + text[-2000:])
    return out


def parse_summary(path):
    """iterations, setup, solve and peak memory of a hexcg summary.yaml (flat keys only)"""
    out, section = {}, None
    with open(path) as f:
        for line in f:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if not line.startswith(" "):
                section = line.split(":")[0]
                m = re.search(r"peak_per_rank_bytes: ([0-9]+)", line)
                if m:
                    out["peak_per_rank_bytes"] = float(m.group(1))
                m = re.match(r"dofs: ([0-9]+)", line)
                if m:
                    out["dofs"] = float(m.group(1))
                continue
            m = re.match(r"\s+(\w+): ([0-9.eE+-]+)\s*$", line)
            if not m:
                continue
            key, val = m.group(1), float(m.group(2))
            if section == "solver" and key == "iterations":
                out["iters"] = val
            elif section == "preconditioner" and key == "setup_s" and line.startswith("  setup_s") \
                    and "pc_setup_s" not in out:
                out["pc_setup_s"] = val
            elif section == "timers_s" and key in ("setup", "solve"):
                out[key + "_s"] = val
    for key in ("iters", "setup_s", "solve_s"):
        if key not in out:
            raise ValueError(f"{path}: no {key} (solver.iterations, timers_s.setup, timers_s.solve)")
    out["tts_s"] = out["setup_s"] + out["solve_s"]
    return out


def spread(vals):
    return f"{statistics.median(vals):.3g} ({min(vals):.3g}-{max(vals):.3g})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer-dir", required=True, help="folder holding dealii_poisson_simd and dealii_poisson_simd_mg")
    ap.add_argument("--hexcg", default=os.path.join(ROOT, "build", "hexcg"))
    ap.add_argument("--mpiexec", default="mpiexec.mpich", help="hexcg's launcher (MPICH)")
    ap.add_argument("--peer-mpiexec", default="mpirun.openmpi", help="the peer's launcher (Debian's deal.II links Open MPI)")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    ap.add_argument("--jacobi", action="store_true", help="Jacobi-PCG in both (per-iteration comparison)")
    ap.add_argument("--keep", action="store_true", help="keep hexcg's output folders (printed)")
    ap.add_argument("--set", action="append", default=[], help="extra hexcg --set (e.g. preconditioner.type=auto)")
    a = ap.parse_args()

    peer = os.path.join(a.peer_dir, "dealii_poisson_simd" if a.jacobi else "dealii_poisson_simd_mg")
    if not os.access(peer, os.X_OK):
        sys.exit(f"peer_compare: no peer executable {peer} (build it as ../shared/peers/README.md says)")
    if not os.access(a.hexcg, os.X_OK):
        sys.exit(f"peer_compare: no hexcg at {a.hexcg} (scripts/build.sh)")
    names = [c for c in a.cases.split(",") if c]
    for c in names:
        if c not in CASES:
            sys.exit(f"peer_compare: unknown case '{c}' (one of {', '.join(CASES)})")
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # the default: hexcg's own (the case's preconditioner key, if any, removed)
    pc = ["preconditioner.type=jacobi"] if a.jacobi else ["preconditioner=null"]
    # an explicit --set preconditioner... replaces the default choice
    if any(s.startswith("preconditioner") for s in a.set):
        pc = []
    work = tempfile.mkdtemp(prefix="hexcg-peer-")
    print(f"hexcg {a.hexcg} ({' '.join(pc + a.set) or 'case settings'}) against {peer}, "
          f"{a.ranks} ranks x 1 thread, {a.rounds} alternations")
    rows = []
    for c in names:
        case, sets, popts = CASES[c]
        H, P = [], []
        for r in range(a.rounds):
            out = os.path.join(work, f"{c}-{r}")
            cmd = [a.mpiexec, "-n", str(a.ranks), a.hexcg, "run", os.path.join(ROOT, case), "--output", out,
                   "--force", "--quiet", "--set", "output.solution=false"]
            has_pc = any(line.startswith("preconditioner:") for line in open(os.path.join(ROOT, case)))
            for s in sets + [x for x in pc if has_pc or x != "preconditioner=null"] + a.set:
                cmd += ["--set", s]
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if p.returncode != 0:
                sys.exit(f"peer_compare: hexcg failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
            H.append(parse_summary(os.path.join(out, "summary.yaml")))
            pcmd = [a.peer_mpiexec, "-np", str(a.ranks), peer] + popts + ["-prec", "jacobi" if a.jacobi else "mg",
                                                                         "-quad", "gll", "-x0", "zero", "-bench", "0"]
            p = subprocess.run(pcmd, capture_output=True, text=True, env=env)
            if p.returncode != 0:
                sys.exit(f"peer_compare: the peer failed ({p.returncode}): {' '.join(pcmd)}\n{p.stderr[-2000:]}")
            P.append(parse_peer(p.stdout))
            print(f"  {c} round {r + 1}: hexcg {H[-1]['iters']:.0f} its {H[-1]['setup_s']:.3f} + {H[-1]['solve_s']:.3f} s,"
                  f" deal.II {P[-1]['first_iters']:.0f} its {P[-1]['setup_s']:.3f} + {P[-1]['first_solve_s']:.3f} s",
                  flush=True)
        ratio = [h["tts_s"] / p["tts_s"] for h, p in zip(H, P)]
        iter_ratio = [(h["solve_s"] / max(h["iters"], 1)) / (p["first_solve_s"] / max(p["first_iters"], 1))
                      for h, p in zip(H, P)]
        rows.append((c, H, P, ratio, iter_ratio))
    print()
    print("| case | hexcg its | hexcg setup + solve (s) | deal.II its | deal.II setup + solve (s) |"
          " hexcg / deal.II time to solution | per iteration | hexcg preconditioner setup / the rest of its setup |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for c, H, P, ratio, iter_ratio in rows:
        pcr = [h["pc_setup_s"] / max(h["setup_s"] - h["pc_setup_s"], 1e-9) for h in H if "pc_setup_s" in h]
        print(f"| {c} | {statistics.median([h['iters'] for h in H]):.0f} | {spread([h['setup_s'] for h in H])} + "
              f"{spread([h['solve_s'] for h in H])} | {statistics.median([p['first_iters'] for p in P]):.0f} | "
              f"{spread([p['setup_s'] for p in P])} + {spread([p['first_solve_s'] for p in P])} | "
              f"**{spread(ratio)}** | {spread(iter_ratio)} | {spread(pcr) if pcr else '-'} |")
    if a.keep:
        print(f"hexcg's outputs: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
