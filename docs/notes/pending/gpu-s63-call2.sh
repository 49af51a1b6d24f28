#!/usr/bin/env bash
# Session 63, call 2: the split norms' block order as landed (rows fastest only where the epilogue
# reads >= 4 MiB every row reads alike) against session 62's binary (.gpu/bin/kiln_before), with
# --check on every run and at odd sizes; then racecheck over the GEMM, scan and reduction specs at
# the long shapes (the split and look-back paths).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
S=bench/results/2026-11-29-h200-run1/norm4d.kiln
for round in 1 2; do for K in kiln_before kiln; do
  for op in layernorm_chw groupnorm8 batchnorm_train rmsnorm_c; do
    echo "$K round $round $(KILN_CACHE_DIR=/tmp/c-$K .gpu/bin/$K run $S --op $op --check --iters 50 2>&1 | grep -E 'median|ok|FAIL' | tr -s ' ' | tr '\n' ' ')"
  done
  echo "$K round $round layernorm 16x1M $(KILN_CACHE_DIR=/tmp/c-$K .gpu/bin/$K run specs/norms.kiln --op layernorm -D B=16 -D N=1048576 --check --iters 50 2>&1 | grep -E 'median|ok|FAIL' | tr -s ' ' | tr '\n' ' ')"
done; done | tee $OUT/ab.txt
for args in "--op groupnorm8 -D N=3 -D C=16 -D H=100 -D W=101" "--op batchnorm_train -D N=5 -D C=7 -D H=45 -D W=47" \
            "--op layernorm_chw -D N=3 -D C=5 -D H=77 -D W=131" "--op layernorm_chw -D N=5 -D C=17 -D H=255 -D W=257"; do
  # shellcheck disable=SC2086
  echo "odd $args: $(KILN_CACHE_DIR=/tmp/c-kiln .gpu/bin/kiln run $S $args --check --iters 3 2>&1 | grep -E 'why|ok|FAIL|rows fastest' | tr -s ' ' | tr '\n' ' ')"
done | tee -a $OUT/ab.txt
KILN_CACHE_DIR=$(mktemp -d) KILN_SUITE_PARTS=sanitize SANITIZER_TOOLS=racecheck SANITIZER_SHAPES=long \
  SANITIZER_SPECS=gemm,matmul,matmul_small_k,linear_dropout_softmax,scans,reductions \
  SANITIZER_TIMEOUT=420 bash scripts/gpu_suite.sh > $OUT/racecheck.txt 2>&1
sed -n '/================ summary/,$p' $OUT/racecheck.txt
