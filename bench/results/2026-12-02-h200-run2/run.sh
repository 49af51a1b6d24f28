#!/usr/bin/env bash
# Session 37, run 4: reductions down a strided axis split with dyn rows (classes 8 times apart below
# the rows that fill the GPU unsplit). Correctness first (the dyn rows case with four strided ops,
# one per reduce_outer variant, both sides of every class threshold; the refusal cases), then the
# len/rows rows of bench/shapes_bench.py, two new: a sum down a middle axis at 3 and 100 dyn rows.
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
s=$SECONDS
timeout 220 .gpu/bin/kiln_test_gpu --duration=true -tc="*dyn rows of reductions*,*refuses*" > $OUT/dyn_rows.txt 2>&1
echo "== dyn rows rc=$? in $((SECONDS-s)) s"; grep -E "ERROR|WRONG|FAIL|CRASH" $OUT/dyn_rows.txt | head -8
grep -c "output .*: ok" $OUT/dyn_rows.txt; grep -E "^dyn rows col[a-z0-9_]*:" $OUT/dyn_rows.txt; tail -3 $OUT/dyn_rows.txt
mkdir -p $OUT/bench
PYTHONPATH=.gpu/python timeout 200 python3 bench/shapes_bench.py --only len --out $OUT/bench 2>&1 | tail -24
