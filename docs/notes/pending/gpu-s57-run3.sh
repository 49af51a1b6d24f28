#!/usr/bin/env bash
# Session 57, call 3: what the suite's call 2 (time-limited) did not reach: the spec checks of the
# last specs, the tensor-map and tuner tests, the non-conv wgmma and half-precision spec checks,
# the memory-bound odd sizes.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t=.gpu/bin/kiln_test_gpu
run() {   # name, timeout, env..., -- args
  local name=$1 limit=$2; shift 2
  env KILN_CACHE_DIR=$(mktemp -d) "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc ok=$(grep -cE '^gpu-check .* ok ' $OUT/$name.txt) failed=$(grep -cE '^gpu-check .* FAIL' $OUT/$name.txt)"
  grep -E "ERROR|WRONG|test cases" $OUT/$name.txt | head -5
}
run specs_last 200 KILN_GPU_SPECS=reductions,scans,stream_widths,views timeout 200 $t -tc="gpu: every covered spec matches*"
run tmap_tune 120 timeout 120 $t -tc="gpu tensor map*,gpu: Op::tune*,gpu: a dyn matmul tuned*,gpu: tuning = on-first-call*"
run mm_paths 110 KILN_GPU_SPECS=gemm,matmul,matmul_small_k,linear_dropout_softmax timeout 110 $t \
  -tc="gpu: every covered spec's wgmma*,gpu: matmul and conv specs*"
run odd_sizes 120 timeout 120 $t -tc="gpu: memory-bound specs on odd sizes*"
