#!/usr/bin/env bash
# hexcg dependency bootstrap for Debian 12 (bookworm), run as root.
#
# Idempotent: installs the Debian packages the build and the tests need (Slurm's
# daemons and munge too, for the `slurm` test's local cluster), then builds
# hypre 2.26.0 from Debian's *source* package against MPICH (CPU only,
# no OpenMP, static) into a cache prefix outside the clone. A second run finds
# the cached install and returns in seconds.
#
#   scripts/bootstrap.sh            the MPICH stack (the default build) and
#                                   everything the test suite needs
#   scripts/bootstrap.sh --app      only what building and running hexcg needs
#                                   (the README's first command, through
#                                   scripts/build.sh --app): no test readers,
#                                   ParaView, Slurm, clang or Gmsh
#   scripts/bootstrap.sh --openmpi  also Debian's Open MPI stack for the second
#                                   build (scripts/build.sh with HEXCG_MPI=openmpi,
#                                   scripts/test.sh --mpi openmpi): openmpi-bin,
#                                   libopenmpi-dev, libhdf5-openmpi-dev and
#                                   libhypre-dev (Debian's hypre, built on Open
#                                   MPI); no hypre is built for it. Prints
#                                   "HYPRE_ROOT=" (empty: found by CMake).
# Debian ranks Open MPI above MPICH in its alternatives (mpicc, mpiexec,
# h5pcc, the mpi include folder, hdf5.pc): whenever MPICH is installed they are
# set back to MPICH, so that plain mpicc/mpiexec stay the default build's.
#
# Environment:
#   HEXCG_CACHE   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/hexcg)
#   HEXCG_JOBS    parallel build jobs for hypre (default: nproc)
#   HEXCG_SKIP_APT=1  do not call apt-get (packages already present)
#
# Prints the hypre install prefix as its last line: "HYPRE_ROOT=<prefix>".
set -euo pipefail

say() { printf '[bootstrap] %s\n' "$*" >&2; }
die() { printf '[bootstrap] error: %s\n' "$*" >&2; exit 1; }

HYPRE_VERSION=2.26.0
CACHE=${HEXCG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hexcg}
JOBS=${HEXCG_JOBS:-$(nproc)}

OPENMPI=0 APPONLY=0
case ${1:-} in
  --openmpi) OPENMPI=1 ;;
  --app) APPONLY=1 ;;
  "") ;;
  *) die "unknown option $1 (scripts/bootstrap.sh [--app | --openmpi])" ;;
esac

# what building and running hexcg needs (--app stops here)
APP_PACKAGES=(
  build-essential cmake pkg-config git ca-certificates dpkg-dev ccache
  mpich libmpich-dev
  libhdf5-mpich-dev hdf5-tools
  libyaml-dev
  liblapack-dev libblas-dev
  libmetis-dev
  libmatheval-dev
  python3
)
# and the test suite's tools
PACKAGES=(
  "${APP_PACKAGES[@]}"
  gmsh
  clang libclang-rt-dev libomp-dev
  munge slurmctld slurmd slurm-client
  strace
  python3-numpy python3-h5py python3-matplotlib python3-yaml python3-meshio
  # ParaView itself reads output.format: vtkhdf in app.vtkhdf (pvpython; its
  # 5.11 renders through X only, so under xvfb-run)
  python3-paraview xvfb xauth
  python3-netcdf4
  python3-pip python3-xarray python3-attr
  # the Python package (python/, tests/python): cffi builds its module
  python3-pytest python3-venv python3-dev python3-cffi libffi-dev
)
# from PyPI (not packaged by Debian), pinned: the tests' independent readers
# (pymech: the .re2 meshes of tests/mesh/check_nek.py; it needs xarray and attrs),
# and mpi4py for the Python package, built from its sdist against MPICH (Debian's
# python3-mpi4py, which paraview pulls in, is Open MPI's; this one in /usr/local
# comes first on sys.path; ~50 s on 2 cores)
PYPI_PACKAGES=(pymech==2.0.1 mpi4py==3.1.6)

