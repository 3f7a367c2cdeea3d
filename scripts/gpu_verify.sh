#!/usr/bin/env bash
# Run the GPU verification bundle (docs/gpu-verification.md) from the repository root:
#
#   bash scripts/gpu_verify.sh [BUDGET_S]        # default 480 s of wall time in all
#
# Meant for the GPU machine of the device tool, which has the NVIDIA driver but
# none of hexcg's libraries: everything comes from build-gpu-bundle/ (made here
# by scripts/gpu_bundle.sh), unpacked into a scratch folder. Steps, in order of
# importance, each under `timeout`, the whole within BUDGET_S:
#   1. the machine (nvidia-smi, glibc, where libcuda is); the bundle: ldd of
#      every binary and library must resolve into the bundle or to glibc,
#      libstdc++, libgcc_s; hexcg --version; a 2-rank MPI launch; what that
#      launch really loads (LD_DEBUG, dlopen included): bundle, glibc,
#      libstdc++, libgcc_s and the NVIDIA driver only
#   2. every ctest test labelled gpu (tests.list; they compare CUDA with the CPU
#      backend inside the test; exit 77 = skipped, e.g. no device)
#   3. hexcg run of configs/poisson_box.yaml on cuda and on cpu (1 rank) and
#      hexcg compare of the two; then the benchmarks on CUDA with their
#      defaults: bench cg, bench ax, bench stream (caps 90, 150, 150 s)
#   4. the CPU tests of the same executables (bundle sanity, lowest priority)
# A failing step does not stop the others. Writes into $OUT (default
# build-gpu-out/; at most 8 files come back from the device tool):
#   summary.txt  counts, failures, skip reasons, key figures
#   results.tsv  kind, name, status, exit code, seconds, note: one step a line
#   verify.log   everything printed
#   logs.tar.gz  one log per step, bench outputs, run outputs (without *.h5)
#   stream_fit-cuda.yaml   the fit of bench stream --backend cuda (if it ran)
# Exit status: 0 nothing failed (skips are no failures), 1 a step failed or
# timed out, 3 nothing failed but gpu tests were left out for lack of time.
# Environment: OUT, HEXCG_GPU_BUNDLE (default build-gpu-bundle), HEXCG_GPU_STEP_MAX
# (cap per test, default 120 s), HEXCG_GPU_CPU_TESTS=0 (skip step 4) or
# =first (step 4 runs only the first cpu test of each executable: every
# bundled test executable runs one real case; gpu_bundle.sh --check),
# HEXCG_GPU_BENCH=0 (skip step 3's benchmarks), HEXCG_GPU_KEEP=1 (keep the scratch folder).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUDGET=${1:-480}
[[ $BUDGET =~ ^[0-9]+$ ]] || { echo "usage: gpu_verify.sh [BUDGET_S]" >&2; exit 2; }
SRC_BUNDLE=${HEXCG_GPU_BUNDLE:-$ROOT/build-gpu-bundle}
OUT=${OUT:-$ROOT/build-gpu-out}
STEP_MAX=${HEXCG_GPU_STEP_MAX:-120}
RESERVE=15 # seconds kept for packing the results
mkdir -p "$OUT" || exit 2
rm -f "$OUT"/{summary.txt,results.tsv,verify.log,logs.tar.gz,stream_fit-cuda.yaml}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hexcg-gpu.XXXXXX") || exit 2
LOGS=$WORK/logs
mkdir -p "$LOGS/steps" "$WORK/run" "$WORK/bench"
exec > >(tee "$OUT/verify.log") 2>&1
TEE_PID=$!
RESULTS=$OUT/results.tsv
printf 'kind\tname\tstatus\trc\tseconds\tnote\n' >"$RESULTS"
SECONDS=0
hr() { printf '%s\n' "---------------------------------------------------------------- $*"; }
left() { echo $((BUDGET - SECONDS - RESERVE)); }

hr "machine"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname 2>/dev/null || echo "${HOSTNAME:-?}")  budget: ${BUDGET} s"
echo "os: $( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null)  kernel: $(uname -r)  cpus: $(nproc)"
echo "glibc: $(getconf GNU_LIBC_VERSION 2>/dev/null || echo unknown)"
if command -v nvidia-smi >/dev/null 2>&1; then
  timeout 30 nvidia-smi 2>&1 | head -25
  timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
