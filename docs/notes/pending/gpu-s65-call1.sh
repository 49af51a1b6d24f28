#!/usr/bin/env bash
# For session 65's device time (written in session 64, which ran out of device time): what session
# 64 could not run. (1) The 3-d pools' block size at KernelBench's shapes: session 64's tuner test
# found 512-thread blocks 1.057x (max) and 1.212x (avg) faster than the heuristic's 256 on 16x32x64^3
# planes, but `kiln tune` of KB 43 and 46 spent its 35 s budget before the 512-thread candidates
# (each candidate of KB 46 takes ~6 s: a compile, a 1 GiB output checked on the host). A budget of
# 150 s reaches them. (2) racecheck of the conv specs at the odd set (owed since session 63). Every
# log goes into one tarball ($OUT returns at most 8 files). Carry .gpu. Run the bench part
# (gpu-s64-call3.sh) in a call of its own.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
PYTHONPATH=$PWD/.gpu/python:$PWD/bench python3 -c "
import bench
open('$logs/kb_pools.kiln', 'w').write(bench.KERNELBENCH_POOL_SPEC)"
for op in kb46_avg_pool3d kb43_max_pool3d; do
  start=$SECONDS
  KILN_CACHE_DIR=$(mktemp -d) timeout 180 .gpu/bin/kiln tune $logs/kb_pools.kiln --op $op --iters 30 --budget 150 \
    --no-store > $logs/tune-$op.txt 2> $logs/tune-$op-progress.txt
  echo "$op rc=$? [$((SECONDS - start)) s]"; grep -E ': best ' $logs/tune-$op.txt
done | tee $logs/tune.txt
KILN_GPU_SPECS=conv2d_3x3,conv,conv_nd KILN_GPU_SHAPES=odd timeout 200 compute-sanitizer --tool racecheck --error-exitcode 86 \
  .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*" > $logs/racecheck_conv.txt 2>&1
echo "racecheck conv odd rc=$? checks ok=$(grep -c '^gpu-check .* ok ' $logs/racecheck_conv.txt)"
grep -E "RACECHECK SUMMARY|Race reported" $logs/racecheck_conv.txt | head -5
