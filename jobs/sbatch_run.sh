#!/usr/bin/env bash
# The body of jobs/strong.sbatch and jobs/weak.sbatch (and their -gpu twins):
# turns options and environment into a jobs/scaling.sh call inside the
# allocation. Every size comes from here, none from editing the job files.
#
#   sbatch [sbatch options] jobs/strong.sbatch [OPTIONS]
#
# OPTIONS (each also as an environment variable, which sbatch passes on):
#   --ranks LIST       HEXCG_RANKS     rank counts, e.g. 1,2,4 (or 1:2:4); default:
#                                      1, 2, 4, ... up to the job's task count
#   --elements E       HEXCG_ELEMENTS  elements of the case at the first rank count,
#                                      EX,EY,EZ or EXxEYxEZ (default: the job file's
#                                      HEXCG_DEFAULT_ELEMENTS; generated meshes only:
#                                      a Gmsh case keeps its file's elements)
#   --order P          HEXCG_ORDER     polynomial order (default: the case's)
#   --case FILE        HEXCG_CASE      case file (default configs/scaling.yaml: pmg)
#   --backend B        HEXCG_BACKEND   cpu or cuda (default: the case's)
#   --out DIR          HEXCG_OUT       results (default out/scaling-$SLURM_JOB_ID)
#   --hexcg PATH       HEXCG_BIN       executable (default build/hexcg)
#   --set key=value    (repeatable)    any other case key
#   --repeat N         HEXCG_REPEAT    run each rank count N times: median and minimum
#                                      (default 1)
#   --predict          HEXCG_PREDICT=1 measure the model's inputs first (bench stream
#                                      + bench comm) and draw its prediction (a
#                                      Jacobi-PCG case only: --set preconditioner.type=jacobi)
#   --no-plots         HEXCG_NO_PLOTS=1 the CSV and table without the PNGs (no matplotlib needed)
# Python: scripts/python.sh's rule ($HEXCG_PYTHON, else /usr/bin/python3, else
# python3 from PATH) with PyYAML and matplotlib, checked before any run.
# Launch (jobs/scaling.sh): srun --mpi=$HEXCG_SRUN_MPI (default pmi2)
# --cpu-bind=$HEXCG_CPU_BIND (default cores) --cpus-per-task=$OMP_NUM_THREADS
# $HEXCG_SRUN_OPTS. Relative paths are relative to the submit directory.
set -euo pipefail
die() { echo "hexcg job: $*" >&2; exit 2; }
MODE=${1:?mode}; shift
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/python.sh
source "$ROOT/scripts/python.sh"
[[ -n ${SLURM_JOB_ID:-} ]] || die "not inside a Slurm allocation: submit with sbatch (or run jobs/scaling.sh directly)"
RANKS=${HEXCG_RANKS:-}
ELEMENTS=${HEXCG_ELEMENTS:-}
ORDER=${HEXCG_ORDER:-}
CASE=${HEXCG_CASE:-$ROOT/configs/scaling.yaml}
BACKEND=${HEXCG_BACKEND:-}
OUT=${HEXCG_OUT:-out/scaling-$SLURM_JOB_ID}
BIN=${HEXCG_BIN:-$ROOT/build/hexcg}
REPEAT=${HEXCG_REPEAT:-1}
SETS=()
EXTRA=()
[[ ${HEXCG_PREDICT:-0} == 1 ]] && EXTRA+=(--predict)
[[ ${HEXCG_NO_PLOTS:-0} == 1 ]] && EXTRA+=(--no-plots)
while (($#)); do
  case $1 in
    --ranks|--elements|--order|--case|--backend|--out|--hexcg|--set|--repeat)
      (($# >= 2)) || die "option $1 needs a value"
      case $1 in
        --ranks) RANKS=$2 ;; --elements) ELEMENTS=$2 ;; --order) ORDER=$2 ;; --case) CASE=$2 ;;
        --backend) BACKEND=$2 ;; --out) OUT=$2 ;; --hexcg) BIN=$2 ;; --set) SETS+=(--set "$2") ;;
        --repeat) REPEAT=$2 ;;
      esac
      shift 2 ;;
    --predict) EXTRA+=(--predict); shift ;;
    --no-plots) EXTRA+=(--no-plots); shift ;;
    *) die "unknown option '$1' (allowed: --ranks --elements --order --case --backend --out --hexcg --set --repeat --predict --no-plots; see jobs/sbatch_run.sh)" ;;
  esac
done
NT=${SLURM_NTASKS:-1}
if [[ -z $RANKS ]]; then
  RANKS=1; n=2
  while ((n <= NT)); do RANKS+=",$n"; n=$((n * 2)); done
fi
RANKS=${RANKS//:/,}
IFS=, read -r -a nps <<<"$RANKS"
for np in "${nps[@]}"; do
  [[ $np =~ ^[1-9][0-9]*$ ]] || die "--ranks: '$np' is not a positive integer"
  ((np <= NT)) || die "--ranks: $np ranks but the job has $NT tasks (sbatch --ntasks=$np or more)"
done
# generated meshes get the job file's default size; a Gmsh case has its own elements
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "--repeat: '$REPEAT' is not a positive integer"
[[ -f $CASE ]] || die "case file '$CASE' not found"
if [[ " ${EXTRA[*]} " == *" --no-plots "* ]]; then
  hx_python_need "hexcg job" "reading the case and the summaries" yaml
else
  HX_PY_HINT="; or pass --no-plots for the CSV and table alone" hx_python_need "hexcg job" "the plots" yaml matplotlib
fi
PY=$HX_PY
# a failing probe stops the job: guessing 'box' would put --elements on a Gmsh case
MTYPE=$("$PY" -c 'import sys, yaml; print(((yaml.safe_load(open(sys.argv[1])) or {}).get("mesh") or {}).get("type", ""))' "$CASE") \
  || die "cannot read the mesh type of $CASE with $PY (needs PyYAML; set HEXCG_PYTHON)"
if [[ $MTYPE == gmsh ]]; then
  [[ -z $ELEMENTS ]] || die "--elements is for generated meshes (box, kershaw); $CASE is a Gmsh case: its size is the file's, refine it with --order (weak scaling does)"
elif [[ -z $ELEMENTS ]]; then
  ELEMENTS=${HEXCG_DEFAULT_ELEMENTS:-}
fi
if [[ -n $ELEMENTS ]]; then
  e=${ELEMENTS//x/,}
  [[ $e =~ ^[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*$ ]] || die "--elements: '$ELEMENTS' is not EX,EY,EZ"
  SETS+=(--set "mesh.elements=[${e//,/, }]")
fi
if [[ -n $ORDER ]]; then
  [[ $ORDER =~ ^[1-9][0-9]*$ ]] || die "--order: '$ORDER' is not a positive integer"
  SETS+=(--set "order=$ORDER")
fi
[[ -z $BACKEND ]] || SETS+=(--set "backend=$BACKEND")
echo "hexcg $MODE scaling: job $SLURM_JOB_ID on $(hostname -s), $NT tasks, ranks $RANKS, out $OUT"
exec "$ROOT/jobs/scaling.sh" "$MODE" --ranks "$RANKS" --case "$CASE" --hexcg "$BIN" --out "$OUT" --repeat "$REPEAT" "${EXTRA[@]}" "${SETS[@]}"
