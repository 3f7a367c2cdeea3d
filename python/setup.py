"""setuptools entry of the hexcg package: the version is the C header's API
version (HEXCG_API_VERSION_MAJOR.MINOR), the compiled module comes from
hexcg_build.py (cffi, API mode). Configuration: HEXCG_PREFIX or
HEXCG_BUILD_DIR (hexcg_build.py)."""

import sys
from pathlib import Path

from setuptools import setup

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hexcg_build  # noqa: E402

major, minor = hexcg_build.api_version(Path(str(hexcg_build.locate()["header"])))
setup(version=f"{major}.{minor}", cffi_modules=["hexcg_build.py:ffibuilder"])
