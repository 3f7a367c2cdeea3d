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
#   scripts/test.sh --emu           # the CUDA backend on the CPU emulator in build-emu/
#                                   # (HEXCG_CUDA=EMU): every gpu test and the emulator's
#                                   # own (label cudaemu), lazy mode seed 1, then eager
#                                   # mode seed 2 (docs/developer.md "CUDA emulation")
#   scripts/test.sh --emu-tsan      # the same build with ThreadSanitizer on the emulated
#                                   # CUDA code (build-emu-tsan/): the one-rank gpu tests
#                                   # and the race checks (label cudaemu-tsan)
#   scripts/test.sh -- -L unit      # pass options to ctest after --
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SAN=0
MEMCHECK=0
EMU=0
MPI=mpich
CTEST_ARGS=()
# the Open MPI pass's tests: every MPI test (gather-scatter, solvers,
# preconditioners, the app's runs on 1-3 ranks, the overlap thread) and the
# regression baselines; not the CUDA-only (the build has no CUDA), the slow
# scaling repeats, the long fault/fuzz runs or the Slurm ones (MPICH's
# launcher flags), nor the cpu-memcheck copies (the memcheck pass's), nor
# the mesh readers' bad-file checks (36 launches each of hexcg on 1-2 ranks
# for the readers' messages: rank 0 reads, the others receive its verdict,
# the path the Gmsh reader's checks take here; 110 s under Open MPI's slower
# launcher; the MPICH passes run them).
# About 5 min on 2 cores (7 with a cold compiler cache), docs/developer.md
# "Open MPI pass".
OMPI_TESTS=(-L 'mpi|regression|build' -LE 'gpu|slow|long|slurm|fuzz|fault' -E 'cpu-memcheck|mesh\.(nek|exodus)-bad')
while (($#)); do
  case $1 in
    --sanitize) SAN=1 ;;
    --memcheck) MEMCHECK=1 ;;
    --emu) EMU=1 ;;
    --emu-tsan) EMU=2 ;;
    --mpi) (($# >= 2)) || { echo "test.sh: --mpi needs a name (openmpi)" >&2; exit 2; }; MPI=$2; shift ;;
    --) shift; CTEST_ARGS=("$@"); break ;;
    *) echo "test.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if ((EMU)) && ((SAN || MEMCHECK)) || { ((EMU)) && [[ $MPI != mpich ]]; }; then
  echo "test.sh: --emu/--emu-tsan do not combine with --sanitize, --memcheck or --mpi" >&2
  exit 2
fi
# the emulated passes: which tests, and the modes and seeds of each run
EMU_RUNS=()
if ((EMU == 1)); then
  export HEXCG_BUILD_DIR=${HEXCG_BUILD_DIR:-$ROOT/build-emu}
  "$ROOT/scripts/build.sh" -DHEXCG_WERROR=ON -DHEXCG_CUDA=EMU -DHEXCG_CUDAEMU_TSAN=OFF
  ((${#CTEST_ARGS[@]})) || CTEST_ARGS=(-L '^(gpu|cudaemu)$')
  EMU_RUNS=("lazy 1" "eager 2")
elif ((EMU == 2)); then
  export HEXCG_BUILD_DIR=${HEXCG_BUILD_DIR:-$ROOT/build-emu-tsan}
  "$ROOT/scripts/build.sh" -DHEXCG_WERROR=ON -DHEXCG_CUDA=EMU -DHEXCG_CUDAEMU_TSAN=ON
  # one rank (TSan follows one process), eager mode: the streams' workers,
  # the host and hypre's coarse thread run at once; TSan exits 66 on a report
  # Which tests: TSan's cost grows with the fibers it tracks (a 1024-thread
  # block's barrier is a million clock operations), so whole solves take
  # 2-5+ min each under it (2026-12-06: t500-poly 285 s, t540-fused and
  # t103-queue over 300 s). The pass runs the one-rank kernel-level gpu
  # tests, which reach every kernel, barrier and stream of kernels/cuda and
  # gs/cuda (operator, FDM, tensor, streams and deferred reductions,
  # gather-scatter, diagonal, asm's overlapped coarse solve), and the race
  # checks: about 5 min on 2 cores. docs/developer.md "CUDA emulation".
  TSAN_TESTS='^(cudaemu\..*|ax\.t11[0-46]-.*\.cuda|kernels\.t10[05789]-.*\.cuda|gs\.t140-gs\.cuda\.np1'
  TSAN_TESTS+='|precond\.t320-fdm-(sym|fp32)\.cuda|precond\.t310-(asm|asm-fp32|jacobi)\.cuda\.np1'
  TSAN_TESTS+='|disc\.t52[01]-.*\.cuda|solver\.t500-(breakdown|sym)\.cuda|stream\.t15[03]-.*\.cuda)$'
  ((${#CTEST_ARGS[@]})) || CTEST_ARGS=(-L '^(gpu|cudaemu-tsan)$' -LE 'mpi|e2e' -R "$TSAN_TESTS")
  EMU_RUNS=("eager 3")
  export TSAN_OPTIONS=${TSAN_OPTIONS:-"second_deadlock_stack=1 history_size=4"}
  # UCX's memory hooks (MPICH's ch4:ucx) intercept madvise at thread exit,
  # where TSan's thread state is gone: a segfault in every run under mpiexec
  export UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_MALLOC_HOOKS=no
fi
if ((EMU)); then
  # the emulator runs kernels on one thread while OpenMP's idle workers would
  # spin on the other core (30 % of an emulated run's cycles in libgomp)
  export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
  cd "$HEXCG_BUILD_DIR"
  rc=0
  for run in "${EMU_RUNS[@]}"; do
    read -r mode seed <<<"$run"
    echo "[test] CUDA emulator: HEXCG_CUDAEMU_MODE=$mode HEXCG_CUDAEMU_SEED=$seed"
    HEXCG_CUDAEMU_MODE=$mode HEXCG_CUDAEMU_SEED=$seed \
      ctest --output-on-failure -j "$(nproc)" "${CTEST_ARGS[@]}" 2>&1 | tee emu-ctest.log
    ((PIPESTATUS[0] == 0)) || rc=1
    # under the emulator a device always exists: a gpu test that skips is a failure
    if grep -qE '\*\*\*Skipped|Not Run' emu-ctest.log; then
      echo "[test] CUDA emulator: tests skipped although the emulated device exists:" >&2
      grep -E '\*\*\*Skipped|Not Run' emu-ctest.log >&2
      rc=1
    fi
  done
  exit $rc
fi
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
  # HEXCG_CUDA named: a folder that `build.sh --app` configured without CUDA
  # (no device) gets the CUDA backend back (compiled, its tests skip)
  "$ROOT/scripts/build.sh" -DHEXCG_WERROR=ON -DHEXCG_CUDA="${HEXCG_CUDA:-AUTO}"
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
