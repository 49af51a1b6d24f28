#!/usr/bin/env bash
# Consumer builds: kiln taken in as a user takes it. Args: SOURCE_DIR BUILD_DIR WORK_DIR
#  static: `cmake --install BUILD_DIR` (the build ctest runs in: nothing is rebuilt).
#  shared: kiln built with BUILD_SHARED_LIBS=ON as a subdirectory of the consumer project
#          (its only compile of kiln), then installed from there (KILN_INSTALL=ON).
# Against each install, find_package(kiln) builds a C++ program (kiln::kiln) and a C one
# (kiln::capi, compiled as C99). Everything runs from WORK_DIR with no LD_LIBRARY_PATH: the
# shared programs find libkiln.so through RPATHs, and the shared subdirectory build is moved
# away first so that nothing installed can lean on it.
set -euo pipefail
src=$1; build=$2; work=$3
unset LD_LIBRARY_PATH
rm -rf "$work" && mkdir -p "$work" && cd "$work"
printf 'op scale {\n  dims N = 1000\n  in  x: f32[N]\n  out y = 2.0 * x\n}\n' > scale.kiln
fail() { echo "consumer: $*" >&2; exit 1; }

# Runs what a consumer build made (DIR) and the installed CLI (PREFIX, optional).
run_consumers() {
  local dir=$1 prefix=${2:-}
  "$dir/consumer" | grep -q 'extern "C" __global__' || fail "$dir/consumer printed no kernel"
  "$dir/c_consumer" scale.kiln "$work/cache" | grep -q 'op loaded' || fail "$dir/c_consumer failed"
  if [ -n "$prefix" ]; then
    "$prefix/bin/kiln" gen scale.kiln --op scale | grep -q 'extern "C" __global__' ||
      fail "$prefix/bin/kiln gen printed no kernel"
  fi
}

# What every install holds, and that its CMake package names neither source nor build tree
# nor fmt (header-only, compiled in).
check_install() {
  local prefix=$1 f
  for f in bin/kiln include/kiln/kiln.h include/kiln/kiln_capi.h lib/cmake/kiln/kilnConfig.cmake \
           lib/cmake/kiln/kilnConfigVersion.cmake lib/cmake/kiln/kilnPack.cmake lib/libkiln_capi.so share/doc/kiln/README.md \
           share/doc/kiln/api.md; do
    [ -e "$prefix/$f" ] || fail "$prefix/$f is not installed"
  done
  ! grep -rqE "$src/(include|generator|runtime|tools|templates)|$build/|$work/|fmt::" \
      "$prefix/lib/cmake/kiln" || fail "$prefix/lib/cmake/kiln names the source or build tree, or fmt"
}

version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/kilnConfigVersion.cmake")
[ -n "$version" ] || fail "no PACKAGE_VERSION in $build/kilnConfigVersion.cmake"
soname=libkiln.so.${version%.*}

# ---- static: the existing build, installed
cmake --install "$build" --prefix "$work/static" >/dev/null
check_install "$work/static"
[ -e "$work/static/lib/libkiln.a" ] && [ ! -e "$work/static/lib/libkiln.so" ] || fail "static install: expected libkiln.a only"
cmake -S "$src/tests/consumer" -B pkg-static -G Ninja -DCMAKE_PREFIX_PATH="$work/static" >/dev/null
cmake --build pkg-static >/dev/null
run_consumers pkg-static "$work/static"

# ---- kiln_add_pack against the static install (tests/consumer_pack): packs built at build time,
# one embedded, one preloaded from its file, both serving every kernel with NVRTC unloadable;
# a rebuild with nothing changed runs nothing; an edit to the spec rebuilds the packs. The
# programs load the spec from another directory than the one the packs were built from.
mkdir -p app moved
cp scale.kiln app/scale.kiln && echo 'scale N=1000' > app/shapes.txt
cmake -S "$src/tests/consumer_pack" -B pkg-pack -G Ninja -DCMAKE_PREFIX_PATH="$work/static" \
  -DKILN_SPEC="$work/app/scale.kiln" -DKILN_SHAPES="$work/app/shapes.txt" >/dev/null
