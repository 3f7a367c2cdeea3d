#!/usr/bin/env python3
"""Mutation proof of the CUDA sources under the CUDA emulator (HEXCG_CUDA=EMU).

Every synchronisation of kernels/cuda/*.cu and gs/cuda/*.cu is removed, one at
a time, and the emulated GPU tests must notice:

  * each `__syncthreads();` call (comments and string literals skipped);
  * each call of cudaStreamWaitEvent, cudaStreamSynchronize,
    cudaEventSynchronize and cudaDeviceSynchronize in the host code. Calls
    inside `#ifdef HEXCG_CUDA_DEBUG_SYNC` (not compiled in the normal build)
    are listed as skipped, also in the private headers the .cu files include
    (kernels/private/hx_cuda_check.h: the per-launch cudaDeviceSynchronize of
    HX_CUDA_LAUNCH_CHECK in debug builds).

A mutation replaces exactly that statement, on the same lines (the emulator's
reports and __LINE__ keep pointing at the original line):
  `__syncthreads()`                    -> `(void)0`
  `HX_CUDA(cudaXxx(args))`             -> `(void)sizeof(cudaXxx(args))`
  `e = cudaXxx(args)` (value used)     -> `e = ((void)sizeof(cudaXxx(args)), cudaSuccess)`
  `cudaXxx(args);` (value unused)      -> `(void)sizeof(cudaXxx(args));`
sizeof's operand is never evaluated, so the call does not happen, while its
arguments stay named (no unused-variable warnings under -Werror). Ids look like
`fdm_cuda.cu:44 __syncthreads` (file name and line).

For each mutation: the file is mutated in place (the original is kept in
memory and in <build-dir>/mutation-backup/, and written back in a finally
block, also on Ctrl-C, SIGTERM and errors; `git diff --quiet -- FILE` then
confirms the restore), libhexcg.so is rebuilt (target hx_shared of a
-DHEXCG_SHARED_LIB=ON build: the test executables load the new library without
a relink), and the GPU tests chosen for the file run, each stage stopping at
the first failing test:
  1. lazy streams, HEXCG_CUDAEMU_SEED=0 (natural thread and block order);
  2. eager streams, seed 1;  3. lazy, seed 3;
  4. the ThreadSanitizer build (--tsan-build-dir, HEXCG_CUDAEMU_TSAN=ON), the
     one-rank tests only, OMP_NUM_THREADS=1, eager streams with seed 1 (a
     worker thread per stream, so a missing event wait is a race TSan can
     see); a `WARNING: ThreadSanitizer` report counts as caught. TSan runs a
     test 50-200x slower: only the tests whose unmutated lazy run takes at
     most --tsan-max-lazy seconds (3; --tsan-fallback-max-lazy, 1, in the
     fallback below) take part. The
     environment of scripts/test.sh --emu-tsan there (UCX's memory hooks off:
     they crash every TSan run at the exit of UCX's async thread).
A mutation that survives its file's subset goes through the same four stages
with the rest of the `^gpu$` label before it is declared SURVIVED (the
emulator's self-checks, the tests running emu_checks, are left out: they run
no hexcg code; the end-to-end runs, label e2e, are left out of the TSan stage,
as in scripts/test.sh --emu-tsan). OMP_WAIT_POLICY=passive as in
scripts/test.sh.

The tests are read from `ctest --show-only=json-v1 -L '^gpu$'` and started
directly (command, ENVIRONMENT, WORKING_DIRECTORY, SKIP_RETURN_CODE,
PASS/FAIL_REGULAR_EXPRESSION, WILL_FAIL as ctest would; the emulator's mode,
seed and OMP_NUM_THREADS override the test's environment, which ctest cannot
do), with a wall-clock limit per test (--timeout, --tsan-timeout, raised to
3x the test's unmutated time). A test that fails, times out or prints a TSan
report catches the mutation; its first line
of `hexcg-cudaemu: error`, `WARNING: ThreadSanitizer`, `assertion failed` or
`error:` is the reason recorded.

Before the first mutation, a baseline runs every test the mutations may use,
unmutated, in each plain stage (kept in <build-dir>/mutation-baseline.json and
reused while the tests, the CUDA sources and the emulator runtime are
unchanged; a timed-out entry is run again); the TSan stage's baseline of a
test runs when a mutation first reaches it (the source put back for it): a
test that fails unmutated is left out of that stage (listed in the output)
instead of catching every mutation falsely, and the measured times put the
fast tests first and set the limits.

Build dirs: configured and built here when missing, with
  HEXCG_BUILD_DIR=<dir> scripts/build.sh -DHEXCG_CUDA=EMU -DHEXCG_SHARED_LIB=ON [-DHEXCG_CUDAEMU_TSAN=ON]
and brought up to date (`cmake --build`, all targets) at the start; after
that only hx_shared is rebuilt. Compiles use -j2 (--jobs) and the project's
ccache settings. At the end the unmutated library is rebuilt. The sources are
mutated in the working tree: builds of other folders made meanwhile (build/,
build-emu/) would compile the mutated file.

Usage (from anywhere; paths are relative to the repository root):
  scripts/cuda_mutation.py --list                  # the mutations, nothing built
  scripts/cuda_mutation.py                         # all of them (hours on 2 cores)
  scripts/cuda_mutation.py --only 'fdm_cuda.cu:4[14]'
  scripts/cuda_mutation.py --no-tsan --out /tmp/table.md
Options: --build-dir (build-emu-mut), --tsan-build-dir (build-emu-mut-tsan),
--out (<build-dir>/mutation-table.md), --only REGEX (over the ids), --list,
--jobs, --timeout, --tsan-timeout, --tsan-max-lazy, --tsan-fallback-max-lazy,
--no-tsan, --no-fallback, --rebaseline.

Output: progress on stdout, a Markdown table `mutation | caught by | mode |
how` printed and written to --out (rewritten after each mutation, so an
interrupted run leaves the part done), and the same as JSON beside it. Exit
status 0: every mutation caught; 1: one survived (or its build failed); 2:
usage or setup error; 3: a source could not be restored (run
`git checkout -- kernels/cuda gs/cuda`).
"""
import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_GLOBS = ["kernels/cuda/*.cu", "gs/cuda/*.cu"]
# headers included by those sources with CUDA host code: scanned only to
# report what is skipped (a mutation there would hit every file)
SCAN_ONLY = ["kernels/private/hx_cuda_check.h"]
HOST_SYNC = ["cudaStreamWaitEvent", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaDeviceSynchronize"]
DEBUG_MACRO = "HEXCG_CUDA_DEBUG_SYNC"

# the gpu tests each file's mutations run first (regex over the test names)
SUBSETS = {
    "fdm_cuda.cu": r"^precond\.t32[01]-|^kernels\.t109-|^precond\.t310-pmg",
    "ax_cuda.cu": r"^ax\.|^kernels\.t108-|^solver\.t500-|^cudaemu\.bench-ax$",
    "stream_cuda.cu": r"^stream\.|^kernels\.t10[035]-|^solver\.t540-",
    "tensor_cuda.cu": r"^kernels\.t107-|^precond\.t310-pmg",
    "gs_cuda.cu": r"^gs\.",
    "diag_cuda.cu": r"^precond\.t310-jacobi|^solver\.t500-|^disc\.t521-",  # t521: the x.R.x sum (Robin)
    "backend_cuda.cu": r"^kernels\.t103-|^gs\.t143-|^stream\.t153-|^solver\.t540-",
}

# stages: (key, label, tsan, emulator mode, seed)
STAGES = [
    ("lazy0", "lazy, seed 0", False, "lazy", 0),
    ("eager1", "eager, seed 1", False, "eager", 1),
    ("lazy3", "lazy, seed 3", False, "lazy", 3),
    ("tsan", "TSan (eager, seed 1)", True, "eager", 1),
]
REASON_PATTERNS = [
    re.compile(r"hexcg-cudaemu: error"),
    re.compile(r"WARNING: ThreadSanitizer"),
    re.compile(r"assertion failed", re.I),
    re.compile(r"error:", re.I),
]
TSAN_RE = re.compile(r"WARNING: ThreadSanitizer")


def log(msg):
    print(msg, flush=True)


def rel(p):
    return os.path.relpath(p, ROOT)


# ------------------------------------------------------------ enumeration
# the comment and literal masking of the emulation build's rewriter
sys.path.insert(0, os.path.join(ROOT, "tests", "cudaemu"))
from cu_rewrite import mask  # noqa: E402


def debug_only_lines(m):
    """the set of 1-based line numbers compiled only with HEXCG_CUDA_DEBUG_SYNC
    (inside `#ifdef HEXCG_CUDA_DEBUG_SYNC` / `#if defined(...)`, before its
    #else, or in the #else of `#ifndef`), from the masked text m"""
    lines = m.split("\n")
    stack = []  # per open conditional: True while its active branch needs the macro
    out = set()
    k = 0
    while k < len(lines):
        ln = lines[k]
        # a directive continued with backslashes is one logical line
        full, j = ln, k
        while full.endswith("\\") and j + 1 < len(lines):
            j += 1
            full = full[:-1] + lines[j]
        d = re.match(r"\s*#\s*(\w+)(.*)", full)
        if d:
            kw, rest = d.group(1), d.group(2)
            if kw in ("if", "ifdef"):
                stack.append(DEBUG_MACRO in rest and "!" not in rest)
            elif kw == "ifndef":
                stack.append(False if DEBUG_MACRO not in rest else "neg")
            elif kw in ("else", "elif") and stack:
                top = stack[-1]
                stack[-1] = True if top == "neg" else (False if top is True else top)
            elif kw == "endif" and stack:
                stack.pop()
        inside = any(x is True for x in stack)
        for q in range(k, j + 1):
            if inside:
                out.add(q + 1)
        k = j + 1
    return out


def match_paren(m, pos):
    """index just past the ')' matching the '(' at pos in the masked text"""
    depth = 0
    for k in range(pos, len(m)):
        if m[k] == "(":
            depth += 1
        elif m[k] == ")":
            depth -= 1
            if depth == 0:
                return k + 1
    raise ValueError(f"no ')' matching the '(' at offset {pos}")


class Mutation:
    def __init__(self, path, line, kind, start, end, new, old):
        self.path, self.line, self.kind = path, line, kind
        self.start, self.end, self.new, self.old = start, end, new, old
        self.file = os.path.basename(path)
        self.id = f"{self.file}:{line} {kind}"


def enumerate_file(path):
    """(mutations, skipped) of one source: skipped are (where, kind, why)"""
    with open(path, encoding="utf-8") as f:
        src = f.read()
    m = mask(src)
    dbg = debug_only_lines(m)
    muts, skipped = [], []

    def line_of(pos):
        return src.count("\n", 0, pos) + 1

    for mt in re.finditer(r"\b__syncthreads\s*\(\s*\)", m):
        ln = line_of(mt.start())
        if ln in dbg:
            skipped.append((f"{rel(path)}:{ln}", "__syncthreads", f"inside #ifdef {DEBUG_MACRO}"))
            continue
        semi = m[mt.end():].lstrip()
        if not semi.startswith(";"):
            skipped.append((f"{rel(path)}:{ln}", "__syncthreads", "not a statement of its own"))
            continue
        muts.append(Mutation(path, ln, "__syncthreads", mt.start(), mt.end(), "(void)0", src[mt.start():mt.end()]))

    for mt in re.finditer(r"\b(" + "|".join(HOST_SYNC) + r")\s*\(", m):
        name = mt.group(1)
        ln = line_of(mt.start())
        if ln in dbg:
            skipped.append((f"{rel(path)}:{ln}", name, f"inside #ifdef {DEBUG_MACRO}: not compiled in the normal build"))
            continue
        call_end = match_paren(m, mt.end() - 1)
        call = src[mt.start():call_end]
        before = m[:mt.start()].rstrip()
        after = m[call_end:].lstrip()
        wrap = re.search(r"\bHX_CUDA\s*\($", before)
        if wrap and after.startswith(")"):
            # the whole HX_CUDA(...) wrapper: from HX_CUDA to its ')'
            wstart = wrap.start()
            wend = match_paren(m, wrap.end() - 1)
            muts.append(Mutation(path, ln, name, wstart, wend, f"(void)sizeof({call})", src[wstart:wend]))
            continue
        prev = before[-1:] if before else ""
        value_used = prev in "=(,?:!&|<>+-*/" or re.search(r"\breturn$", before) is not None
        if prev == ":" and re.search(r"(\bcase\b[^;{}]*|\bdefault\s*|^\s*\w+\s*):$", before.split("\n")[-1]):
            value_used = False  # a label, not a conditional expression
        if value_used:
            new = f"((void)sizeof({call}), cudaSuccess)"
        else:
            new = f"(void)sizeof({call})"
        muts.append(Mutation(path, ln, name, mt.start(), call_end, new, call))
    muts.sort(key=lambda x: x.line)
    return muts, skipped


def source_files():
    files = []
    for g in SOURCE_GLOBS:
        files.extend(sorted(glob.glob(os.path.join(ROOT, g))))
    return files


def enumerate_all():
    muts, skipped = [], []
    for p in source_files():
        a, b = enumerate_file(p)
        muts.extend(a)
        skipped.extend(b)
    for h in SCAN_ONLY:
        p = os.path.join(ROOT, h)
        if not os.path.exists(p):
            continue
        a, b = enumerate_file(p)
        skipped.extend(b)
        for x in a:
            skipped.append((f"{h}:{x.line}", x.kind, "in a shared header (not a mutation target)"))
    return muts, skipped


# ------------------------------------------------------------ running things
class Interrupted(Exception):
    pass


def _on_signal(signum, frame):
    raise Interrupted(f"signal {signum}")


def run_cmd(cmd, cwd, env=None, timeout=None, log_path=None):
    """run cmd in its own process group; (rc or None on timeout, output, seconds)"""
    t0 = time.time()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        _kill_group(p)
        out, _ = p.communicate()
        rc = None
    except BaseException:
        _kill_group(p)
        p.wait()
        raise
    text = out.decode("utf-8", "replace")
    if log_path:
        with open(log_path, "w", encoding="utf-8") as f:
            f.write(text)
    return rc, text, time.time() - t0


def _kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def ccache_env():
    """the project's ccache settings (scripts/ccache_env.sh) for cmake --build"""
    env = dict(os.environ)
    if env.get("HEXCG_CCACHE", "1") != "0":
        cache = env.get("HEXCG_CACHE") or os.path.join(env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                                                       "hexcg")
        env.setdefault("CCACHE_DIR", os.path.join(cache, "ccache"))
        env["CCACHE_BASEDIR"] = ROOT
        env["CCACHE_NOHASHDIR"] = "1"
        env.setdefault("CCACHE_MAXSIZE", "4G")
    return env


def ensure_build(build_dir, tsan, jobs):
    """configure and build build_dir with scripts/build.sh when it has no cache"""
    if os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        return
    opts = ["-DHEXCG_CUDA=EMU", "-DHEXCG_SHARED_LIB=ON"] + (["-DHEXCG_CUDAEMU_TSAN=ON"] if tsan else [])
    log(f"[setup] configuring and building {rel(build_dir)} ({' '.join(opts)}); this takes a while")
    env = dict(os.environ, HEXCG_BUILD_DIR=build_dir)
    # build.sh compiles with -j $(nproc) (2 on the 2-core machines this runs on)
    rc = subprocess.call([os.path.join(ROOT, "scripts/build.sh")] + opts, env=env, cwd=ROOT)
    if rc != 0:
        sys.exit(f"[setup] scripts/build.sh for {rel(build_dir)} failed (rc {rc})")


def build_all(build_dir, jobs, log_dir):
    """everything of build_dir (new tests, executables after a reconfigure)"""
    log(f"[setup] cmake --build {rel(build_dir)} -j{jobs}")
    rc, out, dt = run_cmd(["cmake", "--build", build_dir, "-j", str(jobs)], ROOT, env=ccache_env(),
                          log_path=os.path.join(log_dir, f"setup-build-{os.path.basename(build_dir)}.log"))
    if rc != 0:
        sys.exit(f"[setup] building {rel(build_dir)} failed:\n{out[-3000:]}")


def check_cache(build_dir, tsan):
    with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8") as f:
        cache = f.read()
    want = {"HEXCG_CUDA": "EMU", "HEXCG_SHARED_LIB": "ON", "HEXCG_CUDAEMU_TSAN": "ON" if tsan else "OFF"}
    for k, v in want.items():
        mt = re.search(rf"^{k}:\w+=(.*)$", cache, re.M)
        if not mt or mt.group(1).strip().upper() != v:
            sys.exit(f"[setup] {rel(build_dir)}: {k} is {mt.group(1) if mt else 'unset'}, want {v}")


def build_lib(build_dir, jobs, log_path):
    rc, out, dt = run_cmd(["cmake", "--build", build_dir, "-j", str(jobs), "--target", "hx_shared"], ROOT,
                          env=ccache_env(), log_path=log_path)
    return rc == 0, out, dt


def generated_cc(build_dir, path):
    return os.path.join(build_dir, "cudaemu", rel(path) + ".cc")


# ------------------------------------------------------------ tests
class Test:
    def __init__(self, d, build_dir):
        self.name = d["name"]
        self.command = d.get("command") or []
        props = {p["name"]: p["value"] for p in d.get("properties", [])}
        self.env = props.get("ENVIRONMENT", []) or []
        self.workdir = props.get("WORKING_DIRECTORY") or build_dir
        self.skip_rc = props.get("SKIP_RETURN_CODE")
        self.pass_re = props.get("PASS_REGULAR_EXPRESSION") or []
        self.fail_re = props.get("FAIL_REGULAR_EXPRESSION") or []
        self.will_fail = bool(props.get("WILL_FAIL", False))
        self.labels = props.get("LABELS", []) or []
        # ranks: mpiexec's -n (PROCESSORS also counts OpenMP threads), else the name's .npN
        ranks = 1
        for k in range(len(self.command) - 1):
            if self.command[k] in ("-n", "-np") and self.command[k + 1].isdigit():
                ranks = int(self.command[k + 1])
                break
        self.one_rank = ranks == 1 and not re.search(r"\.np([2-9]|\d\d+)$", self.name)


def load_tests(build_dir, tsan):
    """the '^gpu$' tests of build_dir, less the emulator's self-checks (those
    running emu_checks: no hexcg code) and, for TSan, the end-to-end runs
    (label e2e: whole hexcg runs, left out of the TSan pass as in scripts/test.sh)"""
    rc, out, _ = run_cmd(["ctest", "--show-only=json-v1", "-L", "^gpu$"], build_dir)
    if rc != 0:
        sys.exit(f"[setup] ctest --show-only in {rel(build_dir)} failed:\n{out}")
    data = json.loads(out[out.index("{"):])
    tests = {}
    for d in data.get("tests", []):
        t = Test(d, build_dir)
        selfcheck = any(os.path.basename(c) == "emu_checks" for c in t.command)
        if not t.command or selfcheck or (tsan and "e2e" in t.labels):
            continue
        tests[t.name] = t
    if not tests:
        sys.exit(f"[setup] no '^gpu$' tests in {rel(build_dir)}")
    return tests


def first_reason(out, tsan):
    lines = out.splitlines()
    pats = ([TSAN_RE] if tsan else []) + REASON_PATTERNS
    for pat in pats:
        for ln in lines:
            if pat.search(ln):
                return ln.strip()[:200]
    return ""


def run_test(t, stage, timeout, log_path):
    """(ok, skipped, reason, seconds) of one test in one stage"""
    _, _, tsan, mode, seed = stage
    env = dict(os.environ)
    for e in t.env:
        k, _, v = e.partition("=")
        env[k] = v
    env["HEXCG_CUDAEMU_MODE"] = mode
    env["HEXCG_CUDAEMU_SEED"] = str(seed)
    # as scripts/test.sh --emu: idle OpenMP workers would spin beside the emulator
    env.setdefault("OMP_WAIT_POLICY", "passive")
    if tsan:
        # as scripts/test.sh --emu-tsan: TSan sees no synchronisation inside
        # libgomp; MPICH's UCX memory hooks (libucm) intercept madvise at
        # thread exit, where TSan's thread state is gone (SIGSEGV in every run)
        env["OMP_NUM_THREADS"] = "1"
        env.setdefault("UCX_MEM_MMAP_HOOK_MODE", "none")
        env.setdefault("UCX_MEM_MALLOC_HOOKS", "no")
        env.setdefault("TSAN_OPTIONS", "second_deadlock_stack=1 history_size=4")
    rc, out, dt = run_cmd(t.command, t.workdir, env=env, timeout=timeout, log_path=log_path)
    if rc is None:
        return False, False, f"timeout after {timeout} s ({first_reason(out, tsan) or 'no error printed'})", dt
    if tsan and TSAN_RE.search(out):
        return False, False, first_reason(out, True), dt
    if t.skip_rc is not None and rc == int(t.skip_rc):
        return True, True, "skipped", dt
    ok = rc == 0
    why = f"exit code {rc}"
    if t.pass_re and ok:
        if not any(re.search(p, out) for p in t.pass_re):
            ok, why = False, "output did not match PASS_REGULAR_EXPRESSION"
    for p in t.fail_re:
        if re.search(p, out):
            ok, why = False, f"output matched FAIL_REGULAR_EXPRESSION {p!r}"
    if t.will_fail:
        ok = not ok
        why = "WILL_FAIL test passed"
    if ok:
        return True, False, "", dt
    reason = first_reason(out, tsan)
    if not reason:
        tail = [ln.strip() for ln in out.splitlines() if ln.strip()]
        reason = f"{why}; last line: {tail[-1][:160]}" if tail else why
    return False, False, reason, dt


# ------------------------------------------------------------ baseline
def fingerprint(tests_by_dir):
    """what a baseline depends on: the sources, the emulator, the test commands, the stages"""
    h = hashlib.sha256(repr(STAGES).encode())
    for p in source_files() + [os.path.join(ROOT, x) for x in SCAN_ONLY] + sorted(
            glob.glob(os.path.join(ROOT, "tests/cudaemu/runtime/**"), recursive=True)):
        if os.path.isfile(p):
            with open(p, "rb") as f:
                h.update(p.encode() + b"\0" + f.read())
    for d, tests in sorted(tests_by_dir.items()):
        for name in sorted(tests):
            h.update(name.encode() + b"\0" + " ".join(tests[name].command).encode())
    return h.hexdigest()


class Baseline:
    """unmutated results, {stage key: {test: [ok, seconds, reason]}}, kept in
    path while the fingerprint holds; the plain stages run up front, the TSan
    stage per test when a mutation first needs it (TSan runs a test 50-200x
    slower: only what survivors reach)"""

    def __init__(self, args, tests, path):
        self.args, self.path = args, path
        self.fp = fingerprint({"main": tests})
        self.results = {}
        if os.path.exists(path) and not args.rebaseline:
            with open(path, encoding="utf-8") as f:
                old = json.load(f)
            if old.get("fingerprint") == self.fp:
                # a timeout is the machine's load more often than the test's: run it again
                self.results = {k: {n: r for n, r in v.items() if r[0] or not r[2].startswith("timeout")}
                                for k, v in old["results"].items()}
        self.seconds = 0.0

    def get(self, key):
        return self.results.get(key, {})

    def missing(self, st, names):
        return [n for n in names if n not in self.get(st[0])]

    def run(self, st, pool, names):
        """the unmutated runs of names in stage st (the caller has built the unmutated library)"""
        key, label, tsan = st[0], st[1], st[2]
        t0 = time.time()
        for n in names:
            # generous: the baseline's times set the mutation runs' limits
            ok, skipped, reason, dt = run_test(pool[n], st, 3 * (self.args.tsan_timeout if tsan else self.args.timeout),
                                               os.path.join(self.args.log_dir, f"baseline-{key}-{n}.log"))
            self.results.setdefault(key, {})[n] = [ok and not skipped, round(dt, 2),
                                                   reason if not ok else ("skipped" if skipped else "")]
            log(f"[baseline] {label:22s} {n:45s} {'ok' if ok and not skipped else ('SKIP' if skipped else 'FAIL')}"
                f" {dt:7.1f} s {reason}")
            with open(self.path, "w", encoding="utf-8") as f:  # after each test: an interrupted baseline resumes
                json.dump({"fingerprint": self.fp, "results": self.results}, f, indent=1)
        self.seconds += time.time() - t0


def run_baseline(args, tests, needed, path):
    """the plain stages' unmutated runs of every needed test"""
    base = Baseline(args, tests, path)
    todo = [(st, base.missing(st, sorted(n for n in needed if n in tests))) for st in STAGES if not st[2]]
    count = sum(len(x[1]) for x in todo)
    if not count:
        log(f"[baseline] reusing {rel(path)}")
        return base
    log(f"[baseline] {count} unmutated test runs; building the unmutated library first")
    ok, out, _ = build_lib(args.build_dir, args.jobs, os.path.join(args.log_dir, "baseline-build.log"))
    if not ok:
        sys.exit(f"[baseline] the unmutated build of {rel(args.build_dir)} failed:\n{out[-3000:]}")
    for st, names in todo:
        base.run(st, tests, names)
    log(f"[baseline] done in {base.seconds:.0f} s")
    return base


def write_source(path, text):
    """write a source with Ctrl-C and SIGTERM held off (never half a file)"""
    sigs = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


# ------------------------------------------------------------ one mutation
def git_clean(path):
    return subprocess.call(["git", "diff", "--quiet", "--", rel(path)], cwd=ROOT) == 0


def mutate_and_test(mu, args, tests, ttests, base):
    """apply mu, build, run the stages; the result dict. The source is restored in finally."""
    with open(mu.path, encoding="utf-8") as f:
        orig = f.read()
    if orig[mu.start:mu.end] != mu.old:
        raise RuntimeError(f"{mu.id}: the source changed since the enumeration")
    os.makedirs(args.backup_dir, exist_ok=True)
    backup = os.path.join(args.backup_dir, mu.file)
    shutil.copy2(mu.path, backup)
    res = {"id": mu.id, "status": "?", "test": "", "mode": "", "reason": "", "runs": 0, "passed": []}
    slug = re.sub(r"[^\w.-]+", "_", mu.id)
    t0 = time.time()
    try:
        new = orig[:mu.start] + mu.new + orig[mu.end:]
        assert new.count("\n") == orig.count("\n")
        write_source(mu.path, new)
        bdirs = [args.build_dir] + ([args.tsan_build_dir] if ttests else [])
        built = set()

        def build(bdir):
            if bdir in built:
                return True
            ok, out, dt = build_lib(bdir, args.jobs, os.path.join(args.log_dir, f"{slug}.build-{os.path.basename(bdir)}.log"))
            if not ok:
                lines = [ln for ln in out.splitlines() if "error" in ln.lower()]
                res.update(status="BUILD FAILED", reason=(lines[0] if lines else out[-200:]).strip()[:200])
                return False
            # the rewritten source keeps the lines, after one `#line 1`: the
            # mutation must be in what was compiled
            gen = generated_cc(bdir, mu.path)
            with open(gen, encoding="utf-8") as f:
                glines = f.read().split("\n")
            sline = orig.count("\n", 0, mu.start) + 1
            if mu.new.split("\n")[0] not in glines[sline]:
                res.update(status="ERROR", reason=f"the mutation is not in {rel(gen)}:{sline + 1}")
                return False
            log(f"    built {os.path.basename(bdir)} in {dt:.0f} s")
            built.add(bdir)
            return True

        if not build(args.build_dir):
            return res
        subset = re.compile(SUBSETS.get(mu.file, r"^$"))
        first = [n for n in tests if subset.search(n)]
        rest = [n for n in tests if not subset.search(n)] if args.fallback else []
        for group_name, names in (("subset", first), ("rest of ^gpu$", rest)):
            if not names:
                continue
            for st in STAGES:
                key, label, tsan = st[0], st[1], st[2]
                if tsan and not ttests:
                    continue
                pool = ttests if tsan else tests
                cand = [n for n in names if n in pool]
                if tsan:
                    # one rank, and only what runs unmutated within --tsan-max-lazy in lazy
                    # mode (--tsan-fallback-max-lazy for the rest of the label)
                    lz = base.get("lazy0")
                    cap = args.tsan_max_lazy if group_name == "subset" else args.tsan_fallback_max_lazy
                    cand = [n for n in cand if pool[n].one_rank and lz.get(n, [False])[0] and lz[n][1] <= cap]
                    missing = base.missing(st, cand)
                    if missing:
                        # the TSan baseline of these tests first, on the unmutated source
                        log(f"    TSan baseline of {len(missing)} tests (unmutated)")
                        write_source(mu.path, orig)
                        built.discard(args.tsan_build_dir)
                        ok, out, _ = build_lib(args.tsan_build_dir, args.jobs,
                                               os.path.join(args.log_dir, "baseline-build-tsan.log"))
                        if not ok:
                            res.update(status="ERROR", reason="the unmutated TSan build failed")
                            return res
                        base.run(st, pool, missing)
                        write_source(mu.path, new)
                bres = base.get(key)
                runnable = [n for n in cand if bres.get(n, [False])[0]]
                if not runnable:
                    continue
                if tsan and not build(args.tsan_build_dir):
                    return res
                runnable.sort(key=lambda n: (bres[n][1], n))
                log(f"    {group_name}, {label}: {len(runnable)} tests")
                for n in runnable:
                    # at least 3x the unmutated time: a loaded machine must not fake a catch
                    limit = max(args.tsan_timeout if tsan else args.timeout, int(3 * bres[n][1]) + 30)
                    ok, skipped, reason, dt = run_test(pool[n], st, limit,
                                                       os.path.join(args.log_dir, f"{slug}.{key}.{n}.log"))
                    res["runs"] += 1
                    if not ok:
                        res.update(status="caught", test=n, mode=label, reason=reason,
                                   log=rel(os.path.join(args.log_dir, f"{slug}.{key}.{n}.log")))
                        log(f"    CAUGHT by {n} ({label}, {dt:.1f} s): {reason}")
                        return res
                res["passed"].append(f"{'subset' if group_name == 'subset' else 'rest'} {key}: {len(runnable)}")
        res.update(status="SURVIVED", reason=f"{res['runs']} test runs passed ({', '.join(res['passed'])})")
        return res
    finally:
        write_source(mu.path, orig)
        res["seconds"] = round(time.time() - t0, 1)
        if not git_clean(mu.path):
            log(f"FATAL: {rel(mu.path)} differs from git after the restore; backup: {rel(backup)}. "
                f"Run: git checkout -- kernels/cuda gs/cuda")
            sys.exit(3)


# ------------------------------------------------------------ output
def table(results, skipped, notes, wall):
    out = ["| mutation | caught by | mode | how |", "|---|---|---|---|"]
    for r in results:
        how = r["reason"].replace("|", "\\|")
        if r["status"] == "caught":
            out.append(f"| `{r['id']}` | {r['test']} | {r['mode']} | {how} |")
        else:
            out.append(f"| `{r['id']}` | **{r['status']}** | {r['mode'] or '-'} | {how} |")
    n_c = sum(r["status"] == "caught" for r in results)
    out.append("")
    out.append(f"{n_c} of {len(results)} mutations caught; wall time {wall:.0f} s ({wall / 60:.1f} min).")
    if skipped:
        out.append("")
        out.append("Not mutated:")
        for where, kind, why in skipped:
            out.append(f"- `{where}` {kind}: {why}")
    for n in notes:
        out.append("")
        out.append(n)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build-emu-mut")
    ap.add_argument("--tsan-build-dir", default="build-emu-mut-tsan")
    ap.add_argument("--out", default=None, help="Markdown table (default <build-dir>/mutation-table.md)")
    ap.add_argument("--only", default=None, help="regex over the mutation ids")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per test, at least 3x its baseline time (default 300)")
    ap.add_argument("--tsan-timeout", type=int, default=900, help="seconds per TSan test, at least 3x its baseline time (default 900)")
    ap.add_argument("--no-tsan", action="store_true", help="skip the ThreadSanitizer stage")
    ap.add_argument("--tsan-max-lazy", type=float, default=3.0,
                    help="TSan stage: only the tests whose unmutated lazy run takes at most this many seconds "
                         "(TSan runs them 50-200x slower; default 3)")
    ap.add_argument("--tsan-fallback-max-lazy", type=float, default=1.0,
                    help="the same for the TSan stage over the rest of the gpu label (default 1)")
    ap.add_argument("--no-fallback", dest="fallback", action="store_false",
                    help="do not run the rest of the gpu label on a survivor")
    ap.add_argument("--rebaseline", action="store_true", help="rerun the unmutated baseline")
    args = ap.parse_args()
    args.build_dir = os.path.join(ROOT, args.build_dir)
    args.tsan_build_dir = os.path.join(ROOT, args.tsan_build_dir)
    args.out = os.path.abspath(args.out) if args.out else os.path.join(args.build_dir, "mutation-table.md")

    muts, skipped = enumerate_all()
    if args.only:
        muts = [m for m in muts if re.search(args.only, m.id)]
    if args.list:
        for m in muts:
            log(f"{m.id:40s} {m.old.strip()!s:55.55s} -> {m.new}")
        for where, kind, why in skipped:
            log(f"skipped: {where} {kind} ({why})")
        log(f"{len(muts)} mutations")
        return 0
    if not muts:
        log("no mutation matches --only")
        return 2
    dirty = [rel(p) for p in source_files() if not git_clean(p)]
    if dirty:
        log(f"the CUDA sources must match git before mutating them: {' '.join(dirty)} differ "
            f"(git checkout -- kernels/cuda gs/cuda restores them)")
        return 2

    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _on_signal)
    t_start = time.time()
    args.log_dir = os.path.join(args.build_dir, "mutation-logs")
    args.backup_dir = os.path.join(args.build_dir, "mutation-backup")
    ensure_build(args.build_dir, False, args.jobs)
    check_cache(args.build_dir, False)
    if not args.no_tsan:
        ensure_build(args.tsan_build_dir, True, args.jobs)
        check_cache(args.tsan_build_dir, True)
    os.makedirs(args.log_dir, exist_ok=True)
    build_all(args.build_dir, args.jobs, args.log_dir)
    if not args.no_tsan:
        build_all(args.tsan_build_dir, args.jobs, args.log_dir)
    tests = load_tests(args.build_dir, False)
    ttests = None if args.no_tsan else load_tests(args.tsan_build_dir, True)

    needed = set()
    for m in muts:
        sub = re.compile(SUBSETS.get(m.file, r"^$"))
        needed.update(n for n in tests if sub.search(n))
    if args.fallback:
        needed.update(tests)
    t_base = time.time()
    base = run_baseline(args, tests, needed, os.path.join(args.build_dir, "mutation-baseline.json"))
    ctx = {"setup": t_base - t_start, "base": base, "files": sorted({m.file for m in muts}), "skipped": skipped,
           "tsan": ttests is not None, "args": args}

    results = []
    rc = 0
    try:
        for i, mu in enumerate(muts):
            log(f"[{i + 1}/{len(muts)}] {mu.id}: {mu.old.strip()} -> {mu.new}")
            r = mutate_and_test(mu, args, tests, ttests, base)
            results.append(r)
            log(f"    => {r['status']} ({r['seconds']:.0f} s)")
            write_out(ctx, results, time.time() - t_start)
    except (KeyboardInterrupt, Interrupted) as e:
        log(f"interrupted ({e or 'Ctrl-C'}): the source was restored; partial table in {rel(args.out)}")
        rc = 130
    finally:
        for p in source_files():
            if not git_clean(p):
                log(f"FATAL: {rel(p)} differs from git: run git checkout -- kernels/cuda gs/cuda")
                rc = 3
    if rc == 0:
        log("[done] rebuilding the unmutated library")
        build_lib(args.build_dir, args.jobs, os.path.join(args.log_dir, "final-build.log"))
        if ttests:
            build_lib(args.tsan_build_dir, args.jobs, os.path.join(args.log_dir, "final-build-tsan.log"))
    text = write_out(ctx, results, time.time() - t_start)
    print()
    print(text)
    if rc:
        return rc
    return 0 if all(r["status"] == "caught" for r in results) else 1


