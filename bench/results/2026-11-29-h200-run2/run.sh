#!/bin/bash
# Session 30: ganged split norms (batch norm over short images) on the GPU. Correctness first,
# then the bench rows beside PyTorch, then KernelBench 2/11 (ganged) and 1/33 (split, unchanged).
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export KILN_CACHE_DIR=/tmp/kiln-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
K=.gpu/bin/kiln
{
  echo "== batch norm over short images (ganged), and the split norms of before"
  for shape in "128 128 28 28" "128 256 14 14" "128 512 7 7" "3 5 33 33" "9 3 7 7" "2 7 6 6" "100 64 7 7" "16 64 256 256"; do
    set -- $shape
    echo "-- batchnorm_train N=$1 C=$2 H=$3 W=$4"
    $K run .gpu/norm4d.kiln --op batchnorm_train --check -D N=$1 -D C=$2 -D H=$3 -D W=$4 2>&1 | tail -3
  done
  for op in batchnorm_short_bf16 batchnorm_relu_7x7 batchnorm_train layernorm_long rmsnorm_long_bf16 layernorm rmsnorm; do
    echo "-- specs/norms.kiln $op"
    $K run specs/norms.kiln --op $op --check 2>&1 | tail -3
  done
} > $OUT/norm_check.txt 2>&1
cat $OUT/norm_check.txt
echo "== bench"
PYTHONPATH=.gpu/python timeout 200 python3 bench/bench.py --only batchnorm_train,layernorm_chw,groupnorm8 --out $OUT/bench > $OUT/bench.log 2>&1
echo "bench rc=$?"
tail -12 $OUT/bench.log
echo "== kernelbench"
PYTHONPATH=.gpu/python timeout 200 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln .gpu/python \
  --only 2/11,1/33 --budget-s 170 --out $OUT/kb --cache-dir /tmp/kbcache > $OUT/kb.log 2>&1
echo "kernelbench rc=$?"
tail -12 $OUT/kb.log
echo "== every spec"
timeout 290 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*,*dyn rows of reductions*" > $OUT/gpu_tests.log 2>&1; echo "rc=$?"
tail -6 $OUT/gpu_tests.log
