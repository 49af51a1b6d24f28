#!/usr/bin/env bash
# For the next device time (session 70): c-row-runs.patch ([Note: row runs for C without vector
# stores] in gemm_store.cuh: C rows that take no 4-element stores, e.g. bf16 with 3331 columns,
# written as 16-column runs of two rows per store after shuffles). Build: scripts/gpu_build.sh
# (HEAD's .gpu.tar.xz), then docs/notes/pending/build-new.sh docs/notes/pending/c-row-runs.patch;
# carry .gpu.tar.xz, .gpu/bin/kiln_new, .gpu/bin/kiln_test_gpu_new. LIMIT: seconds it may take.
# (1) new: the gemm, matmul and linear specs (odd N, tails, epilogues, the mma.sync Gemm on
# sm_90a's fallbacks) against float64; (2) A/B of the odd-C product and its bf16 neighbours;
# (3) memcheck of the odd-C product at a small M; (4) Nsight Compute L2 writes of the new kernel.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
LIMIT=${LIMIT:-560}
room() { [ $((LIMIT - SECONDS)) -gt "$1" ]; }
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=gemm,matmul,linear_dropout_softmax,matmul_small_k timeout 240 .gpu/bin/kiln_test_gpu_new -tc="gpu: every covered spec*" --duration=true > $logs/specs.txt 2>&1
echo "[$SECONDS s] spec checks (new) rc=$? ok=$(grep -cE '^gpu-check .* ok ' $logs/specs.txt) failed=$(grep -cE '^gpu-check .* FAIL' $logs/specs.txt)"
grep -E 'FAIL|ERROR|test cases|assertions|^[0-9.]+ s:' $logs/specs.txt | head -10
for round in 1 2; do for K in kiln kiln_new; do for op in mmt_6007x3331x4800 mmt_6007x3336x4800; do
  room 15 && echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K timeout 30 .gpu/bin/$K run docs/notes/pending/irr-shapes.kiln --op $op --iters 50 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
done; done; done
room 60 && { KILN_CACHE_DIR=$(mktemp -d) timeout 50 compute-sanitizer --error-exitcode 86 .gpu/bin/kiln_new run docs/notes/pending/irr-shapes.kiln --op mmt_6007x3331x4800 -D M=300 -D K=256 --iters 1 > $logs/san.txt 2>&1
  echo "[$SECONDS s] memcheck odd C rc=$? $(grep -E 'ERROR SUMMARY' $logs/san.txt)"; }
m=gpu__time_duration.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum,smsp__inst_executed_op_global_st.sum
room 60 && { KILN_CACHE_DIR=/tmp/c-kiln_new timeout 45 ncu --metrics $m --csv -k regex:gemm_tma --launch-count 1 \
    .gpu/bin/kiln_new run docs/notes/pending/irr-shapes.kiln --op mmt_6007x3331x4800 --iters 1 > $logs/ncu_runs.csv 2>&1
  echo "[$SECONDS s] ncu rc=$?"; grep -E '"(gpu__|lts__|smsp__)' $logs/ncu_runs.csv | awk -F'","' '{print $(NF-2), $(NF-1), $NF}'; }
# (5) HEAD: the 16-byte whole-row sweep's picks (session 69): the tuner's GPU case, then the seed
# min over axis 1 tuned without storing (its target 2.95 ms; the heuristic ran 2.963 in the benchmark).
if room 150; then
  KILN_CACHE_DIR=$(mktemp -d) timeout 120 .gpu/bin/kiln_test_gpu -tc="gpu: a 16-byte whole-row sweep*" > $logs/tune_sweep_test.txt 2>&1
  echo "[$SECONDS s] tuner GPU case rc=$?"; grep -E "tuned|test cases|assertions|ERROR" $logs/tune_sweep_test.txt | head -6
fi
if room 60; then
  left=$((LIMIT - SECONDS))
  KILN_CACHE_DIR=$(mktemp -d) timeout $left .gpu/bin/kiln tune specs/min_reduce.kiln --op min_reduce --no-store --budget $((left - 20)) > $logs/tune_min.txt 2>&1
  echo "[$SECONDS s] tune min_reduce rc=$?"; tail -25 $logs/tune_min.txt
fi
