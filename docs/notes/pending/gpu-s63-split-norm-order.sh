#!/usr/bin/env bash
# Session 62, for a later call: the split norms' block order with the rows fastest
# (docs/notes/pending/split-norm-row-order.patch). The layer norm over C, H, W of 16x64x256x256 with
# gamma and beta of [C, H, W] (bench.py's layernorm_chw) ran 0.385 ms (46% of copy) on an H100 on
# 2026-12-06 against the group norm's 0.282 (63%) on the same tensor: with a row's chunks in flight
# together, every row reads its own pass over the 32 MiB of gamma and beta from DRAM.
# Before the call: `cp .gpu/bin/kiln .gpu/bin/kiln_before`, apply the patch, rebuild
# (cmake --build build-gpu --target kiln_cli kiln_test_gpu), copy and strip kiln and kiln_test_gpu
# into .gpu/bin; carry .gpu/bin/kiln, .gpu/bin/kiln_before, .gpu/bin/kiln_test_gpu, .gpu/lib.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
S=bench/results/2026-11-29-h200-run1/norm4d.kiln
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
# Correctness first: the split norms at the bench shapes and at odd ones, the norm specs' checks.
for K in kiln_before kiln; do
  for round in 1 2; do
    for op in layernorm_chw groupnorm8 batchnorm_train; do
      echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K .gpu/bin/$K run $S --op $op --check --iters 50 2>&1 | grep -E 'correct|median' | tr '\n' ' ')"
    done
  done
done | tee $OUT/ab.txt
for args in "--op groupnorm8 -D N=3 -D C=16 -D H=100 -D W=101" "--op batchnorm_train -D N=5 -D C=7 -D H=45 -D W=47" \
            "--op layernorm_chw -D N=3 -D C=5 -D H=77 -D W=131"; do
  # shellcheck disable=SC2086
  echo "odd $args: $(KILN_CACHE_DIR=/tmp/c-kiln .gpu/bin/kiln run $S $args --check --iters 3 2>&1 | grep -E 'correct' | tr '\n' ' ')"
done | tee -a $OUT/ab.txt
KILN_GPU_SPECS=norms timeout 200 .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*,gpu: memory-bound specs on odd sizes*" > $OUT/norm_specs.txt 2>&1
echo "norm specs rc=$? ok=$(grep -c '^gpu-check .* ok ' $OUT/norm_specs.txt) failed=$(grep -c '^gpu-check .* FAIL' $OUT/norm_specs.txt)"
