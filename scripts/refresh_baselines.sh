#!/usr/bin/env bash
# Regenerate regression baselines on purpose: rerun the cases (all, or the
# ones named) on 1 rank and rewrite regression/baselines/<case>/ where the
# residual history or the summary changed; print what changed.
#   scripts/refresh_baselines.sh [CASE...]
# Environment: HEXCG_BUILD_DIR (default: build) holds the hexcg to run;
# HEXCG (a hexcg executable) overrides it. Commit the new baselines with a
# message that says WHY the histories changed (docs/regression.md).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${HEXCG_BUILD_DIR:-$ROOT/build}
HEXCG=${HEXCG:-$BUILD/hexcg}
if [[ ! -x $HEXCG ]]; then
  echo "refresh_baselines.sh: no hexcg executable at $HEXCG (build first: scripts/build.sh, or set HEXCG)" >&2
  exit 2
fi
MPIEXEC=$(command -v mpiexec.mpich || command -v mpiexec || true)
[[ -n $MPIEXEC ]] || { echo "refresh_baselines.sh: no mpiexec found" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hexcg-refresh.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} /usr/bin/python3 "$ROOT/regression/regress.py" refresh "$@" \
  --hexcg "$HEXCG" --mpiexec "$MPIEXEC" --source "$ROOT" --work "$WORK"
