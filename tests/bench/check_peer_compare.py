#!/usr/bin/python3
"""scripts/peer_compare.py against a fake peer whose figures are known: the
script must run hexcg and the peer alternately, read both, and print the
ratio of the times to solution round by round. The fake peer prints the
driver's RESULT block with tts_s = 2 * (hexcg's setup + solve of the run just
before it, read from that run's summary.yaml), so every ratio must be 0.5.
The last column, hexcg's preconditioner setup over the rest of its setup,
must be the median of the kept summaries' figures."""
import glob
import os
import re
import shutil
import stat
import subprocess
import sys

hexcg, mpiexec, src, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
peer_dir = os.path.join(work, "peer")
os.makedirs(peer_dir, exist_ok=True)
fake = os.path.join(peer_dir, "dealii_poisson_simd_mg")
with open(fake, "w") as f:
    f.write(f"""#!/usr/bin/python3
import glob, os, re, tempfile
runs = sorted(glob.glob(os.path.join(tempfile.gettempdir(), "hexcg-peer-*", "*", "summary.yaml")), key=os.path.getmtime)
txt = open(runs[-1]).read()
setup = float(re.search(r"\\n  setup: ([0-9.eE+-]+)", txt).group(1))
solve = float(re.search(r"\\n  solve: ([0-9.eE+-]+)", txt).group(1))
tts = 2 * (setup + solve)
print("RESULT peer=dealii prec=mg quad=gll p=2 cells=8 dofs=125 ranks=1")
print(f"  setup_s={{tts / 4}} (mesh+dofs 0, matrixfree+rhs 0, precond 0)")
print(f"  iters=7 solve_s={{3 * tts / 4}} s_per_iter=1 x0=zero final_rel_res=1e-9 first_solve_s={{3 * tts / 4}} first_iters=7")
print(f"  tts_s={{tts}} (setup + first solve) kershaw=0 bench=0")
""")
os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
cmd = [sys.executable, os.path.join(src, "scripts", "peer_compare.py"), "--peer-dir", peer_dir, "--hexcg", hexcg,
       "--mpiexec", mpiexec, "--peer-mpiexec", mpiexec, "--ranks", "1", "--rounds", "2", "--cases", "box-p7",
       "--set", "mesh.elements=[2,2,2]", "--set", "order=2", "--keep"]
p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
print(p.stdout, p.stderr)
ok = p.returncode == 0
row = [l for l in p.stdout.splitlines() if l.startswith("| box-p7 |")]
ok = ok and len(row) == 1
if ok:
    cells = [c.strip() for c in row[0].split("|")]
    # the ratio column: median (min-max), every round 0.5
    ok = cells[6] == "**0.5 (0.5-0.5)**" and cells[4] == "7"
    rounds = re.findall(r"box-p7 round (\d): hexcg (\d+) its", p.stdout)
    ok = ok and [r[0] for r in rounds] == ["1", "2"]
    kept = re.search(r"hexcg's outputs: (\S+)", p.stdout)
    ok = ok and kept is not None
    if ok:
        want = []
        for y in sorted(glob.glob(os.path.join(kept.group(1), "box-p7-*", "summary.yaml"))):
            t = open(y).read()
            setup = float(re.search(r"\n  setup: ([0-9.eE+-]+)", t).group(1))
            pcs = float(re.search(r"\npreconditioner:\n(?:  .*\n)*?  setup_s: ([0-9.eE+-]+)", t).group(1))
            want.append(pcs / (setup - pcs))
        want.sort()
        med = (want[0] + want[1]) / 2 if len(want) == 2 else float("nan")
        got = cells[8].split(" ")[0] if len(cells) > 8 else ""
        print(f"preconditioner setup / rest: printed {got}, summaries {want} (median {med:.3g})")
        ok = len(want) == 2 and got == f"{med:.3g}"
    if kept:
        shutil.rmtree(kept.group(1), ignore_errors=True)
# a missing peer is refused with a message
q = subprocess.run([sys.executable, os.path.join(src, "scripts", "peer_compare.py"), "--peer-dir", work + "/none"],
                   capture_output=True, text=True)
ok = ok and q.returncode != 0 and "no peer executable" in q.stderr
print("peer compare ok" if ok else "peer compare FAILED")
sys.exit(0 if ok else 1)
