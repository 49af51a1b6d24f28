#!/usr/bin/env bash
# Session 43, call 4: concat's part offsets as expressions of the launch's extents (one kernel per
# bucket, not per value), with the dyn pooled axes again: the dyn tests and every views/pooling spec.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T=.gpu/bin/kiln_test_gpu
export KILN_CACHE_DIR=$(mktemp -d)
$T -tc="gpu: extents summed*,gpu: dyn pooled axes*" > $OUT/dyn4.txt 2>&1; echo "dyn rc=$?"
grep -E "(dyn pooled axes|dyn sum extents) .*(WRONG|compiles)|test cases" $OUT/dyn4.txt
KILN_GPU_SPECS=views,pooling $T -tc="gpu: every covered spec matches*" > $OUT/specs4.txt 2>&1; echo "specs rc=$?"
grep -E "gpu-check summary|test cases|FAIL" $OUT/specs4.txt | head
