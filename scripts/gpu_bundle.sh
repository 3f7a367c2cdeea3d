#!/usr/bin/env bash
# Prepare the GPU verification bundle (docs/gpu-verification.md).
#
#   scripts/gpu_bundle.sh [--no-build] [--check] [extra cmake -D options]
#
# 1. Builds hexcg with the CUDA backend in build-gpu/ (scripts/build.sh with
#    -DHEXCG_CUDA=ON -DHEXCG_SHARED_LIB=ON, Release; architecture 90-real:
#    sm_90 code only, for the H200; HEXCG_GPU_ARCH overrides it).
#    HEXCG_SHARED_LIB puts every module, the device code included, once into
#    lib/libhexcg.so, which hexcg and every test executable link (statically
#    linked, each test carried its own copy, ~10 MB for the larger ones, and
#    the bundle packed to 64 MiB). The script fails if a bundled executable
#    still carries device code of its own.
# 2. Assembles build-gpu-bundle-tree/, self-contained apart from the C/C++
#    runtime and the NVIDIA driver of the machine it runs on:
#      bin/    hexcg, every test executable the gpu tests run, mpiexec.hydra +
#              hydra_pmi_proxy (stripped)
#      lib/    libhexcg.so and every shared library those link that is not
#              glibc, libstdc++, libgcc_s or the driver (libcuda): MPICH, UCX
#              (+ lib/ucx/ modules), HDF5, libyaml, libmatheval, METIS, libgomp,
#              libcudart, ...; lib/hwloc/ is empty on purpose (gpu_verify.sh
#              points HWLOC_PLUGINS_PATH there: no hwloc plugin of the machine
#              is loaded)
#      src/    configs/ and every source-tree file a listed test names
#      tests.list   the tests to run: every ctest test labelled gpu, then the
#              CPU tests of the same executables (see the header of that file)
#      BUNDLE_INFO  what was built, from which commit, glibc it needs
# 3. Packs that tree into build-gpu-bundle/payload.tar.gz (gzip: MPICH's
#    libmpich alone is 40 MiB) next to plain copies of BUNDLE_INFO and
#    tests.list, prints its size and fails above MAX_MIB (40 MiB). That
#    folder is what travels (device tool: carry ["build-gpu-bundle"]; the tool
#    carries 64 MiB in all, the working tree included).
# 4. --check: runs the CPU-side check of docs/gpu-verification.md here
#    (env -i PATH=/usr/bin:/bin HOME=/tmp ... bash scripts/gpu_verify.sh,
#    results in <bundle>-check/) and fails unless it exits 0 with the library
#    checks passed, every gpu test of tests.list reported (skip without a
#    device) and the cpu tests passed (the first of each executable;
#    HEXCG_GPU_CPU_TESTS=1: all). ctest runs this as gpu-bundle.check
#    (labels gpubundle;slow, tests/bundle/).
# scripts/gpu_verify.sh unpacks and runs it (on the GPU machine, or here:
# every gpu test then skips). Environment: HEXCG_BUILD_DIR (build-gpu),
# HEXCG_GPU_BUNDLE (build-gpu-bundle), HEXCG_GPU_ARCH (90-real).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(realpath -m "${HEXCG_BUILD_DIR:-$ROOT/build-gpu}")
BUNDLE=$(realpath -m "${HEXCG_GPU_BUNDLE:-$ROOT/build-gpu-bundle}")   # what travels
TREE=$BUNDLE-tree                                                       # unpacked, stays here
MAX_MIB=40 # the device tool carries 64 MiB with the working tree; room for more tests
say() { printf '[gpu_bundle] %s\n' "$*" >&2; }
die() { printf '[gpu_bundle] error: %s\n' "$*" >&2; exit 1; }

DO_BUILD=1 CHECK=0
while (($#)); do
  case $1 in
    --no-build) DO_BUILD=0 ;;
    --check) CHECK=1 ;;
    -h | --help) sed -n '2,42p' "$0"; exit 0 ;;
    *) break ;;
  esac
  shift
done

# ---------------------------------------------------------------- build
if ((DO_BUILD)); then
  ARCH=${HEXCG_GPU_ARCH:-90-real}
  HEXCG_BUILD_DIR=$BUILD HEXCG_BUILD_TYPE=${HEXCG_BUILD_TYPE:-Release} \
    "$ROOT/scripts/build.sh" -DHEXCG_CUDA=ON -DHEXCG_SHARED_LIB=ON -DHEXCG_TEST_MPI_YIELD=OFF \
    -DHEXCG_CUDA_ARCHITECTURES="$ARCH" \
    -DCMAKE_CUDA_ARCHITECTURES="$ARCH" "$@"
