#!/usr/bin/env bash
# Call 5: Nsight Compute of the tf32 small-K product, kiln's SmallK beside cuBLAS, at the GPU's own clocks.
cd "$(dirname "$0")/.."
timeout 400 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
  --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
  python3 bench/peer_profile.py 32768 32768 64 tf32 --launches 1 > $OUT/ncu-small-k-tf32.txt 2>&1
echo "ncu rc=$?"
grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Memory Throughput  |Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Registers Per|Achieved Occupancy|Stall" $OUT/ncu-small-k-tf32.txt | head -60
