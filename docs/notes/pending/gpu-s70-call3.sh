#!/usr/bin/env bash
# Session 70, call 3: (1) the split-norm tuner case with its corrected candidate count (12 for the
# batch norm over 7x7: the three block-per-row picks); (2) Nsight Compute sections of KernelBench 67
# in tf32 (conv_tma, 0.87x eager in run 1 of 2026-12-07); (3) the benchmark's irregular GEMM rows
# (C's row runs landed) and KernelBench 67, beside PyTorch and Triton. LIMIT: seconds it may take.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
LIMIT=${LIMIT:-480}
room() { [ $((LIMIT - SECONDS)) -gt "$1" ]; }
KILN_CACHE_DIR=$(mktemp -d) timeout 90 .gpu/bin/kiln_test_gpu -tc="gpu: split norms tune*" > $logs/tune_split.txt 2>&1
echo "[$SECONDS s] split norm tuner case rc=$?"; grep -E "^tuned|test cases|assertions|ERROR" $logs/tune_split.txt | head -6
if room 200; then
  KILN_CACHE_DIR=/tmp/c67 timeout 90 ncu --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    -k regex:conv_tma --launch-count 1 .gpu/bin/kiln run specs/conv_nd.kiln --op conv1d_k3 --precision tf32 --iters 1 > $logs/ncu_kb67.txt 2>&1
  echo "[$SECONDS s] ncu KB67 tf32 rc=$?"
  grep -E "Duration|Throughput|Pipe|Issue|Stall|Warp Cycles|Eligible|Active Warps|Registers|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Executed Ipc|No Eligible" $logs/ncu_kb67.txt | head -40
fi
left=$((LIMIT - SECONDS - 20))
[ $left -gt 100 ] && KILN_SUITE_PARTS=bench BENCH_TIMEOUT=$left timeout $((left + 15)) bash scripts/gpu_suite.sh \
  --only "6007,1000x1000x1000,KernelBench 67" 2>&1 | tail -20