else
  echo "nvidia-smi: not found"
fi

hr "bundle"
if [[ -f $SRC_BUNDLE/payload.tar.gz ]]; then
  BUNDLE=$WORK/bundle
  mkdir -p "$BUNDLE"
  tar -xzf "$SRC_BUNDLE/payload.tar.gz" -C "$BUNDLE" || { echo "error: cannot unpack $SRC_BUNDLE/payload.tar.gz"; exit 2; }
  echo "unpacked $SRC_BUNDLE/payload.tar.gz into $BUNDLE ($(du -sm "$BUNDLE" | cut -f1) MiB)"
elif [[ -x $SRC_BUNDLE/bin/hexcg ]]; then
  BUNDLE=$SRC_BUNDLE
else
  echo "error: no bundle in $SRC_BUNDLE (run scripts/gpu_bundle.sh; carry [\"build-gpu-bundle\"])"
  exit 2
fi
cat "$BUNDLE/BUNDLE_INFO"
# folders of the build tree that test arguments name ("$WORK"/...)
[[ -f $BUNDLE/workdirs.list ]] && while read -r d; do [[ -n $d ]] && mkdir -p "$WORK/$d"; done <"$BUNDLE/workdirs.list"
need=$(sed -n 's/.*glibc >= \([0-9.]*\).*/\1/p' "$BUNDLE/BUNDLE_INFO")
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
GLIBC_NOTE="machine glibc ${have:-unknown}, bundle needs >= ${need:-?}"
# The bundle first; keep what the machine set (its driver's libcuda may be found
# only through LD_LIBRARY_PATH, e.g. /usr/local/nvidia/lib64).
export LD_LIBRARY_PATH=$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [[ -d $d && :$LD_LIBRARY_PATH: != *:$d:* ]] && LD_LIBRARY_PATH+=:$d
done
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
echo "driver library: $( ($(command -v ldconfig || echo /sbin/ldconfig) -p 2>/dev/null | grep -m1 'libcuda.so.1 ') || true)$(for d in ${LD_LIBRARY_PATH//:/ }; do [[ -e $d/libcuda.so.1 ]] && printf ' %s/libcuda.so.1' "$d"; done)"
export PATH=$BUNDLE/bin:$PATH
export HYDRA_LAUNCHER=fork # one machine: no ssh
# UCX (MPICH's transport) also searches its build-time module folder
# /usr/lib/x86_64-linux-gnu/ucx: point it at the bundle's only.
export UCX_MODULE_DIR=$BUNDLE/lib/ucx
# hwloc (in MPICH and Hydra) dlopens every plugin in its build-time folder
# (/usr/lib/x86_64-linux-gnu/hwloc on Debian, where libhwloc-plugins puts
# hwloc_pci, hwloc_gl, hwloc_opencl, hwloc_xml_libxml and through them
# libpciaccess, libX11, libOpenCL, libxml2, ...). hwloc takes
# HWLOC_PLUGINS_PATH as the folder to search instead (checked with Debian 12's
# hwloc 2.9): the bundle's lib/hwloc is empty, so no plugin is loaded from
# anywhere; MPICH needs hwloc's built-in Linux/x86 discovery only.
export HWLOC_PLUGINS_PATH=$BUNDLE/lib/hwloc
MPIEXEC=$BUNDLE/bin/mpiexec.hydra
HEXCG=$BUNDLE/bin/hexcg
STDBUF=()
command -v stdbuf >/dev/null 2>&1 && STDBUF=(stdbuf -oL -eL)

declare -A COUNT=()
FAILED=()
SKIPS=()
record() { # kind name status rc seconds note
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RESULTS"
  COUNT[$1.$3]=$((${COUNT[$1.$3]:-0} + 1))
  printf '[%-7s] %-4s %-34s %6s s  %s\n' "$3" "$1" "$2" "$5" "$6"
  case $3 in fail | timeout) FAILED+=("$1 $2: $3 (rc $4) $6") ;; skip) SKIPS+=("$2: $6") ;; esac
}

