#!/usr/bin/env bash
# Session 56, call 2: dyn against specialized kernels beside PyTorch (shapes_bench): the conv rows
# with dyn spatial extents, then session 55's owed dyn-length and dyn attention rows.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 280 python3 bench/shapes_bench.py --only conv \
  --ops conv_seed_HW_tf32,resnet_HW_tf32,resnet_HW_f16,depthwise_HW,resnet_tf32,depthwise --out $OUT/shapes-conv > $OUT/shapes-conv.log 2>&1
echo "conv rc=$?"; tail -12 $OUT/shapes-conv.log
KILN_CACHE_DIR=$(mktemp -d) timeout 280 python3 bench/shapes_bench.py --only len \
  --ops colsum_C,colmax_C_f16,cumsum_mid_C,attention_BS,attention_causal_S --out $OUT/shapes-len > $OUT/shapes-len.log 2>&1
echo "len rc=$?"; tail -14 $OUT/shapes-len.log
