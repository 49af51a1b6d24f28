#!/usr/bin/env bash
# Session 58, call 7: the final code (after the review mends, whose sources are unchanged):
# per-launch scans, dyn spatial convs and pools, and the conv specs against the float64 reference.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_GPU_SPECS=conv,conv_nd,conv2d_3x3,scans KILN_CACHE_DIR=$(mktemp -d) timeout 230 .gpu/bin/kiln_test_gpu \
  -tc="gpu: dyn inner extents*,gpu: dyn rows of reductions*,gpu: dyn spatial extents of convs*,gpu: dyn pooled axes*,gpu: every covered spec matches*" \
  > $OUT/final.txt 2>&1
echo "final rc=$?"; tail -3 $OUT/final.txt; grep -c " ok" $OUT/final.txt; grep -E "WRONG|FAIL|ERROR" $OUT/final.txt | head -20
