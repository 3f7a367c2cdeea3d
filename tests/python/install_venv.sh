#!/usr/bin/env bash
# The python.install test (tests/python/CMakeLists.txt): a virtual environment
# in the build folder with Debian's numpy/cffi/pytest and the bootstrap's mpi4py
# (--system-site-packages), and the hexcg package of python/ built against
# this build (HEXCG_BUILD_DIR) from a copy, so the source tree gets no build
# outputs. No network: --no-build-isolation --no-deps --no-index.
#   install_venv.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$1 SRC=$2
W=$BUILD/tests/python
rm -rf "$W/venv" "$W/pkg"
mkdir -p "$W"
/usr/bin/python3 -m venv --system-site-packages "$W/venv"
mkdir "$W/pkg"
(cd "$SRC/python" && tar --exclude=build --exclude='*.egg-info' --exclude=__pycache__ --exclude='_hexcg*.so' -cf - .) \
  | tar -xf - -C "$W/pkg"
HEXCG_BUILD_DIR=$BUILD "$W/venv/bin/pip" install -q --no-build-isolation --no-deps --no-index "$W/pkg"
cd "$W"
"$W/venv/bin/python" -c "
import hexcg, mpi4py
from mpi4py import MPI
lib = MPI.Get_library_version()
assert 'MPICH' in lib, 'mpi4py is not built against MPICH (scripts/bootstrap.sh installs mpi4py==3.1.6 so): ' + lib[:60]
print('python.install: hexcg', hexcg.__version__, 'library', hexcg.library_version()[0], 'mpi4py', mpi4py.__version__)
"