# the second MPI stack (CI's Open MPI pass, docs/cluster.md)
OPENMPI_PACKAGES=(openmpi-bin libopenmpi-dev libhdf5-openmpi-dev libhypre-dev)
((OPENMPI)) && PACKAGES+=("${OPENMPI_PACKAGES[@]}")
if ((APPONLY)); then
  PACKAGES=("${APP_PACKAGES[@]}")
  PYPI_PACKAGES=()
fi

# ---------------------------------------------------------------- packages
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  [[ ${HEXCG_SKIP_APT:-0} == 1 ]] && die "missing Debian packages: ${missing[*]} (HEXCG_SKIP_APT=1 set)"
  [[ $(id -u) == 0 ]] || die "missing Debian packages: ${missing[*]}; run this script as root or install them: apt-get install ${missing[*]}"
  say "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null || die "apt-get update failed (no network to Debian's mirrors?)"
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install failed for: ${missing[*]}"
else
  say "Debian packages present"
fi

# ---------------------------------------------------------------- PyPI
for spec in ${PYPI_PACKAGES[@]+"${PYPI_PACKAGES[@]}"}; do
  mod=${spec%%==*}
  if /usr/bin/python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('$mod') != '${spec#*==}')" 2>/dev/null; then
    continue
  fi
  [[ ${HEXCG_SKIP_APT:-0} == 1 ]] && die "missing Python package $spec (HEXCG_SKIP_APT=1 set)"
  [[ $(id -u) == 0 ]] || die "missing Python package $spec; as root: python3 -m pip install --break-system-packages --no-deps $spec"
  say "installing $spec from PyPI"
  if [[ $mod == mpi4py ]]; then
    # compiled here with MPICH's mpicc and Debian's setuptools (its sdist fails
    # under pip's isolated build with today's setuptools), once per MPICH
    # version: the wheel is kept in the cache beside hypre (about a minute saved
    # per fresh machine)
    wdir=$CACHE/wheels-mpich-$(dpkg-query -W -f='${Version}' libmpich-dev 2>/dev/null || echo unknown)
    whl=$(ls "$wdir"/mpi4py-"${spec#*==}"-*.whl 2>/dev/null | head -1 || true)
    if [[ -z $whl ]]; then
      mkdir -p "$wdir"
      MPICC=/usr/bin/mpicc.mpich /usr/bin/python3 -m pip wheel -q --no-deps --no-binary mpi4py \
        --no-build-isolation -w "$wdir" "$spec" >/dev/null || die "pip wheel $spec failed (no network to PyPI?)"
      whl=$(ls "$wdir"/mpi4py-"${spec#*==}"-*.whl | head -1)
    fi
    /usr/bin/python3 -m pip install -q --break-system-packages --no-deps "$whl" >/dev/null \
      || die "pip install $whl failed"
    continue
  fi
  /usr/bin/python3 -m pip install -q --break-system-packages --no-deps "$spec" >/dev/null \
    || die "pip install $spec failed (no network to PyPI?)"
done

[[ -x /usr/bin/mpicc.mpich ]] || die "/usr/bin/mpicc.mpich not found after installing mpich"

# ---------------------------------------------------------------- alternatives: MPICH
ARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
for group in mpi mpirun "mpi-$ARCH" h5pcc hdf5.pc; do
  cur=$(update-alternatives --query "$group" 2>/dev/null | awk '/^Value:/{print $2}') || true
  [[ -n $cur ]] || continue
  [[ $cur == *mpich* || $(readlink -f "$cur") == *mpich* ]] && continue
  want=$(update-alternatives --list "$group" 2>/dev/null | grep mpich | head -1) || true
  [[ -n $want ]] || continue
  [[ $(id -u) == 0 ]] || die "the '$group' alternative points to $cur, not MPICH; as root: update-alternatives --set $group $want"
  say "alternative $group: $cur -> $want (the default build is MPICH's)"
  update-alternatives --set "$group" "$want" >/dev/null