fi
[[ -x $BUILD/hexcg ]] || die "$BUILD/hexcg not found (run without --no-build)"
grep -q '^HEXCG_CUDA:STRING=ON$' "$BUILD/CMakeCache.txt" \
  || die "$BUILD was not configured with -DHEXCG_CUDA=ON"
grep -q '^HEXCG_SHARED_LIB:BOOL=ON$' "$BUILD/CMakeCache.txt" \
  || die "$BUILD was not configured with -DHEXCG_SHARED_LIB=ON (every test would carry its own device code)"
MPIEXEC_HOST=$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' "$BUILD/CMakeCache.txt")
[[ -n $MPIEXEC_HOST ]] || die "MPIEXEC_EXECUTABLE not found in $BUILD/CMakeCache.txt"

# ---------------------------------------------------------------- test list
[[ $BUNDLE != / && $BUNDLE != "$ROOT" && $BUNDLE != "$BUILD" ]] || die "refusing to use $BUNDLE as the bundle folder"
rm -rf "$BUNDLE" "$TREE"
mkdir -p "$TREE/bin" "$TREE/lib" "$TREE/src"
BUNDLE_OUT=$BUNDLE
BUNDLE=$TREE   # below, BUNDLE is the tree being assembled
(cd "$BUILD" && ctest --show-only=json-v1) >"$BUNDLE/.ctest.json"
# tests.list: one test a line, fields separated by TABs:
#   kind  name  timeout_s  will_fail  pass_regex  env  command
# kind: gpu (label gpu) or cpu (same executables, other labels); pass_regex is
# "-" or a PCRE for grep -Pz; env and command are shell words to eval, with
# "$BUNDLE" (this folder), "$WORK" (scratch folder) and "$MPIEXEC".
/usr/bin/python3 - "$BUNDLE/.ctest.json" "$BUILD" "$ROOT" "$MPIEXEC_HOST" "$BUNDLE" <<'PY'
import json, os, shlex, shutil, sys
js, build, src, mpiexec, bundle = sys.argv[1:]
tests = json.load(open(js))["tests"]
mpi_real = os.path.realpath(mpiexec)

def props(t):
    return {p["name"]: p["value"] for p in t.get("properties", [])}

def launcher(t):
    c = t.get("command") or []
    return bool(c) and os.path.realpath(c[0]) == mpi_real

gpu = [t for t in tests if "gpu" in props(t).get("LABELS", [])]
if not gpu:
    sys.exit("no test carries the label gpu")
exes = set()
for t in gpu:
    if not launcher(t):
        sys.exit(f"gpu test {t['name']} does not start with {mpiexec}: not supported by the bundle")
    exe = next(a for a in t["command"][1:] if a.startswith(build + "/"))
    exes.add(os.path.realpath(exe))
cpu = []
for t in tests:
    p = props(t)
    if "gpu" in p.get("LABELS", []) or not launcher(t) or p.get("FIXTURES_REQUIRED") or p.get("DISABLED"):
        continue
    if any(os.path.realpath(a) in exes for a in t["command"][1:] if a.startswith(build + "/")):
        cpu.append(t)

workdirs = set()

