#!/usr/bin/env bash
# Session 38, run 7 (review): each launch's grids computed once in the runtime, launch_splits read
# from the split kernel's. Correctness (dyn rows and lengths; reduction specs), then the rows.
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
s=$SECONDS
timeout 200 .gpu/bin/kiln_test_gpu -tc="*dyn rows*,*dyn lengths*" > $OUT/dyn.txt 2>&1 &
p1=$!
KILN_GPU_SPECS=reductions,min_reduce timeout 200 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*" > $OUT/specs_reductions.txt 2>&1 &
p2=$!
for p in $p1 $p2; do wait $p; echo "== rc=$? at $((SECONDS-s)) s"; done
for f in dyn specs_reductions; do
  echo "== $f: $(grep -c ': ok\| ok ' $OUT/$f.txt) ok"; grep -E "WRONG|FAIL|ERROR|CRASH" $OUT/$f.txt | head -5; tail -2 $OUT/$f.txt; done
mkdir -p $OUT/bench
PYTHONPATH=.gpu/python timeout 150 python3 bench/shapes_bench.py --only len --ops colsum_B,sum_B --out $OUT/bench 2>&1 | tail -8
echo "== total $((SECONDS-s)) s"
