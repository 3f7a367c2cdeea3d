#!/usr/bin/env bash
# jobs/heat.sbatch under a real (local, one-node) Slurm (scripts/slurm_local.sh,
# as tests/app/check_slurm.sh): the job runs a small transient case on 2
# tasks; once it has solved step 10 it gets SIGUSR1 through Slurm (`scancel
# --signal=USR1`: to the job step, as --signal=USR1@120 sends it), hexcg
# finishes the step and exits 5, the script requeues the job with a real
# `scontrol requeue`, and the requeued job continues with --restart to the
# end. Checked: the job completes after one requeue, its log shows both
# starts, and the output folder holds the uninterrupted run's steps.csv rows,
# series files and final solution bits (an mpiexec run of the same case).
# The daemons are always stopped (tests/common/slurm_session.sh).
#   check_slurm_heat.sh HEXCG MPIEXEC OUT      exit 77 (skip) without Slurm's daemons or root
set -euo pipefail
HEXCG=$1; MPIEXEC=$2; OUT=$3; ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# the watchdog stops the daemons after 170 s even if this script is killed (ctest: 150 s)
source "$ROOT/tests/common/slurm_session.sh"
slurm_session "$OUT" 170 scancel

fail() {
  echo "FAIL: $*"
  for f in "$OUT"/*.out; do [[ -f $f ]] && { echo "--- $f"; tail -30 "$f"; }; done
  tail -5 "$CL/log/slurmctld.log" "$CL/log/slurmd.log" 2>/dev/null || true
  exit 1
}
state_of() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }

cat >"$OUT/heat.yaml" <<'YAML'
mesh: {type: box, elements: [3, 3, 3]}
order: 5
time: {scheme: bdf2, dt: 0.00012, steps: 1000, initial: exact, output_every: 100}
problem:
  rhs: "(3*pi^2 - 1)*exp(-t)*sin(pi*x)*sin(pi*y)*sin(pi*z) - sin(t)*(x*y + z)"
  exact: "exp(-t)*sin(pi*x)*sin(pi*y)*sin(pi*z) + cos(t)*(x*y + z)"
  boundary:
    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}
solver: {tol: 1.0e-10, projection: 8}
preconditioner: {type: jacobi}
YAML
export HEXCG_CASE=$OUT/heat.yaml HEXCG_OUT=$OUT/job HEXCG_BIN=$HEXCG HEXCG_ROOT=$ROOT OMP_NUM_THREADS=1
T0=$SECONDS
ID=$(cd "$ROOT" && sbatch --parsable --ntasks=2 --time=00:05:00 --output="$OUT/heat-%j.out" jobs/heat.sbatch) ||
  fail "sbatch jobs/heat.sbatch refused"
LOG=$OUT/heat-$ID.out
# SIGUSR1 once step 10 is solved (the job prints one line per step; 1000
# steps of about 3 ms each leave the signal seconds to arrive: with 60 the
# job had finished before it)
until grep -q '^step 10 ' "$LOG" 2>/dev/null; do
  ((SECONDS - T0 < 60)) || { scancel "$ID" || true; fail "job $ID did not reach step 10 in 60 s ($(state_of "$ID"))"; }
  # one query per pass, and only an ending state fails: scontrol can answer
  # nothing for a moment on a loaded host (CI's ASan pass read "" then RUNNING)
  st=$(state_of "$ID")
  case $st in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE)
    fail "job $ID ended $st before step 10" ;;
  esac
  sleep 0.2
done
scancel --signal=USR1 "$ID" || fail "scancel --signal=USR1 $ID"
started=0
while :; do
  st=$(state_of "$ID")
  [[ $st == COMPLETED ]] && break
  # Slurm holds a requeued job for the credential lifetime (cred_expire, 120 s
  # by default: Reason=BeginTime); make it eligible at once
  if ((!started)) && [[ $st == PENDING ]] && grep -q "requeueing job $ID" "$LOG"; then
    scontrol update JobId="$ID" StartTime=now || fail "scontrol update StartTime=now"
    started=1
  fi
  case $st in FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) fail "job $ID ended $st" ;; esac
  ((SECONDS - T0 < 130)) || { scancel "$ID" || true; fail "job $ID not completed in 130 s ($st)"; }
  sleep 1
done
grep -q "checkpointed in $OUT/job/checkpoint; requeueing job $ID" "$LOG" || fail "no requeue in the log"
grep -q "interrupted by SIGUSR1 after step" "$LOG" || fail "hexcg did not report SIGUSR1"
grep -q "(start 1) .*--restart $OUT/job" "$LOG" || fail "the requeued start did not continue with --restart"
grep -q "hexcg heat: finished; results in $OUT/job" "$LOG" || fail "the requeued job did not finish"
scontrol show job "$ID" | grep -q 'Restarts=1' || fail "Slurm does not count one restart"

"$MPIEXEC" -n 2 "$HEXCG" run "$OUT/heat.yaml" --output "$OUT/ref" --quiet || fail "the uninterrupted run failed"
/usr/bin/python3 - "$OUT/job" "$OUT/ref" <<'PY' || fail "the requeued job's outputs are not the uninterrupted run's"
import csv, os, sys
job, ref = sys.argv[1:]
rows = lambda d: [{k: v for k, v in r.items() if k not in ("seconds", "projection_s", "run_id")}
                  for r in csv.DictReader(open(f"{d}/steps.csv"))]
u0 = lambda d: [l for l in open(f"{d}/checkpoint/checkpoint.yaml") if l.startswith("u_0:")]
assert rows(job) == rows(ref) and len(rows(job)) == 999, (len(rows(job)), len(rows(ref)))
assert sorted(os.listdir(f"{job}/series")) == sorted(os.listdir(f"{ref}/series")), os.listdir(f"{job}/series")
assert u0(job) == u0(ref), (u0(job), u0(ref))
assert open(f"{job}/solution.xdmf").read() == open(f"{ref}/solution.xdmf").read()
PY
echo "slurm heat job ok ($((SECONDS - T0)) s: signalled after step 10, requeued once, the uninterrupted outputs)"
