#!/usr/bin/env bash
# Session 59, call 3: the rest of call 1's every-spec check (it timed out in norms.kiln): the
# scans (cumsum_dropout), reductions, stream widths (f16 rows to f32), views and the remaining
# norms; the memory-bound specs on odd sizes and half types; cumsum_dropout's time beside the
# plain cumsum of the same rows.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_GPU_SPECS=scans,stream_widths,views,reductions,norms KILN_CACHE_DIR=$(mktemp -d) timeout 200 \
  .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*" > $OUT/specs.txt 2>&1
echo "specs rc=$?"; tail -3 $OUT/specs.txt; grep -c " ok " $OUT/specs.txt
grep -E "WRONG|FAIL|ERROR|cumsum_dropout|half_long|gpu-check summary" $OUT/specs.txt | head -20
KILN_CACHE_DIR=$(mktemp -d) timeout 150 .gpu/bin/kiln_test_gpu -tc="gpu: memory-bound specs on odd sizes*" \
  > $OUT/odd.txt 2>&1
echo "odd sizes rc=$?"; tail -3 $OUT/odd.txt; grep -E "WRONG|FAIL|ERROR" $OUT/odd.txt | head -20
for op in cumsum_dropout cumsum_reverse; do
  KILN_CACHE_DIR=$(mktemp -d) timeout 40 .gpu/bin/kiln bench specs/scans.kiln --op $op --iters 50 > $OUT/bench-$op.txt 2>&1
  echo "kiln bench $op rc=$?"; head -12 $OUT/bench-$op.txt
done
