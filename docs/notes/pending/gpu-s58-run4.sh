#!/usr/bin/env bash
# Session 58, call 4: the final code. Dyn spatial convs with the TMA engine's pixel tiles by a size
# class of H x W (and a 1-d conv of 24 channels there), dyn conv batches, and the conv specs whose
# static route changed (small convs on the TMA engine) against the float64 reference; then the
# conv rows of shapes_bench, 5 rounds.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 200 .gpu/bin/kiln_test_gpu \
  -tc="gpu: dyn spatial extents of convs*,gpu: dyn conv batches*" > $OUT/dyn_convs.txt 2>&1
echo "dyn convs rc=$?"; tail -3 $OUT/dyn_convs.txt; grep -c " ok, max rel" $OUT/dyn_convs.txt; grep -E "WRONG|FAIL|ERROR|NVRTC compiles" $OUT/dyn_convs.txt | head -30
KILN_GPU_SPECS=conv,conv_nd,conv2d_3x3 KILN_CACHE_DIR=$(mktemp -d) timeout 150 .gpu/bin/kiln_test_gpu \
  -tc="gpu: every covered spec matches*,gpu: every covered spec's wgmma path*" > $OUT/conv_specs.txt 2>&1
echo "conv specs rc=$?"; tail -3 $OUT/conv_specs.txt; grep -c " ok" $OUT/conv_specs.txt; grep -E "WRONG|FAIL|ERROR" $OUT/conv_specs.txt | head
KILN_CACHE_DIR=$(mktemp -d) timeout 220 python3 bench/shapes_bench.py --only conv --rounds 5 \
  --ops small_HW_tf32,small_HW_fp32,resnet_HW_tf32,conv_seed_HW_tf32 --out $OUT/shapes-conv > $OUT/shapes-conv.log 2>&1
echo "conv rows rc=$?"; tail -18 $OUT/shapes-conv.log
