#!/usr/bin/env bash
# For the next device time (written in session 70, whose device time ran out before it ran):
# located-columns.patch ([Note: columns located once] in gemm_store.cuh: a transposed conv's phased
# output located once a column, its values stored row by row; TransposedFilterLoader's loop not
# unrolled; both cut NVRTC time, 603 -> ~390 ms for the grouped dilated conv_transpose2d).
# Build: scripts/gpu_build.sh (HEAD's .gpu.tar.xz, "kiln"), then
# docs/notes/pending/build-new.sh docs/notes/pending/located-columns.patch; carry .gpu.tar.xz,
# .gpu/bin/kiln_new, .gpu/bin/kiln_test_gpu_new. LIMIT: seconds it may take.
# (1) new: the conv_nd specs against float64 (every transposed conv, both precisions' paths);
# (2) A/B of the ConvNchw transposed convs, two rounds; (3) memcheck of one at small dims.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
LIMIT=${LIMIT:-540}
room() { [ $((LIMIT - SECONDS)) -gt "$1" ]; }
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=conv_nd timeout 150 .gpu/bin/kiln_test_gpu_new -tc="gpu: every covered spec matches*" > $logs/specs.txt 2>&1
echo "[$SECONDS s] conv_nd spec checks (new) rc=$? ok=$(grep -cE '^gpu-check .* ok ' $logs/specs.txt) failed=$(grep -cE '^gpu-check .* FAIL' $logs/specs.txt)"
grep -E 'FAIL|ERROR|test cases|assertions' $logs/specs.txt | head -8
for round in 1 2; do for K in kiln kiln_new; do for op in conv_transpose2d_grouped_dilated conv_transpose3d_grouped conv_transpose2d_opad_f16 conv_transpose1d_strided_dilated; do
  room 15 && echo "$K round $round $(KILN_CACHE_DIR=/tmp/c-$K timeout 30 .gpu/bin/$K run specs/conv_nd.kiln --op $op --iters 20 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
done; done; done
room 40 && { KILN_CACHE_DIR=$(mktemp -d) timeout 35 compute-sanitizer --error-exitcode 86 .gpu/bin/kiln_new run specs/conv_nd.kiln --op conv_transpose2d_grouped_dilated --small --check --iters 1 > $logs/san.txt 2>&1
  echo "[$SECONDS s] memcheck rc=$? $(grep -E 'ERROR SUMMARY' $logs/san.txt)"; }
# (4) HEAD: the benchmark's irregular GEMM rows (C's row runs landed in session 70, not yet run
# there) and KernelBench 72 and 75 (ConvNchw's transposed convs, the baseline of (2)) beside
# PyTorch and Triton; (5) the split-norm tuner case with its corrected count (12 for the batch
# norm over 7x7), which failed only on the stale bound in session 70's suite run, and (6).
# (6) HEAD: the scalar whole-row sweep's picks (session 70, CPU and NVRTC only): its tuner case.
room 150 && { KILN_CACHE_DIR=$(mktemp -d) timeout 100 .gpu/bin/kiln_test_gpu \
    -tc="gpu: split norms tune*,gpu: a scalar whole-row sweep*" > $logs/tune_cases.txt 2>&1
  echo "[$SECONDS s] split norm and scalar sweep tuner cases rc=$?"; grep -E "^tuned|test cases|assertions|ERROR" $logs/tune_cases.txt | head -8; }
left=$((LIMIT - SECONDS - 40))
[ $left -gt 90 ] && KILN_SUITE_PARTS=bench BENCH_TIMEOUT=$left timeout $((left + 15)) bash scripts/gpu_suite.sh \
  --only "6007,1000x1000x1000,KernelBench 75,KernelBench 72" 2>&1 | tail -16
