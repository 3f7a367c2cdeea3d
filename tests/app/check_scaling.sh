#!/usr/bin/env bash
# jobs/scaling.sh end to end on 1 and 2 ranks (strong and weak) with a tiny
# case: each series writes its summaries and a scaling.csv with one row per
# rank count, the weak series doubles the elements, and bad input exits 2.
# The plots are checked from the figure itself (the PNG's "hexcg:layout"
# text chunk: what collect.py drew): the ideal line, the efficiency, the
# error bars of --repeat 2, the rank axis, the axes' sizes. The Python rule
# (scripts/python.sh): with HEXCG_PYTHON unset a python3 on PATH without
# matplotlib is not used; one given as HEXCG_PYTHON is refused before any run
# with a message naming the module, the interpreter and the fix.
set -euo pipefail
HEXCG=$1; OUT=$2; ROOT=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$OUT"
mkdir -p "$OUT/nompl/matplotlib" "$OUT/nompl/bin"
# a python3 that lacks matplotlib (as a pyenv python3 on PATH did): Debian's with the import blocked
echo 'raise ImportError("No module named matplotlib (blocked by check_scaling.sh)")' >"$OUT/nompl/matplotlib/__init__.py"
printf '#!/bin/sh\nPYTHONPATH=%s exec /usr/bin/python3 "$@"\n' "$OUT/nompl" >"$OUT/nompl/bin/python3"
chmod +x "$OUT/nompl/bin/python3"
NOMPL=$OUT/nompl/bin/python3
# the default rule: /usr/bin/python3 before python3 from PATH (the old default took PATH's and
# skipped the plots with a note)
unset HEXCG_PYTHON
for mode in strong weak; do
  PATH=$OUT/nompl/bin:$PATH "$ROOT/jobs/scaling.sh" $mode --ranks 1,2 --hexcg "$HEXCG" --set order=2 \
    --set "mesh.elements=[2, 2, 2]" --out "$OUT" >/dev/null
done
# strong scaling twice per rank count: error bars
"$ROOT/jobs/scaling.sh" strong --ranks 1,2 --repeat 2 --hexcg "$HEXCG" --set order=2 \
  --set "mesh.elements=[2, 2, 2]" --out "$OUT/rep" >/dev/null
# a Gmsh case: weak scaling refines by order (p = round(2 * 2^(1/3)) = 3 on 2 ranks), twice each
"$ROOT/jobs/scaling.sh" weak --ranks 1,2 --repeat 2 --hexcg "$HEXCG" --case "$ROOT/configs/gmsh_two_materials.yaml" \
  --set order=2 --out "$OUT/gmsh" >/dev/null
/usr/bin/python3 - "$OUT" "$ROOT/tests/app" <<'PY'
import csv, os, sys, yaml
out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from scaling_series import series_rows
for mode, rows in series_rows(out).items():
    # the default study is pmg, and its setup is apart from the per-iteration time
    for r in rows:
        s = yaml.safe_load(open(f"{out}/{mode}/np{r['ranks']}/summary.yaml"))
        assert s["solver"]["preconditioner"] == "pmg", s["solver"]
        pc_apply = s["timers_s"]["preconditioner"] / s["solver"]["iterations"]
        assert abs(float(r["t_pc_setup"]) - s["preconditioner"]["setup_s"]) < 1e-9, r
        # timers_s.preconditioner holds the applies only (the setup is in timers_s.setup):
        # t_precond is it per iteration, and a pmg V-cycle is never free (collect.py once
        # subtracted the setup a second time and clamped this column to 0)
        assert float(r["t_precond"]) > 0, r
        assert abs(float(r["t_precond"]) - pc_apply) <= 1e-12 + 1e-9 * pc_apply, (r, pc_apply)
        # the applies run inside the solve: per iteration they cannot exceed it (with the setup
        # counted in, as before, they did: setup ~ 10 applies on this tiny case)
        assert float(r["t_precond"]) <= 1.05 * float(r["t_per_iteration"]), r
rows = list(csv.DictReader(open(f"{out}/gmsh/weak/scaling.csv")))
assert [(r["ranks"], r["order"], r["elements"], r["repeats"]) for r in rows] == [("1", "2", "2", "2"), ("2", "3", "2", "2")], rows
for r in rows:
    t = [yaml.safe_load(open(f"{out}/gmsh/weak/np{r['ranks']}/r{k}/summary.yaml"))["timers_s"]["solve"] for k in (1, 2)]
    it = int(r["iterations"])
    assert abs(float(r["t_per_iteration_min"]) - min(t) / it) < 1e-12, (r, t)
    assert abs(float(r["t_per_iteration"]) - (t[0] + t[1]) / 2 / it) < 1e-12, (r, t)
