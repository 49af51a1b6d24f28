#!/usr/bin/env bash
# Session 55, call 1: the rerun owed from session 54 (dyn inner extents with the fixed value lists)
# and the new dyn attention test, then the dyn-vs-specialized rows of both (shapes_bench, beside
# eager PyTorch). gpu-s55-run2.sh: the GPU test suite whole, the host app and the pack without NVRTC.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
T=.gpu/bin/kiln_test_gpu
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
for t in "dyn inner extents" "dyn batches and sequence lengths of fused attention"; do
  f=$OUT/$(echo $t | tr ' ' '_' | cut -c1-30).txt
  KILN_CACHE_DIR=$(mktemp -d) timeout 150 $T -tc="gpu: $t*" > $f 2>&1; echo "$t rc=$?"
  tail -3 $f; grep -c " ok, max rel" $f; grep -E "WRONG|NVRTC compiles|executables made" $f | head -20
done
KILN_CACHE_DIR=$(mktemp -d) timeout 200 python3 bench/shapes_bench.py --only len --ops colsum_C,colmax_C_f16,cumsum_mid_C,attention_BS,attention_causal_S --out $OUT/shapes-len > $OUT/shapes-len.log 2>&1; echo "shapes rc=$?"
tail -20 $OUT/shapes-len.log
