#!/usr/bin/env bash
# Session 58, call 1: strided scans chunked per launch ([Note: chunks per launch]) against the
# float64 reference (dyn rows, dyn inner, both), the scan rows of shapes_bench (dyn against
# specialized and PyTorch), then the conv rows below the TMA flops rule and the two rows 3% off,
# 7 rounds.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 240 .gpu/bin/kiln_test_gpu \
  -tc="gpu: dyn inner extents*,gpu: dyn rows of reductions*,gpu: launches that repeat*" > $OUT/dyn_scans.txt 2>&1
echo "dyn scans rc=$?"; tail -3 $OUT/dyn_scans.txt; grep -c " ok, max rel" $OUT/dyn_scans.txt; grep -E "WRONG|FAIL|ERROR|NVRTC compiles" $OUT/dyn_scans.txt | head -20
KILN_CACHE_DIR=$(mktemp -d) timeout 90 python3 bench/shapes_bench.py --only len --ops cumsum_mid_C,colsum_C \
  --out $OUT/shapes-scan > $OUT/shapes-scan.log 2>&1
echo "scan rows rc=$?"; tail -8 $OUT/shapes-scan.log
KILN_CACHE_DIR=$(mktemp -d) timeout 240 python3 bench/shapes_bench.py --only conv --rounds 7 \
  --ops small_HW_tf32,small_HW_fp32,resnet_HW_tf32,depthwise_HW --out $OUT/shapes-conv > $OUT/shapes-conv.log 2>&1
echo "conv rows rc=$?"; tail -12 $OUT/shapes-conv.log
