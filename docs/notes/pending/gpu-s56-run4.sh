#!/usr/bin/env bash
# Session 56, call 4: what call 3's time limit cut: the spec checks of the conv specs (every covered
# spec, the wgmma path, f16/bf16 inputs) on the changed conv templates, the host app, and the pack
# run with NVRTC unloadable.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_GPU_SPECS=conv,conv2d_3x3,conv_nd KILN_CACHE_DIR=$(mktemp -d) timeout 250 .gpu/bin/kiln_test_gpu \
  -tc="gpu: every covered spec matches*,gpu: every covered spec's wgmma*,gpu: matmul and conv specs*" > $OUT/conv_specs.txt 2>&1
echo "conv specs rc=$?"; grep -cE '^gpu-check .* ok ' $OUT/conv_specs.txt; grep -E 'FAIL|WRONG|summary|test cases' $OUT/conv_specs.txt | head
timeout 40 .gpu/bin/host_app examples/host_app/app.kiln > $OUT/host_app.log 2>&1; echo "host_app rc=$?"
KILN_NVRTC_LIB=/nonexistent KILN_CACHE_DIR=$(mktemp -d) timeout 40 .gpu/bin/host_app examples/host_app/app.kiln > $OUT/host_app_embedded.log 2>&1
echo "host_app embedded rc=$?"; tail -2 $OUT/host_app_embedded.log
KILN_SUITE_PARTS="pack" KILN_CACHE_DIR=$(mktemp -d) timeout 150 bash scripts/gpu_suite.sh > $OUT/pack.log 2>&1; echo "pack rc=$?"
sed -n '/================ summary/,$p' $OUT/pack.log | head
