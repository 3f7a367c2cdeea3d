#!/usr/bin/python3
"""The tune table is the whole truth about hexcg's environment switches (issue 49 point 5).

usage: check_tune.py HEXCG SOURCE_DIR

- every environment variable the production sources (not tests/, not scripts/) read by name
  (getenv("X"), hx_env("X"), hx_env_on/off("X"), setenv excluded) is a row of
  `hexcg keys --tune`, and no raw getenv() of a HEXCG_ name bypasses hx_env;
- every row of the table is read somewhere (no dead rows) and documented in
  docs/developer.md's "Tuning switches" section, and every name documented there is a row;
- each row printed has its values, default and a "why".
Prints "tune table complete" and exits 0, else lists what differs and exits 1.
"""
import os
import re
import subprocess
import sys

hexcg, src = sys.argv[1], sys.argv[2]
fail = []
out = subprocess.run([hexcg, "keys", "--tune"], capture_output=True, text=True, check=True).stdout
rows = {}
for m in re.finditer(r"^(\S+)\s+(.*) \(default: (.*)\)\n  (.*)\n  why: (.*)$", out, re.M):
    rows[m.group(1)] = m.groups()[1:]
if not rows:
    sys.exit(f"check_tune: hexcg keys --tune printed no rows:\n{out}")
for name, (values, deflt, what, why) in rows.items():
    if not (values.strip() and deflt.strip() and what.strip() and len(why.strip()) > 10):
        fail.append(f"{name}: an empty field in {values!r} {deflt!r} {what!r} {why!r}")

read, raw = {}, []
prod = ("app", "core", "disc", "gs", "io", "kernels", "mesh", "precond", "solver", "problem", "time", "lib")
for top in prod:
    for dp, _, files in os.walk(os.path.join(src, top)):
        for f in files:
            if not f.endswith((".c", ".h", ".cu", ".cuh")):
                continue
            path = os.path.join(dp, f)
            text = open(path, encoding="utf-8", errors="replace").read()
            rel = os.path.relpath(path, src)
            for m in re.finditer(r"\b(getenv|hx_env|hx_env_on|hx_env_off)\(\"([A-Z0-9_]+)\"\)", text):
                read.setdefault(m.group(2), []).append(rel)
                if m.group(1) == "getenv" and m.group(2).startswith(("HEXCG_", "HX_")):
                    raw.append(f"{rel}: getenv(\"{m.group(2)}\") bypasses hx_env (the tune table)")
fail += raw
for name in read:
    if (name.startswith(("HEXCG_", "HX_"))) and name not in rows:
        fail.append(f"{name} (read in {', '.join(sorted(set(read[name])))}) is not in the tune table (core/tune.c)")
for name in rows:
    if name not in read:
        fail.append(f"{name} is in the tune table but no source reads it: remove the row")

doc = open(os.path.join(src, "docs", "developer.md"), encoding="utf-8").read()
m = re.search(r"^## Tuning switches\n(.*?)(?=^## )", doc + "\n## end\n", re.S | re.M)
if not m:
    fail.append("docs/developer.md has no '## Tuning switches' section")
else:
    documented = set(re.findall(r"^\| `([A-Z0-9_]+)` \|", m.group(1), re.M))
    for name in sorted(set(rows) - documented):
        fail.append(f"{name}: not documented in docs/developer.md 'Tuning switches'")
    for name in sorted(documented - set(rows)):
        fail.append(f"{name}: documented in docs/developer.md but not in the tune table")

if fail:
    print("\n".join(fail))
    sys.exit(1)
print(f"tune table complete: {len(rows)} switches, each read and documented")
