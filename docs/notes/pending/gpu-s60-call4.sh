#!/usr/bin/env bash
# Session 60, one call for everything pending (priority order, each part under its own timeout):
# 1. the row norm picks on the GPU (tests/gpu/test_tuner_gpu.cpp's new case);
# 2. the rolled Philox rounds of contraction epilogues: every spec whose GEMMs draw a dropout
#    checked, then linear_relu_dropout's and linear_dropout_softmax's time before (kiln_s59) and
#    after (kiln), alternately;
# 3. kiln tune of the row norms at the benchmark's shapes: heuristic against tuned;
# 4. session 59's known-vectorizable scans and norms, before (kiln_old, 24913f8) and after;
# 5. the streaming hint on 16-byte pieces (kiln_vs) against kiln;
# 6. the pooling specs' every-spec check.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
echo "== 1"; timeout 120 .gpu/bin/kiln_test_gpu -tc="gpu: a softmax and a layer norm tune*" > $OUT/tuner_rows.txt 2>&1
echo "tuner rows rc=$?"; grep -E "^tuned|ERROR|FAIL|test cases|assertions" $OUT/tuner_rows.txt
echo "== 2"; KILN_GPU_SPECS=matmul,linear_dropout_softmax KILN_CACHE_DIR=$(mktemp -d) timeout 150 \
  .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*" > $OUT/specs_dropout.txt 2>&1
echo "specs rc=$?"; tail -3 $OUT/specs_dropout.txt; grep -c " ok " $OUT/specs_dropout.txt
grep -E "WRONG|FAIL|ERROR|dropout" $OUT/specs_dropout.txt | head -12
for so in matmul:linear_relu_dropout linear_dropout_softmax:linear_dropout_softmax; do
  spec=${so%%:*}; op=${so#*:}
  for bin in kiln_s59 kiln kiln_s59 kiln; do
    KILN_CACHE_DIR=$(mktemp -d) timeout 40 .gpu/bin/$bin bench specs/$spec.kiln --op $op --iters 100 > $OUT/b.txt 2>&1
    echo "$op $bin $(grep -E 'correct|device time' $OUT/b.txt | tr '\n' ' ')"
  done
done | tee $OUT/philox_before_after.txt
echo "== 3"
for t in "softmax -D B=32768 -D N=8192" "softmax" "layernorm -D B=4096 -D N=8192" "rmsnorm -D B=4096 -D N=8192" \
         "l2norm_rows" "rmsnorm_bf16" "layernorm_div_f16"; do
  # shellcheck disable=SC2086
  KILN_CACHE_DIR=$(mktemp -d) timeout 60 .gpu/bin/kiln tune specs/norms.kiln --op $t --iters 50 --no-store \
    > $OUT/tune.txt 2> $OUT/tune-progress.txt
  echo "tune $t rc=$?"; grep -E "best|^\| rows" $OUT/tune.txt
done | tee $OUT/tune_rows.txt
echo "== 4"; timeout 170 bash docs/notes/pending/gpu-s59-call6.sh > /dev/null 2>&1; cat $OUT/before_after.txt
echo "== 5"; timeout 70 bash docs/notes/pending/gpu-s60-call3.sh > /dev/null 2>&1; cat $OUT/before_after_vs.txt
echo "== 6"; KILN_GPU_SPECS=pooling KILN_CACHE_DIR=$(mktemp -d) timeout 120 \
  .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*" > $OUT/pooling.txt 2>&1
echo "pooling specs rc=$?"; tail -3 $OUT/pooling.txt; grep -c " ok " $OUT/pooling.txt
