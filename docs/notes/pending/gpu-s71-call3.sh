#!/usr/bin/env bash
# Session 71, call 3. (1) Nsight Compute of KernelBench 67 (conv1d k3, 32x64x131072 -> 128) in
# tf32 (conv_tma, x read in place through the consumers' registers: 2.99 ms, 0.87x eager) and in
# fp32-accurate (3xTF32 over a copy of x: 3.27 ms), the conv kernel of each, HEAD's binary.
# (2) The conv orientation A/B (gpu-s65-conv-ab.sh: conv-pixel-rows.patch as kiln_pixrows).
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
LIMIT=${LIMIT:-560}
room() { [ $((LIMIT - SECONDS)) -gt "$1" ]; }
spec=specs/kernelbench/level1/67_conv_standard_1D.kiln
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section SourceCounters"
for p in tf32 fp32; do
  room 200 && { KILN_CACHE_DIR=/tmp/c-ncu timeout 90 ncu $sections -k regex:conv --launch-count 1 \
      .gpu/bin/kiln run $spec --op m --precision $p --iters 1 > $logs/ncu_$p.txt 2>&1
    echo "[$SECONDS s] ncu $p rc=$?"
    grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Registers Per|Achieved Occupancy|Shared Memory Configuration|Executed Ipc A|Bank|Stall|stall" $logs/ncu_$p.txt | head -40; }
done
KILN_CACHE_DIR=/tmp/c-kiln timeout 60 .gpu/bin/kiln run $spec --op m --precision tf32 --iters 30 2>&1 | grep -E 'median|rror'
room 260 && { KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=conv,conv_nd,conv2d_3x3 timeout 200 .gpu/bin/kiln_test_gpu_pixrows \
  -tc="gpu: every covered spec matches*,gpu: every covered spec's wgmma path*" > $logs/checks_pixrows.txt 2>&1
  echo "[$SECONDS s] pixel-rows checks rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/checks_pixrows.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/checks_pixrows.txt)"; }
for round in 1 2; do for K in kiln kiln_pixrows; do
  while read -r spec op; do
    room 10 && echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K timeout 30 .gpu/bin/$K run $spec --op $op --precision tf32 --iters 30 2>&1 | grep -E 'median|rror' | tr '\n' ' ')"
  done <<'OPS'
specs/conv_nd.kiln conv1d_k3
specs/conv_nd.kiln conv1d_strided_dilated_bias
specs/conv_nd.kiln conv_transpose1d_k3
specs/conv_nd.kiln conv_transpose2d_k3
specs/conv_nd.kiln conv3d_asym_bias_relu
specs/conv.kiln conv2d_stride2_pad1
specs/conv.kiln conv2d_asym_bias_relu
specs/conv2d_3x3.kiln conv2d_3x3
OPS
done; done | tee $logs/ab.txt
