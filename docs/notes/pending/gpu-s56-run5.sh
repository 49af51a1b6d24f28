#!/usr/bin/env bash
# Session 56, call 5: the final conv templates (static paths rewritten as before, SASS-identical to
# d254864) on the GPU: the dyn conv spatial test, the conv spec checks, and the conv shapes rows.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 100 .gpu/bin/kiln_test_gpu -tc="gpu: dyn spatial extents of convs*" > $OUT/dyn_conv_spatial.txt 2>&1
echo "dyn conv spatial rc=$?"; tail -3 $OUT/dyn_conv_spatial.txt; grep -c " ok, max rel" $OUT/dyn_conv_spatial.txt; grep -E "WRONG|NVRTC compiles" $OUT/dyn_conv_spatial.txt
KILN_GPU_SPECS=conv,conv2d_3x3,conv_nd KILN_CACHE_DIR=$(mktemp -d) timeout 130 .gpu/bin/kiln_test_gpu \
  -tc="gpu: every covered spec matches*,gpu: every covered spec's wgmma*,gpu: matmul and conv specs*" > $OUT/conv_specs.txt 2>&1
echo "conv specs rc=$?"; grep -cE '^gpu-check .* ok ' $OUT/conv_specs.txt; grep -E 'FAIL|WRONG|summary|test cases' $OUT/conv_specs.txt | head
KILN_CACHE_DIR=$(mktemp -d) timeout 100 python3 bench/shapes_bench.py --only conv \
  --ops conv_seed_HW_tf32,resnet_HW_tf32,resnet_HW_f16,depthwise_HW --out $OUT/shapes-conv > $OUT/shapes-conv.log 2>&1
echo "conv rows rc=$?"; tail -8 $OUT/shapes-conv.log
