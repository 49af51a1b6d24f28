#!/usr/bin/env bash
# Session 61, call 2: the GPU suite's tests but test_dyn_gpu.cpp's (call 1 ran those), with the
# session's final binaries (unrolled Philox rounds again, the streaming store pieces), then the
# first row-norm tune row that call 1 of the session did not return (softmax at B=32768 N=8192).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
KILN_SUITE_PARTS=tests KILN_SUITE_TESTS="-sfe=*test_dyn_gpu.cpp" timeout 420 bash scripts/gpu_suite.sh > $OUT/suite_rest.txt 2>&1
echo "suite rest rc=$?"; sed -n '/================ summary/,$p' $OUT/suite_rest.txt
grep -E "FAIL|ERROR" $OUT/suite_rest.txt | head -20
KILN_CACHE_DIR=$(mktemp -d) timeout 30 .gpu/bin/kiln tune specs/norms.kiln --op softmax -D B=32768 -D N=8192 --iters 50 \
  --no-store > $OUT/tune_softmax_big.txt 2>&1
echo "tune rc=$?"; grep -E "best|^\| rows" $OUT/tune_softmax_big.txt