# run_step KIND NAME TIMEOUT WILL_FAIL PASS_REGEX ENV COMMAND: COMMAND (shell
# words using $BUNDLE, $WORK, $MPIEXEC, $HEXCG) runs in a fresh folder, log in
# $LOGS/steps/NAME.log.
run_step() {
  local kind=$1 name=$2 tmo=$3 wf=$4 rx=$5 envs=$6 cmd=$7
  local budget_left rc status note t0 t1 secs log=$LOGS/steps/$name.log wd=$WORK/run/$name
  budget_left=$(left)
  if ((budget_left < 5)); then
    record "$kind" "$name" notrun - 0 "budget of ${BUDGET} s used up"
    return
  fi
  ((tmo > budget_left)) && tmo=$budget_left
  [[ $envs == - ]] && envs=
  mkdir -p "$wd"
  printf '$ %s %s\n' "$envs" "$cmd" >"$log"
  t0=$(date +%s.%N)
  (cd "$wd" && eval "exec timeout -k 10 $tmo env $envs ${STDBUF[*]} $cmd") >>"$log" 2>&1 </dev/null
  rc=$?
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  note=
  if ((rc == 124 || rc == 137)); then
    status=timeout note="killed after ${tmo} s"
  elif ((rc == 77)); then
    status=skip
    note=$(grep -m1 '^SKIP:' "$log" | cut -c1-160)
    [[ -n $note ]] || note="exit 77 (no SKIP: line)"
  else
    # as ctest: with a PASS_REGULAR_EXPRESSION the output decides, not the exit code
    local ok=1
    if [[ $rx != - ]]; then
      tail -n +2 "$log" | grep -Pzq -- "$rx"
      case $? in
        0) ;;
        1) ok=0 note="output does not match the test's PASS_REGULAR_EXPRESSION" ;;
        *) ((rc == 0)) || ok=0; note="regex not checked (grep -P unavailable), exit code used" ;;
      esac
    elif ((rc != 0)); then
      ok=0
      note=$(grep -m1 -iE 'error|assert|fail|abort|signal' "$log" | cut -c1-160)
      [[ -n $note ]] || note=$(grep -v '^\s*$' "$log" | tail -1 | cut -c1-160)
    fi
    if [[ $wf == 1 ]]; then
      if ((ok)); then status=fail note="expected to fail (WILL_FAIL)"; else status=pass note="failed as expected (WILL_FAIL)"; fi
    elif ((ok)); then
      status=pass
    else
      status=fail
    fi
  fi
  record "$kind" "$name" "$status" "$rc" "$secs" "$note"
  if [[ $status == fail || $status == timeout ]]; then
    echo "  ---- last lines of $name.log"
    tail -15 "$log" | sed 's/^/  | /'
  fi
}

