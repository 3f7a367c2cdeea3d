"""What the Python checks of the tests share (tests/fault/check_*.py and the
command-line checks of app/, ax/, cases/, compare/): their arguments
(--hexcg, --mpiexec, --work, and --case or --source where a check needs
them), a fresh work folder, check() that records a failure and says it,
hexcg() that runs hexcg on N ranks in the work folder, and finish() with the
exit status. A check imports it with
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))"""
import argparse
import os
import shutil
import subprocess
import sys

failures = []
A = None

# the $Nodes lines of the unit cube's corners, in Gmsh's hex8 order (nodes 1..8)
UNIT_CUBE_NODES = "1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 0 0 1\n6 1 0 1\n7 1 1 1\n8 0 1 1\n"


# the options of a seeded fuzzer's rounds (tests/fuzz/diff_*.py), for setup(options=...)
ROUND_OPTIONS = ((("--seed",), dict(type=int, default=1, help="seed of the first round (round k uses seed + k)")),
                 (("--rounds",), dict(type=int, default=0, help="rounds to run (0: until --time)")),
                 (("--time",), dict(type=float, default=120.0, help="seconds to run when --rounds is 0")))


def fuzz_rounds(a):
    """the rounds of a seeded fuzzer with ROUND_OPTIONS: (seed, its random generator, a new folder
    A.WORK/seedS) from a.seed on, a.rounds of them or, where that is 0, until a.time seconds have passed"""
    import random
    import time
    t_end = time.time() + a.time
    k = 0
    while (a.rounds and k < a.rounds) or (not a.rounds and time.time() < t_end):
        seed = a.seed + k
        k += 1
        work = os.path.join(a.work, f"seed{seed}")
        os.makedirs(work)
        yield seed, random.Random(seed), work


def setup(case=False, options=(), source=False, clean=True):
    """parse the arguments (options: (flags, keywords) pairs for more) and
    empty the work folder (clean=False: leave it as it is)"""
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--hexcg", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--work", required=True)
    if case:
        ap.add_argument("--case", required=True)
    if source:
        ap.add_argument("--source", required=True)
    for flags, kw in options:
        ap.add_argument(*flags, **kw)
    A = ap.parse_args()
    if clean:
        shutil.rmtree(A.work, ignore_errors=True)
    os.makedirs(A.work, exist_ok=True)
    return A, A.work


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def hexcg(args, ranks=1, timeout=120):
    """hexcg ARGS on `ranks` ranks in the work folder: (exit status, stdout, stderr)"""
    p = subprocess.run([A.mpiexec, "-n", str(ranks), A.hexcg] + args, cwd=A.work, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def run_or_kill(cmd, cwd, out, timeout):
    """cmd in the folder cwd: (exit status, stderr); past timeout seconds the processes whose command
    line names cwd/out (the run's output folder) are killed and the status is 'timeout'"""
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        subprocess.run(["pkill", "-KILL", "-f", os.path.join(cwd, out)], capture_output=True)
        return "timeout", ""


def png_text(data):
    """the (width, height) and the text chunks (tEXt, zTXt, iTXt: {key: text}) of the PNG file data"""
    import struct
    import zlib
    i, size, text = 8, None, {}
    while i < len(data):
        n, kind = struct.unpack(">I4s", data[i:i + 8])
        body = data[i + 8:i + 8 + n]
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"tEXt":
            k, v = body.split(b"\0", 1)
            text[k.decode("latin-1")] = v.decode("latin-1")
        elif kind == b"zTXt":
            k, v = body.split(b"\0", 1)
            text[k.decode("latin-1")] = zlib.decompress(v[1:]).decode("latin-1")
        elif kind == b"iTXt":
            k, rest = body.split(b"\0", 1)
            comp, rest = rest[0], rest[2:]
            rest = rest.split(b"\0", 2)[2]
            text[k.decode("latin-1")] = (zlib.decompress(rest) if comp else rest).decode("utf-8")
        i += 12 + n
    return size, text


def summary_section(path, key):
    """the scalars of one top-level section of a summary.yaml (`time:` ...) as text, {} when the
    file or the section is not there (read line by line: the file may be one a failed run cut)"""
    if not os.path.exists(path):
        return {}
    d, inside = {}, False
    for line in open(path):
        if line.startswith(key + ":"):
            inside = True
        elif inside and line.startswith("  "):
            if ": " in line:
                k, v = line.strip().split(": ", 1)
                d[k] = v
        elif inside:
            break
    return d


def finish(ok):
    print(f"{len(failures)} failed" if failures else ok)
    sys.exit(1 if failures else 0)
