"""hexcg.Solver: a solver set up once (mesh, partition, operator,
preconditioner) that solves any number of right-hand sides; a thin layer over
api/hexcg.h through the compiled cffi module hexcg._hexcg."""

from __future__ import annotations

import atexit
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ._errors import error_of
from ._hexcg import ffi, lib
from ._problem import BoundaryCondition, FieldLike, Mesh

Settings = Union[None, Sequence[str], Mapping[str, Any]]


@dataclass(frozen=True)
class Residuals:
    """||b - A x0||, the final true residual ||b - A x|| and final / ||b||."""

    initial: float
    final: float
    relative: float


@dataclass(frozen=True)
class Errors:
    """The solution's error norms against the problem's exact solution."""

    l2: float
    max: float


@dataclass(frozen=True)
class Result:
    """One solve's figures (hexcg_result). A solve that does not converge is
    not an exception: ``converged`` is False and ``reason`` says why."""

    iterations: int
    converged: bool
    reason: str
    residuals: Residuals
    errors: Optional[Errors]  # None: the problem has no exact solution
    seconds: float  # wall time, the slowest rank's
    block: bool  # solve_many: solved in the block (False: alone)


@dataclass(frozen=True)
class TimeResult:
    """A time run's figures (hexcg_time_result)."""

    steps: int
    t: float
    iterations: int
    failed: bool  # a step did not converge (the run stopped there)
    last: Result  # the last step's solve


def _text(p: Any) -> str:
    return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else ""


def _check(status: int) -> None:
    """Raises the hexcg.Error subclass of a failed call with its message."""
    if status != lib.HEXCG_OK:
        raise error_of(status, _text(lib.hexcg_last_error()), _text(lib.hexcg_status_name(status)))


def _result(r: Any) -> Result:
    errors = Errors(float(r.error_l2), float(r.error_max)) if r.error_known else None
    return Result(int(r.iterations), bool(r.converged), _text(r.reason),
                  Residuals(float(r.residual0), float(r.residual), float(r.rel_residual)), errors,
                  float(r.seconds), bool(r.block))


def library_version() -> Tuple[str, Tuple[int, int, int]]:
    """The library's version text ("0.1.0 (git 1a2b3c4)") and numbers."""
    nums = ffi.new("int[3]")
    text = _text(lib.hexcg_version(nums, nums + 1, nums + 2))
    return text, (nums[0], nums[1], nums[2])


def _comm_ptr(comm: Any) -> Tuple[Any, Any]:
    """The mpi4py communicator (None: COMM_WORLD) and the address of its
    MPI_Comm as void * for the creators (hexcg_build.py's helpers)."""
    from mpi4py import MPI

    if comm is None:
        comm = MPI.COMM_WORLD
    if not isinstance(comm, MPI.Comm):
        raise TypeError(f"comm: expected an mpi4py communicator (or None for MPI.COMM_WORLD), got {type(comm)}")
    return comm, ffi.cast("void *", MPI._addressof(comm))


def _options(threads: int, verbosity: int, settings: Settings) -> Tuple[Any, List[Any]]:
    """A hexcg_options and the buffers it points to (keep them alive)."""
    opt = ffi.new("hexcg_options *", lib.hexcg_options_default())
    opt.threads = int(threads)
    opt.verbosity = int(verbosity)
    keep: List[Any] = []
    if settings:
        items = [f"{k}={v}" for k, v in settings.items()] if isinstance(settings, Mapping) else list(settings)
        for i in items:
            if not isinstance(i, str) or "=" not in i:
                raise ValueError(f"set: {i!r} is not a 'KEY=VALUE' setting (e.g. 'solver.tol=1e-10', 'order=5')")
        keep = [ffi.new("char[]", i.encode()) for i in items]
        arr = ffi.new("const char *[]", keep)
        keep.append(arr)
        opt.nset = len(items)
        opt.set = arr
    return opt, keep


def _vector(x: Any, n: int, what: str) -> np.ndarray:
    """x as n contiguous float64 values (a copy where needed); ValueError
    before any C call when it cannot be."""
    try:
        a = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{what}: cannot be read as float64 values ({e})") from None
    if a.shape != (n,):
        raise ValueError(f"{what}: expected {n} values (one per local node of this rank: Solver.num_nodes), "
                         f"got an array of shape {a.shape}")
    return a


