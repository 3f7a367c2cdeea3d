#!/usr/bin/env bash
# Strong or weak scaling series of hexcg runs, then a table of the results.
#
#   jobs/scaling.sh strong|weak [--ranks 1,2,4,8] [--case FILE] [--out DIR]
#                   [--repeat N] [--hexcg PATH] [--predict] [--no-plots] [--set key=value]...
#
# strong: the case as given on every rank count.
# weak:   generated meshes (box, kershaw): mesh.elements multiplied with the
#         rank count (doubling x, y, z in turn for each factor 2; rank counts
#         must be the first one times a power of two), so the elements per
#         rank stay those of the case at the first rank count. Gmsh meshes
#         (fixed elements): the order grows instead, p = round(p0 (N/N0)^(1/3))
#         (at most 15), so the DOFs per rank stay about those at the first
#         count; collect.py then compares the time per iteration per DOF.
# --repeat N runs each rank count N times (OUT/<mode>/np<N>/r<k>/):
# collect.py reports the median and the minimum over the repeats.
# Each run goes to OUT/<mode>/np<N>/ (summary.yaml, history.csv); at the end
# jobs/collect.py writes OUT/<mode>/scaling.csv + plots and prints the
# efficiencies, with the setup (discretisation + preconditioner) apart from
# the per-iteration time. --predict first measures the model's inputs on the
# largest rank count (hexcg bench stream -> stream_fit.yaml, hexcg bench comm
# -> comm.yaml, in OUT/<mode>/), so collect.py prints and draws the prediction.
# The default case is configs/scaling.yaml (p-multigrid, what a user runs).
# Launcher: $HEXCG_LAUNCH (a command line that takes the rank count next);
# default inside a Slurm allocation: srun --mpi=$HEXCG_SRUN_MPI (pmi2: what
# Debian's MPICH speaks) --cpu-bind=$HEXCG_CPU_BIND (cores) --cpus-per-task
# =$OMP_NUM_THREADS $HEXCG_SRUN_OPTS -n; elsewhere "mpiexec.mpich -n".
# OMP_NUM_THREADS defaults to SLURM_CPUS_PER_TASK, else 1. A run whose
# summary counts other ranks than asked (a launcher that started
# singletons) stops the series. Extra --set options go to every run.
# Python: scripts/python.sh's rule ($HEXCG_PYTHON, else /usr/bin/python3,
# else python3 from PATH), with PyYAML and matplotlib (the plots; --no-plots
# writes the CSV and table only): both are imported before the first run, and
# a missing one stops the series with a message naming it (exit 2). --predict needs a Jacobi-PCG case: the model
# counts a Jacobi-PCG iteration (docs/scaling.md); with another
# preconditioner it is refused before any run.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/python.sh
source "$ROOT/scripts/python.sh"
die() { echo "scaling.sh: $*" >&2; exit 2; }

MODE=${1:-}
[[ $MODE == strong || $MODE == weak ]] || die "first argument must be 'strong' or 'weak' (got '${MODE}')"
shift
RANKS=1,2,4
CASE=$ROOT/configs/scaling.yaml
REPEAT=1
OUT=out/scaling
HEXCG=$ROOT/build/hexcg
SETS=()
PREDICT=0
PLOTS=1
while (($#)); do
  case $1 in
    --ranks) RANKS=${2:?--ranks needs a list}; shift ;;
    --case) CASE=${2:?--case needs a file}; shift ;;
    --out) OUT=${2:?--out needs a folder}; shift ;;
    --hexcg) HEXCG=${2:?--hexcg needs a path}; shift ;;
    --set) SETS+=(--set "${2:?--set needs key=value}"); shift ;;
    --repeat) REPEAT=${2:?--repeat needs a count}; shift ;;
    --predict) PREDICT=1 ;;
    --no-plots) PLOTS=0 ;;
    *) die "unknown option '$1'" ;;
  esac
  shift
done
[[ -x $HEXCG ]] || die "hexcg executable '$HEXCG' not found (build it: scripts/build.sh, or pass --hexcg)"
[[ -f $CASE ]] || die "case file '$CASE' not found"
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "--repeat: '$REPEAT' is not a positive integer"
# the modules collect.py needs, imported now: a plot that cannot be drawn stops the series before
# its first run, not after the last one (it used to skip the plots with a note in the log)
if ((PLOTS)); then
  HX_PY_HINT="; or pass --no-plots for the CSV and table alone" hx_python_need scaling.sh "the plots" yaml matplotlib
else
  hx_python_need scaling.sh "reading the case and the summaries" yaml