done
if ((OPENMPI)); then
  [[ -x /usr/bin/mpicc.openmpi && -f /usr/include/hypre/HYPRE.h ]] \
    || die "Open MPI stack incomplete after installing: ${OPENMPI_PACKAGES[*]}"
  say "Open MPI stack present (Debian's hypre in /usr/include/hypre)"
  echo "HYPRE_ROOT="
  exit 0
fi
MPICH_VERSION=$(/usr/bin/mpichversion 2>/dev/null | awk '/MPICH Version/{print $3}')
[[ -n $MPICH_VERSION ]] || MPICH_VERSION=$(dpkg-query -W -f='${Version}' libmpich-dev)

# ---------------------------------------------------------------- hypre
KEY="hypre-${HYPRE_VERSION}-mpich-${MPICH_VERSION}-cpu-noomp-static-v1"
PREFIX="$CACHE/$KEY"
if [[ -f $PREFIX/.complete && -f $PREFIX/lib/cmake/HYPRE/HYPREConfig.cmake ]]; then
  say "hypre cached at $PREFIX"
else
  say "building hypre $HYPRE_VERSION against MPICH $MPICH_VERSION into $PREFIX"
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/hexcg-hypre.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  SRCDIR="$WORK/aptsrc"
  mkdir -p "$SRCDIR/lists/partial" "$SRCDIR/sources"
  # A deb-src entry for bookworm, without touching the system's apt lists.
  URI=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [[ -n $URI ]] || URI=http://deb.debian.org/debian
  cat >"$SRCDIR/sources/hexcg-src.sources" <<SRC
Types: deb-src
URIs: $URI
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  APTOPT=(-o APT::Sandbox::User=root -o "Dir::Etc::SourceParts=$SRCDIR/sources" -o "Dir::Etc::SourceList=/dev/null"
          -o "Dir::State::Lists=$SRCDIR/lists")
  apt-get "${APTOPT[@]}" update -q >/dev/null || die "could not fetch the deb-src index for bookworm"
  (cd "$WORK" && apt-get "${APTOPT[@]}" source --download-only "hypre=${HYPRE_VERSION}*" >/dev/null 2>&1) \
    || (cd "$WORK" && apt-get "${APTOPT[@]}" source --download-only hypre >/dev/null) \
    || die "apt-get source hypre failed"
  TARBALL=$(ls "$WORK"/hypre_${HYPRE_VERSION}*.orig.tar.* 2>/dev/null | head -1)
  [[ -n $TARBALL ]] || die "Debian's source package did not contain hypre_${HYPRE_VERSION}.orig.tar.*; found: $(ls "$WORK")"
  tar -xf "$TARBALL" -C "$WORK"
  SRC=$(find "$WORK" -maxdepth 3 -name CMakeLists.txt -path '*/src/CMakeLists.txt' | head -1)
  [[ -n $SRC ]] || die "hypre source tree has no src/CMakeLists.txt"
  SRC=$(dirname "$SRC")
  rm -rf "$PREFIX"
  cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=gcc -DMPI_C_COMPILER=/usr/bin/mpicc.mpich \
    -DHYPRE_WITH_MPI=ON -DHYPRE_WITH_OPENMP=OFF -DHYPRE_WITH_CUDA=OFF \
    -DHYPRE_ENABLE_SHARED=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" >"$WORK/configure.log" 2>&1 \
    || { tail -30 "$WORK/configure.log" >&2; die "hypre configure failed"; }
  cmake --build "$WORK/build" -j "$JOBS" >"$WORK/build.log" 2>&1 \
    || { tail -30 "$WORK/build.log" >&2; die "hypre build failed"; }
  cmake --install "$WORK/build" >/dev/null || die "hypre install failed"
  touch "$PREFIX/.complete"
  say "hypre installed at $PREFIX"
fi
echo "HYPRE_ROOT=$PREFIX"
