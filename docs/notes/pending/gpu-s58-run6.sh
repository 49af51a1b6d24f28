#!/usr/bin/env bash
# Session 58, call 6: the conv rows of shapes_bench on the final code (call 4 ran on an H200).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 200 python3 bench/shapes_bench.py --only conv --rounds 5 \
  --ops small_HW_tf32,small_HW_fp32,resnet_HW_tf32 --out $OUT/shapes-conv > $OUT/shapes-conv.log 2>&1
echo "conv rows rc=$?"; tail -16 $OUT/shapes-conv.log
