#!/usr/bin/env bash
# Session 35, run 11: dyn lengths after rownorm_rows' kScalarRegisters (correctness first: the dyn
# length case, the dyn rows case, and every memory-bound spec on odd sizes, special values and half
# types, which the template change reaches; then dyn vs specialized vs PyTorch on the length rows).
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
echo "== correctness: dyn lengths"
timeout 300 .gpu/bin/kiln_test_gpu -tc="*dyn lengths*" 2>&1 | tee $OUT/dyn_len_test.txt | grep -v " ok, max rel" | tail -8
grep -c " ok, max rel" $OUT/dyn_len_test.txt
echo "== correctness: dyn rows, memory-bound specs (regression)"
timeout 200 .gpu/bin/kiln_test_gpu -tc="*dyn rows of reductions*,*memory-bound specs on odd sizes*" 2>&1 | tee $OUT/memory_test.txt | tail -4
echo "== bench: dyn length rows"
mkdir -p $OUT/bench
PYTHONPATH=.gpu/python timeout 300 python3 bench/shapes_bench.py --only len --out $OUT/bench 2>&1 | tail -16
