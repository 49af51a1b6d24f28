#!/usr/bin/env bash
# Session 58, call 3: small forward convs on the TMA engine ([Note: small convs on the TMA
# engine]). .gpu/bin is the build before the change, .gpu/new after it: the two spec ops whose
# route changed, timed by each (kiln bench) and checked by the new one against the float64
# reference with the rest of specs/conv*; then the small conv rows of shapes_bench with the new
# package (specialized: now the engine where C >= 64 in tf32 and in 3xTF32).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
for op in conv2d_asym_bias_relu conv_transpose2d_s1_dilated_bias; do
  for build in bin new; do
    echo "=== $op, .gpu/$build"
    KILN_CACHE_DIR=$(mktemp -d) timeout 60 .gpu/$build/kiln bench specs/conv.kiln --op $op --iters 500 2>&1 | tail -6
  done
done 2>&1 | tee $OUT/route_bench.txt
KILN_GPU_SPECS=conv,conv_nd,conv2d_3x3 KILN_CACHE_DIR=$(mktemp -d) timeout 200 .gpu/new/kiln_test_gpu \
  -tc="gpu: every covered spec matches*,gpu: every covered spec's wgmma path*" > $OUT/conv_specs.txt 2>&1
echo "conv specs rc=$?"; tail -3 $OUT/conv_specs.txt; grep -c " ok" $OUT/conv_specs.txt; grep -E "WRONG|FAIL|ERROR" $OUT/conv_specs.txt | head
PYTHONPATH=$PWD/.gpu/new/python KILN_CACHE_DIR=$(mktemp -d) timeout 300 python3 bench/shapes_bench.py --only conv \
  --rounds 5 --ops small_HW_tf32,small_HW_fp32 --out $OUT/shapes-conv > $OUT/shapes-conv.log 2>&1
echo "conv rows rc=$?"; tail -16 $OUT/shapes-conv.log
