"""setuptools entry of the hexcg package: the version is the C header's API
version (HEXCG_API_VERSION_MAJOR.MINOR), the compiled module comes from
hexcg_build.py (cffi, API mode). Configuration: HEXCG_PREFIX or
HEXCG_BUILD_DIR (hexcg_build.py)."""

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hexcg_build  # noqa: E402



class AlwaysBuildExt(build_ext):
    """Relinks the module on every build: pip reuses python/build/, and a
    module linked against another HEXCG_PREFIX / HEXCG_BUILD_DIR (the same
    generated C source) would otherwise be taken as up to date."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.force = True


major, minor = hexcg_build.api_version(Path(str(hexcg_build.locate()["header"])))
setup(version=f"{major}.{minor}", cffi_modules=["hexcg_build.py:ffibuilder"],
      cmdclass={"build_ext": AlwaysBuildExt})
