#!/usr/bin/env bash
# The MPI_THREAD_MULTIPLE fallback: HEXCG_MPI_THREAD_LEVEL=serialized makes
# hexcg request (and MPICH grant) less, as a library without
# MPI_THREAD_MULTIPLE would. --version names the level; pmg's additive
# cycle then runs its coarse solve after the smoothing instead of in a
# thread beside it, says so once, reports overlap: false, and gives the
# same results (hexcg compare --strict) as the overlapped run.
#   check_thread_fallback.sh HEXCG MPIEXEC ROOT OUT
set -euo pipefail
HEXCG=$1; MPIEXEC=$2; ROOT=$3; OUT=$4
rm -rf "$OUT"; mkdir -p "$OUT"
fail() { echo "FAIL: $*"; exit 1; }
v=$(HEXCG_MPI_THREAD_LEVEL=serialized "$HEXCG" --version)
[[ $v == *"MPI threads: MPI_THREAD_SERIALIZED (requested MPI_THREAD_SERIALIZED, HEXCG_MPI_THREAD_LEVEL) - coarse/fine overlap will be serialised"* ]] \
  || fail "--version: $(grep 'MPI threads' <<<"$v")"
w=$(HEXCG_MPI_THREAD_LEVEL=bogus "$HEXCG" --version 2>&1 >/dev/null)
[[ $w == *"HEXCG_MPI_THREAD_LEVEL='bogus' is not single, funneled, serialized or multiple"* ]] || fail "bogus level: '$w'"
S=(--set 'mesh.elements=[2,2,2]' --set order=3 --set preconditioner.levels=auto --set preconditioner.cycle=additive)
export OMP_NUM_THREADS=1
err=$(HEXCG_MPI_THREAD_LEVEL=serialized "$MPIEXEC" -n 2 "$HEXCG" run "$ROOT/configs/pmg_box.yaml" "${S[@]}" \
  --output "$OUT/serial" --quiet 2>&1 >/dev/null) || fail "serialized run failed: $err"
warn="preconditioner.overlap: the MPI library does not provide MPI_THREAD_MULTIPLE; the coarse solve of the additive cycle runs after the smoothing instead of beside it"
[[ $(grep -c "$warn" <<<"$err") == 1 ]] || fail "warning not printed once: '$err'"
err=$("$MPIEXEC" -n 2 "$HEXCG" run "$ROOT/configs/pmg_box.yaml" "${S[@]}" --output "$OUT/multi" --quiet 2>&1 >/dev/null) \
  || fail "multiple run failed: $err"
[[ $err != *"$warn"* ]] || fail "warning with MPI_THREAD_MULTIPLE: '$err'"
grep -q "overlap: false" "$OUT/serial/summary.yaml" || fail "serial summary lacks overlap: false"
grep -q "overlap: true" "$OUT/multi/summary.yaml" || fail "multi summary lacks overlap: true"
"$HEXCG" compare "$OUT/serial" "$OUT/multi" --strict --quiet | grep -q "result: MATCH" \
  || fail "serialised and overlapped runs differ: $("$HEXCG" compare "$OUT/serial" "$OUT/multi" --strict | tail -2)"
echo "thread fallback ok"
