#!/usr/bin/env bash
# Session 35, run 12: functors divide by dyn dims through kiln::DynExtent (every dyn kernel's source
# changed). Correctness first: the dyn lengths, dyn rows and dyn elementwise cases; then the dyn
# length rows and a pool with dyn channels (its prologue's index divides by C), each checked
# against PyTorch in float64 before it is timed.
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
echo "== correctness"
timeout 150 .gpu/bin/kiln_test_gpu -tc="*dyn lengths*,*dyn rows of reductions*,*share one executable per bucket*,*refuses other buckets*" > $OUT/dyn_tests.txt 2>&1
tail -3 $OUT/dyn_tests.txt; grep -c " ok, max rel" $OUT/dyn_tests.txt; grep -c "WRONG" $OUT/dyn_tests.txt
echo "== bench"
mkdir -p $OUT/bench
PYTHONPATH=.gpu/python timeout 180 python3 bench/shapes_bench.py --only len --out $OUT/bench 2>&1 | tail -15
