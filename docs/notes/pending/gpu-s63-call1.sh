#!/usr/bin/env bash
# Session 63, call 1 (binaries of session 62's final code with the split-norm row-order patch;
# .gpu/bin/kiln_before without it): the strided reduction and row scan tuner cases, the split norms'
# A/B and checks, stats_rows (var, std, any, all) in the every-spec check, the Python statistics test.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 170 .gpu/bin/kiln_test_gpu -tc="gpu: a strided reduction tunes*,gpu: a row scan tunes*" > $OUT/strided_tune.txt 2>&1
echo "tune rc=$?"; grep -E "tuned|test cases|ERROR" $OUT/strided_tune.txt | tail -8
S=bench/results/2026-11-29-h200-run1/norm4d.kiln
for round in 1 2; do for K in kiln_before kiln; do
  for op in layernorm_chw groupnorm8 batchnorm_train; do
    echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K .gpu/bin/$K run $S --op $op --check --iters 50 2>&1 | grep -E 'correct|median' | tr '\n' ' ')"
  done
done; done | tee $OUT/ab.txt
for args in "--op groupnorm8 -D N=3 -D C=16 -D H=100 -D W=101" "--op batchnorm_train -D N=5 -D C=7 -D H=45 -D W=47" \
            "--op layernorm_chw -D N=3 -D C=5 -D H=77 -D W=131"; do
  # shellcheck disable=SC2086
  echo "odd $args: $(KILN_CACHE_DIR=/tmp/c-kiln .gpu/bin/kiln run $S $args --check --iters 3 2>&1 | grep -E 'correct' | tr '\n' ' ')"
done | tee -a $OUT/ab.txt
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=norms,reductions timeout 200 .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*,gpu: memory-bound specs on odd sizes*" > $OUT/specs.txt 2>&1
echo "norm+reduction specs rc=$? ok=$(grep -c '^gpu-check .* ok ' $OUT/specs.txt) failed=$(grep -c '^gpu-check .* FAIL' $OUT/specs.txt)"
grep -E "stats_rows" $OUT/specs.txt | head -8
PYTHONPATH=$PWD/.gpu/python KILN_TEST_TORCH=1 timeout 120 python3 -m pytest -q -p no:cacheprovider python/tests/test_statistics.py 2>&1 | tail -4
