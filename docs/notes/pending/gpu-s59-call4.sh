#!/usr/bin/env bash
# Session 59, call 4: the memory-bound specs on odd sizes and half types (call 3 gave them 150 s:
# too few), then the dyn spatial conv rows beside the specialized conv and cuDNN.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 300 .gpu/bin/kiln_test_gpu -tc="gpu: memory-bound specs on odd sizes*" \
  > $OUT/odd.txt 2>&1
echo "odd sizes rc=$?"; tail -3 $OUT/odd.txt; grep -c " ok" $OUT/odd.txt; grep -E "WRONG|FAIL|ERROR" $OUT/odd.txt | head -20
KILN_CACHE_DIR=$(mktemp -d) timeout 200 python3 bench/shapes_bench.py --only conv --rounds 5 \
  --ops small_HW_tf32 --out $OUT/shapes-conv > $OUT/shapes-conv.log 2>&1
echo "conv rows rc=$?"; tail -14 $OUT/shapes-conv.log
