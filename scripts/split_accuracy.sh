#!/usr/bin/env bash
# The split-geometry accuracy table of docs/performance.md (issue 14):
# operator.geometry fp64 against split on the Kershaw mesh (6^3), the deformed
# box (configs/poisson_deformed.yaml) and the Gmsh mesh of
# regression/meshes/extruded.geo (meshed here with /usr/bin/gmsh; skipped
# without it) at p = 3, 5, 7, 1 rank, Jacobi. Prints a markdown table:
# iterations, L2 errors, relative changes of the L2 and max errors, model
# bytes per DOF, FP64 residuals / correction solves of the split run.
#   scripts/split_accuracy.sh [HEXCG_BINARY]
# Environment: TOL (default 1e-12), SPLIT_OUT (scratch, default
# /tmp/hexcg-split-accuracy).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/python.sh
source "$ROOT/scripts/python.sh" # the project's python: HEXCG_PYTHON, /usr/bin/python3, PATH's
hx_python_need split_accuracy.sh "reading summary.yaml" yaml
BIN=${1:-$ROOT/build/hexcg}
TOL=${TOL:-1e-12}
OUT=${SPLIT_OUT:-/tmp/hexcg-split-accuracy}
[[ -x $BIN ]] || { echo "split_accuracy.sh: $BIN is not an executable (build first: scripts/build.sh)" >&2; exit 1; }
mkdir -p "$OUT"
export OMP_NUM_THREADS=1
meshes="kershaw deformed"
if [[ -x /usr/bin/gmsh ]]; then
  /usr/bin/gmsh -3 -format msh22 -o "$OUT/extruded.msh" "$ROOT/regression/meshes/extruded.geo" >/dev/null
  meshes="$meshes gmsh"
else
  echo "split_accuracy.sh: /usr/bin/gmsh not found, the Gmsh rows are skipped" >&2
fi
# one "iterations l2 max B/DOF fp64_residuals refinements" line per run
run() {
  local cfg=$1 p=$2 g=$3; shift 3
  "$BIN" run "$cfg" --output "$OUT/run" --force --quiet --set order="$p" --set solver.tol="$TOL" \
    --set solver.max_iterations=5000 --set operator.geometry="$g" --set output.solution=false \
    --set output.history=false "$@"
  "$HX_PY" - "$OUT/run/summary.yaml" <<'PY'
import sys, yaml
s = yaml.safe_load(open(sys.argv[1])); o = s["operator"]
print(s["solver"]["iterations"], repr(s["error"]["l2"]), repr(s["error"]["max"]), "%.1f" % o["bytes_per_dof"],
      o["fp64_residuals"], o["refinements"])
PY
}
echo "| mesh | p | iterations fp64/split | error L2 fp64 | error L2 split | rel. change L2 | rel. change max | B/DOF fp64 -> split | FP64 residuals / corrections |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for mesh in $meshes; do
  case $mesh in
    kershaw) cfg=$ROOT/configs/kershaw.yaml; sets=(--set "mesh.elements=[6,6,6]") ;;
    deformed) cfg=$ROOT/configs/poisson_deformed.yaml; sets=() ;;
    gmsh) cfg=$ROOT/regression/inputs/gmsh_extruded.yaml; sets=(--set "mesh.file=$OUT/extruded.msh") ;;
  esac
  for p in 3 5 7; do
    f=$(run "$cfg" "$p" fp64 "${sets[@]}")
    s=$(run "$cfg" "$p" split "${sets[@]}")
    "$HX_PY" - "$mesh" "$p" "$f" "$s" <<'PY'
import sys
m, p, f, s = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
l2f, l2s, mf, ms = float(f[1]), float(s[1]), float(f[2]), float(s[2])
print(f"| {m} | {p} | {f[0]}/{s[0]} | {l2f:.4e} | {l2s:.4e} | {abs(l2s - l2f) / l2f:.1e} | "
      f"{abs(ms - mf) / mf:.1e} | {f[3]} -> {s[3]} | {s[4]} / {s[5]} |")
PY
  done
done
