#!/usr/bin/env bash
# The per-step cost of a time-dependent run against a cold steady run of the
# same problem (docs/log/performance.md, "A time step against a cold run"; issue
# 30's target: a step after the first < 0.5x of the cold run, setup
# included): configs/heat_cost.yaml with projection 8 and 0 and
# configs/heat_cost_steady.yaml, alternated run by run (A B C A B C ...), 1
# rank x 1 thread. Prints a markdown table: min-max over the runs of the cold
# run's wall time (process start to exit), the first step and a later step
# (summary.yaml time.first_step_s, time.step_s), the later step's share of
# the cold run, the iterations per step and the projection's seconds.
#   scripts/heat_cost.sh [HEXCG_BINARY] [RUNS (default 3)]
# Environment: HEAT_COST_OUT (scratch, default /tmp/hexcg-heat-cost).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/python.sh
source "$ROOT/scripts/python.sh" # the project's python: HEXCG_PYTHON, /usr/bin/python3, PATH's
BIN=${1:-$ROOT/build/hexcg}
RUNS=${2:-3}
OUT=${HEAT_COST_OUT:-/tmp/hexcg-heat-cost}
[[ -x $BIN ]] || { echo "heat_cost.sh: $BIN is not an executable (build first: scripts/build.sh)" >&2; exit 1; }
mkdir -p "$OUT"
export OMP_NUM_THREADS=1
key() { sed -n "s/^  $1: //p" "$2/summary.yaml" | head -1; }
rm -f "$OUT/cold" "$OUT/p8" "$OUT/p0"
for ((i = 0; i < RUNS; i++)); do
  for K in 8 0; do
    "$BIN" run "$ROOT/configs/heat_cost.yaml" --output "$OUT/heat$K" --force --quiet --set solver.projection=$K
    echo "$(key first_step_s "$OUT/heat$K") $(key step_s "$OUT/heat$K") $(key iterations_per_step "$OUT/heat$K")" \
      "$(key projection_s "$OUT/heat$K")" >>"$OUT/p$K"
  done
  t0=$(date +%s.%N)
  "$BIN" run "$ROOT/configs/heat_cost_steady.yaml" --output "$OUT/steady" --force --quiet
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{print $2 - $1}' >>"$OUT/cold"
done
"$HX_PY" - "$OUT" <<'PY'
import sys
out = sys.argv[1]
cold = [float(x) for x in open(f"{out}/cold").read().split()]
rows = {K: [list(map(float, l.split())) for l in open(f"{out}/p{K}") if l.strip()] for K in (8, 0)}
rng = lambda v: f"{min(v):.3g}-{max(v):.3g}"
print(f"runs: {len(cold)} of each, alternated; cold steady run {rng(cold)} s (wall)")
print("| | seconds | against the cold run |\n| --- | --- | --- |")
print(f"| cold steady `hexcg run` (wall, process start to exit) | {rng(cold)} | 1 |")
print(f"| first step (preconditioner setup included) | {rng([r[0] for r in rows[8]])} | |")
for K in (8, 0):
    st = [r[1] for r in rows[K]]
    share = [s / c for s, c in zip(st, cold)]
    print(f"| a later step, projection {K} ({rows[K][0][2]:.3g} iterations per step, projection "
          f"{rng([r[3] / 20 for r in rows[K]])} s per step) | {rng(st)} | {rng(share)} |")
PY