log=$(cmake --build pkg-pack) || fail "kiln_add_pack: the first build failed"
grep -q 'kiln build: scale_embedded.kilnpack for sm_80,sm_90a' <<<"$log" || fail "kiln_add_pack: the first build did not run kiln build"
cp app/scale.kiln moved/scale.kiln
for exe in embedded preloaded; do
  log=$(KILN_NVRTC_LIB=/nonexistent "pkg-pack/$exe" moved/scale.kiln) && [ "$log" = '1 kernels, 1 from a pack, 0 compiled' ] ||
    fail "kiln_add_pack: pkg-pack/$exe did not take its kernel from the pack: $log"
done
log=$(pkg-pack/damaged) || fail "kiln_add_pack: a damaged embedded pack was not an ArgumentError naming it: $log"
log=$(cmake --build pkg-pack) && grep -q 'no work to do' <<<"$log" || fail "kiln_add_pack: a rebuild with nothing changed ran something"
printf '# scaled by two\n' >> app/scale.kiln
log=$(cmake --build pkg-pack) && grep -q 'kiln build: scale_file.kilnpack' <<<"$log" || fail "kiln_add_pack: a spec edit did not rebuild the pack"
printf 'op broken {\n  out y = \n}\n' > app/scale.kiln
! cmake --build pkg-pack >/dev/null 2>&1 || fail "kiln_add_pack: a spec with errors built"

# ---- shared: a subdirectory build, then its install
cmake -S "$src/tests/consumer" -B sub -G Ninja -DKILN_CONSUME=subdirectory -DKILN_SOURCE="$src" \
  -DBUILD_SHARED_LIBS=ON -DKILN_BUILD_TOOLS=ON -DKILN_INSTALL=ON >/dev/null
cmake --build sub -j 2 >/dev/null
run_consumers sub
cmake --install sub --prefix "$work/shared" >/dev/null
mv sub sub.moved
check_install "$work/shared"
[ -e "$work/shared/lib/libkiln.so.$version" ] && [ ! -e "$work/shared/lib/libkiln.a" ] &&
  [ ! -e "$work/shared/lib/libkiln_generator.a" ] || fail "shared install: expected libkiln.so.$version only"
readelf -d "$work/shared/lib/libkiln.so" | grep -q "SONAME.*\[$soname\]" || fail "libkiln.so's SONAME is not $soname"
cmake -S "$src/tests/consumer" -B pkg-shared -G Ninja -DCMAKE_PREFIX_PATH="$work/shared" >/dev/null
cmake --build pkg-shared >/dev/null
for exe in pkg-shared/consumer pkg-shared/c_consumer shared/bin/kiln; do
  loaded=$(ldd "$exe" | sed -n "s/^[[:space:]]*$soname => \([^ ]*\) .*/\1/p")
  [ -n "$loaded" ] && [ "$(realpath "$loaded")" = "$(realpath "shared/lib/$soname")" ] ||
    fail "$exe does not load $work/shared/lib/$soname"
done
run_consumers pkg-shared "$work/shared"

# ---- as a subdirectory, kiln builds neither tools nor tests and installs nothing by default
cmake -S "$src/tests/consumer" -B sub-defaults -G Ninja -DKILN_CONSUME=subdirectory -DKILN_SOURCE="$src" >/dev/null
for o in KILN_BUILD_TOOLS KILN_BUILD_TESTS KILN_INSTALL BUILD_SHARED_LIBS; do
  grep -q "^$o:BOOL=OFF" sub-defaults/CMakeCache.txt || fail "as a subdirectory, $o is not OFF"
done
echo "consumer builds: static and shared installs (find_package; C++ and C), kiln_add_pack (embedded and file packs), add_subdirectory (shared) OK"
