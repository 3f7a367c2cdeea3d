"""cffi build script of hexcg's compiled module ``hexcg._hexcg`` (API mode).

The cdef is generated from ``api/hexcg.h`` itself at build time (comments and
preprocessor lines stripped, ``MPI_Comm`` declared opaque), so the Python
binding cannot drift from the C header. Where the header and the library come
from (environment, read when ``pip install ./python`` builds):

- ``HEXCG_PREFIX``: an installed hexcg (``cmake --install``): ``include/hexcg.h``
  and ``lib/libhexcg.so`` (or ``lib64/``);
- ``HEXCG_BUILD_DIR``: a build tree of this repository: the header from its
  source tree (``api/``), the library from the build (``libhexcg.so`` where the
  build made one, else the module archives in the order the ``hexcg`` executable
  links them: ``in_tree_link``).

MPI's compile flags come from ``$MPICC`` (default ``mpicc.mpich``, else
``mpicc``) ``-show``: the module must use the MPI the library was built with.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

from cffi import FFI

HERE = Path(__file__).resolve().parent

# The communicator conversion: mpi4py gives the address of its MPI_Comm
# (MPI._addressof); the creators take it as void * so the Python side never
# needs MPI_Comm's size or representation.
HELPERS_CDEF = """
int hexcg_py_create_file(void *comm, const char *path, const hexcg_options *opt, hexcg_solver **s);
int hexcg_py_create_yaml(void *comm, const char *yaml, const char *name, const hexcg_options *opt,
                         hexcg_solver **s);
int hexcg_py_create(void *comm, const hexcg_problem *d, const hexcg_options *opt, hexcg_solver **s);
extern "Python" int hexcg_py_monitor(void *ctx, int step, double t, const double *u, const hexcg_result *r);
"""

HELPERS_C = """
#include <mpi.h>
#include "hexcg.h"
static MPI_Comm hexcg_py_comm(void *comm) { return *(MPI_Comm *)comm; }
static int hexcg_py_create_file(void *comm, const char *path, const hexcg_options *opt, hexcg_solver **s) {
  return hexcg_create_file(hexcg_py_comm(comm), path, opt, s);
}
static int hexcg_py_create_yaml(void *comm, const char *yaml, const char *name, const hexcg_options *opt,
                                hexcg_solver **s) {
  return hexcg_create_yaml(hexcg_py_comm(comm), yaml, name, opt, s);
}
static int hexcg_py_create(void *comm, const hexcg_problem *d, const hexcg_options *opt, hexcg_solver **s) {
  return hexcg_create(hexcg_py_comm(comm), d, opt, s);
}
"""


def header_cdef(text: str) -> str:
    """The cdef of a C header: comments, preprocessor lines and the blocks of
    ``#ifdef __cplusplus`` removed; integer ``#define``s kept as constants."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = text.replace("\\\n", " ")
    out: List[str] = ["typedef ... MPI_Comm;"]
    skip = 0  # depth inside an #ifdef __cplusplus block
    depth = 0
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            d = s[1:].strip()
            if d.startswith("if"):
                depth += 1
                if skip == 0 and re.match(r"ifdef\s+__cplusplus\b", d):
                    skip = depth
            elif d.startswith("endif"):
                if skip == depth:
                    skip = 0
                depth -= 1
            elif d.startswith("define") and not skip:
                m = re.match(r"define\s+([A-Z_][A-Z0-9_]*)\s+(-?\d+)\s*$", d)
                if m:
                    out.append(f"#define {m.group(1)} {m.group(2)}")
            continue
        if not skip and s:
            out.append(line)
    return "\n".join(out) + "\n"


def api_version(header: Path) -> Tuple[int, int]:
    """HEXCG_API_VERSION_MAJOR/MINOR of the header."""
    text = header.read_text()
    nums = []
    for part in ("MAJOR", "MINOR"):
        m = re.search(rf"#define\s+HEXCG_API_VERSION_{part}\s+(\d+)", text)
        if not m:
            raise RuntimeError(f"{header}: no HEXCG_API_VERSION_{part}: is this hexcg's header?")
        nums.append(int(m.group(1)))
    return nums[0], nums[1]


def mpi_flags() -> Tuple[List[str], List[str]]:
    """Include and link flags of the MPI compiler wrapper (``$MPICC -show``)."""
    cc = os.environ.get("MPICC") or shutil.which("mpicc.mpich") or shutil.which("mpicc")
    if not cc:
        raise RuntimeError("hexcg build: no MPI compiler wrapper found: set MPICC to the mpicc of the MPI "
                           "hexcg was built with (e.g. MPICC=mpicc.mpich)")
    words = shlex.split(subprocess.run([cc, "-show"], check=True, capture_output=True, text=True).stdout)
    comp = [w for w in words[1:] if w.startswith(("-I", "-D"))]
    link = [w for w in words[1:] if w.startswith(("-L", "-l", "-Wl,"))]
    return comp, link


