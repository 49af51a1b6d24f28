#!/usr/bin/env bash
# Session 61, call 3 (what the remaining device time allowed of call 2): the tuner's GPU tests,
# the row norm and the new elementwise cases among them; the wgmma-path test with its K = 4000
# softmax case (the contraction-error tolerance); linear_dropout_softmax's every-spec shapes.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 150 .gpu/bin/kiln_test_gpu -sf="*test_tuner_gpu.cpp" > $OUT/tuner.txt 2>&1
echo "tuner rc=$?"; grep -E "^tuned|ERROR|FAIL" $OUT/tuner.txt | head -20; tail -3 $OUT/tuner.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 100 .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec's wgmma path*" > $OUT/wgmma_path.txt 2>&1
echo "wgmma path rc=$?"; grep -E "linear_dropout_softmax|FAIL|ERROR" $OUT/wgmma_path.txt | head -12; tail -2 $OUT/wgmma_path.txt
KILN_GPU_SPECS=linear_dropout_softmax KILN_CACHE_DIR=$(mktemp -d) timeout 50 \
  .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*" > $OUT/lds.txt 2>&1
echo "lds rc=$?"; grep -E "gpu-check|ERROR" $OUT/lds.txt | head; tail -2 $OUT/lds.txt
