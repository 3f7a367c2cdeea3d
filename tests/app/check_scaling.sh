#!/usr/bin/env bash
# jobs/scaling.sh end to end on 1 and 2 ranks (strong and weak) with a tiny
# case: each series writes its summaries and a scaling.csv with one row per
# rank count, the weak series doubles the elements, and bad input exits 2.
set -euo pipefail
HEXCG=$1; OUT=$2; ROOT=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$OUT"
for mode in strong weak; do
  "$ROOT/jobs/scaling.sh" $mode --ranks 1,2 --hexcg "$HEXCG" --set order=2 \
    --set "mesh.elements=[2, 2, 2]" --out "$OUT" >/dev/null
done
/usr/bin/python3 - "$OUT" <<'PY'
import csv, sys
out = sys.argv[1]
for mode, els in (("strong", ["8", "8"]), ("weak", ["8", "16"])):
    rows = list(csv.DictReader(open(f"{out}/{mode}/scaling.csv")))
    assert [r["ranks"] for r in rows] == ["1", "2"], (mode, rows)
    assert [r["elements"] for r in rows] == els, (mode, [r["elements"] for r in rows])
    assert abs(float(rows[0]["efficiency"]) - 1.0) < 1e-12, rows[0]
    assert all(float(r["t_per_iteration"]) > 0 for r in rows)
PY
if "$ROOT/jobs/scaling.sh" sideways --hexcg "$HEXCG" 2>/dev/null; then echo "bad mode accepted"; exit 1; fi
if "$ROOT/jobs/scaling.sh" weak --ranks 1,3 --hexcg "$HEXCG" --out "$OUT" 2>/dev/null; then
  echo "weak scaling on 1,3 ranks accepted"; exit 1
fi
echo "scaling scripts ok"
