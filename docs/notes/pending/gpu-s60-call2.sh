#!/usr/bin/env bash
# Session 60, call 2: the Philox rounds rolled in contraction epilogues (philox.cuh PhiloxRounds).
# Correctness: every spec whose contractions draw a dropout (and the elementwise ones, unchanged);
# time: kiln bench of the dropout GEMMs with the CLI before the change (kiln_s59, templates
# embedded) and after, alternately, device-time medians of 100 launches.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_GPU_SPECS=matmul,linear_dropout_softmax,elementwise KILN_CACHE_DIR=$(mktemp -d) timeout 240 \
  .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*" > $OUT/specs.txt 2>&1
echo "specs rc=$?"; tail -3 $OUT/specs.txt; grep -c " ok " $OUT/specs.txt
grep -E "WRONG|FAIL|ERROR|dropout|gpu-check summary" $OUT/specs.txt | head -20
for so in matmul:linear_relu_dropout linear_dropout_softmax:linear_dropout_softmax matmul:gemm_bias_relu; do
  spec=${so%%:*}; op=${so#*:}
  for bin in kiln_s59 kiln kiln_s59 kiln; do
    KILN_CACHE_DIR=$(mktemp -d) timeout 60 .gpu/bin/$bin bench specs/$spec.kiln --op $op --iters 100 > $OUT/b.txt 2>&1
    echo "$op $bin $(grep -E 'correct|device time' $OUT/b.txt | tr '\n' ' ')"
  done
done | tee $OUT/before_after.txt