def word(a):
    if os.path.realpath(a) == mpi_real:
        return '"$MPIEXEC"'
    if a.startswith(build + "/"):
        r = os.path.realpath(a)
        if r in exes:
            return '"$BUNDLE"/bin/' + shlex.quote(os.path.basename(r))
        rel = os.path.relpath(a, build)
        workdirs.add(os.path.dirname(rel) or ".")
        return '"$WORK"/' + shlex.quote(rel)
    if a.startswith(src + "/"):
        rel = os.path.relpath(a, src)
        if os.path.isfile(a):
            dst = os.path.join(bundle, "src", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(a, dst)
        return '"$BUNDLE"/src/' + shlex.quote(rel)
    return shlex.quote(a)

with open(os.path.join(bundle, "tests.list"), "w") as f:
    f.write("# kind\tname\ttimeout_s\twill_fail\tpass_regex\tenv\tcommand (written by scripts/gpu_bundle.sh)\n")
    for kind, group in (("gpu", gpu), ("cpu", cpu)):
        for t in group:
            p = props(t)
            rx = p.get("PASS_REGULAR_EXPRESSION")
            if rx:
                rx = "(?s)" + "|".join("(?:%s)" % r for r in (rx if isinstance(rx, list) else [rx]))
                rx = rx.replace("\n", "\\n").replace("\t", "\\t")  # real newlines/tabs -> PCRE escapes
            # not the tests' MPI shim (docs/developer.md "Oversubscribed MPI tests"):
            # the bundle does not carry it, and the device machine has cores enough
            env = " ".join(shlex.quote(e) for e in p.get("ENVIRONMENT", [])
                           if not e.startswith("LD_PRELOAD=")) or "-"
            cmd = " ".join(word(a) for a in t["command"])
            f.write("\t".join([kind, t["name"], str(int(p.get("TIMEOUT", 300))),
                               "1" if p.get("WILL_FAIL") else "0", rx or "-", env, cmd]) + "\n")
with open(os.path.join(bundle, "workdirs.list"), "w") as f:
    f.write("".join(d + "\n" for d in sorted(workdirs)))
with open(os.path.join(bundle, ".exes"), "w") as f:
    f.write("\n".join(sorted(exes)) + "\n")
print(f"[gpu_bundle] {len(gpu)} gpu tests, {len(cpu)} cpu tests of the same executables, "
      f"{len(exes)} executables", file=sys.stderr)
PY

# ---------------------------------------------------------------- executables
EXES=("$BUILD/hexcg")
while read -r e; do [[ -n $e && $e != "$(realpath "$BUILD/hexcg")" ]] && EXES+=("$e"); done <"$BUNDLE/.exes"
MPIEXEC_REAL=$(realpath "$MPIEXEC_HOST")
PROXY=$(dirname "$MPIEXEC_REAL")/hydra_pmi_proxy
[[ -x $PROXY ]] || die "hydra_pmi_proxy not found next to $MPIEXEC_REAL"
for e in "${EXES[@]}"; do cp "$e" "$BUNDLE/bin/"; done
cp "$MPIEXEC_REAL" "$BUNDLE/bin/mpiexec.hydra"
cp "$PROXY" "$BUNDLE/bin/hydra_pmi_proxy"
strip --strip-unneeded "$BUNDLE"/bin/*
# the device code lives once, in libhexcg.so: an executable with a fatbin
# section of its own means a link line bypassed HEXCG_SHARED_LIB
fat=()
for f in "$BUNDLE"/bin/*; do
  readelf -S -W "$f" 2>/dev/null | grep -q '\.nv_fatbin' && fat+=("$(basename "$f")")
done
((${#fat[@]} == 0)) || die "these executables carry their own CUDA device code (not linked through libhexcg.so): ${fat[*]}"
cp -r "$ROOT/configs" "$BUNDLE/src/"

# ---------------------------------------------------------------- libraries
# Kept from the machine it runs on: glibc (every library of Debian's libc6
# package: libc, libm, libpthread, libdl, librt, libresolv, ld-linux, ...),
# libstdc++, libgcc_s, and the NVIDIA driver. Everything else is copied.
is_system() { # $1 = resolved path of a library
  local n pkg
  n=$(basename "$1")
  case $n in
    linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | \
      libresolv.so.* | libutil.so.* | libanl.so.* | libstdc++.so.* | libgcc_s.so.* | libcuda.so.* | \
      libnvidia-*.so.*) return 0 ;;
  esac
  pkg=$(dpkg -S "$1" 2>/dev/null | head -1 | cut -d: -f1) || true
  [[ $pkg == libc6 ]]
}
declare -A SEEN=()
copy_deps() { # $1 = ELF file: copy its non-system libraries into lib/ (recursively through ldd)
  local line name path
  while read -r line; do
    if [[ $line == *"=> not found"* ]]; then die "$(basename "$1"): ${line%% *} not found on this machine"; fi
    [[ $line == *" => /"* ]] || continue
    name=${line%% =>*}; name=${name//[[:space:]]/}
    path=${line#*=> }; path=${path%% (*}
    [[ -n ${SEEN[$name]:-} ]] && continue
    SEEN[$name]=1
    is_system "$path" && continue
    cp -L "$path" "$BUNDLE/lib/$name"
  done < <(LD_LIBRARY_PATH='' ldd "$1")
}
for f in "$BUNDLE"/bin/*; do copy_deps "$f"; done
# UCX (MPICH's transport) loads its modules from <dir of libucs>/ucx: take the
# cross-memory-attach one (shared memory between ranks); IB/RDMA ones need
# libibverbs and are of no use on one machine.
UCXDIR=$(dirname "$(LD_LIBRARY_PATH='' ldd "$BUILD/hexcg" | awk '/libucs.so/{print $3}')")/ucx
if [[ -d $UCXDIR ]]; then
  mkdir -p "$BUNDLE/lib/ucx"
  if [[ -e $UCXDIR/libuct_cma.so.0 ]]; then
    cp -L "$UCXDIR/libuct_cma.so.0" "$BUNDLE/lib/ucx/" && copy_deps "$BUNDLE/lib/ucx/libuct_cma.so.0"
  fi
fi
# libraries copied so far may need more (ldd is recursive, but be sure)
for f in "$BUNDLE"/lib/*.so*; do copy_deps "$f"; done
[[ -f $BUNDLE/lib/libhexcg.so ]] || die "libhexcg.so is not among the libraries hexcg links"
readelf -S -W "$BUNDLE/lib/libhexcg.so" | grep -q '\.nv_fatbin' || die "libhexcg.so holds no CUDA device code"
# hwloc (linked by MPICH and Hydra) dlopens every plugin of its plugin folder
# (Debian's libhwloc-plugins: hwloc_pci, hwloc_gl, hwloc_opencl,
# hwloc_xml_libxml, with libpciaccess, libX11, libOpenCL, libxml2, ...).
# gpu_verify.sh sets HWLOC_PLUGINS_PATH to this empty folder: hwloc's
# built-in components (Linux, x86) are all MPICH uses.
mkdir -p "$BUNDLE/lib/hwloc"
chmod u+w "$BUNDLE"/lib/*.so* "$BUNDLE"/lib/ucx/* 2>/dev/null || true
strip --strip-unneeded "$BUNDLE"/lib/*.so* "$BUNDLE"/lib/ucx/*.so* 2>/dev/null || true
rm -f "$BUNDLE/.exes" "$BUNDLE/.ctest.json"

# ---------------------------------------------------------------- info
glibc_max=$(for f in "$BUNDLE"/bin/* "$BUNDLE"/lib/*.so* "$BUNDLE"/lib/ucx/*.so*; do
  objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' || true; done | sort -u -V | tail -1)
glibcxx_max=$(for f in "$BUNDLE"/bin/* "$BUNDLE"/lib/*.so* "$BUNDLE"/lib/ucx/*.so*; do
  objdump -T "$f" 2>/dev/null | grep -o 'GLIBCXX_[0-9.]*' || true; done | sort -u -V | tail -1)
cuda_ver=$(sed -n 's/^set(CMAKE_CUDA_COMPILER_VERSION "\(.*\)")/\1/p' "$BUILD"/CMakeFiles/*/CMakeCUDACompiler.cmake | head -1)
{
  echo "hexcg GPU verification bundle (scripts/gpu_bundle.sh)"
  echo "created: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname) ($(. /etc/os-release && echo "$PRETTY_NAME"))"
  echo "source: $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown) ($ROOT)"
  echo "build: $BUILD, $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt")," \
    "CUDA architectures $(sed -n 's/^HEXCG_CUDA_ARCHITECTURES:STRING=//p' "$BUILD/CMakeCache.txt")," \
    "nvcc $cuda_ver"
  echo "needs from the host: glibc >= ${glibc_max#GLIBC_}, libstdc++.so.6 (${glibcxx_max:-no versioned symbol}), libgcc_s.so.1," \
    "an NVIDIA driver for CUDA ${cuda_ver%.*} or newer (libcudart is bundled)"
  echo "tests: $(grep -c '^gpu' "$BUNDLE/tests.list") gpu, $(grep -c '^cpu' "$BUNDLE/tests.list") cpu"
} >"$BUNDLE/BUNDLE_INFO"

