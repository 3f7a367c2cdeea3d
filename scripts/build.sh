#!/usr/bin/env bash
# Install the dependencies (scripts/bootstrap.sh), configure and build hexcg.
#   scripts/build.sh [extra cmake -D options]
# Environment: HEXCG_BUILD_DIR (default: build), HEXCG_BUILD_TYPE (Release),
# HEXCG_CCACHE=0 (no compiler cache; scripts/ccache_env.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${HEXCG_BUILD_DIR:-$ROOT/build}
boot=$("$ROOT/scripts/bootstrap.sh" | tail -1)
[[ $boot == HYPRE_ROOT=* ]] || { echo "build.sh: bootstrap did not report HYPRE_ROOT" >&2; exit 1; }
HYPRE_ROOT=${boot#HYPRE_ROOT=}
# shellcheck source=scripts/ccache_env.sh
source "$ROOT/scripts/ccache_env.sh"
mkdir -p "$BUILD"
echo "[build] configuring $BUILD" >&2
cmake -S "$ROOT" -B "$BUILD" -DHYPRE_ROOT="$HYPRE_ROOT" "${CCACHE_LAUNCH[@]}" \
  -DCMAKE_BUILD_TYPE="${HEXCG_BUILD_TYPE:-Release}" "$@" >"$BUILD/configure.log" 2>&1 \
  || { cat "$BUILD/configure.log" >&2; echo "[build] configure failed (log: $BUILD/configure.log)" >&2; exit 1; }
grep -E "^-- hexcg:" "$BUILD/configure.log" >&2 || true
echo "[build] compiling" >&2
cmake --build "$BUILD" -j "$(nproc)"
echo "[build] done: $BUILD/hexcg" >&2
