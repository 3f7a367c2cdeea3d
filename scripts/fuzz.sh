#!/usr/bin/env bash
# Build the libFuzzer targets (tests/fuzz, clang + ASan + UBSan) and fuzz each
# for a while; report executions, coverage and findings per target.
#   scripts/fuzz.sh [--time SECONDS] [--jobs N] [--no-build] [target ...]
#     targets: case expr gmsh exodus compare h5 nek (default: all)
#     --time  seconds per target (default 60)
#     --jobs  targets fuzzed at once (default 1)
# Environment: HEXCG_FUZZ_BUILD_DIR (default build-fuzz), HEXCG_FUZZ_WORK
# (default $HEXCG_FUZZ_BUILD_DIR/fuzz-work): per target its growing corpus
# (corpus/), findings (artifacts/) and libFuzzer logs; log.tsv there gains
# one row per run (date, target, seconds run, executions, coverage edges,
# features, corpus size, findings), so repeated runs add up.
# Exit status 1 when a run found a crash, hang, leak or sanitizer report
# (docs/developer.md "Fuzzing" says how to turn it into a test).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TIME=60
JOBS=1
BUILD_IT=1
TARGETS=()
while (($#)); do
  case $1 in
    --time) TIME=$2; shift ;;
    --jobs) JOBS=$2; shift ;;
    --no-build) BUILD_IT=0 ;;
    case|expr|gmsh|exodus|compare|h5|nek) TARGETS+=("$1") ;;
    *) echo "fuzz.sh: unknown option or target '$1' (targets: case expr gmsh exodus compare h5 nek)" >&2; exit 2 ;;
  esac
  shift
done
((${#TARGETS[@]})) || TARGETS=(case expr gmsh exodus compare h5 nek)
BUILD=${HEXCG_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
WORK=${HEXCG_FUZZ_WORK:-$BUILD/fuzz-work}

if ((BUILD_IT)); then
  command -v clang >/dev/null || { echo "fuzz.sh: clang not found (scripts/bootstrap.sh installs it)" >&2; exit 2; }
  boot=$("$ROOT/scripts/bootstrap.sh" | tail -1)
  # shellcheck source=scripts/ccache_env.sh
  source "$ROOT/scripts/ccache_env.sh"
  mkdir -p "$BUILD"
  echo "[fuzz] configuring $BUILD" >&2
  # MPICH's wrappers by name (the top-level CMakeLists no longer assumes MPICH)
  cmake -S "$ROOT" -B "$BUILD" -DHYPRE_ROOT="${boot#HYPRE_ROOT=}" -DCMAKE_C_COMPILER=clang "${CCACHE_LAUNCH[@]}" \
    -DMPI_C_COMPILER=/usr/bin/mpicc.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich \
    -DHDF5_C_COMPILER_EXECUTABLE=/usr/bin/h5pcc.mpich \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEXCG_FUZZ=ON -DHEXCG_CUDA=OFF >"$BUILD/configure.log" 2>&1 \
    || { cat "$BUILD/configure.log" >&2; exit 1; }
  echo "[fuzz] compiling" >&2
  cmake --build "$BUILD" -j "$(nproc)" --target "${TARGETS[@]/#/fuzz-}" >"$BUILD/build.log" 2>&1 \
    || { tail -40 "$BUILD/build.log" >&2; exit 1; }
fi

# the longest input worth trying per target (bytes)
declare -A MAXLEN=([case]=4096 [expr]=1024 [gmsh]=16384 [exodus]=20000 [compare]=8192 [h5]=512 [nek]=32768)
declare -A DICT=([case]=case [expr]=expr [gmsh]=gmsh [compare]=compare)
# libmatheval's parser leaks on every syntax error (suppressed, core/error.c),
# and libFuzzer's per-input leak check then scans the heap each time: 100
# instead of 12,000 inputs/s. expr checks leaks at exit only (its replay test
# under ASan checks them too).
declare -A EXTRA=([expr]=-detect_leaks=0)

run_one() {
  local t=$1 w=$WORK/$1
  mkdir -p "$w/corpus" "$w/artifacts"
  local dict=()
  [[ -n ${DICT[$t]:-} ]] && dict=(-dict="$ROOT/tests/fuzz/dict/${DICT[$t]}.dict")
  local log="$w/run-$(date -u +%Y%m%dT%H%M%S).log"
  local before
  before=$(find "$w/artifacts" -type f | wc -l)
  local t0=$SECONDS
  # -timeout: one input over 10 s is a hang; -rss_limit_mb: a reader that
  # allocates what the file declares instead of what it holds is caught
  [[ -n ${EXTRA[$t]:-} ]] && dict+=("${EXTRA[$t]}")
  # exodus, nek: the real files of ../shared/meshes/ seed them too (read there, read only,
  # never copied into the repository)
  local SEEDS=()
  [[ $t == exodus && -d $ROOT/../shared/meshes/exodus ]] && SEEDS=("$ROOT/../shared/meshes/exodus")
  [[ $t == nek && -d $ROOT/../shared/meshes/nek ]] && SEEDS=("$ROOT/../shared/meshes/nek")
  (cd "$w" && "$BUILD/tests/fuzz-$t" "${dict[@]}" -max_total_time="$TIME" -timeout=10 -rss_limit_mb=2048 \
    -max_len="${MAXLEN[$t]}" -print_final_stats=1 -artifact_prefix="$w/artifacts/" \
    "$w/corpus" "$ROOT/tests/fuzz/corpus/$t" "${SEEDS[@]}" >"$log" 2>&1) || true
  local secs=$((SECONDS - t0)) execs cov ft units found
  execs=$(awk '/stat::number_of_executed_units/{print $2}' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  units=$(find "$w/corpus" -type f | wc -l)
  found=$(($(find "$w/artifacts" -type f | wc -l) - before))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$secs" "${execs:-0}" "${cov:-0}" \
    "${ft:-0}" "$units" "$found" >>"$WORK/log.tsv"
  printf '%-8s %6ss %12s execs %7s edges %7s features %6s inputs %3s findings  (log %s)\n' "$t" "$secs" \
    "${execs:-0}" "${cov:-0}" "${ft:-0}" "$units" "$found" "$log"
  ((found == 0)) || { grep -E "ERROR|SUMMARY|fuzz_|error:" "$log" | head -5; return 1; }
}

mkdir -p "$WORK"
rc=0
pids=()
for t in "${TARGETS[@]}"; do
  run_one "$t" &
  pids+=($!)
  if ((${#pids[@]} >= JOBS)); then
    wait "${pids[0]}" || rc=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || rc=1; done
echo "[fuzz] totals per target (all runs in $WORK/log.tsv): seconds, executions, last coverage" >&2
awk -F'\t' '{s[$2]+=$3; e[$2]+=$4; c[$2]=$5; f[$2]+=$8} END {for (t in s) printf "  %-8s %7d s %12d execs %7d edges %3d findings\n", t, s[t], e[t], c[t], f[t]}' \
  "$WORK/log.tsv" | sort >&2
exit $rc
