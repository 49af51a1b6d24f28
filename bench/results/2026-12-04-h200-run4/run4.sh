#!/usr/bin/env bash
# Session 46, call 4: reduce_outer_rows_v4 with the row's flat index stepped along with the row
# (`row0`) against the committed template (`base`, a multiply a row), each through
# KILN_TEMPLATE_PATH: Nsight Compute (time, instructions, registers) for min over the middle axis,
# specialized and generic, at rows of 1001 and at the seed's shape; then the min_reduce rows.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
for v in base row0; do
  export KILN_TEMPLATE_PATH=$PWD/.gpu/tv/$v KILN_CACHE_DIR=$(mktemp -d)
  timeout 120 ncu --kernel-name regex:'^kiln_' --launch-count 8 --metrics \
    gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__grid_size,smsp__inst_executed.sum \
    python3 bench/results/2026-12-04-h200-run4/prof_min.py > $OUT/ncu-$v.txt 2>&1
  echo "== ncu $v rc=$?"; grep -E "^  kiln_|gpu__time|dram__|registers_per|inst_executed|correct|WRONG" $OUT/ncu-$v.txt | head -60
done
for v in base row0; do
  export KILN_TEMPLATE_PATH=$PWD/.gpu/tv/$v KILN_CACHE_DIR=$(mktemp -d)
  timeout 150 python3 bench/shapes_bench.py --only memory --ops min_reduce --out $OUT/shapes-$v > $OUT/shapes-$v.log 2>&1
  echo "== shapes $v rc=$?"; grep "^|" $OUT/shapes-$v.log
done
