#!/usr/bin/env bash
# Session 62, for the next session's first call (binaries of session 62's final code): the strided
# reduction tuner case (added after session 62's device time was spent), then racecheck of the
# specs session 62's call 6 did not reach in its 250 s (it stopped after 64 checks, in the conv
# specs): every spec but the memory-bound ones already clean under memcheck, at the ones and long
# sets, in the time left.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
KILN_CACHE_DIR=$(mktemp -d) timeout 150 .gpu/bin/kiln_test_gpu -tc="gpu: a strided reduction tunes*,gpu: a row scan tunes*" > $OUT/strided_tune.txt 2>&1
echo "strided tune rc=$?"; grep -E "tuned|test cases|ERROR" $OUT/strided_tune.txt | tail -5
KILN_CACHE_DIR=$(mktemp -d) KILN_SUITE_PARTS=sanitize SANITIZER_TOOLS=racecheck SANITIZER_SHAPES=ones,long \
  SANITIZER_SPECS=conv,conv2d_3x3,conv_nd,gemm,matmul,matmul_small_k,linear_dropout_softmax,norms,reductions,scans,pooling,min_reduce,cumsum_exclusive \
  SANITIZER_TIMEOUT=420 bash scripts/gpu_suite.sh > $OUT/racecheck_rest.txt 2>&1
sed -n '/================ summary/,$p' $OUT/racecheck_rest.txt
