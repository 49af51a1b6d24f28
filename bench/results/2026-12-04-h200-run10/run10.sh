#!/usr/bin/env bash
# reduce_outer_rows_v4 steps without bound tests except over the last rows (unb) against HEAD (base).
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_GPU_SPECS=min_reduce,reductions .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*" > $OUT/a.log 2>&1; echo a=$?; grep "gpu-check summary" $OUT/a.log
KILN_GPU_SPECS=min_reduce,reductions timeout 150 .gpu/bin/kiln_test_gpu -tc="gpu: memory-bound specs on odd*" > $OUT/d.log 2>&1; echo d=$?; grep -c " ok " $OUT/d.log; grep -c FAIL $OUT/d.log
timeout 100 .gpu/bin/kiln_test_gpu -tc="gpu: dyn rows of reductions*" > $OUT/e.log 2>&1; echo e=$?; tail -2 $OUT/e.log
for v in base unb; do
  export KILN_TEMPLATE_PATH=$PWD/.gpu/tv/$v KILN_CACHE_DIR=$(mktemp -d)
  timeout 100 ncu --kernel-name regex:'^kiln_' --launch-count 8 --metrics \
    gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed.sum \
    python3 bench/results/2026-12-04-h200-run4/prof_min.py > $OUT/ncu-$v.txt 2>&1
  echo "== ncu $v rc=$?"; grep -E "^  kiln_|gpu__time|registers_per|inst_executed|correct|WRONG" $OUT/ncu-$v.txt | head -40
done
for v in base unb; do
  export KILN_TEMPLATE_PATH=$PWD/.gpu/tv/$v KILN_CACHE_DIR=$(mktemp -d)
  timeout 120 python3 bench/shapes_bench.py --only memory --ops min_reduce --out $OUT/shapes-$v > $OUT/shapes-$v.log 2>&1
  echo "== shapes $v rc=$?"; grep "^|" $OUT/shapes-$v.log
done
