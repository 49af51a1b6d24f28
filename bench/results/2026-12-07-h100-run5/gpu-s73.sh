#!/usr/bin/env bash
# Session 73's device call: the GPU reference checks of the specs changed since the last whole
# run (views, conv, conv2d_3x3, conv_nd), then the GPU tuner's conv case and `kiln tune` of two convs (one per route off
# and on the TMA engine) with the new conv picks. Logs to $OUT.
set -u
bash scripts/gpu_unpack.sh >/dev/null || exit 1
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
KILN_GPU_SPECS=views,conv,conv2d_3x3,conv_nd timeout "${SPECS_S:-240}" stdbuf -oL -eL .gpu/bin/kiln_test_gpu \
  '-sf=*test_specs_gpu.cpp' '-tce=*wgmma path*' > "$OUT/specs.log" 2>&1
echo "specs rc=$? ok=$(grep -c '^gpu-check .* ok ' "$OUT/specs.log") fail=$(grep -c '^gpu-check .* FAIL' "$OUT/specs.log")"
grep -E 'FAIL|ERROR|test cases|assertions' "$OUT/specs.log" | head -20
grep '^gpu-check' "$OUT/specs.log" | tail -2
timeout "${TUNER_S:-150}" stdbuf -oL -eL .gpu/bin/kiln_test_gpu '-tc=gpu: convs tune*,gpu: a reduction chain*' > "$OUT/tuner.log" 2>&1
echo "tuner case rc=$?"
grep -E '^tuned|ERROR|test cases|assertions' "$OUT/tuner.log" | head -20
export KILN_CACHE_DIR=$(mktemp -d)
for op in ${TUNE_OPS:-conv2d_dilated_grouped conv2d_stride2_pad1}; do
  timeout 80 .gpu/bin/kiln tune specs/conv.kiln --op "$op" --budget "${TUNE_S:-30}" > "$OUT/tune-$op.txt" 2>&1
  echo "tune $op rc=$?"
  tail -16 "$OUT/tune-$op.txt"
done
