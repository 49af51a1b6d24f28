#!/bin/bash
# Session 29: split norms on the GPU. Correctness first, then the bench rows.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export KILN_CACHE_DIR=/tmp/kiln-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
K=.gpu/bin/kiln
{
  echo "== norm4d at the bench shapes"
  for op in layernorm_chw groupnorm8 batchnorm_train rmsnorm_c; do
    $K run .gpu/norm4d.kiln --op $op --check --iters 20 2>&1 | tail -4
  done
  echo "== odd shapes"
  $K run .gpu/norm4d.kiln --op groupnorm8 --check -D N=3 -D C=16 -D H=100 -D W=101 2>&1 | tail -3
  $K run .gpu/norm4d.kiln --op batchnorm_train --check -D N=5 -D C=7 -D H=45 -D W=47 2>&1 | tail -3
  $K run .gpu/norm4d.kiln --op batchnorm_train --check -D N=2 -D C=3 -D H=64 -D W=64 2>&1 | tail -3
  $K run .gpu/norm4d.kiln --op layernorm_chw --check -D N=3 -D C=5 -D H=77 -D W=131 2>&1 | tail -3
  $K run specs/norms.kiln --op layernorm_long --check 2>&1 | tail -3
  $K run specs/norms.kiln --op rmsnorm_long_bf16 --check 2>&1 | tail -3
  $K run specs/norms.kiln --op batchnorm_train --check 2>&1 | tail -3
  $K run specs/norms.kiln --op layernorm --check -D B=16 -D N=4194304 2>&1 | tail -3
  $K run specs/norms.kiln --op layernorm --check -D B=2 -D N=2000003 2>&1 | tail -3
} > $OUT/norm_check.txt 2>&1
cat $OUT/norm_check.txt
echo "== bench"
PYTHONPATH=.gpu/python timeout 200 python3 bench/bench.py --only layernorm_chw,groupnorm8,batchnorm_train,rmsnorm_c --out $OUT/bench > $OUT/bench.log 2>&1
tail -30 $OUT/bench.log
echo "== every spec"
timeout 280 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*,*dyn rows of reductions*" > $OUT/gpu_tests.log 2>&1; echo "rc=$?"
tail -15 $OUT/gpu_tests.log
