# Sourced by scripts/build.sh and scripts/fuzz.sh (bash): sets CCACHE_LAUNCH
# to the CMake options that put ccache in front of the C, C++ and CUDA
# compilers, with its cache beside the hypre build under the dependency cache
# (HEXCG_CACHE, default ~/.cache/hexcg/ccache), so a fresh clone recompiles
# only what differs from an earlier build: CI builds the tree three times
# (normal, sanitizers, fuzzing) on every submission. Paths are hashed
# relative to the checkout (CCACHE_BASEDIR), so clones in other folders hit
# the same entries. HEXCG_CCACHE=0, or no ccache on PATH: the options clear
# the launchers (a build folder configured with them earlier drops them).
ccache_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ ${HEXCG_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-${HEXCG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hexcg}/ccache}
  export CCACHE_BASEDIR=$ccache_root CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-4G}
  CCACHE_LAUNCH=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                 -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
else
  CCACHE_LAUNCH=(-DCMAKE_C_COMPILER_LAUNCHER= -DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_CUDA_COMPILER_LAUNCHER=)
fi
unset ccache_root
