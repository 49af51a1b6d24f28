#!/usr/bin/env bash
# Session 63, call 3: which barrier orderings compute-sanitizer racecheck models (the look-back
# scan's walker handshake uses bar.arrive / bar.sync; racecheck reported its tile slots in call 2),
# built here with `nvcc -std=c++17 -arch=sm_90a -lineinfo -o .gpu/bin/racecheck_probe
# docs/probes/racecheck_probe.cu`; then racecheck over the specs not yet run under it.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
compute-sanitizer --version | tail -1
for k in raw_arrive war_arrive raw_sync; do
  echo "== $k"; compute-sanitizer --tool racecheck .gpu/bin/racecheck_probe $k 2>&1 | grep -E "out\[0\]|Race|RACECHECK SUMMARY|hazard" | head -4
done | tee $OUT/probe.txt
KILN_CACHE_DIR=$(mktemp -d) KILN_SUITE_PARTS=sanitize SANITIZER_TOOLS=racecheck SANITIZER_SHAPES=ones,long \
  SANITIZER_SPECS=norms,pooling,min_reduce,cumsum_exclusive,conv2d_3x3 \
  SANITIZER_TIMEOUT=480 bash scripts/gpu_suite.sh > $OUT/racecheck.txt 2>&1
sed -n '/================ summary/,$p' $OUT/racecheck.txt
