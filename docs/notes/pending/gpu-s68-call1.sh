#!/usr/bin/env bash
# Session 68, call 1. Carry .gpu.tar.xz (HEAD's binaries, scripts/gpu_build.sh), .gpu/bin/kiln_new and
# .gpu/bin/kiln_test_gpu_new (the direct conv1d: conv1d-direct.patch v3, its copies from the
# 16-byte boundary before each tap's first pixel, one box more, the consumers reading from the
# shift; docs/notes/pending/build-new.sh builds them). Most decisive first, each part skipped when under LIMIT (s) it would not finish:
# (1) new: the wgmma-path cases (the direct conv's three among them); old and new alternately on
# the 1-d convs in tf32. (2) HEAD: which of the bf16 GEMM's operands or C, with rows 16 bytes off a
# 128-byte line, makes 6007xNx4800 1.55x slower (irr-shapes.kiln): a·b with B and C off (3336) or
# on (3392), a·bᵀ with C alone off (3336, 3331) or on (3392), A alone off (K 4808 against 4864).
# (3) HEAD: the GPU suite's memory-bound case over norms.kiln (session 67's rownorm edits).
# (4) new: conv_nd.kiln's checks, compute-sanitizer on a padded dilated direct conv. (5) HEAD: L2
# sectors of two GEMMs under Nsight Compute; the picks of the seed min over axis 1.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
LIMIT=${LIMIT:-560}
room() { [ $((LIMIT - SECONDS)) -gt "$1" ]; }
KILN_CACHE_DIR=$(mktemp -d) timeout 110 .gpu/bin/kiln_test_gpu_new -tc="gpu: every covered spec's wgmma path*" --duration=true > $logs/new_wgmma.txt 2>&1
echo "[$SECONDS s] new wgmma-path cases rc=$? ok=$(grep -cE '^gpu-check .* ok ' $logs/new_wgmma.txt) failed=$(grep -cE '^gpu-check .* FAIL' $logs/new_wgmma.txt)"
grep -E 'FAIL|ERROR|error|test cases|assertions' $logs/new_wgmma.txt | head -10
for round in 1 2; do for K in kiln kiln_new; do for op in conv1d_k3 conv_transpose1d_k3 conv1d_padded_dilated_bias; do
  room 20 && echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K timeout 40 .gpu/bin/$K run specs/conv_nd.kiln --op $op --precision tf32 --iters 20 2>&1 | grep -E 'median|FAIL|error' | tr '\n' ' ')"
done; done; done | tee $logs/conv_ab.txt
echo "[$SECONDS s] conv rounds done"
for round in 1 2; do for op in mm_6007x3336x4800 mm_6007x3392x4800 mmt_6007x3336x4800 mmt_6007x3392x4800 mmt_6007x3331x4800 mm_6007x3584x4808 mm_6007x3584x4864; do
  room 15 && echo "round $round $op $(KILN_CACHE_DIR=/tmp/c-irr timeout 30 .gpu/bin/kiln run docs/notes/pending/irr-shapes.kiln --op $op --iters 50 2>&1 | grep -E 'median|FAIL|error' | tr '\n' ' ')"
done; done | tee $logs/irr_rounds.txt
echo "[$SECONDS s] gemm rounds done"
if room 130; then
  KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=norms timeout 120 .gpu/bin/kiln_test_gpu -tc="gpu: memory-bound specs on odd*" --duration=true > $logs/memory_bound.txt 2>&1
  echo "[$SECONDS s] memory-bound test (norms) rc=$? ok=$(grep -cE '^gpu-check .* ok ' $logs/memory_bound.txt) failed=$(grep -cE '^gpu-check .* FAIL' $logs/memory_bound.txt)"
  grep -E '^gpu-check .* FAIL|test cases|assertions' $logs/memory_bound.txt | head -8
fi
if room 100; then
  KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=conv_nd timeout 90 .gpu/bin/kiln_test_gpu_new -tc="gpu: every covered spec matches*" > $logs/new_conv_nd.txt 2>&1
  echo "[$SECONDS s] new conv_nd specs rc=$? ok=$(grep -cE '^gpu-check .* ok ' $logs/new_conv_nd.txt) failed=$(grep -cE '^gpu-check .* FAIL' $logs/new_conv_nd.txt)"
  grep -E 'FAIL|test cases|assertions' $logs/new_conv_nd.txt | head -6
fi
if room 60; then
  KILN_CACHE_DIR=$(mktemp -d) timeout 50 compute-sanitizer --error-exitcode 86 .gpu/bin/kiln_new run specs/conv_nd.kiln --op conv1d_padded_dilated_bias --precision tf32 -D N=2 -D L=30000 --iters 1 > $logs/new_sanitizer.txt 2>&1
  echo "[$SECONDS s] sanitizer conv1d_padded_dilated_bias rc=$?"; grep -E "ERROR SUMMARY|max|ok|FAIL" $logs/new_sanitizer.txt | head -4
fi
m=gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum
for op in mm_6007x3336x4800 mm_6007x3392x4800; do
  room 50 || break
  KILN_CACHE_DIR=/tmp/c-irr timeout 45 ncu --metrics $m --csv -k regex:gemm_tma --launch-count 1 \
    .gpu/bin/kiln run docs/notes/pending/irr-shapes.kiln --op $op --iters 1 > $logs/ncu_$op.csv 2>&1
  echo "[$SECONDS s] ncu $op rc=$?"; grep -E '"(gpu__|lts__|dram__)' $logs/ncu_$op.csv | awk -F'","' '{print $(NF-2), $(NF-1), $NF}'
done
if room 45; then
  left=$((LIMIT - SECONDS))
  KILN_CACHE_DIR=$(mktemp -d) timeout $left .gpu/bin/kiln tune specs/min_reduce.kiln --op min_reduce --no-store --budget $((left - 25)) > $logs/tune_min.txt 2>&1
  echo "[$SECONDS s] tune min_reduce rc=$?"; tail -25 $logs/tune_min.txt
fi
