#!/usr/bin/env bash
# Session 46, call 3: the dyn tests again (the call path's executables counted against keys that
# include a row length's alignment), then why the generic middle-axis min over rows of 1001 is
# 1.17x its specialized kernel since the split (Nsight Compute, both kernels of each), and the
# min_reduce rows in one process.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
export KILN_CACHE_DIR=$(mktemp -d)
.gpu/bin/kiln_test_gpu -tc="gpu: dyn pooled axes*,gpu: extents summed*,gpu: dyn conv batches and pool planes*" > $OUT/dyn.txt 2>&1
echo "dyn tests rc=$?"; grep -E "test cases|assertions|executables made" $OUT/dyn.txt
timeout 150 ncu --kernel-name regex:'^kiln_' --launch-count 8 --metrics \
  gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,launch__registers_per_thread,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__occupancy_limit_registers \
  python3 bench/results/2026-12-04-h200-run3/prof_min.py > $OUT/ncu.txt 2>&1
echo "ncu rc=$?"; grep -E "kiln_|gpu__time|dram__|registers_per|grid_size|warps_active|inst_executed|correct|WRONG" $OUT/ncu.txt | head -80
timeout 220 python3 bench/shapes_bench.py --only memory --ops min_reduce --out $OUT/shapes > $OUT/shapes.log 2>&1
echo "shapes rc=$?"; grep "^|" $OUT/shapes.log
