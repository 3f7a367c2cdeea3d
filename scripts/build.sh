#!/usr/bin/env bash
# Install the dependencies (scripts/bootstrap.sh), configure and build hexcg.
#   scripts/build.sh [extra cmake -D options]
# Environment: HEXCG_BUILD_DIR (default: build), HEXCG_BUILD_TYPE (Release),
# HEXCG_CCACHE=0 (no compiler cache; scripts/ccache_env.sh),
# HEXCG_MPI=mpich (default: MPICH and the hypre bootstrap.sh builds for it)
#   or openmpi (Debian's Open MPI, its HDF5 and Debian's hypre, found by
#   CMake's own search: no HYPRE_ROOT; default folder build-ompi).
# On another system (a cluster, Spack, modules) call CMake directly:
# docs/cluster.md.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MPI=${HEXCG_MPI:-mpich}
case $MPI in
  mpich)
    BUILD=${HEXCG_BUILD_DIR:-$ROOT/build}
    boot=$("$ROOT/scripts/bootstrap.sh" | tail -1)
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
mkdir -p "$BUILD"
echo "[build] configuring $BUILD" >&2
cmake -S "$ROOT" -B "$BUILD" "${DEPS[@]}" "${CCACHE_LAUNCH[@]}" \
  -DCMAKE_BUILD_TYPE="${HEXCG_BUILD_TYPE:-Release}" "$@" >"$BUILD/configure.log" 2>&1 \
  || { cat "$BUILD/configure.log" >&2; echo "[build] configure failed (log: $BUILD/configure.log)" >&2; exit 1; }
grep -E "^-- hexcg:" "$BUILD/configure.log" >&2 || true
echo "[build] compiling" >&2
cmake --build "$BUILD" -j "$(nproc)"
echo "[build] done: $BUILD/hexcg" >&2
