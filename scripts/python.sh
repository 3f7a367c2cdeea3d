# shellcheck shell=bash
# The one Python rule of the project's shell scripts, sourced (not run):
#
#   source "$ROOT/scripts/python.sh"
#   hx_python_need PROG PURPOSE MODULE...   # e.g. hx_python_need scaling.sh "the plots" yaml matplotlib
#                                           # (HX_PY_HINT: a text added to the fix, e.g. "; or --no-plots")
#   "$HX_PY" script.py ...
#
# HX_PY is $HEXCG_PYTHON if set and not empty, else /usr/bin/python3 if it is
# executable (Debian's, which has python3-yaml, -numpy, -h5py, -matplotlib),
# else python3 from PATH. hexcg itself (compare --plot, bench stream) picks
# the same (hx_python in core/hx_core.h); docs/scaling.md "Python".
# hx_python_need imports the modules up front (scripts/pyrequire.py) and
# exits 2 with a message that names the missing module, the interpreter and
# the fix; an interpreter that does not run at all is named likewise.
if [[ -n ${HEXCG_PYTHON:-} ]]; then
  HX_PY=$HEXCG_PYTHON HX_PY_FROM="HEXCG_PYTHON=$HEXCG_PYTHON"
elif [[ -x /usr/bin/python3 ]]; then
  HX_PY=/usr/bin/python3 HX_PY_FROM="the default: Debian's python3"
else
  HX_PY=python3 HX_PY_FROM="the default: python3 from PATH, as /usr/bin/python3 does not exist"
fi
HX_PY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

hx_python_need() { # PROG PURPOSE MODULE...
  local prog=$1 why=$2 where
  shift 2
  if ! where=$(command -v "$HX_PY"); then
    echo "$prog: no Python interpreter '$HX_PY' ($HX_PY_FROM), needed for $why: install python3 (apt install python3 python3-yaml python3-matplotlib) or set HEXCG_PYTHON to one" >&2
    exit 2
  fi
  local rc=0
  "$HX_PY" "$HX_PY_DIR/pyrequire.py" --prog "$prog" --for "$why" --from "$HX_PY_FROM" \
    --hint "${HX_PY_HINT:-}" "$@" || rc=$?
  ((rc == 0)) && return 0
  # pyrequire.py printed the missing module (exit 2); anything else: the interpreter itself failed
  ((rc == 2)) || echo "$prog: cannot run the Python interpreter '$HX_PY' ($where, $HX_PY_FROM; exit $rc), needed for $why: set HEXCG_PYTHON to a working python3" >&2
  exit 2
}
