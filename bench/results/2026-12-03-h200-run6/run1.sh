#!/usr/bin/env bash
# Session 45, call 6: every memory-bound row of shapes_bench (dyn against specialized, beside
# PyTorch) at 29a242d's build: the min_reduce rows (the last axis untimed so far) and the pools
# with dyn planes after the plane-index change. Each row checks its outputs before timing.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KILN_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
timeout 330 python3 bench/shapes_bench.py --only memory --out $OUT > $OUT/shapes.log 2>&1; echo "shapes rc=$?"
grep "^|" $OUT/shapes.log | cut -c1-220
