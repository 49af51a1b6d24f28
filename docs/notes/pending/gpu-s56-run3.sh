#!/usr/bin/env bash
# Session 56, call 3: gpu_suite.sh's tests (the GPU test suite whole, the host app) and pack parts.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_SUITE_PARTS="tests pack" KILN_CACHE_DIR=$(mktemp -d) timeout 570 bash scripts/gpu_suite.sh > $OUT/suite.log 2>&1; echo "suite rc=$?"
sed -n '/=== summary\|================ summary/,$p' $OUT/suite.log | head -30
grep -E 'FAIL|test cases:' $OUT/suite.log | head -20