hr "library check (LD_LIBRARY_PATH=$BUNDLE/lib)"
# Allowed from the machine: glibc's libraries, libstdc++, libgcc_s, the vDSO.
SYSTEM_RE='^(linux-vdso\.so|ld-linux-x86-64\.so|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libresolv\.so|libstdc\+\+\.so|libgcc_s\.so)'
ldd_list() { if command -v ldd >/dev/null 2>&1; then ldd "$1"; else /lib64/ld-linux-x86-64.so.2 --list "$1"; fi; }
nfiles=0 nbad=0
declare -A SYSLIBS=()
for f in "$BUNDLE"/bin/* "$BUNDLE"/lib/*.so* "$BUNDLE"/lib/ucx/*.so*; do
  [[ -f $f ]] || continue
  nfiles=$((nfiles + 1))
  while read -r line; do
    name=${line%% *}
    if [[ $line == *"not found"* ]]; then
      echo "  MISSING  $(basename "$f"): $name"; nbad=$((nbad + 1)); continue
    fi
    path=
    [[ $line == *" => /"* ]] && { path=${line#*=> }; path=${path%% (*}; }
    [[ $line == /* ]] && path=${line%% (*}
    [[ -z $path ]] && continue # the vDSO
    if [[ $path == "$BUNDLE"/* ]]; then continue; fi
    if [[ $(basename "$name") =~ $SYSTEM_RE ]]; then SYSLIBS[$path]=1; continue; fi
    echo "  OUTSIDE  $(basename "$f"): $name => $path"; nbad=$((nbad + 1))
  done < <(ldd_list "$f" 2>&1)
done
echo "from the machine: $(printf '%s ' "${!SYSLIBS[@]}" | tr ' ' '\n' | sort | tr '\n' ' ')"
if ((nbad == 0)); then
  record check bundle.libraries pass 0 0 "$nfiles files: every library in the bundle or glibc/libstdc++/libgcc_s"
else
  record check bundle.libraries fail 1 0 "$nbad libraries missing or outside the bundle ($nfiles files)"
fi

if [[ -n $need && -n $have ]]; then
  if [[ $(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1) == "$need" ]]; then
    record check glibc pass 0 0 "$GLIBC_NOTE"
  else
    record check glibc fail 1 0 "$GLIBC_NOTE: rebuild the bundle on an older system"
  fi
fi

hr "hexcg --version"
"$HEXCG" --version 2>&1 | tee "$LOGS/version.txt"
HAVE_GPU=1
cuda_line=$(grep -m1 '^backends:' "$LOGS/version.txt")
if ! grep -q 'cuda (' <<<"$cuda_line"; then
  HAVE_GPU=0 GPU_WHY="hexcg was built without CUDA"
elif grep -qi 'no usable CUDA device' <<<"$cuda_line"; then
  HAVE_GPU=0 GPU_WHY=$(sed 's/.*no usable CUDA device: *//; s/)$//' <<<"$cuda_line")
fi
((HAVE_GPU)) && echo "CUDA device: yes" || echo "CUDA device: NO ($GPU_WHY)"
run_step check mpi.launch.np2 30 0 - - '"$MPIEXEC" -n 2 "$HEXCG" --version'
if [[ $(tail -1 "$RESULTS" | cut -f3) != pass ]]; then
  echo "retrying with HYDRA_HOST_FILE (localhost)"
  echo "localhost:64" >"$WORK/hosts"
  export HYDRA_HOST_FILE=$WORK/hosts
  run_step check mpi.launch.np2.localhost 30 0 - - '"$MPIEXEC" -n 2 "$HEXCG" --version'
fi
# What the processes really load (dlopen included: UCX modules, libcuda,
# hwloc plugins): every object from the bundle, glibc, libstdc++, libgcc_s or
# the NVIDIA driver. Nothing else is allowed, not even "harmless" system
# libraries: the device machine may not have them.
LD_DEBUG=files timeout -k 5 30 "$MPIEXEC" -n 2 "$HEXCG" --version >"$LOGS/ld_debug.txt" 2>&1
loaded=$(sed -n 's/.*calling init: //p' "$LOGS/ld_debug.txt" | sort -u)
LOADED_OK_RE='/(ld-linux-x86-64|libc|libm|libpthread|libdl|librt|libresolv|libstdc\+\+|libgcc_s|libcuda|libnvidia-[a-z0-9_-]+)\.so[.0-9]*$'
outside=$(grep -v "^$BUNDLE/" <<<"$loaded" | grep -vE "$LOADED_OK_RE" | grep . || true)
echo "loaded at run time from the machine: $(grep -v "^$BUNDLE/" <<<"$loaded" | tr '\n' ' ')"
if [[ -z $loaded ]]; then
  record check bundle.loaded skip - 0 "LD_DEBUG gave no output"
elif [[ -n $outside ]]; then
  record check bundle.loaded fail 1 0 "loaded from outside the bundle: $(tr '\n' ' ' <<<"$outside")"
else
  record check bundle.loaded pass 0 0 "$(wc -l <<<"$loaded") objects loaded by mpiexec -n 2 hexcg --version: bundle, glibc, libstdc++, libgcc_s, driver"
fi

hr "gpu tests ($(grep -c '^gpu' "$BUNDLE/tests.list"))"
while IFS=$'\t' read -r kind name tmo wf rx envs cmd; do
  [[ $kind == gpu ]] && run_step gpu "$name" $((tmo < STEP_MAX ? tmo : STEP_MAX)) "$wf" "$rx" "$envs" "$cmd"
done <"$BUNDLE/tests.list"

