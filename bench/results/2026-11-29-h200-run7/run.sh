#!/bin/bash
# Session 34: convs with a dyn batch (issue 20, [Note: dyn conv]) on the GPU. Correctness first:
# the GPU test suite's dyn conv case (every conv template with the batch read at run time, values
# on both sides of each size class, outputs poisoned, against the float64 reference, one NVRTC
# compile per class), the dyn matmul case (its size-class search is now shared), and every covered
# spec (in second.sh). Then timing: each conv of
# bench/shapes_bench.py's CONV_CASES written with `dyn N` and with N baked in, beside F.conv2d
# (cuDNN) in one process. Copied to .gpu/ and run from there (scripts/gpu_build.sh first).
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export KILN_CACHE_DIR=/tmp/kiln-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
timeout 280 .gpu/bin/kiln_test_gpu -tc="*dyn conv batches*" > $OUT/dyn_conv.log 2>&1
echo "dyn conv rc=$?"; grep -E "WRONG|NVRTC compiles|test cases|assertions" $OUT/dyn_conv.log | tail -14
timeout 200 .gpu/bin/kiln_test_gpu -tc="*dyn matmuls*" > $OUT/dyn_matmul.log 2>&1
echo "dyn matmul rc=$?"; tail -3 $OUT/dyn_matmul.log
PYTHONPATH=.gpu/python timeout 300 python3 bench/shapes_bench.py --only conv --out $OUT/bench > $OUT/bench.log 2>&1
echo "bench rc=$?"
sed -n '/^| problem/,$p' $OUT/bench.log
