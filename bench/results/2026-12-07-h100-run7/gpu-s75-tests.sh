#!/usr/bin/env bash
# Session 75: the tuner's cases not yet run on a GPU (the mma.sync Gemm's picks, Gemv's skinny
# product with the warp rows), then the suite's pack part (a .kilnpack with NVRTC unloadable).
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bash scripts/gpu_unpack.sh > /dev/null 2>&1
export KILN_SOURCE_DIR=$PWD
timeout 300 stdbuf -oL -eL .gpu/bin/kiln_test_gpu -sf='*test_tuner_gpu.cpp' -tc='*mma.sync*,*skinny product*' \
  > "$OUT/tuner.log" 2>&1
echo "tuner cases rc=$?"; grep -E "^kiln tune|best|heuristic|passed|failed|ERROR|FAIL" "$OUT/tuner.log" | tail -40
KILN_SUITE_PARTS="pack" timeout 240 bash scripts/gpu_suite.sh > "$OUT/pack.log" 2>&1
echo "pack rc=$?"; tail -8 "$OUT/pack.log"