fi
PY=$HX_PY
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-${SLURM_CPUS_PER_TASK:-1}}
if [[ -n ${HEXCG_LAUNCH:-} ]]; then LAUNCH=$HEXCG_LAUNCH
elif [[ -n ${SLURM_JOB_ID:-} ]]; then
  LAUNCH="srun --mpi=${HEXCG_SRUN_MPI:-pmi2} --cpu-bind=${HEXCG_CPU_BIND:-cores}"
  LAUNCH+=" --cpus-per-task=$OMP_NUM_THREADS ${HEXCG_SRUN_OPTS:-} -n"
else LAUNCH="mpiexec.mpich -n"; fi

# mesh type, elements and order of the case (after the --set options) from a dry run's effective case
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
"$HEXCG" run "$CASE" "${SETS[@]}" --dry-run --quiet --force --output "$probe/o" >/dev/null \
  || die "the case does not validate: $HEXCG run $CASE ${SETS[*]} --dry-run"
probe_out=$("$PY" -c '
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
m = c["mesh"]
pc = (c.get("preconditioner") or {}).get("type", "pmg")
print(m["type"], c["order"], *(m.get("elements") or [0, 0, 0]), pc)' "$probe/o/case.yaml") \
  || die "cannot read $probe/o/case.yaml with $PY (needs PyYAML; set HEXCG_PYTHON)"
read -r MTYPE P0 EX EY EZ PC <<<"$probe_out"
if ((PREDICT)) && [[ $PC != jacobi ]]; then
  die "--predict: jobs/model.py models a Jacobi-PCG iteration and this case runs preconditioner '$PC'; add --set preconditioner.type=jacobi for a modelled study, or drop --predict (docs/scaling.md, \"The model's inputs for pmg\")"
fi

IFS=, read -r -a NPS <<<"$RANKS"
first=${NPS[0]}
if ((PREDICT)); then
  last=${NPS[-1]}
  mkdir -p "$OUT/$MODE"
  echo "== model inputs on $last ranks -> $OUT/$MODE/{stream_fit,comm}.yaml"
  # shellcheck disable=SC2086
  $LAUNCH "$last" "$HEXCG" bench stream --kernels BS1 --max 64M --points 12 --no-plot --output "$OUT/$MODE" >/dev/null \
    || die "hexcg bench stream failed"
  # shellcheck disable=SC2086
  $LAUNCH "$last" "$HEXCG" bench comm --output "$OUT/$MODE" >/dev/null || die "hexcg bench comm failed"
fi
for np in "${NPS[@]}"; do
  [[ $np =~ ^[1-9][0-9]*$ ]] || die "rank count '$np' is not a positive integer"
  extra=()
  if [[ $MODE == weak ]]; then
    (( np % first == 0 )) || die "weak scaling: $np is not a multiple of $first"
    if [[ $MTYPE == gmsh ]]; then
      # a file's elements are fixed: refine by order, DOFs ~ E p^3
      p=$("$PY" -c "import sys; print(min(15, max(1, round($P0 * ($np / $first) ** (1 / 3)))))")
      extra=(--set "order=$p")
    else
      f=$(( np / first )); ex=$EX; ey=$EY; ez=$EZ; d=0
      while (( f > 1 )); do
        (( f % 2 == 0 )) || die "weak scaling: rank counts must be the first one times a power of two"
        case $d in 0) ex=$((ex * 2)) ;; 1) ey=$((ey * 2)) ;; 2) ez=$((ez * 2)) ;; esac
        d=$(( (d + 1) % 3 )); f=$(( f / 2 ))
      done
      extra=(--set "mesh.elements=[$ex, $ey, $ez]")
    fi
  fi
  for ((k = 1; k <= REPEAT; k++)); do
    dir=$OUT/$MODE/np$np
    ((REPEAT == 1)) || dir=$dir/r$k
    msg="== $MODE np=$np"
    ((${#extra[@]} == 0)) || msg+=" (${extra[1]})"
    ((REPEAT == 1)) || msg+=", repeat $k of $REPEAT"
    echo "$msg -> $dir"
    # shellcheck disable=SC2086
    $LAUNCH "$np" "$HEXCG" run "$CASE" "${SETS[@]}" "${extra[@]}" \
      --set output.solution=false --output "$dir" --force --quiet
    got=$(awk '/^ranks:/{print $2; exit}' "$dir/summary.yaml" 2>/dev/null || true)
    [[ $got == "$np" ]] || die "np=$np: $dir/summary.yaml says ranks '${got}': the launcher '$LAUNCH' did not start one MPI job of $np ranks (wrong --mpi plugin? set HEXCG_SRUN_MPI or HEXCG_LAUNCH)"
  done
done
PLOT_OPT=()
((PLOTS)) || PLOT_OPT=(--no-plots)
"$PY" "$ROOT/jobs/collect.py" "$MODE" "$OUT/$MODE" "${PLOT_OPT[@]}"
