#!/usr/bin/env bash
# Session 38, run 3: reduce_finish spreads few outputs' partial states over `lanes` threads each
# (reduce_finish_lanes), batches of 8 loads in flight. Correctness first (dyn rows and lengths;
# the reduction and norm specs over 5 shape sets and odd sizes, in parallel), then bench rows.
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
s=$SECONDS
timeout 280 .gpu/bin/kiln_test_gpu --duration=true -tc="*dyn rows*,*dyn lengths*" > $OUT/dyn.txt 2>&1 &
p1=$!
KILN_GPU_SPECS=reductions,min_reduce timeout 280 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*,*odd sizes*" > $OUT/specs_reductions.txt 2>&1 &
p2=$!
KILN_GPU_SPECS=norms timeout 280 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*" > $OUT/specs_norms.txt 2>&1 &
p3=$!
KILN_GPU_SPECS=norms timeout 280 .gpu/bin/kiln_test_gpu -tc="*odd sizes*" > $OUT/specs_norms_odd.txt 2>&1 &
p4=$!
for p in $p1 $p2 $p3 $p4; do wait $p; echo "== rc=$? at $((SECONDS-s)) s"; done
for f in dyn specs_reductions specs_norms specs_norms_odd; do
  echo "== $f: $(grep -c ': ok\| ok ' $OUT/$f.txt) ok"; grep -E "WRONG|FAIL|ERROR|CRASH" $OUT/$f.txt | head -5; tail -2 $OUT/$f.txt; done
mkdir -p $OUT/bench
PYTHONPATH=.gpu/python timeout 200 python3 bench/shapes_bench.py --only len --ops colsum_B,sum_B,sum_L,mean_mid_L --out $OUT/bench 2>&1 | tail -14
echo "== total $((SECONDS-s)) s"