def source_dir(build: Path) -> Path:
    """The source tree of a build directory (its CMakeCache), else python/.. ."""
    cache = build / "CMakeCache.txt"
    if cache.is_file():
        m = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", cache.read_text(), flags=re.M)
        if m:
            return Path(m.group(1))
    return HERE.parent


def find_shared(build: Path) -> Path | None:
    """libhexcg.so in a build tree, if the build made one."""
    for pattern in ("lib/libhexcg.so", "libhexcg.so", "api/libhexcg.so", "*/libhexcg.so"):
        hits = sorted(glob.glob(str(build / pattern)))
        if hits:
            return Path(hits[0])
    return None


def in_tree_link(build: Path) -> Dict[str, List[str]]:
    """How the module links against a build tree: the shared libhexcg.so where
    the build has one, else the static module archives with their
    dependencies, taken from the hexcg executable's link line without the
    application's own archives (hx_app, hx_bench: they call app/main.c). The
    archives must be position-independent code (a build with
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON) to go into a Python module."""
    so = find_shared(build)
    if so is not None:
        return {"extra_link_args": [f"-L{so.parent}", "-lhexcg", f"-Wl,-rpath,{so.parent}"]}
    link_txt = build / "app" / "CMakeFiles" / "hexcg.dir" / "link.txt"
    if not link_txt.is_file():
        raise RuntimeError(f"HEXCG_BUILD_DIR={build}: neither libhexcg.so nor {link_txt} found: build hexcg "
                           "there first (scripts/build.sh) or set HEXCG_BUILD_DIR to the build folder")
    cache = (build / "CMakeCache.txt").read_text() if (build / "CMakeCache.txt").is_file() else ""
    if not re.search(r"^(CMAKE_POSITION_INDEPENDENT_CODE|HEXCG_SHARED_LIB):BOOL=(ON|TRUE|1)$", cache, flags=re.M):
        raise RuntimeError(f"HEXCG_BUILD_DIR={build}: no libhexcg.so there, and its module archives are not "
                           "position-independent code, so they cannot go into a Python module: build the "
                           "shared library there, or reconfigure it with -DCMAKE_POSITION_INDEPENDENT_CODE=ON "
                           "and rebuild")
    words = shlex.split(link_txt.read_text())
    args: List[str] = []
    skip_next = False
    for w in words[1:]:
        if skip_next:
            skip_next = False
            continue
        if w == "-o":
            skip_next = True
            continue
        if w.endswith((".o", "libhx_app.a", "libhx_bench.a")) or w.startswith(("-O", "-D", "-g")):
            continue
        if not w.startswith("-") and not os.path.isabs(w):
            w = str((link_txt.parent.parent.parent / w).resolve())
        args.append(w)
    return {"extra_link_args": args}


def locate() -> Dict[str, object]:
    """The header, include folders and link arguments, from HEXCG_PREFIX or
    HEXCG_BUILD_DIR (module docstring)."""
    prefix = os.environ.get("HEXCG_PREFIX")
    build = os.environ.get("HEXCG_BUILD_DIR")
    if prefix:
        p = Path(prefix).resolve()
        header = p / "include" / "hexcg.h"
        libdir = next((p / d for d in ("lib", "lib64") if (p / d / "libhexcg.so").exists()), None)
        if not header.is_file() or libdir is None:
            raise RuntimeError(f"HEXCG_PREFIX={prefix}: expected include/hexcg.h and lib/libhexcg.so there "
                               "(a `cmake --install` prefix of hexcg); set it to such a prefix")
        link = {"extra_link_args": [f"-L{libdir}", "-lhexcg", f"-Wl,-rpath,{libdir}"]}
        return {"header": header, "include_dirs": [str(p / "include")], **link}
    if build:
        b = Path(build).resolve()
        header = source_dir(b) / "api" / "hexcg.h"
        if not header.is_file():
            raise RuntimeError(f"HEXCG_BUILD_DIR={build}: its source tree has no api/hexcg.h ({header})")
        return {"header": header, "include_dirs": [str(header.parent)], **in_tree_link(b)}
    raise RuntimeError("hexcg build: set HEXCG_PREFIX to an installed hexcg (include/, lib/) or HEXCG_BUILD_DIR "
                       "to a build folder of this source tree, e.g. HEXCG_BUILD_DIR=$PWD/build pip install ./python")


def make_ffi() -> FFI:
    """The FFI builder of hexcg._hexcg."""
    where = locate()
    header = Path(str(where["header"]))
    comp, link = mpi_flags()
    ffi = FFI()
    ffi.cdef(header_cdef(header.read_text()) + HELPERS_CDEF)
    ffi.set_source("hexcg._hexcg", HELPERS_C, include_dirs=list(where["include_dirs"]),  # type: ignore[arg-type]
                   extra_compile_args=comp, extra_link_args=list(where["extra_link_args"]) + link)  # type: ignore
    return ffi


ffibuilder = make_ffi() if os.environ.get("HEXCG_BUILD_SKIP_FFI") != "1" else FFI()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