# ---------------------------------------------------------------- pack
say "$(ls "$TREE/bin" | wc -l) executables, $(find "$TREE/lib" -name '*.so*' | wc -l) libraries," \
  "$(( $(du -sb "$TREE" | cut -f1) / 1048576 )) MiB unpacked ($TREE)"
say "packing $BUNDLE_OUT/payload.tar.gz"
mkdir -p "$BUNDLE_OUT"
tar -C "$TREE" -cf - . | gzip -9 >"$BUNDLE_OUT/payload.tar.gz"
cp "$TREE/BUNDLE_INFO" "$TREE/tests.list" "$BUNDLE_OUT/"
size_b=$(du -sb "$BUNDLE_OUT" | cut -f1)
size_mib=$(( (size_b + 1048575) / 1048576 ))
cat "$TREE/BUNDLE_INFO" >&2
say "bundle: $BUNDLE_OUT, $size_mib MiB ($size_b bytes)"
((size_b <= MAX_MIB * 1048576)) || die "the bundle is $size_mib MiB, over the $MAX_MIB MiB limit (the device tool carries 64 MiB)"
say "size ok: $size_mib MiB <= $MAX_MIB MiB"
if ((!CHECK)); then
  say "done: on the GPU machine run 'bash scripts/gpu_verify.sh' with carry [\"build-gpu-bundle\"]"
  exit 0