def write_out(ctx, results, wall):
    args, base = ctx["args"], ctx["base"]
    notes = [f"Of the wall time, the setup (builds) took {ctx['setup']:.0f} s and the unmutated baseline runs "
             f"{base.seconds:.0f} s (0 where an earlier run's baseline was reused)."]
    excl = []
    for st in STAGES:
        for n, (ok, dt, why) in sorted(base.get(st[0]).items()):
            if not ok:
                excl.append(f"- {n} ({st[1]}): {why}")
    if excl:
        notes.append("Left out of a stage because they fail unmutated (baseline):\n" + "\n".join(excl))
    notes.append("Test subsets (regex over the gpu test names): " +
                 "; ".join(f"{f}: `{SUBSETS.get(f, '')}`" for f in ctx["files"]))
    if ctx["tsan"]:
        notes.append(f"TSan stage: one-rank tests whose unmutated lazy run takes <= {args.tsan_max_lazy:g} s "
                     f"(--tsan-max-lazy; {args.tsan_fallback_max_lazy:g} s over the rest of the label), "
                     "OMP_NUM_THREADS=1.")
    text = table(results, ctx["skipped"], notes, wall)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.splitext(args.out)[0] + ".json", "w", encoding="utf-8") as f:
        json.dump({"results": results, "wall_s": round(wall, 1)}, f, indent=1)
    return text


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (KeyboardInterrupt, Interrupted) as e:
        print(f"interrupted ({e or 'Ctrl-C'}) before the first mutation", file=sys.stderr)
        sys.exit(130)
