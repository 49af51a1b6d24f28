#!/usr/bin/env bash
# Session 74's device calls (run from the repository root on the GPU machine, .gpu.tar.xz carried).
# call 1: the GPU test files other than the spec checks (dyn, tuner, cache, pack, runtime), the
# pack part; then, in what is left of 570 s, the conv specs' reference checks (the TMA conv's wave rule).
set -uo pipefail
start=$SECONDS
KILN_SUITE_PARTS="tests pack" KILN_SUITE_TESTS="-sfe=*test_specs_gpu.cpp" timeout 480 bash scripts/gpu_suite.sh \
  > "$OUT/call1.log" 2>&1
echo "suite rc=$? after $((SECONDS - start)) s"
left=$((560 - (SECONDS - start)))
if [ "$left" -gt 60 ]; then
  export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  KILN_GPU_SPECS=conv,conv2d_3x3,conv_nd timeout "$left" stdbuf -oL -eL .gpu/bin/kiln_test_gpu \
    -tc='gpu: every covered spec matches*' > "$OUT/conv-specs.log" 2>&1
  echo "conv specs rc=$? ($(grep -c '^gpu-check .* ok ' "$OUT/conv-specs.log") ok, $(grep -c '^gpu-check .* FAIL' "$OUT/conv-specs.log") failed)"
fi
