"""hexcg: a spectral-element Poisson/Helmholtz solver (libhexcg) for Python.

    from mpi4py import MPI
    import hexcg
    with hexcg.Solver.from_file("configs/poisson_box.yaml", set={"order": 3}) as s:
        u, res = s.solve()

Vectors are numpy float64 arrays with one value per local node of the rank;
communicators are mpi4py's (None: MPI.COMM_WORLD). Failures raise hexcg.Error
subclasses with the library's message. Guide: docs/library.md, "Python".
"""

from importlib import metadata as _metadata

from ._errors import (ArgumentError, DeviceError, Error, FileError, InputError, InternalError, MPIError,
                      NumericError, OutOfMemoryError, UnsupportedError)
from ._hexcg import lib as _lib
from ._problem import BoundaryCondition, Dirichlet, Mesh, Neumann, Robin, box_mesh
from ._solver import Errors, Residuals, Result, Solver, TimeResult, library_version

#: the C API version this module was compiled against (api/hexcg.h)
API_VERSION = (_lib.HEXCG_API_VERSION_MAJOR, _lib.HEXCG_API_VERSION_MINOR)
try:
    __version__ = _metadata.version("hexcg")
except _metadata.PackageNotFoundError:  # imported from a source tree
    __version__ = "%d.%d" % API_VERSION

__all__ = [
    "API_VERSION", "ArgumentError", "BoundaryCondition", "DeviceError", "Dirichlet", "Error", "Errors", "FileError",
    "InputError", "InternalError", "MPIError", "Mesh", "Neumann", "NumericError", "OutOfMemoryError", "Residuals",
    "Result", "Robin", "Solver", "TimeResult", "UnsupportedError", "box_mesh", "library_version",
]
