#!/usr/bin/env bash
# Session 35, run 9: dyn lengths on the GPU (correctness first, then dyn vs specialized vs PyTorch).
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
echo "== correctness: dyn lengths"
timeout 300 .gpu/bin/kiln_test_gpu -tc="*dyn lengths*" 2>&1 | tee $OUT/dyn_len_test.txt | grep -v " ok, max rel" | tail -40
grep -c " ok, max rel" $OUT/dyn_len_test.txt
echo "== correctness: dyn rows (regression)"
timeout 120 .gpu/bin/kiln_test_gpu -tc="*dyn rows of reductions*" 2>&1 | tail -4
echo "== bench: dyn length rows"
mkdir -p $OUT/bench
PYTHONPATH=.gpu/python timeout 400 python3 bench/shapes_bench.py --only len --out $OUT/bench 2>&1 | tail -30
