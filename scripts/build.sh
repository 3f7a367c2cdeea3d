#!/usr/bin/env bash
# Install the dependencies (scripts/bootstrap.sh), configure and build hexcg.
#   scripts/build.sh [--app] [extra cmake -D options]
# --app: what running needs, no more (the README's first command): the hexcg
#   executable only (the test suite's executables are built by
#   scripts/test.sh), and the CUDA backend only where an NVIDIA device is
#   present or a -DHEXCG_CUDA=... option asks for it (nvcc on a machine
#   without a GPU about doubles the build).
# Environment: HEXCG_BUILD_DIR (default: build), HEXCG_BUILD_TYPE (Release),
# HEXCG_CCACHE=0 (no compiler cache; scripts/ccache_env.sh),
# HEXCG_MPI=mpich (default: MPICH and the hypre bootstrap.sh builds for it)
#   or openmpi (Debian's Open MPI, its HDF5 and Debian's hypre, found by
#   CMake's own search: no HYPRE_ROOT; default folder build-ompi).
# On another system (a cluster, Spack, modules) call CMake directly:
# docs/cluster.md.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
APP=0
if [[ ${1:-} == --app ]]; then
  APP=1
  shift
fi
MPI=${HEXCG_MPI:-mpich}
case $MPI in
  mpich)
    BUILD=${HEXCG_BUILD_DIR:-$ROOT/build}
    BOOT=()
    ((APP)) && BOOT=(--app) # the packages to build and run; scripts/test.sh installs the rest
    boot=$("$ROOT/scripts/bootstrap.sh" "${BOOT[@]}" | tail -1)
    [[ $boot == HYPRE_ROOT=?* ]] || { echo "build.sh: bootstrap did not report HYPRE_ROOT" >&2; exit 1; }
    # Debian has both MPIs once the Open MPI stack is installed: name MPICH's
    # compiler, launcher and HDF5 wrapper
    DEPS=(-DHYPRE_ROOT="${boot#HYPRE_ROOT=}" -DMPI_C_COMPILER=/usr/bin/mpicc.mpich
          -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich -DHDF5_C_COMPILER_EXECUTABLE=/usr/bin/h5pcc.mpich) ;;
  openmpi)
    BUILD=${HEXCG_BUILD_DIR:-$ROOT/build-ompi}
    "$ROOT/scripts/bootstrap.sh" --openmpi >/dev/null
    DEPS=(-DMPI_C_COMPILER=/usr/bin/mpicc.openmpi -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.openmpi
          -DHDF5_C_COMPILER_EXECUTABLE=/usr/bin/h5pcc.openmpi) ;;
  *) echo "build.sh: HEXCG_MPI must be mpich or openmpi (got '$MPI')" >&2; exit 2 ;;
esac
# shellcheck source=scripts/ccache_env.sh
source "$ROOT/scripts/ccache_env.sh"
TARGET=()
if ((APP)); then
  TARGET=(--target hexcg)
  if [[ " $* " != *" -DHEXCG_CUDA="* ]]; then
    if [[ -e /dev/nvidia0 ]] || nvidia-smi -L >/dev/null 2>&1; then
      set -- "$@" -DHEXCG_CUDA=AUTO
    else
      echo "[build] no NVIDIA device here: the CUDA backend is left out (-DHEXCG_CUDA=ON builds it)" >&2
      set -- "$@" -DHEXCG_CUDA=OFF
    fi
  fi
fi
mkdir -p "$BUILD"
echo "[build] configuring $BUILD" >&2
cmake -S "$ROOT" -B "$BUILD" "${DEPS[@]}" "${CCACHE_LAUNCH[@]}" \
  -DCMAKE_BUILD_TYPE="${HEXCG_BUILD_TYPE:-Release}" "$@" >"$BUILD/configure.log" 2>&1 \
  || { cat "$BUILD/configure.log" >&2; echo "[build] configure failed (log: $BUILD/configure.log)" >&2; exit 1; }
grep -E "^-- hexcg:" "$BUILD/configure.log" >&2 || true
echo "[build] compiling" >&2
cmake --build "$BUILD" -j "$(nproc)" "${TARGET[@]}"
echo "[build] done: $BUILD/hexcg" >&2
