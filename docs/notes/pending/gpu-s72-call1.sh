#!/usr/bin/env bash
# For the next device time (written in session 71, whose device budget was spent).
# Build first: scripts/gpu_build.sh (HEAD as "kiln"), then, each with build-new.sh and renamed:
#   gemm-swap-pairs.patch -> .gpu/bin/kiln_swap, kiln_test_gpu_swap (a tf32 Cᵀ = Bᵀ·Aᵀ product's
#     lanes hold adjacent C rows, one 8-byte store a column: kRowsPairs as the direct conv's);
#   depthwise-nobranch.patch -> .gpu/bin/kiln_dw, kiln_test_gpu_dw (the depthwise conv's taps
#     outside the input by selects, not branches, as the pools' since session 71);
#   conv-x3-pairs.patch -> .gpu/bin/kiln_x3, kiln_test_gpu_x3 (the 3xTF32 NCHW convs' pixel rows in
#     pairs too: 8-byte stores into y where Ho x Wo is even; its A loads then two-way conflicted).
# Carry .gpu.tar.xz and the six binaries (8 paths at most). LIMIT: seconds it may take.
# (1) each patch against float64 (its specs, every shape set); (2) A/B against HEAD, medians of
# 20, two rounds; (3) memcheck of each at small awkward shapes; (4) HEAD's benchmark rows of
# session 71's landed changes (KernelBench 67 and the pools) beside PyTorch.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
LIMIT=${LIMIT:-560}
room() { [ $((LIMIT - SECONDS)) -gt "$1" ]; }
check() {  # binary specs cases
  KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=$2 timeout 150 .gpu/bin/$1 -tc="$3" > $logs/checks_$1.txt 2>&1
  echo "[$SECONDS s] $1 checks ($2) rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/checks_$1.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/checks_$1.txt)"
  grep -E 'FAIL|ERROR|test cases|assertions' $logs/checks_$1.txt | head -6
}
# HEAD (session 71, not yet on a GPU): expand/broadcast_to (specs/views.kiln's expand_batch) and the
# rest of the views spec against float64 at every shape set.
check kiln_test_gpu views "gpu: every covered spec matches*"
check kiln_test_gpu_swap gemm,matmul,linear_dropout_softmax "gpu: every covered spec matches*,gpu: every covered spec's wgmma path*"
check kiln_test_gpu_dw conv "gpu: every covered spec matches*"
check kiln_test_gpu_x3 conv,conv_nd,conv2d_3x3 "gpu: every covered spec matches*"
kb=specs/kernelbench/level1
for round in 1 2; do
  for K in kiln kiln_swap; do for op in matmul_square matmul_batched; do
    room 20 && echo "$K round $round $op tf32 $(KILN_CACHE_DIR=/tmp/c-$K timeout 40 .gpu/bin/$K run specs/matmul.kiln --op $op --precision tf32 --iters 30 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
  done; done
  for K in kiln kiln_x3; do
    room 20 && echo "$K round $round KB67 fp32 $(KILN_CACHE_DIR=/tmp/c-$K timeout 60 .gpu/bin/$K run $kb/67_conv_standard_1D.kiln --op m --iters 20 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
    for op in conv2d_3x3; do
      room 20 && echo "$K round $round $op fp32 $(KILN_CACHE_DIR=/tmp/c-$K timeout 60 .gpu/bin/$K run specs/conv2d_3x3.kiln --op $op --iters 20 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
    done
    for op in conv1d_padded_dilated_bias conv3d_asym_bias_relu; do
      room 15 && echo "$K round $round $op fp32 $(KILN_CACHE_DIR=/tmp/c-$K timeout 30 .gpu/bin/$K run specs/conv_nd.kiln --op $op --iters 20 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
    done
  done
  for K in kiln kiln_dw; do for f in 82_conv_depthwise_2D_square_input_square_kernel 83_conv_depthwise_2D_square_input_asymmetric_kernel 84_conv_depthwise_2D_asymmetric_input_square_kernel 85_conv_depthwise_2D_asymmetric_input_asymmetric_kernel; do
    room 20 && echo "$K round $round $f $(KILN_CACHE_DIR=/tmp/c-$K timeout 60 .gpu/bin/$K run $kb/$f.kiln --op m --iters 20 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
  done; done
done | tee $logs/ab.txt
room 90 && { KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=matmul KILN_GPU_SHAPES=ones,odd timeout 60 compute-sanitizer --error-exitcode 86 \
    .gpu/bin/kiln_test_gpu_swap -tc="gpu: every covered spec matches*" > $logs/san_swap.txt 2>&1
  echo "[$SECONDS s] memcheck swap rc=$? $(grep -c '^gpu-check .* ok ' $logs/san_swap.txt) checks $(grep -E 'ERROR SUMMARY' $logs/san_swap.txt | tail -1)"; }
room 90 && { KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=conv KILN_GPU_SHAPES=ones,odd timeout 60 compute-sanitizer --error-exitcode 86 \
    .gpu/bin/kiln_test_gpu_dw -tc="gpu: every covered spec matches*" > $logs/san_dw.txt 2>&1
  echo "[$SECONDS s] memcheck dw rc=$? $(grep -c '^gpu-check .* ok ' $logs/san_dw.txt) checks $(grep -E 'ERROR SUMMARY' $logs/san_dw.txt | tail -1)"; }
room 90 && { KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=conv_nd KILN_GPU_SHAPES=ones,odd timeout 60 compute-sanitizer --error-exitcode 86 \
    .gpu/bin/kiln_test_gpu_x3 -tc="gpu: every covered spec matches*" > $logs/san_x3.txt 2>&1
  echo "[$SECONDS s] memcheck x3 rc=$? $(grep -c '^gpu-check .* ok ' $logs/san_x3.txt) checks $(grep -E 'ERROR SUMMARY' $logs/san_x3.txt | tail -1)"; }
left=$((LIMIT - SECONDS - 40))
[ $left -gt 90 ] && KILN_SUITE_PARTS=bench BENCH_TIMEOUT=$left timeout $((left + 15)) bash scripts/gpu_suite.sh \
  --only "KernelBench 67,KernelBench 4" 2>&1 | tail -16
