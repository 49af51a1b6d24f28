#!/usr/bin/env bash
# Session 57, call 2: dyn spatial convs on the TMA engine and WgConvNchw against the float64
# reference, then the conv rows of shapes_bench (dyn H, W against the specialized conv and cuDNN).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 200 .gpu/bin/kiln_test_gpu -tc="gpu: dyn spatial extents of convs*" > $OUT/dyn_conv_spatial.txt 2>&1
echo "dyn conv spatial rc=$?"; tail -3 $OUT/dyn_conv_spatial.txt; grep -c " ok, max rel" $OUT/dyn_conv_spatial.txt; grep -E "WRONG|FAIL|ERROR|NVRTC compiles" $OUT/dyn_conv_spatial.txt | head -20
KILN_CACHE_DIR=$(mktemp -d) timeout 330 python3 bench/shapes_bench.py --only conv \
  --ops conv_seed_HW_tf32,conv_seed_HW_fp32,resnet_HW_tf32,small_HW_tf32,resnet_HW_f16,depthwise_HW,resnet_tf32 --out $OUT/shapes-conv > $OUT/shapes-conv.log 2>&1
echo "conv rows rc=$?"; tail -12 $OUT/shapes-conv.log
