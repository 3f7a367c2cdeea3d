"""hexcg's errors as exceptions: one class per hexcg_status, carrying
hexcg_last_error()'s message."""

from __future__ import annotations

from typing import Dict, Type


class Error(Exception):
    """A failed hexcg call: ``status`` (the hexcg_status number), ``status_name``
    ("HEXCG_ERR_INPUT", ...) and ``message`` (the library's message: where, and
    the fix)."""

    status: int = -1

    def __init__(self, message: str, status: int | None = None, status_name: str = "") -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.status_name = status_name


class InputError(Error):
    """The case, the description or the data are wrong (HEXCG_ERR_INPUT)."""

    status = 1


class ArgumentError(Error):
    """A wrong argument or a call out of order (HEXCG_ERR_ARG)."""

    status = 2


class OutOfMemoryError(Error):
    """An allocation failed (HEXCG_ERR_MEMORY)."""

    status = 3


class FileError(Error):
    """A file could not be read or written (HEXCG_ERR_IO)."""

    status = 4


class MPIError(Error):
    """An MPI call failed (HEXCG_ERR_MPI)."""

    status = 5


class DeviceError(Error):
    """The backend (GPU) failed or is not available (HEXCG_ERR_DEVICE)."""

    status = 6


class NumericError(Error):
    """A numerical failure in the setup (HEXCG_ERR_NUMERIC); a solve that does
    not converge is not an error (``Result.converged``)."""

    status = 7


class UnsupportedError(Error):
    """A valid request this solver cannot do (HEXCG_ERR_UNSUPPORTED)."""

    status = 8


class InternalError(Error):
    """A bug in hexcg (HEXCG_ERR_INTERNAL): please report it with the message."""

    status = 9


BY_STATUS: Dict[int, Type[Error]] = {
    c.status: c
    for c in (InputError, ArgumentError, OutOfMemoryError, FileError, MPIError, DeviceError, NumericError,
              UnsupportedError, InternalError)
}


def error_of(status: int, message: str, status_name: str) -> Error:
    """The exception of a hexcg_status (unknown numbers: Error itself)."""
    cls = BY_STATUS.get(status, Error)
    return cls(message or status_name, status, status_name)
