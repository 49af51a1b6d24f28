#!/usr/bin/env bash
# Session 64, call 4: issue 20's tuned-against-heuristic rows for the families added in session 63
# (PoolPick, SplitNormPick, StridedScanPick; their GPU tuner test cases run in call 2): `kiln tune
# --no-store` at bench.py's own shapes of the six KernelBench pools (41-46; max_pool3d 85% and
# avg_pool3d 70% of copy on an H100 2026-12-06), the batch norms over short images (0.69-0.84x
# eager), the group and batch norms at 16x64x256^2 (63% of copy) and the cumsum over axis 0 of
# 32768^2. Every candidate checked against float64 before it is timed (kiln tune's rule). Carry .gpu.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
PYTHONPATH=$PWD/.gpu/python:$PWD/bench python3 -c "
import bench
open('$OUT/kb_pools.kiln', 'w').write(bench.KERNELBENCH_POOL_SPEC)
open('$OUT/mem.kiln', 'w').write(bench.MEMORY_BENCH_SPEC)"
tune() {   # spec op budget [defines...]
  local spec=$1 op=$2 budget=$3; shift 3
  local start=$SECONDS name
  name=$(echo "$op$*" | tr -c 'A-Za-z0-9_\n' '_')
  KILN_CACHE_DIR=$(mktemp -d) timeout $((budget + 25)) .gpu/bin/kiln tune "$spec" --op "$op" "$@" --iters 30 \
    --budget "$budget" --no-store > "$OUT/tune-$name.txt" 2> "$OUT/tune-$name-progress.txt"
  local rc=$?
  echo "$op $* rc=$rc [$((SECONDS - start)) s]"; grep -E ': best ' "$OUT/tune-$name.txt" | head -6
}
{
for op in kb43_max_pool3d kb46_avg_pool3d kb42_max_pool2d kb41_max_pool1d kb44_avg_pool1d kb45_avg_pool2d; do
  tune $OUT/kb_pools.kiln $op 35
done
for s in "128 128 28 28" "128 256 14 14" "128 512 7 7"; do
  set -- $s
  tune $OUT/mem.kiln batchnorm_train 25 -D N=$1 -D C=$2 -D H=$3 -D W=$4
done
tune $OUT/mem.kiln groupnorm8 25
tune $OUT/mem.kiln batchnorm_train 25
tune $OUT/mem.kiln cumsum_32768x32768_axis0 30
} 2>&1 | tee $OUT/tune.txt
