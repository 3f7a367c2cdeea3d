#!/usr/bin/env bash
# jobs/strong.sbatch and jobs/weak.sbatch under a real (local, one-node) Slurm:
# scripts/slurm_local.sh starts munged/slurmctld/slurmd in OUT/cluster, both
# jobs are submitted with sbatch on 2 tasks with a tiny case (2^3 elements,
# order 2, ranks 1,2), waited for (bounded), and their collected results
# checked: a scaling.csv with one row per rank count whose summaries count
# the ranks asked for (srun started real MPI jobs), the plots, CPU binding
# in the job log; a job given a wrong option fails with a clear message.
# The daemons are always stopped (tests/common/slurm_session.sh).
#   check_slurm.sh HEXCG OUT      exit 77 (skip) without Slurm's daemons or root
set -euo pipefail
# the jobs find their python by the project's rule (scripts/python.sh: HEXCG_PYTHON, else
# /usr/bin/python3, else PATH's), checked for matplotlib before the runs: not set here
HEXCG=$1; OUT=$2; ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# the watchdog stops the daemons after 150 s even if this script is killed (ctest: 120 s)
source "$ROOT/tests/common/slurm_session.sh"
slurm_session "$OUT" 150
unset OMP_NUM_THREADS
export HEXCG_CPU_BIND=verbose,cores # srun reports each task's mask in the job log

fail() {
  echo "FAIL: $*"
  for f in "$OUT"/*.out; do [[ -f $f ]] && { echo "--- $f"; tail -20 "$f"; }; done
  tail -5 "$CL/log/slurmctld.log" "$CL/log/slurmd.log" 2>/dev/null || true
  exit 1
}
submit() { # name sbatch-script args...
  local name=$1 script=$2; shift 2
  (cd "$ROOT" && sbatch --parsable --ntasks=2 --time=00:03:00 --output="$OUT/$name-%j.out" \
     "$script" --hexcg "$HEXCG" "$@") || fail "sbatch $script refused"
}
state_of() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
wait_job() { # id limit_s -> prints the final state
  local id=$1 t0=$SECONDS st
  while :; do
    st=$(state_of "$id")
    case $st in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED) echo "$st"; return ;; esac
    if ((SECONDS - t0 > $2)); then scancel "$id" || true; echo "WAITED_OUT($st)"; return; fi
    sleep 1
  done
}

T0=$SECONDS
SIZE=(--ranks 1,2 --elements 2x2x2 --order 2)
S=$(submit strong jobs/strong.sbatch "${SIZE[@]}" --out "$OUT/series")
W=$(submit weak jobs/weak.sbatch "${SIZE[@]}" --out "$OUT/series")
B=$(submit bad jobs/strong.sbatch --size huge)
# a Gmsh case (fixed elements): weak scaling by order, no --elements
G=$(submit gmsh jobs/weak.sbatch --ranks 1,2 --order 2 --case configs/gmsh_two_materials.yaml --out "$OUT/gmsh")
for id in "$S" "$W" "$G"; do
  st=$(wait_job "$id" 90)
  [[ $st == COMPLETED ]] || fail "job $id ended $st"
done
st=$(wait_job "$B" 30)
[[ $st == FAILED ]] || fail "the job with a wrong option ended $st, not FAILED"
grep -q "unknown option '--size'" "$OUT"/bad-"$B".out || fail "no clear message for the wrong option"
scontrol show job "$B" | grep -q 'ExitCode=2:0' || fail "wrong option: exit code is not 2"

for id in "$S" "$W"; do
  f=$(ls "$OUT"/*-"$id".out)
  grep -q "scaling: job $id on .*, 2 tasks, ranks 1,2" "$f" || fail "job $id: no start line"
  # the 2-rank run: two tasks, each bound to one core of its own
  masks=$(grep -o 'task  *[01]  *[01] \[[0-9]*\]: mask 0x[0-9a-f]* set' "$f" | awk '{print $NF=="set" ? $(NF-1) : ""}' | sort -u | wc -l)
  ((masks >= 2)) || fail "job $id: no per-task CPU binding in the log (srun --cpu-bind=verbose,cores)"
done
/usr/bin/python3 - "$OUT/series" "$ROOT/tests/app" <<'PY'
import os, sys
out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from scaling_series import series_rows
for mode in series_rows(out):
    for png in ("scaling.png", "setup.png", "time_split.png"):
        assert os.path.getsize(f"{out}/{mode}/{png}") > 1000, (mode, png)
PY
/usr/bin/python3 - "$OUT/gmsh" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(f"{sys.argv[1]}/weak/scaling.csv")))
assert [(r["ranks"], r["order"], r["elements"]) for r in rows] == [("1", "2", "2"), ("2", "3", "2")], rows
PY
echo "slurm jobs ok ($((SECONDS - T0)) s for the jobs)"
