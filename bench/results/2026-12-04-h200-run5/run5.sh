#!/usr/bin/env bash
# Session 46, call 5: the GPU tests that run reduce_outer_rows_v4 and the other changed paths, at
# the session's last commit (row0 template, split rule in threads, pool Lead, computed extents
# unkeyed): every covered spec of the reduction, norm, scan and pooling specs, memory-bound specs
# on odd sizes and half types, dyn rows and lengths, dyn pools and sums, more than 2^31 elements.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
export KILN_CACHE_DIR=$(mktemp -d)
T=.gpu/bin/kiln_test_gpu
KILN_GPU_SPECS=min_reduce,reductions,norms,scans,cumsum_exclusive,pooling timeout 200 $T -tc="gpu: every covered spec matches*" > $OUT/specs.txt 2>&1
echo "specs rc=$? checks ok: $(grep -c '^gpu-check .* ok ' $OUT/specs.txt) failed: $(grep -c '^gpu-check .* FAIL' $OUT/specs.txt)"
timeout 300 $T -tc="gpu: memory-bound specs on odd sizes*,gpu: dyn rows of reductions*,gpu: dyn lengths of reductions*,gpu: dyn pooled axes*,gpu: extents summed*,gpu: ops over more than 2^31*" > $OUT/tests.txt 2>&1
echo "tests rc=$?"; grep -E "test cases|assertions|executables made" $OUT/tests.txt | head -60
echo "checks ok: $(grep -c '^gpu-check .* ok ' $OUT/tests.txt) failed: $(grep -c '^gpu-check .* FAIL' $OUT/tests.txt)"; grep -E "FAIL|WRONG|ERROR" $OUT/tests.txt | head
