#!/usr/bin/env bash
# Session 66, call 1: what session 65 landed and the H100 has not run, checked first, then the
# pending dropout patch. Carry .gpu/bin/kiln, kiln_test_gpu (landed code), kiln_new and
# kiln_test_gpu_new (docs/notes/pending/dropout-ahead.patch applied; built as gpu-s66-ahead.sh says).
# (1) Landed code: every covered spec of matmul.kiln (the three new dropout GEMMs), pooling.kiln
# (3-d pools in 512-thread blocks) and scans.kiln at every shape set; the wgmma-path cases; the
# look-back scan tuner case (37 candidates, each checked) and the 3-d pool tuner case.
# (2) The patch: the wgmma-path cases and matmul.kiln's checks, then old and new binaries
# alternately on the dropout GEMMs. (3) racecheck of the conv specs at the odd set (owed since
# session 63) in the time that is left. Before it, per-kernel times of the irregular GEMM row under ncu.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=matmul,pooling,scans timeout 170 .gpu/bin/kiln_test_gpu \
  -tc="gpu: every covered spec matches*" --duration=true > $logs/head_specs.txt 2>&1
echo "[$SECONDS s] landed matmul+pooling+scans specs rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/head_specs.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/head_specs.txt)"
grep -E "FAIL|test cases|assertions" $logs/head_specs.txt | head
KILN_CACHE_DIR=$(mktemp -d) timeout 170 .gpu/bin/kiln_test_gpu --duration=true \
  -tc="gpu: every covered spec's wgmma path*,gpu: a look-back scan tunes*,gpu: 3-d pools tune*" > $logs/head_cases.txt 2>&1
echo "[$SECONDS s] landed wgmma path + look-back and 3-d pool tuners rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/head_cases.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/head_cases.txt)"
grep -E "FAIL|test cases|assertions|best|heuristic|dropout" $logs/head_cases.txt | head -30
KILN_CACHE_DIR=$(mktemp -d) timeout 90 .gpu/bin/kiln_test_gpu_new \
  -tc="gpu: every covered spec's wgmma path*" > $logs/new_wgmma.txt 2>&1
echo "[$SECONDS s] patch wgmma path rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/new_wgmma.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/new_wgmma.txt)"
grep -E "FAIL|test cases" $logs/new_wgmma.txt | head
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=matmul timeout 90 .gpu/bin/kiln_test_gpu_new \
  -tc="gpu: every covered spec matches*" > $logs/new_specs.txt 2>&1
echo "[$SECONDS s] patch matmul specs rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/new_specs.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/new_specs.txt)"
grep -E "FAIL|test cases" $logs/new_specs.txt | head
for round in 1 2 3; do for K in kiln kiln_new; do
  for op in linear_relu_dropout linear_xt_dropout bmm_dropout_bf16; do
    echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K timeout 40 .gpu/bin/$K run specs/matmul.kiln --op $op --iters 50 2>&1 | grep -E 'median|FAIL|error' | tr '\n' ' ')"
  done
  echo "$K round $round seed tf32 $(KILN_CACHE_DIR=/tmp/c-$K timeout 40 .gpu/bin/$K run specs/linear_dropout_softmax.kiln --precision tf32 --iters 50 2>&1 | grep -E 'median|FAIL|error' | tr '\n' ' ')"
done; done | tee $logs/ab.txt
for op in irr_bf16 irr_aligned_bf16 irr_f32; do
  KILN_CACHE_DIR=/tmp/c-kiln timeout 60 ncu --metrics gpu__time_duration.sum --csv .gpu/bin/kiln run docs/notes/pending/irr.kiln \
    --op $op --precision tf32 --iters 3 > $logs/ncu_$op.csv 2>&1
  echo "[$SECONDS s] ncu $op rc=$?"; grep -E 'gpu__time_duration' $logs/ncu_$op.csv | awk -F'","' '{print $5, $NF}' | tail -8
done
left=$((560 - SECONDS))
if [ $left -gt 60 ]; then
  KILN_GPU_SPECS=conv2d_3x3,conv,conv_nd KILN_GPU_SHAPES=odd timeout $left compute-sanitizer --tool racecheck --error-exitcode 86 \
    .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*" > $logs/racecheck_conv.txt 2>&1
  echo "[$SECONDS s] racecheck conv odd rc=$? checks ok=$(grep -c '^gpu-check .* ok ' $logs/racecheck_conv.txt)"
  grep -E "RACECHECK SUMMARY|Race reported" $logs/racecheck_conv.txt | head -5
fi
