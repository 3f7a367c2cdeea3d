#!/usr/bin/env bash
# install.library: libhexcg as a user gets it (issue 50, docs/library.md).
#   check_install.sh SRC BUILD WORK MPIEXEC MPICC CC
# cmake --install BUILD into WORK/prefix; the layout (include/hexcg.h alone,
# libhexcg.so.0.1.0 with soname libhexcg.so.0 exporting only hexcg_* names,
# libhexcg.a, the CMake package, hexcg.pc); examples/c built out of the tree
# with find_package(hexcg) (shared, and static: hexcg::hexcg_static) and
# with plain MPICC + pkg-config (shared, static); docs/library.md's copy of
# the example is the file; each resolves the installed library (ldd)
# and runs on 1 and 2 ranks through MPIEXEC; the installed hexcg --version
# runs. Prints "install check: ok" at the end.
set -euo pipefail
(($# == 6)) || { echo "usage: check_install.sh SRC BUILD WORK MPIEXEC MPICC CC" >&2; exit 2; }
SRC=$1 BUILD=$2 WORK=$3 MPIEXEC=$4 MPICC=$5 CC=$6
P=$WORK/prefix
LIB=$P/lib
die() { echo "install check: FAILED: $*" >&2; exit 1; }
export OMP_NUM_THREADS=1

rm -rf "$WORK" && mkdir -p "$WORK"
cmake --install "$BUILD" --prefix "$P" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log" >&2; die "cmake --install $BUILD"; }

# ---- layout
for f in include/hexcg.h lib/libhexcg.so.0.1.0 lib/libhexcg.so.0 lib/libhexcg.so lib/libhexcg.a \
  lib/cmake/hexcg/hexcgConfig.cmake lib/cmake/hexcg/hexcgConfigVersion.cmake lib/cmake/hexcg/hexcgTargets.cmake \
  lib/pkgconfig/hexcg.pc bin/hexcg; do
  [[ -e $P/$f ]] || die "$P/$f not installed"
done
hdrs=$(cd "$P/include" && find . -type f | sort | tr '\n' ' ')
[[ $hdrs == "./hexcg.h " ]] || die "include/ holds more than hexcg.h: $hdrs"
[[ $(readlink "$LIB/libhexcg.so") == libhexcg.so.0 ]] || die "lib/libhexcg.so does not point to libhexcg.so.0"
soname=$(readelf -d "$LIB/libhexcg.so.0.1.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libhexcg.so.0 ]] || die "soname of libhexcg.so.0.1.0 is '$soname', not libhexcg.so.0"
nm -D --defined-only "$LIB/libhexcg.so.0.1.0" | awk '{print $NF}' | sed 's/@.*//' >"$WORK/exported.txt"
grep -q '^hexcg_solve$' "$WORK/exported.txt" || die "libhexcg.so exports no hexcg_solve"
leak=$(grep -v -E '^(hexcg_[A-Za-z0-9_]+|HEXCG_0)$' "$WORK/exported.txt" | head -5 | tr '\n' ' ' || true)
[[ -z $leak ]] || die "libhexcg.so exports names other than hexcg_* (internal names leak): $leak"
ldd "$LIB/libhexcg.so.0.1.0" | grep -q 'not found' && die "libhexcg.so's dependencies not found: $(ldd "$LIB/libhexcg.so.0.1.0" | grep 'not found')"
ar t "$LIB/libhexcg.a" | grep -q . || die "libhexcg.a is empty"

# ---- the installed hexcg starts (HEXCG_SHARED_LIB: it needs lib/hexcg/libhexcg.so)
ldd "$P/bin/hexcg" | grep 'not found' && die "the installed hexcg misses libraries (above)"
"$MPIEXEC" -n 1 "$P/bin/hexcg" --version >"$WORK/version.txt" 2>&1 || { cat "$WORK/version.txt" >&2; die "installed hexcg --version"; }
grep -q "built with" "$WORK/version.txt" || die "installed hexcg --version printed no 'built with' line"

# ---- docs/library.md shows examples/c/solve.c as it is
sed -n '/^<!-- example: examples\/c\/solve.c -->$/,/^<!-- \/example -->$/p' "$SRC/docs/library.md" \
  | sed '1,2d;$d' | sed '$d' >"$WORK/doc-solve.c"
diff -u "$SRC/examples/c/solve.c" "$WORK/doc-solve.c" >"$WORK/doc.diff" \
  || { cat "$WORK/doc.diff" >&2; die "docs/library.md's example differs from examples/c/solve.c (diff above): copy the file into the doc"; }

# ---- the example: CMake (shared, static) and pkg-config (shared, static)
build_cmake() { # name, extra cmake options
  local b=$WORK/$1
  shift
  cmake -S "$SRC/examples/c" -B "$b" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_COMPILER="$CC" "$@" >"$b.log" 2>&1 \
    && cmake --build "$b" >>"$b.log" 2>&1 || { cat "$b.log" >&2; die "building examples/c with CMake ($b)"; }
}
build_cmake cmake
build_cmake cmake-static -DHEXCG_EXAMPLE_STATIC=ON
export PKG_CONFIG_PATH=$LIB/pkgconfig
flags=$(pkg-config --cflags --libs hexcg) || die "pkg-config --cflags --libs hexcg"
mkdir -p "$WORK/pkgconfig"
# shellcheck disable=SC2086
"$MPICC" -std=c11 -O2 -Wall -Wextra -o "$WORK/pkgconfig/solve" "$SRC/examples/c/solve.c" $flags -lm \
  -Wl,-rpath,"$LIB" || die "$MPICC solve.c \$(pkg-config --cflags --libs hexcg)"
sflags=$(pkg-config --static --cflags --libs hexcg | sed 's/-lhexcg/-l:libhexcg.a/') || die "pkg-config --static hexcg"
mkdir -p "$WORK/pkgconfig-static"
# shellcheck disable=SC2086
"$MPICC" -std=c11 -O2 -o "$WORK/pkgconfig-static/solve" "$SRC/examples/c/solve.c" $sflags -lm \
  || die "$MPICC solve.c \$(pkg-config --static --cflags --libs hexcg) with -l:libhexcg.a"

for exe in cmake/solve pkgconfig/solve; do
  got=$(ldd "$WORK/$exe" | awk '$1 == "libhexcg.so.0" {print $3}')
  [[ $got -ef $LIB/libhexcg.so.0 ]] || die "$exe resolves libhexcg.so.0 to '$got', not $LIB/libhexcg.so.0"
done
for exe in cmake-static/solve pkgconfig-static/solve; do
  ldd "$WORK/$exe" | grep -q libhexcg && die "$exe links libhexcg.so (expected libhexcg.a)"
done

for exe in cmake/solve pkgconfig/solve cmake-static/solve pkgconfig-static/solve; do
  for np in 1 2; do
    out=$WORK/run-${exe%%/*}-np$np.txt
    if ! "$MPIEXEC" -n $np "$WORK/$exe" >"$out" 2>&1; then
      cat "$out" >&2
      die "$exe on $np rank(s) failed (output above)"
    fi
    grep -q "^own f: converged" "$out" || { cat "$out" >&2; die "$exe on $np rank(s): no converged second solve"; }
    echo "$exe np$np: $(grep -E '^(case f|own f):' "$out" | tr '\n' ' ')"
  done
done
echo "install check: ok"