hr "hexcg run (cuda, cpu, compare) and benchmarks"
# Jacobi-PCG (FP64 throughout) on both backends, so that compare can hold the
# two histories to round-off; the default pmg runs an FP32 cycle whose bits
# differ between the backends (its CUDA twins are among the gpu tests above)
CASE='"$BUNDLE"/src/configs/poisson_box.yaml --set preconditioner.type=jacobi'
if ((HAVE_GPU)); then
  run_step gpu run.poisson_box.cuda 120 0 - - \
    '"$MPIEXEC" -n 1 "$HEXCG" run '"$CASE"' --set backend=cuda --output "$WORK"/runs/cuda --force'
else
  record gpu run.poisson_box.cuda skip - 0 "no CUDA device: $GPU_WHY"
fi
run_step cpu run.poisson_box.cpu 120 0 - - \
  '"$MPIEXEC" -n 1 "$HEXCG" run '"$CASE"' --set backend=cpu --output "$WORK"/runs/cpu --force'
if [[ -f $WORK/runs/cuda/summary.yaml && -f $WORK/runs/cpu/summary.yaml ]]; then
  run_step gpu compare.cuda-vs-cpu 60 0 - - '"$HEXCG" compare "$WORK"/runs/cuda "$WORK"/runs/cpu --iteration-slack 1'
fi

if ((HAVE_GPU)) && [[ ${HEXCG_GPU_BENCH:-1} != 0 ]]; then
  # shortest first; bench ax prints a row per case (kept if killed), bench
  # stream writes its files at the end
  run_step bench bench.cg.cuda 90 0 - - '"$MPIEXEC" -n 1 "$HEXCG" bench cg --backend cuda'
  run_step bench bench.ax.cuda 150 0 - - '"$MPIEXEC" -n 1 "$HEXCG" bench ax --backend cuda'
  run_step bench bench.stream.cuda 150 0 - - \
    '"$MPIEXEC" -n 1 "$HEXCG" bench stream --backend cuda --no-plot --output "$WORK"/bench/stream-cuda'
elif ((!HAVE_GPU)); then
  for b in stream ax cg; do record bench "bench.$b.cuda" skip - 0 "no CUDA device: $GPU_WHY"; done
fi

if [[ ${HEXCG_GPU_CPU_TESTS:-1} != 0 ]]; then
  FIRST_ONLY=0
  [[ ${HEXCG_GPU_CPU_TESTS:-1} == first ]] && FIRST_ONLY=1
  hr "cpu tests of the same executables ($(grep -c '^cpu' "$BUNDLE/tests.list")$( ((FIRST_ONLY)) && echo ', the first of each executable'))"
  declare -A CPU_EXE_SEEN=()
  while IFS=$'\t' read -r kind name tmo wf rx envs cmd; do
    [[ $kind == cpu ]] || continue
    if ((FIRST_ONLY)); then
      exe=$(grep -o '"\$BUNDLE"/bin/[^ ]*' <<<"$cmd" | head -1)
      [[ -n ${CPU_EXE_SEEN[${exe:-$name}]:-} ]] && continue
      CPU_EXE_SEEN[${exe:-$name}]=1
    fi
    run_step cpu "$name" $((tmo < STEP_MAX ? tmo : STEP_MAX)) "$wf" "$rx" "$envs" "$cmd"
  done <"$BUNDLE/tests.list"
fi