def _block(F: Any, n: int) -> np.ndarray:
    """solve_many's F: checked, never copied (module docstring of solve_many)."""
    if not isinstance(F, np.ndarray) or F.dtype != np.float64 or F.ndim != 2 or not F.flags.c_contiguous:
        got = f"{type(F).__name__}" if not isinstance(F, np.ndarray) else f"{F.dtype} array of shape {F.shape}" + (
            "" if F.flags.c_contiguous else ", not C-contiguous")
        raise ValueError(f"F: expected a C-contiguous float64 array of shape (k, {n}), one right-hand side per row; "
                         f"got {got} (np.ascontiguousarray(F, dtype=np.float64); for columns np.ascontiguousarray(F.T))")
    if F.shape[1] != n:
        raise ValueError(f"F: expected shape (k, {n}) (a row of {n} values per right-hand side: Solver.num_nodes), "
                         f"got {F.shape}" + (" (transposed? pass F.T)" if F.shape[0] == n else ""))
    return F


# Solvers still open at exit are destroyed before mpi4py finalises MPI (atexit
# runs handlers in reverse order of registration, and mpi4py registered its
# own when it was imported, before this module).
_OPEN: "weakref.WeakValueDictionary[int, Solver]" = weakref.WeakValueDictionary()
_COUNTER = [0]


@atexit.register
def _close_all() -> None:
    for key in sorted(_OPEN.keys()):
        s = _OPEN.get(key)
        if s is not None:
            s.close()


def _mpi_alive() -> bool:
    from mpi4py import MPI

    return bool(MPI.Is_initialized() and not MPI.Is_finalized())


