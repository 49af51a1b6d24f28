#!/usr/bin/env bash
# Session 63, for the next session's device time: issue 20's tuned-against-heuristic rows for the
# pools, strided scans and split norms (PoolPick, StridedScanPick and SplitNormPick, added in
# session 63 and checked on the CPU and through NVRTC only): the GPU tuner test's strided scan, two
# split norms (a batch norm over 7x7 images, 0.69x eager) and two 3-d pools, then `kiln tune
# --no-store` of bench.py's six KernelBench pools (41-46, the rows furthest under copy bandwidth:
# max_pool3d 85%, avg_pool3d 70% on an H100 2026-12-06) at their own shapes, each candidate
# checked first and timed in three interleaved rounds. Carry .gpu/bin/kiln, .gpu/bin/kiln_test_gpu,
# .gpu/lib, .gpu/python (rebuilt from this commit).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 330 .gpu/bin/kiln_test_gpu -tc="gpu: 3-d pools tune*,gpu: a strided scan tunes*,gpu: split norms tune*" > $OUT/pool_tune_test.txt 2>&1
echo "tuner test rc=$?"; grep -E "^tuned|test cases|ERROR" $OUT/pool_tune_test.txt | tail -5
PYTHONPATH=$PWD/.gpu/python:$PWD/bench python3 -c "import bench; open('$OUT/kb_pools.kiln', 'w').write(bench.KERNELBENCH_POOL_SPEC)"
for op in kb41_max_pool1d kb42_max_pool2d kb43_max_pool3d kb44_avg_pool1d kb45_avg_pool2d kb46_avg_pool3d; do
  start=$SECONDS
  KILN_CACHE_DIR=$(mktemp -d) timeout 60 .gpu/bin/kiln tune $OUT/kb_pools.kiln --op "$op" --iters 30 --budget 45 \
    --no-store > $OUT/t.txt 2> $OUT/t-progress.txt
  echo "$op rc=$? $(grep -E ': best ' $OUT/t.txt | head -1) [$((SECONDS - start)) s]"
done | tee $OUT/pool_tune.txt
