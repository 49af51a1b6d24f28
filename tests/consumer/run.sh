#!/usr/bin/env bash
# Consumer builds: install kiln to a prefix and build against it with find_package,
# then build kiln as a subdirectory of the consumer. Args: SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1; build=$2; work=$3
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/tests/consumer" -B "$work/pkg" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/pkg" >/dev/null
"$work/pkg/consumer" | grep -q 'extern "C" __global__'
cmake -S "$src/tests/consumer" -B "$work/sub" -G Ninja -DKILN_CONSUME=subdirectory -DKILN_SOURCE="$src" >/dev/null
cmake --build "$work/sub" -j 2 >/dev/null
test ! -e "$work/sub/kiln/bin/kiln"   # tools are built only when kiln is the top-level project
"$work/sub/consumer" | grep -q 'extern "C" __global__'
echo "consumer builds: find_package and add_subdirectory OK"
