#!/usr/bin/env bash
# Session 58, call 2: where the static conv's route should switch from WgConvNchw to the TMA
# engine. A dyn-spatial conv takes the engine at every size, the specialized one WgConvNchw below
# kPadMinFlops (2^30): small convs of 3.6e6 to 9.2e8 flops side by side, 5 rounds. And the chart
# of call 1's scan rows (drawn here: this machine has matplotlib).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
mkdir -p $OUT/scan && cp bench/results/2026-12-05-h100-run9/shapes-20261205-183923.json $OUT/scan/ &&
  python3 bench/shapes_bench.py --chart $OUT/scan/shapes-20261205-183923.json && rm $OUT/scan/*.json
KILN_CACHE_DIR=$(mktemp -d) timeout 400 python3 bench/shapes_bench.py --only conv --rounds 5 \
  --ops small_HW_tf32,small_HW_fp32 --out $OUT/shapes-conv > $OUT/shapes-conv.log 2>&1
echo "conv rows rc=$?"; tail -16 $OUT/shapes-conv.log
