#!/usr/bin/env bash
# The smoother x cycle study of docs/preconditioner.md: every pmg smoother
# type under the multiplicative and the additive cycle, with Jacobi-PCG and
# the two-level asm as references, on the unit box and the Kershaw mesh at
# p = 3 and p = 7. Prints one markdown table per block (iterations; seconds
# of setup + solve from summary.yaml). Iteration counts are exact; the
# seconds depend on the machine's load.
#   scripts/pmg_study.sh [HEXCG_BINARY] [RANKS]
# Environment: STUDY_BLOCKS (default "box:3 box:7 kershaw:3 kershaw:7"),
# STUDY_OUT (scratch folder, default /tmp/hexcg-pmg-study).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${1:-$ROOT/build/hexcg}
NP=${2:-2}
OUT=${STUDY_OUT:-/tmp/hexcg-pmg-study}
BLOCKS=${STUDY_BLOCKS:-"box:3 box:7 kershaw:3 kershaw:7"}
MPIEXEC=$(command -v mpiexec.mpich || command -v mpiexec)
[[ -x $BIN ]] || { echo "pmg_study.sh: $BIN is not an executable (build first: scripts/build.sh)" >&2; exit 1; }
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

# run LABEL CONFIG SETS... -> prints "iterations; seconds" (or "no conv (N)")
run() {
  local tag=$1 cfg=$2; shift 2
  local dir="$OUT/$tag" args=()
  for s in "$@"; do args+=(--set "$s"); done
  if ! "$MPIEXEC" -n "$NP" "$BIN" run "$ROOT/configs/$cfg" "${args[@]}" \
      --set output.solution=false --set "output.dir=$dir" --set solver.max_iterations=1000 \
      --force >"$OUT/$tag.log" 2>&1; then
    local it
    it=$(awk '/^  iterations:/{print $2}' "$dir/summary.yaml" 2>/dev/null || true)
    echo "not converged (${it:-?})"; return
  fi
  awk '/^  iterations:/{it=$2} /^  setup:/{s=$2} /^  solve:/{v=$2}
       END{printf "%d; %.2f s\n", it, s+v}' "$dir/summary.yaml"
}

for blk in $BLOCKS; do
  mesh=${blk%%:*} p=${blk##*:}
  if [[ $mesh == box ]]; then
    cfg=pmg_box.yaml; geo=(order=$p preconditioner.levels=auto 'mesh.elements=[8,8,8]')
    title="Unit box, 8^3 elements, p = $p"
  else
    cfg=kershaw_pmg.yaml; geo=(order=$p preconditioner.levels=auto 'mesh.elements=[6,6,6]')
    title="Kershaw eps 0.3, 6^3 elements, p = $p"
  fi
  echo
  echo "$title ($NP ranks, tol 1e-8, exp(x y z)):"
  echo
  echo "| smoother | multiplicative | additive |"
  echo "| --- | --- | --- |"
  for sm in cheby-asm cheby-ras cheby-jacobi asm ras jacobi; do
    solver=pcg; [[ $sm == *ras ]] && solver=fcg
    m=$(run "$mesh$p-$sm-mult" "$cfg" "${geo[@]}" preconditioner.type=pmg \
        preconditioner.cycle=multiplicative "preconditioner.smoother.type=$sm" solver.type=$solver)
    a=$(run "$mesh$p-$sm-add" "$cfg" "${geo[@]}" preconditioner.type=pmg \
        preconditioner.cycle=additive "preconditioner.smoother.type=$sm" solver.type=$solver)
    name=$sm; [[ $solver == fcg ]] && name="$sm (fcg)"
    echo "| $name | $m | $a |"
  done
  echo "| (reference) Jacobi-PCG | $(run "$mesh$p-jacobi" "$cfg" "${geo[@]}" preconditioner.type=jacobi) | |"
  echo "| (reference) asm | $(run "$mesh$p-asm" "$cfg" "${geo[@]}" preconditioner.type=asm) | |"
done
