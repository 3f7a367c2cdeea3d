"""Solver.time_run's call of hexcg_time_run with a Python monitor (an
extern "Python" callback of the compiled module)."""

from __future__ import annotations

from typing import Any, Callable, List, Optional

import numpy as np

from ._hexcg import ffi, lib


class _Monitor:
    """The Python side of one run's monitor: the callable, the node count and
    the first exception it raised (re-raised after the run)."""

    def __init__(self, fn: Callable[..., Any], n: int) -> None:
        self.fn = fn
        self.n = n
        self.error: Optional[BaseException] = None


@ffi.def_extern()
def hexcg_py_monitor(ctx: Any, step: int, t: float, u: Any, r: Any) -> int:
    from ._solver import _result

    mon: _Monitor = ffi.from_handle(ctx)
    try:
        values = np.frombuffer(ffi.buffer(u, mon.n * 8), dtype=np.float64).copy()
        return 1 if mon.fn(int(step), float(t), values, _result(r)) else 0
    except BaseException as e:  # noqa: BLE001 (re-raised by run())
        mon.error = e
        return 1


def run(s: Any, dt: float, steps: int, scheme: int, projection: int, u0: Optional[np.ndarray],
        monitor: Optional[Callable[..., Any]], u: np.ndarray) -> Any:
    """hexcg_time_run into u; the hexcg_time_result."""
    from ._solver import _check

    t = ffi.new("hexcg_time *")
    t.scheme, t.dt, t.steps, t.projection = scheme, dt, steps, projection
    keep: List[Any] = []
    if u0 is not None:
        t.u0 = ffi.from_buffer("double[]", u0)
    mon = _Monitor(monitor, u.shape[0]) if monitor is not None else None
    if mon is not None:
        handle = ffi.new_handle(mon)
        keep.append(handle)
        t.monitor = lib.hexcg_py_monitor
        t.ctx = handle
    tr = ffi.new("hexcg_time_result *")
    _check(lib.hexcg_time_run(s, t, ffi.from_buffer("double[]", u, require_writable=True), tr))
    if mon is not None and mon.error is not None:
        raise mon.error
    return tr
