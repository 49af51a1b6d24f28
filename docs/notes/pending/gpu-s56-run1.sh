#!/usr/bin/env bash
# Session 56, call 1: the GPU tests owed since session 54/55 (dyn inner extents, dyn fused
# attention) and session 56's dyn conv spatial extents, each against the float64 reference.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T=.gpu/bin/kiln_test_gpu
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
for t in "dyn spatial extents of convs" "dyn inner extents" "dyn batches and sequence lengths of fused attention"; do
  f=$OUT/$(echo $t | tr ' ' '_' | cut -c1-30).txt
  KILN_CACHE_DIR=$(mktemp -d) timeout 180 $T -tc="gpu: $t*" > $f 2>&1; echo "$t rc=$?"
  tail -3 $f; grep -c " ok, max rel" $f; grep -E "WRONG|NVRTC compiles|executables made" $f | head -24
done
