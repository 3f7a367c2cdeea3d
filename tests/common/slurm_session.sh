# Sourced by the tests that run the job scripts under a real (local,
# one-node) Slurm (tests/app/check_slurm.sh, tests/time/check_slurm_heat.sh).
#   slurm_session OUT WATCHDOG_S [TOOL...]
# Skips (exit 77) without Slurm's daemons and tools (and TOOL...) or without
# root; makes OUT afresh (absolute in $OUT); starts munged/slurmctld/slurmd
# in $CL=OUT/cluster (scripts/slurm_local.sh, $ROOT the repository) and
# exports its environment. The daemons are stopped when the test exits
# (trap), also on failure, and by a watchdog in its own session after
# WATCHDOG_S seconds even if the test is killed (set it above ctest's timeout).
slurm_session() {
  local out=$1 watchdog=$2 t
  shift 2
  export PATH=$PATH:/usr/sbin
  for t in munged slurmctld slurmd sbatch scontrol "$@"; do
    command -v "$t" >/dev/null || { echo "SKIP: $t not installed (scripts/bootstrap.sh installs Slurm)"; exit 77; }
  done
  [[ $(id -u) == 0 ]] || { echo "SKIP: the local Slurm runs as root"; exit 77; }
  rm -rf "$out"
  mkdir -p "$out"
  OUT=$(cd "$out" && pwd)
  CL=$OUT/cluster
  WD=
  trap slurm_session_stop EXIT
  trap 'exit 1' INT TERM
  setsid bash -c "sleep $watchdog; '$ROOT/scripts/slurm_local.sh' stop '$CL'" </dev/null >/dev/null 2>&1 &
  WD=$!
  "$ROOT/scripts/slurm_local.sh" start "$CL" --timeout 30
  eval "$("$ROOT/scripts/slurm_local.sh" env "$CL")"
  unset SLURM_JOB_ID SLURM_NTASKS HEXCG_LAUNCH
}

slurm_session_stop() {
  "$ROOT/scripts/slurm_local.sh" stop "$CL" || true
  [[ -z $WD ]] || kill -- -"$WD" 2>/dev/null || true
}
