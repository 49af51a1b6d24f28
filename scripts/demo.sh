#!/usr/bin/env bash
# `make demo`: check every spec, print each op's signature and bound IR; build every
# op for sm_80 and sm_90 offline into a cache directory and summarize it; on a
# machine with a GPU, run and check each op the templates cover.
set -euo pipefail
BUILD=${1:-build}
kiln="$BUILD/bin/kiln"
echo "== kiln check --ir specs/*.kiln"
"$kiln" check --ir specs/*.kiln
echo
echo "== kiln build specs/*.kiln --arch sm_80,sm_90 --skip-unsupported -o $BUILD/demo-cache (offline; no GPU needed)"
# --skip-unsupported: the ops with no kernel template yet are listed, the rest must build.
"$kiln" build specs/*.kiln --arch sm_80,sm_90 --skip-unsupported -o "$BUILD/demo-cache"
echo
echo "== kiln cache stats --dir $BUILD/demo-cache"
"$kiln" cache stats --dir "$BUILD/demo-cache"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo
  echo "== GPU found: kiln run --check for each covered op (small shapes)"
  for spec in specs/*.kiln; do
    "$kiln" run "$spec" --check --small || true
  done
else
  echo
  echo "(no GPU here: skipping kiln run)"
fi
