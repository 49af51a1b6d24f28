#!/usr/bin/env bash
# Session 61, still owed (calls 2-4 of the session ran the rest): the GPU suite's test cases that
# the device time left did not reach (the odd sizes / special values / half types case, the
# f16/bf16 matmul and conv case, the two tensor map cases), then the first row-norm tune row that
# session 60's run did not return (softmax at B=32768 N=8192).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
KILN_SUITE_PARTS=tests KILN_SUITE_TESTS="-tc=*odd?sizes*,*f16?and?bf16?inputs*,*tensor?map*" timeout 480 \
  bash scripts/gpu_suite.sh > $OUT/suite_rest.txt 2>&1
echo "suite rest rc=$?"; sed -n '/================ summary/,$p' $OUT/suite_rest.txt
grep -E "FAIL|ERROR" $OUT/suite_rest.txt | head -20
KILN_CACHE_DIR=$(mktemp -d) timeout 30 .gpu/bin/kiln tune specs/norms.kiln --op softmax -D B=32768 -D N=8192 --iters 50 \
  --no-store > $OUT/tune_softmax_big.txt 2>&1
echo "tune rc=$?"; grep -E "best|^\| rows" $OUT/tune_softmax_big.txt
