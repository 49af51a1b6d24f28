#!/usr/bin/env bash
# Session 71, call 4: why KernelBench 67's tf32 conv (conv_tma, x read in place) and the 3-d and
# 2-d pools (KB 46, 42) wait: Nsight Compute's stall reasons per issued instruction and the SASS
# source page (per-instruction samples and stalls), HEAD's binary.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
stalls='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
run() {  # name spec precision kernel-regex
  KILN_CACHE_DIR=/tmp/c-ncu timeout 120 ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight \
      --section MemoryWorkloadAnalysis_Tables --print-details all --metrics "$stalls" -k regex:$4 --launch-count 1 \
      -o $logs/$1 .gpu/bin/kiln run $2 --op m --precision $3 --iters 1 > $logs/$1.txt 2>&1
  echo "[$SECONDS s] $1 rc=$?"
  ncu -i $logs/$1.ncu-rep --page raw --metrics "$stalls" 2>/dev/null | grep -E "stalled" | awk '$NF+0 > 0.2' | sort -k3 -n -r | head -14
  ncu -i $logs/$1.ncu-rep --page source --csv --print-source sass > $logs/$1_sass.csv 2>&1; echo "sass rows $(wc -l < $logs/$1_sass.csv)"
}
run kb67_tf32 specs/kernelbench/level1/67_conv_standard_1D.kiln tf32 conv
run kb46 specs/kernelbench/level1/46_Average_Pooling_3D.kiln fp32 pool
run kb42 specs/kernelbench/level1/42_Max_Pooling_2D.kiln fp32 pool
rm -f $logs/*.ncu-rep