# ---------------------------------------------------------------- summary
c() { echo "${COUNT[$1.$2]:-0}"; }
summary() {
  echo "hexcg GPU verification: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname 2>/dev/null || echo "${HOSTNAME:-?}"), ${SECONDS} s of ${BUDGET} s"
  sed -n '3,4p' "$BUNDLE/BUNDLE_INFO"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu: $(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
  fi
  grep -m1 '^backends:' "$LOGS/version.txt"
  echo
  for k in check gpu bench cpu; do
    printf '%-6s pass %3s  fail %3s  timeout %3s  skip %3s  not run %3s\n' "$k" \
      "$(c "$k" pass)" "$(c "$k" fail)" "$(c "$k" timeout)" "$(c "$k" skip)" "$(c "$k" notrun)"
  done
  local ngpu=$(($(c gpu pass) + $(c gpu fail) + $(c gpu timeout) + $(c gpu skip) + $(c gpu notrun)))
  echo
  if ((!HAVE_GPU)); then
    echo "NOTHING WAS VERIFIED ON A GPU: no usable CUDA device ($GPU_WHY); $(c gpu skip) of $ngpu gpu steps skipped."
  elif (($(c gpu pass) == 0)); then
    echo "NOTHING WAS VERIFIED ON A GPU: none of the $ngpu gpu steps passed."
  elif (($(c gpu skip) > 0)); then
    echo "WARNING: $(c gpu skip) gpu steps skipped although a device was found."
  fi
  if ((${#FAILED[@]})); then
    echo "FAILED:"; printf '  %s\n' "${FAILED[@]}"
  fi
  if ((${#SKIPS[@]})); then
    echo "skipped (reasons):"; printf '%s\n' "${SKIPS[@]}" | sed 's/^[^:]*: //' | sort | uniq -c | sed 's/^/  /'
  fi
  local fit=$WORK/bench/stream-cuda/stream_fit.yaml
  if [[ -f $fit ]]; then
    echo; echo "== bench stream --backend cuda (stream_fit.yaml): per kernel"
    awk '/^  [A-Za-z0-9]+:$/ {k=$1; sub(":","",k)}
         /^    (name|largest_gbps|wmax_gbps|t0_seconds|meets_target):/ {v[k]=v[k] " " $1 " " $2}
         /^device:/ {print}
         END {for (k in v) print "  " k v[k]}' "$fit" | sort
  fi
  if [[ -f $LOGS/steps/bench.ax.cuda.log ]]; then
    echo; echo "== bench ax --backend cuda"
    sed -n '2,$p' "$LOGS/steps/bench.ax.cuda.log" | grep -v '^\s*$' | head -60
  fi
  if [[ -f $LOGS/steps/bench.cg.cuda.log ]]; then
    echo; echo "== bench cg --backend cuda"
    sed -n '2,$p' "$LOGS/steps/bench.cg.cuda.log" | head -30
  fi
  echo; echo "== hexcg run configs/poisson_box.yaml (1 rank)"
  for b in cuda cpu; do
    local s=$WORK/runs/$b/summary.yaml
    [[ -f $s ]] || { echo "  $b: no summary.yaml"; continue; }
    printf '  %-4s %s\n' "$b" "$(awk '/^  iterations:|^  converged:|^  final_rel_residual:|^error:|^  solve:|^  total:|^  setup:/ {
        sub(/^ +/, ""); printf "%s ", $0}' "$s")"
  done
  if [[ -f $LOGS/steps/compare.cuda-vs-cpu.log ]]; then
    echo; echo "== hexcg compare run-cuda run-cpu --iteration-slack 1"
    sed -n '2,$p' "$LOGS/steps/compare.cuda-vs-cpu.log" | grep -v '^ *rule:\|^ *iteration counts within' | tail -16
  fi
}
summary >"$OUT/summary.txt"
hr "summary ($OUT/summary.txt)"
cat "$OUT/summary.txt"

# ---------------------------------------------------------------- pack
[[ -f $WORK/bench/stream-cuda/stream_fit.yaml ]] && cp "$WORK/bench/stream-cuda/stream_fit.yaml" "$OUT/stream_fit-cuda.yaml"
cp "$RESULTS" "$LOGS/" 2>/dev/null
tar -C "$WORK" -czf "$OUT/logs.tar.gz" --exclude='*.h5' logs bench runs run 2>/dev/null
if (($(stat -c %s "$OUT/logs.tar.gz") > 15 * 1048576)); then
  tar -C "$WORK" -czf "$OUT/logs.tar.gz" --exclude='*.h5' logs
fi
echo "results in $OUT: $(ls "$OUT" | tr '\n' ' ')"
[[ ${HEXCG_GPU_KEEP:-0} == 1 ]] && echo "scratch kept: $WORK" || rm -rf "$WORK"

rc=0
((${#FAILED[@]})) && rc=1
((rc == 0 && $(c gpu notrun) > 0)) && rc=3
echo "gpu_verify.sh: exit $rc"
exec >&- 2>&-
wait "$TEE_PID" 2>/dev/null
exit $rc
