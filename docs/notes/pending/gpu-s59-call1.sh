#!/usr/bin/env bash
# Session 59, call 1 (a device was lent at the end): correctness of the session's code against the
# float64 reference, poisoned outputs: the dyn spatial convs (small_tf32 across its flops class),
# every covered spec (cumsum_dropout among them), the memory-bound specs on odd sizes and half
# types, dyn rows and dyn lengths of scans and row norms (the known-vectorizable buckets).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 200 .gpu/bin/kiln_test_gpu -tc="gpu: dyn spatial extents of convs*" \
  > $OUT/dyn_convs.txt 2>&1
echo "dyn convs rc=$?"; tail -3 $OUT/dyn_convs.txt; grep -c " ok, max rel" $OUT/dyn_convs.txt
grep -E "WRONG|FAIL|ERROR|small_tf32" $OUT/dyn_convs.txt | head -20
KILN_CACHE_DIR=$(mktemp -d) timeout 330 .gpu/bin/kiln_test_gpu \
  -tc="gpu: every covered spec matches*,gpu: memory-bound specs on odd sizes*,gpu: dyn rows of reductions*,gpu: dyn lengths of reductions*" \
  > $OUT/rows.txt 2>&1
echo "rows rc=$?"; tail -3 $OUT/rows.txt; grep -c " ok" $OUT/rows.txt
grep -E "WRONG|FAIL|ERROR|cumsum_dropout|gpu-check summary" $OUT/rows.txt | head -30
