#!/usr/bin/python3
"""Disk full while writing the outputs (each writer: history.csv, history.h5,
solution.h5 and its XDMF, summary.yaml), on 1 and 2 ranks: a small tmpfs is
mounted (root only; skips with exit 77 and a reason where mounting is not
allowed). Every run must end, without a crash or a hang, with exit 1 and one
message naming the file and "no space left on device", and leave no partial
file under a final name (no *.tmp either) and no earlier result damaged."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, failures, setup  # noqa: E402

a, _ = setup(source=False, clean=False)

os.makedirs(a.work, exist_ok=True)
mnt = tempfile.mkdtemp(prefix="tmpfs-", dir=a.work)


def mount(kib):
    subprocess.run(["umount", mnt], capture_output=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", mnt], capture_output=True, text=True)
    return p.returncode == 0, p.stderr.strip()


ok, why = mount(64)
if not ok or os.geteuid() != 0:
    print(f"SKIP: cannot mount a tmpfs here ({why or 'not root'})")
    os.rmdir(mnt)
    sys.exit(77)

case = os.path.join(a.work, "full.yaml")
open(case, "w").write("""mesh: {type: box, elements: [6, 6, 6]}
order: 5
problem:
  rhs: "3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)"
  exact: "sin(pi*x)*sin(pi*y)*sin(pi*z)"
  boundary:
    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}
solver: {max_iterations: 40}
""")


FINAL = ["summary.yaml", "solution.h5", "solution.xdmf", "history.csv", "history.h5"]
try:
    # sizes: history.csv fails, history.h5 fails, solution.h5 fails
    for kib, culprit in ((4, "history.csv"), (16, "history.h5"), (400, "solution.h5")):
        for ranks in (1, 2):
            ok, why = mount(kib)
            check(ok, f"remount {kib}k: {why}")
            out = os.path.join(mnt, "o")
            try:
                p = subprocess.run([a.mpiexec, "-n", str(ranks), a.hexcg, "run", case, "--output", out, "--quiet"],
                                   capture_output=True, text=True, timeout=90)
            except subprocess.TimeoutExpired:
                check(False, f"{kib}k np{ranks}: hexcg hangs")
                continue
            tag = f"{kib}k np{ranks}"
            check(p.returncode == 1, f"{tag}: exit {p.returncode} (expected 1): {p.stderr[-800:]!r}")
            lines = [l for l in p.stderr.splitlines() if l.strip()]
            check(len(lines) == 1, f"{tag}: one message expected, got {lines!r}")
            check("no space left on device" in p.stderr.lower() and culprit in p.stderr,
                  f"{tag}: message names {culprit} and the reason: {p.stderr!r}")
            left = os.listdir(out) if os.path.isdir(out) else []
            check(not [f for f in left if f in FINAL or f.endswith(".tmp")],
                  f"{tag}: partial or temporary files left: {left}")
finally:
    subprocess.run(["umount", mnt], capture_output=True)
    os.rmdir(mnt)

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("disk full: ok")
