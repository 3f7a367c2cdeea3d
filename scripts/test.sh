#!/usr/bin/env bash
# Build hexcg with warnings as errors and run the whole test suite (ctest).
#   scripts/test.sh                 # everything (gpu tests skip without a device)
#   scripts/test.sh --sanitize      # ASan + UBSan build in build-asan/
#   scripts/test.sh --memcheck      # no rebuild: the tests of the existing build
#                                   # (HEXCG_BUILD_DIR, default build/) with every
#                                   # "cpu" backend replaced by "cpu-memcheck"
#   scripts/test.sh --mpi openmpi   # the second MPI stack in build-ompi/: Debian's
#                                   # Open MPI, its HDF5 and Debian's hypre (no
#                                   # bootstrap hypre, found by CMake), CUDA off;
#                                   # runs the MPI tests (1-3 ranks) and the
#                                   # regression label (residual histories against
#                                   # the MPICH baselines): OMPI_TESTS below
#   scripts/test.sh -- -L unit      # pass options to ctest after --
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SAN=0
MEMCHECK=0
MPI=mpich
CTEST_ARGS=()
# the Open MPI pass's tests: every MPI test (gather-scatter, solvers,
# preconditioners, the app's runs on 1-3 ranks, the overlap thread) and the
# regression baselines; not the CUDA-only (the build has no CUDA), the slow
# scaling repeats, the long fault/fuzz runs or the Slurm ones (MPICH's
# launcher flags), nor the cpu-memcheck copies (the memcheck pass's). About
# 5 min on 2 cores (7 with a cold compiler cache), docs/developer.md
# "Open MPI pass".
OMPI_TESTS=(-L 'mpi|regression|build' -LE 'gpu|slow|long|slurm|fuzz|fault' -E 'cpu-memcheck')
while (($#)); do
  case $1 in
    --sanitize) SAN=1 ;;
    --memcheck) MEMCHECK=1 ;;
    --mpi) (($# >= 2)) || { echo "test.sh: --mpi needs a name (openmpi)" >&2; exit 2; }; MPI=$2; shift ;;
    --) shift; CTEST_ARGS=("$@"); break ;;
    *) echo "test.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [[ $MPI != mpich ]]; then
  [[ $MPI == openmpi ]] || { echo "test.sh: --mpi takes openmpi (MPICH is the default build)" >&2; exit 2; }
  ((SAN || MEMCHECK)) && { echo "test.sh: --mpi openmpi does not combine with --sanitize/--memcheck" >&2; exit 2; }
  export HEXCG_BUILD_DIR=${HEXCG_BUILD_DIR:-$ROOT/build-ompi}
  HEXCG_MPI=openmpi "$ROOT/scripts/build.sh" -DHEXCG_WERROR=ON -DHEXCG_CUDA=OFF
  ((${#CTEST_ARGS[@]})) || CTEST_ARGS=("${OMPI_TESTS[@]}")
elif ((MEMCHECK)); then
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
