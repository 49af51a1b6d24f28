#!/usr/bin/env bash
# Session 59, call 2: timings of the session's code. The dyn spatial conv rows (the flops class:
# 32x32x28x28 -> 32 tf32 was 1.337x its specialized conv), cumsum_dropout beside the plain
# cumsums of the same rows (kiln bench), then the benchmark's scan and norm rows beside PyTorch.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 200 python3 bench/shapes_bench.py --only conv --rounds 5 \
  --ops small_HW_tf32 --out $OUT/shapes-conv > $OUT/shapes-conv.log 2>&1
echo "conv rows rc=$?"; tail -14 $OUT/shapes-conv.log
for op in cumsum_dropout cumsum_reverse cumprod_rows; do
  KILN_CACHE_DIR=$(mktemp -d) timeout 40 .gpu/bin/kiln bench specs/scans.kiln --op $op --iters 50 > $OUT/bench-$op.txt 2>&1
  echo "kiln bench $op rc=$?"; head -8 $OUT/bench-$op.txt
done
KILN_CACHE_DIR=$(mktemp -d) timeout 230 python3 bench/bench.py --only cumsum,softmax,layernorm --no-compile \
  --out $OUT/bench > $OUT/bench.log 2>&1
echo "bench rc=$?"; tail -25 $OUT/bench.log
