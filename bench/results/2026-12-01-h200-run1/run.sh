#!/usr/bin/env bash
# Session 36, run 1: row-norm length classes wherever the rules' pick changes, norm compositions
# over a dyn length fused over many static rows, no register path past the registers' last class
# (rownorm.cuh: kItems 0). Correctness first (dyn lengths incl. two fused norms, dyn rows), then
# the dyn-length rows, each checked against PyTorch in float64 before it is timed.
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
echo "== correctness"
timeout 200 .gpu/bin/kiln_test_gpu -tc="*dyn lengths*,*dyn rows of reductions*" > $OUT/dyn_tests.txt 2>&1
tail -3 $OUT/dyn_tests.txt; grep -c " ok, max rel" $OUT/dyn_tests.txt; grep -c "WRONG" $OUT/dyn_tests.txt
echo "== bench"
mkdir -p $OUT/bench
PYTHONPATH=.gpu/python timeout 300 python3 bench/shapes_bench.py --only len --out $OUT/bench 2>&1 | tail -22
