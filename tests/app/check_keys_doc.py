#!/usr/bin/python3
"""Every key of the option tables (hexcg keys --names) is documented in
docs/case-format.md, and every key documented there is a key of the tables.

usage: check_keys_doc.py HEXCG docs/case-format.md

The documented keys are read from the "## Keys" section: a heading
"### `X` ..." or "#### `X` ..." documents key X and makes X the prefix of
the table rows below it; a table row whose first cell is "`k`" documents
PREFIX.k ("`coarse.solver`" under preconditioner documents
preconditioner.coarse.solver and so preconditioner.coarse); rows naming
"k.*" ("as for asm") document nothing new. Prints "keys documented" and
exits 0 when both directions hold, else lists the differences and exits 1.
"""
import re
import subprocess
import sys


def table_keys(hexcg):
    out = subprocess.run([hexcg, "keys", "--names"], capture_output=True, text=True, check=True).stdout
    keys = {line.strip() for line in out.splitlines() if line.strip()}
    if not keys:
        sys.exit("check_keys_doc: hexcg keys --names printed nothing")
    return keys


def doc_keys(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^## Keys\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        sys.exit(f"check_keys_doc: no '## Keys' section in {path}")
    keys, prefix = set(), None
    for line in m.group(1).splitlines():
        h = re.match(r"^#{3,4} `([A-Za-z0-9_.]+)`", line)
        if h:
            prefix = h.group(1)
            keys.add(prefix)
            continue
        r = re.match(r"^\| `([A-Za-z0-9_.*]+)` \|", line)
        if r and prefix:
            k = r.group(1)
            if k.endswith(".*"):
                continue
            keys.add(f"{prefix}.{k}")
    return keys


def with_prefixes(keys):
    out = set(keys)
    for k in keys:
        parts = k.split(".")
        for i in range(1, len(parts)):
            out.add(".".join(parts[:i]))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tables, docs = table_keys(sys.argv[1]), doc_keys(sys.argv[2])
    undocumented = sorted(tables - with_prefixes(docs))
    unknown = sorted(docs - with_prefixes(tables))
    for k in undocumented:
        print(f"key of the option tables not in {sys.argv[2]}: {k}")
    for k in unknown:
        print(f"key documented in {sys.argv[2]} but in no option table: {k}")
    if undocumented or unknown:
        return 1
    print(f"keys documented: {len(tables)} keys of the tables, {len(docs)} documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