PY
/usr/bin/python3 "$ROOT/tests/app/check_scaling_plots.py" "$OUT"
# a plot asked for with a python that lacks matplotlib: refused before the first run, exit 2
set +e
msg=$(HEXCG_PYTHON=$NOMPL "$ROOT/jobs/scaling.sh" strong --ranks 1 --hexcg "$HEXCG" --set order=2 \
  --set "mesh.elements=[2, 2, 2]" --out "$OUT/nompl-run" 2>&1 >/dev/null); rc=$?
set -e
for want in "'matplotlib'" "HEXCG_PYTHON=$NOMPL" "/usr/bin/python3" "apt install python3-matplotlib" "--no-plots"; do
  [[ $msg == *"$want"* ]] || { echo "no matplotlib: the message lacks '$want': '$msg'"; exit 1; }
done
[[ $rc == 2 ]] || { echo "no matplotlib: scaling.sh exited $rc, not 2: '$msg'"; exit 1; }
[[ ! -e $OUT/nompl-run/strong/np1 ]] || { echo "no matplotlib: the series ran anyway"; exit 1; }
# collect.py alone likewise (no CSV, no PNG), and with --no-plots it needs no matplotlib
set +e
msg=$(HEXCG_PYTHON=$NOMPL "$NOMPL" "$ROOT/jobs/collect.py" strong "$OUT/strong" 2>&1 >/dev/null); rc=$?
set -e
[[ $rc == 2 && $msg == *"'matplotlib'"*"apt install python3-matplotlib"* ]] || { echo "collect.py without matplotlib: rc $rc, '$msg'"; exit 1; }
HEXCG_PYTHON=$NOMPL "$ROOT/jobs/scaling.sh" strong --ranks 1 --no-plots --hexcg "$HEXCG" --set order=2 \
  --set "mesh.elements=[2, 2, 2]" --out "$OUT/noplots" >/dev/null
[[ -f $OUT/noplots/strong/scaling.csv && ! -e $OUT/noplots/strong/scaling.png ]] || { echo "--no-plots: wrong files"; exit 1; }
# hexcg's own plots follow the same rule: bench stream takes HEXCG_PYTHON (it always ran /usr/bin/python3)
msg=$(HEXCG_PYTHON=$OUT/nompl/none "$HEXCG" bench stream --kernels BS1 --min 4K --max 64K --points 3 --trials 1 \
  --min-time 0.0001 --plot-script "$ROOT/scripts/plot_stream.py" --output "$OUT/bs" 2>&1 >/dev/null)
[[ $msg == *"no plot: $OUT/nompl/none is not executable"*"HEXCG_PYTHON"* ]] || { echo "bench stream ignores HEXCG_PYTHON: '$msg'"; exit 1; }
# the sbatch body passes --repeat on (a stand-in allocation; the launcher is mpiexec)
SLURM_JOB_ID=1 SLURM_NTASKS=1 HEXCG_LAUNCH="mpiexec.mpich -n" "$ROOT/jobs/sbatch_run.sh" strong --ranks 1 \
  --repeat 2 --elements 2,2,2 --order 2 --hexcg "$HEXCG" --out "$OUT/sb" >/dev/null
[[ -f $OUT/sb/strong/np1/r2/summary.yaml ]] || { echo "sbatch_run.sh --repeat 2 did not run twice"; exit 1; }
# a probe that fails stops the job with a message (it used to be silenced)
set +e
msg=$(SLURM_JOB_ID=1 SLURM_NTASKS=1 HEXCG_PYTHON=false "$ROOT/jobs/sbatch_run.sh" strong --ranks 1 \
  --hexcg "$HEXCG" --out "$OUT/sb2" 2>&1 >/dev/null); rc=$?
set -e
[[ $rc == 2 && $msg == *"cannot run the Python interpreter 'false'"*"HEXCG_PYTHON=false"* ]] || { echo "failing probe: rc $rc, '$msg'"; exit 1; }
# --predict beside a pmg case is refused before any run: the model is Jacobi-PCG's
set +e
msg=$("$ROOT/jobs/scaling.sh" strong --ranks 1 --predict --hexcg "$HEXCG" --set order=2 \
  --set "mesh.elements=[2, 2, 2]" --out "$OUT/pred" 2>&1 >/dev/null); rc=$?
set -e
[[ $rc == 2 && $msg == *"models a Jacobi-PCG iteration"*"'pmg'"* ]] || { echo "--predict with pmg: rc $rc, '$msg'"; exit 1; }
[[ ! -e $OUT/pred/strong/np1 ]] || { echo "--predict with pmg ran anyway"; exit 1; }
if "$ROOT/jobs/scaling.sh" sideways --hexcg "$HEXCG" 2>/dev/null; then echo "bad mode accepted"; exit 1; fi
if "$ROOT/jobs/scaling.sh" weak --ranks 1,3 --hexcg "$HEXCG" --out "$OUT" 2>/dev/null; then
  echo "weak scaling on 1,3 ranks accepted"; exit 1
fi
echo "scaling scripts ok"
