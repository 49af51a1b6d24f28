#!/usr/bin/env bash
# Session 68, call 1 (HEAD 2a184aa's binaries; carry .gpu.tar.xz): (1) the GPU suite's memory-bound
# case (norms, reductions, scans at odd sizes, one huge row, NaN and +-inf, f16 and bf16), which has
# not run since session 67's rownorm edits; (2) which of the bf16 GEMM's operands or C, with rows
# 16 bytes off a 128-byte line, makes 6007xNx4800 1.55x slower (irr-shapes.kiln): a·b with B and C
# off (3336) or on (3392), a·bᵀ with C alone off (3336, 3331) or on (3392), A alone off (K 4808
# against 4864); three rounds, then per-kernel L2 sectors read and written under Nsight Compute.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
KILN_CACHE_DIR=$(mktemp -d) timeout ${TEST_TIMEOUT:-240} .gpu/bin/kiln_test_gpu -tc="gpu: memory-bound specs on odd*" --duration=true > $logs/memory_bound.txt 2>&1
echo "[$SECONDS s] memory-bound test rc=$? ok=$(grep -cE '^gpu-check .* ok ' $logs/memory_bound.txt) failed=$(grep -cE '^gpu-check .* FAIL' $logs/memory_bound.txt)"
grep -E '^gpu-check .* FAIL|test cases|assertions' $logs/memory_bound.txt | head -12
ops="mm_6007x3336x4800 mm_6007x3392x4800 mmt_6007x3336x4800 mmt_6007x3392x4800 mmt_6007x3331x4800 mm_6007x3584x4808 mm_6007x3584x4864"
for round in 1 2 3; do for op in $ops; do
  echo "round $round $op $(KILN_CACHE_DIR=/tmp/c-irr timeout 60 .gpu/bin/kiln run docs/notes/pending/irr-shapes.kiln --op $op --iters 50 2>&1 | grep -E 'median|FAIL|error' | tr '\n' ' ')"
done; done | tee $logs/irr_rounds.txt
echo "[$SECONDS s] rounds done"
m=gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_write.sum
for op in mm_6007x3336x4800 mm_6007x3392x4800 mmt_6007x3336x4800 mmt_6007x3392x4800 mmt_6007x3331x4800; do
  KILN_CACHE_DIR=/tmp/c-irr timeout 90 ncu --metrics $m --csv -k regex:gemm_tma --launch-count 1 \
    .gpu/bin/kiln run docs/notes/pending/irr-shapes.kiln --op $op --iters 1 > $logs/ncu_$op.csv 2>&1
  echo "[$SECONDS s] ncu $op rc=$?"; grep -E '"(gpu__|lts__|dram__)' $logs/ncu_$op.csv | awk -F'","' '{print $(NF-2), $(NF-1), $NF}'
done
