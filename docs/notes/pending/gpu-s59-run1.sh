#!/usr/bin/env bash
# Session 59 (no GPU lent; for the next session that has one): the dyn spatial conv's flops class
# (tf32 under 64 channels: WgConvNchw under N*H*W = 2^30 flops' pixels, the TMA engine from it).
# First correctness (the dyn conv spatial ops, small_tf32 across its threshold), then the conv rows
# of shapes_bench beside the specialized conv and cuDNN (the 32x32x28x28 -> 32 tf32 row was 1.337x).
# Build first: scripts/gpu_build.sh, or the incremental copy of kiln_test_gpu and python/kiln.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 300 .gpu/bin/kiln_test_gpu -tc="gpu: dyn spatial extents of convs*" \
  > $OUT/dyn_convs.txt 2>&1
echo "dyn convs rc=$?"; tail -3 $OUT/dyn_convs.txt; grep -c " ok, max rel" $OUT/dyn_convs.txt
grep -E "WRONG|FAIL|ERROR|NVRTC compiles" $OUT/dyn_convs.txt | head -40
KILN_CACHE_DIR=$(mktemp -d) timeout 250 python3 bench/shapes_bench.py --only conv --rounds 5 \
  --ops small_HW_tf32,small_HW_fp32,resnet_HW_tf32 --out $OUT/shapes-conv > $OUT/shapes-conv.log 2>&1
echo "conv rows rc=$?"; tail -16 $OUT/shapes-conv.log
