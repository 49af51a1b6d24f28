#!/usr/bin/env bash
# Profiles kiln's kernels of chosen benchmark rows under Nsight Compute on the GPU machine and
# writes one text report per row to $OUT. Expects .gpu/ from scripts/gpu_build.sh.
# Usage: bash scripts/gpu_profile.sh "ONLY|PRECISION|LAUNCHES" ...
#   e.g. bash scripts/gpu_profile.sh "axis=1|fp32|2" "linear+dropout|tf32|3"
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/gpu_unpack.sh || exit 1
export PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-/tmp/kiln-out}
mkdir -p "$out"
sections=(SpeedOfLight MemoryWorkloadAnalysis Occupancy LaunchStats WarpStateStats SchedulerStats ComputeWorkloadAnalysis)
# Why warps wait, per issued instruction (long_scoreboard, barrier, gmma, ...).
stalls='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
details=()  # the sections' tables too (stall reasons, memory charts) where this ncu can print them
if ncu --help 2>/dev/null | grep -q -- '--print-details'; then details=(--print-details all); fi
for row in "$@"; do
  IFS='|' read -r only precision launches <<<"$row"
  name=$(echo "$only-$precision" | tr -c 'A-Za-z0-9_-' '_')
  echo "=== profiling '$only' ($precision), $launches kiln launches"
  # shellcheck disable=SC2046
  timeout 300 ncu --target-processes all --kernel-name regex:'^kiln_' --launch-count "${launches:-2}" \
    $(printf -- '--section %s ' "${sections[@]}") "${details[@]}" --metrics "$stalls" \
    python3 bench/bench.py --quick --no-compile --no-ceilings \
      --only "$only" --precision "$precision" --out /tmp/kiln-prof >"$out/prof_$name.txt" 2>&1
  echo "exit $?"; grep -E '^  kiln_|Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Block Limit' "$out/prof_$name.txt" | head -60
done
