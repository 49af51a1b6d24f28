#!/bin/bash
# Session 34, run 8: generic mode (KILN_SHAPES=generic) now makes a pool's planes and a conv's batch
# dyn. Correctness first: the GPU dyn conv and pool case again (DimExpr::walk_dims changed what a
# walk leaves in its memo), then bench/shapes_bench.py's two pool rows, generic (N and C dyn)
# against specialized, both checked against kiln's float64 reference first, beside PyTorch eager.
# Copied to .gpu/ and run from there (scripts/gpu_build.sh first).
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export KILN_CACHE_DIR=/tmp/kiln-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
timeout 200 .gpu/bin/kiln_test_gpu -tc="*dyn conv batches*" > $OUT/dyn_conv.log 2>&1
echo "dyn conv rc=$?"; grep -E "WRONG|test cases|assertions" $OUT/dyn_conv.log | tail -4
PYTHONPATH=.gpu/python timeout 360 python3 bench/shapes_bench.py --only memory --ops max_pool2d_relu,pool3d \
  --out $OUT/bench > $OUT/shapes_bench.log 2>&1
echo "bench rc=$?"
sed -n '/^| problem/,$p' $OUT/shapes_bench.log; tail -3 $OUT/shapes_bench.log