class Solver:
    """A hexcg solver (hexcg_solver). Create it with from_file, from_yaml or
    from_problem on every rank of the communicator; close() it (or use it as a
    context manager) on every rank: creation, solves and close are collective.

    Vectors are numpy float64 arrays with one value per local node of the rank
    (num_nodes; nodes on a partition boundary are local to several ranks,
    owned by one: ``owned``). Input values at shared nodes must agree between
    ranks; output values agree.
    """

    def __init__(self, ptr: Any, comm: Any) -> None:
        """Internal: use the from_* constructors."""
        self._ptr = ptr
        self.comm = comm
        self._cache: Dict[str, np.ndarray] = {}
        counts = ffi.new("int64_t[3]")
        _check(lib.hexcg_num_nodes(ptr, counts, counts + 1, counts + 2))
        self.num_nodes, self.num_owned, self.num_global = int(counts[0]), int(counts[1]), int(counts[2])
        _COUNTER[0] += 1
        self._key = _COUNTER[0]
        _OPEN[self._key] = self

    # ------------------------------------------------------------ creation
    @classmethod
    def _create(cls, comm: Any, make: Callable[[Any, Any, Any], int], threads: int, verbosity: int,
                settings: Settings) -> "Solver":
        comm, cptr = _comm_ptr(comm)
        opt, keep = _options(threads, verbosity, settings)
        out = ffi.new("hexcg_solver **")
        _check(make(cptr, opt, out))
        del keep
        return cls(out[0], comm)

    @classmethod
    def from_file(cls, path: str, comm: Any = None, threads: int = 0, verbosity: int = 0,
                  set: Settings = None) -> "Solver":  # noqa: A002 (the name of hexcg run --set)
        """A solver from a case file (docs/case-format.md; its output: is
        ignored). set: "KEY=VALUE" settings (or a dict) as `hexcg run --set`.
        threads: OpenMP threads per rank (0: as `hexcg run`); verbosity: 0
        quiet, 1 rank 0 prints the summary lines, 2 and the verbose ones.
        Collective over comm (None: MPI.COMM_WORLD)."""
        p = ffi.new("char[]", str(path).encode())
        return cls._create(comm, lambda c, o, s: lib.hexcg_py_create_file(c, p, o, s), threads, verbosity, set)

    @classmethod
    def from_yaml(cls, text: str, comm: Any = None, threads: int = 0, verbosity: int = 0, set: Settings = None,
                  name: Optional[str] = None) -> "Solver":  # noqa: A002
        """A solver from a case given as YAML text (name: what messages call
        it; None: "<string>"). The other arguments as from_file."""
        t = ffi.new("char[]", text.encode())
        nm = ffi.new("char[]", name.encode()) if name is not None else ffi.NULL
        return cls._create(comm, lambda c, o, s: lib.hexcg_py_create_yaml(c, t, nm, o, s), threads, verbosity, set)

    @classmethod
    def from_problem(cls, mesh: Mesh, order: int, *, kappa: Union[FieldLike, Mapping[str, FieldLike]] = 1.0,
                     lambda_: Union[FieldLike, Mapping[str, FieldLike]] = 0.0, f: FieldLike = 0.0,
                     bcs: Optional[Mapping[str, BoundaryCondition]] = None, exact: Optional[FieldLike] = None,
                     preconditioner: Optional[str] = None, tol: float = 0.0, max_iterations: int = 0,
                     backend: Optional[str] = None, comm: Any = None, threads: int = 0,
                     verbosity: int = 0) -> "Solver":
        """A solver from a description (hexcg_problem): the mesh as arrays
        (hexcg.Mesh, hexcg.box_mesh), the order p (1..15), kappa and lambda as
        a number or expression string for all materials or a dict per
        material name, the source f, boundary conditions per tag
        (Dirichlet/Neumann/Robin of numbers or expressions; tags named nowhere:
        Neumann 0), the exact solution if known (the results then carry the
        errors), the preconditioner ("pmg" when None, "asm", "jacobi",
        "cheby", "auto"), tolerance (0: 1e-8) and iteration limit (0: 10000).
        Collective over comm (None: MPI.COMM_WORLD)."""
        from ._describe import describe

        d, keep = describe(mesh, int(order), kappa, lambda_, f, bcs or {}, exact, preconditioner, tol,
                           max_iterations, backend)
        solver = cls._create(comm, lambda c, o, s: lib.hexcg_py_create(c, d, o, s), threads, verbosity, None)
        del keep
        return solver

    # ------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Frees the solver (hexcg_destroy; collective). Idempotent."""
        ptr, self._ptr = self._ptr, None
        _OPEN.pop(self._key, None)
        if ptr is not None and _mpi_alive():
            box = ffi.new("hexcg_solver **", ptr)
            _check(lib.hexcg_destroy(box))

    def __enter__(self) -> "Solver":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        # a solver dropped without close(): destroyed here (collective: every
        # rank drops it at the same point in a program run in lockstep)
        if getattr(self, "_ptr", None) is not None:
            try:
                self.close()
            except Exception:  # noqa: BLE001 (nothing to report to during garbage collection)
                pass

    @property
    def _s(self) -> Any:
        if self._ptr is None:
            raise ValueError("this hexcg.Solver is closed")
        return self._ptr

    # ------------------------------------------------------------ local nodes
    def _node_arrays(self) -> None:
        n = self.num_nodes
        xyz = np.empty((n, 3), dtype=np.float64)
        gid = np.empty(n, dtype=np.int64)
        owned = np.empty(n, dtype=np.int8)
        dirichlet = np.empty(n, dtype=np.int8)
        _check(lib.hexcg_node_info(self._s, ffi.from_buffer("double[]", xyz, require_writable=True),
                                   ffi.from_buffer("int64_t[]", gid, require_writable=True),
                                   ffi.from_buffer("int8_t[]", owned, require_writable=True)))
        _check(lib.hexcg_node_dirichlet(self._s, ffi.from_buffer("int8_t[]", dirichlet, require_writable=True)))
        for name, a in (("nodes", xyz), ("global_ids", gid), ("owned", owned != 0),
                        ("dirichlet", dirichlet != 0)):
            a.flags.writeable = False
            self._cache[name] = a

    def _node(self, name: str) -> np.ndarray:
        if name not in self._cache:
            self._node_arrays()
        return self._cache[name]

    @property
    def nodes(self) -> np.ndarray:
        """(num_nodes, 3) coordinates of this rank's local nodes (read-only)."""
        return self._node("nodes")

    @property
    def global_ids(self) -> np.ndarray:
        """(num_nodes,) global node numbers 0..num_global-1, independent of the
        number of ranks (read-only)."""
        return self._node("global_ids")

    @property
    def owned(self) -> np.ndarray:
        """(num_nodes,) bool: True on the one rank that owns the node."""
        return self._node("owned")

    @property
    def dirichlet(self) -> np.ndarray:
        """(num_nodes,) bool: True where a Dirichlet condition holds."""
        return self._node("dirichlet")

    def describe(self) -> Tuple[int, int, str]:
        """The order, the global element count and the preconditioner's line."""
        order, ne = ffi.new("int *"), ffi.new("int64_t *")
        buf = ffi.new("char[]", 1024)
        _check(lib.hexcg_describe(self._s, order, ne, buf, 1024))
        return int(order[0]), int(ne[0]), _text(buf)

    # ------------------------------------------------------------ solving
    def solve(self, f: Any = None) -> Tuple[np.ndarray, Result]:
        """Solves once: f (num_nodes values; None: the problem's own source)
        -> (u, result). Collective. A non-finite f is an InputError naming
        the node; a wrong size a ValueError (before any C call)."""
        n = self.num_nodes
        fa = _vector(f, n, "f") if f is not None else None
        u = np.empty(n, dtype=np.float64)
        r = ffi.new("hexcg_result *")
        fp = ffi.from_buffer("double[]", fa) if fa is not None else ffi.NULL
        _check(lib.hexcg_solve(self._s, fp, ffi.from_buffer("double[]", u, require_writable=True), r))
        return u, _result(r)

    def solve_many(self, F: Optional[np.ndarray], k: Optional[int] = None) -> Tuple[np.ndarray, List[Result]]:
        """Solves k right-hand sides at once (block PCG). F: a C-contiguous
        float64 array of shape (k, num_nodes), ONE RIGHT-HAND SIDE PER ROW (the
        C layout, not copied), or None with k given (every row the problem's
        own source). Returns U of the same shape (row c solves F[c]) and one
        Result per row; each row equals its single solve to the tolerance.
        Collective."""
        n = self.num_nodes
        if F is None:
            if k is None or int(k) < 0:
                raise ValueError("solve_many: F is None: give k >= 0, the number of right-hand sides")
            kk, fp = int(k), ffi.NULL
        else:
            F = _block(F, n)
            if k is not None and int(k) != F.shape[0]:
                raise ValueError(f"solve_many: k={k} but F has {F.shape[0]} rows")
            kk, fp = F.shape[0], ffi.from_buffer("double[]", F)
        U = np.empty((kk, n), dtype=np.float64)
        r = ffi.new("hexcg_result[]", max(kk, 1))
        _check(lib.hexcg_solve_many(self._s, kk, fp, ffi.from_buffer("double[]", U, require_writable=True), r))
        return U, [_result(r[c]) for c in range(kk)]

    def set_dirichlet(self, g: Any) -> None:
        """Dirichlet values for the next solves (num_nodes values, read where
        ``dirichlet`` is True), copied; None: the problem's own again."""
        ga = _vector(g, self.num_nodes, "g") if g is not None else None
        _check(lib.hexcg_set_dirichlet(self._s, ffi.from_buffer("double[]", ga) if ga is not None else ffi.NULL))

    def set_shift(self, shift: float) -> None:
        """The next solves use lambda + shift (shift >= 0). Collective."""
        _check(lib.hexcg_set_shift(self._s, float(shift)))

    def set_tolerance(self, rtol: float, max_iterations: int) -> None:
        """Relative tolerance (> 0) and iteration limit (> 0) of the next
        solves (give every rank the same)."""
        _check(lib.hexcg_set_tolerance(self._s, float(rtol), int(max_iterations)))

    def time_run(self, dt: float, steps: int, scheme: int = 2, projection: int = 0, u0: Any = None,
                 monitor: Optional[Callable[[int, float, np.ndarray, Result], Any]] = None
                 ) -> Tuple[np.ndarray, TimeResult]:
        """Steps du/dt - div(kappa grad u) + lambda u = f(x, t) with BDF
        (scheme 1..3) from t = 0 for steps of dt; u0: the initial values (None:
        the exact solution at t = 0 if known, else 0); projection: solutions
        kept for the projected guess (0: 8, -1: off). monitor(step, t, u,
        result), called after each step on every rank (u: a copy), stops the
        run by returning True (return the same on every rank). Returns the
        final u and a TimeResult. Collective."""
        from ._time import run

        u0a = _vector(u0, self.num_nodes, "u0") if u0 is not None else None
        u = np.empty(self.num_nodes, dtype=np.float64)
        tr = run(self._s, float(dt), int(steps), int(scheme), int(projection), u0a, monitor, u)
        return u, TimeResult(int(tr.steps), float(tr.t), int(tr.iterations), bool(tr.failed), _result(tr.last))