fi

# ---------------------------------------------------------------- --check
# The CPU-side check of docs/gpu-verification.md, as written there (env -i:
# nothing of this shell's LD_LIBRARY_PATH or MPI settings).
CHECK_OUT=$BUNDLE_OUT-check
rm -rf "$CHECK_OUT"
# cpu tests: the first of each executable (every bundled executable runs a
# real case; the normal build's ctest runs them all), unless
# HEXCG_GPU_CPU_TESTS=1 asks for all (~6 times longer) or 0 for none
CPU_TESTS=${HEXCG_GPU_CPU_TESTS:-first}
say "CPU-side check: env -i PATH=/usr/bin:/bin HOME=/tmp OUT=$CHECK_OUT HEXCG_GPU_BUNDLE=$BUNDLE_OUT" \
  "HEXCG_GPU_CPU_TESTS=$CPU_TESTS bash scripts/gpu_verify.sh 1200"
rc=0
env -i PATH=/usr/bin:/bin HOME=/tmp OUT="$CHECK_OUT" HEXCG_GPU_BUNDLE="$BUNDLE_OUT" HEXCG_GPU_CPU_TESTS="$CPU_TESTS" \
  bash "$ROOT/scripts/gpu_verify.sh" 1200 >"$CHECK_OUT.log" 2>&1 || rc=$?
R=$CHECK_OUT/results.tsv
[[ -f $R ]] || { tail -20 "$CHECK_OUT.log" >&2; die "gpu_verify.sh wrote no results.tsv (exit $rc; log $CHECK_OUT.log)"; }
sed -n '/^check /,/^cpu /p' "$CHECK_OUT/summary.txt" >&2
bad=()
((rc == 0)) || bad+=("gpu_verify.sh exited $rc")
status_of() { awk -F'\t' -v k="$1" -v n="$2" '$1 == k && $2 == n {s = $3 " (" $6 ")"} END {print s}' "$R"; }
for c in bundle.libraries bundle.loaded glibc mpi.launch.np2; do
  st=$(status_of check "$c")
  [[ $st == "pass "* ]] || bad+=("check $c: ${st:-not run}")
done
# every gpu test of tests.list has its line, pass or skip (skip: this
# machine has no device); every cpu test that was to run passed
declare -A N=() EXE_SEEN=()
while IFS=$'\t' read -r kind name _ _ _ _ cmd; do
  [[ $kind == gpu || $kind == cpu ]] || continue
  [[ $kind == cpu && $CPU_TESTS == 0 ]] && continue
  if [[ $kind == cpu && $CPU_TESTS == first ]]; then
    exe=$(grep -o '"\$BUNDLE"/bin/[^ ]*' <<<"$cmd" | head -1) || true
    [[ -n ${EXE_SEEN[${exe:-$name}]:-} ]] && continue
    EXE_SEEN[${exe:-$name}]=1
  fi
  st=$(status_of "$kind" "$name")
  N[$kind.${st%% *}]=$((${N[$kind.${st%% *}]:-0} + 1))
  case $kind.${st%% *} in
    gpu.pass | gpu.skip | cpu.pass) ;;
    *) bad+=("$kind $name: ${st:-no result}") ;;
  esac
done <"$TREE/tests.list"
say "CPU-side check: exit $rc; gpu tests: ${N[gpu.skip]:-0} skip, ${N[gpu.pass]:-0} pass;" \
  "cpu tests ($CPU_TESTS): ${N[cpu.pass]:-0} pass; problems: ${#bad[@]} (log $CHECK_OUT.log, results $R)"
if ((${#bad[@]})); then
  printf '[gpu_bundle]   %s\n' "${bad[@]}" >&2
  die "CPU-side check failed (${#bad[@]} problems)"
fi
say "CPU-side check ok"
