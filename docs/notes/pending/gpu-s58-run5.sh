#!/usr/bin/env bash
# Session 58, call 5: the final code. Dyn spatial convs (the 1-d conv on the TMA engine whose
# `* b` epilogue read b out of bounds, call 4), dyn pools and conv batches (the emitter's broadcast
# rule changed for extents of dyn dims) against the float64 reference.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 300 .gpu/bin/kiln_test_gpu \
  -tc="gpu: dyn spatial extents of convs*,gpu: dyn conv batches*,gpu: dyn pooled axes*,gpu: an Op shares one executable across a pool*" \
  > $OUT/dyn_convs_pools.txt 2>&1
echo "dyn convs and pools rc=$?"; tail -3 $OUT/dyn_convs_pools.txt; grep -c " ok, max rel" $OUT/dyn_convs_pools.txt
grep -E "WRONG|FAIL|ERROR|NVRTC compiles" $OUT/dyn_convs_pools.txt | head -40
