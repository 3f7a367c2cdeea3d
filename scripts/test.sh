#!/usr/bin/env bash
# Build hexcg with warnings as errors and run the whole test suite (ctest).
#   scripts/test.sh                 # everything (gpu tests skip without a device)
#   scripts/test.sh --sanitize      # ASan + UBSan build in build-asan/
#   scripts/test.sh --memcheck      # no rebuild: the tests of the existing build
#                                   # (HEXCG_BUILD_DIR, default build/) with every
#                                   # "cpu" backend replaced by "cpu-memcheck"
#   scripts/test.sh -- -L unit      # pass options to ctest after --
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SAN=0
MEMCHECK=0
CTEST_ARGS=()
while (($#)); do
  case $1 in
    --sanitize) SAN=1 ;;
    --memcheck) MEMCHECK=1 ;;
    --) shift; CTEST_ARGS=("$@"); break ;;
    *) echo "test.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if ((MEMCHECK)); then
  # host/device synchronisation bugs without a GPU (docs/developer.md "cpu-memcheck")
  export HEXCG_BUILD_DIR=${HEXCG_BUILD_DIR:-$ROOT/build}
  [[ -f $HEXCG_BUILD_DIR/CTestTestfile.cmake ]] || {
    echo "test.sh --memcheck: no build in $HEXCG_BUILD_DIR (run scripts/build.sh first)" >&2
    exit 2
  }
  export HEXCG_BACKEND_CPU=cpu-memcheck
elif ((SAN)); then
  export HEXCG_BUILD_DIR=${HEXCG_BUILD_DIR:-$ROOT/build-asan}
  # hwloc's plugins (libhwloc-plugins, which Open MPI's packages bring) are
  # dlopened by MPICH's hwloc at MPI_Init and leak inside modules unloaded at
  # exit: LeakSanitizer reports them as leaks of an "<unknown module>" in every
  # MPI test. An empty plugin folder keeps them out (as the GPU bundle does).
  mkdir -p "$HEXCG_BUILD_DIR/no-hwloc-plugins"
  export HWLOC_PLUGINS_PATH=$HEXCG_BUILD_DIR/no-hwloc-plugins
  export HEXCG_BUILD_TYPE=${HEXCG_BUILD_TYPE:-RelWithDebInfo}
  # without CUDA: faster, and it exercises the build that refuses "cuda" as not compiled in
  "$ROOT/scripts/build.sh" -DHEXCG_WERROR=ON -DHEXCG_SANITIZE=ON -DHEXCG_CUDA=OFF
else
  export HEXCG_BUILD_DIR=${HEXCG_BUILD_DIR:-$ROOT/build}
  "$ROOT/scripts/build.sh" -DHEXCG_WERROR=ON
fi
cd "$HEXCG_BUILD_DIR"
rc=0
ctest --output-on-failure -j "$(nproc)" "${CTEST_ARGS[@]}" || rc=$?
# ctest does not show why a test skipped: print the reasons the tests gave.
log=Testing/Temporary/LastTest.log
if [[ -f $log ]] && grep -q "^SKIP:" "$log"; then
  echo "skip reasons:"
  grep "^SKIP:" "$log" | sort | uniq -c
fi
exit $rc
