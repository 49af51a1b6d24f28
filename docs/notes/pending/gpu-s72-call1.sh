#!/usr/bin/env bash
# For the next device time (written in session 71, whose device budget was spent).
# Build first: scripts/gpu_build.sh (HEAD as "kiln"), then, each with build-new.sh and renamed:
#   gemm-swap-pairs.patch -> .gpu/bin/kiln_swap, kiln_test_gpu_swap (a tf32 Cᵀ = Bᵀ·Aᵀ product's
#     lanes hold adjacent C rows, one 8-byte store a column: kRowsPairs as the direct conv's);
#   depthwise-nobranch.patch -> .gpu/bin/kiln_dw, kiln_test_gpu_dw (the depthwise conv's taps
#     outside the input by selects, not branches, as the pools' since session 71);
#   conv-x3-pairs.patch -> .gpu/bin/kiln_x3, kiln_test_gpu_x3 (the 3xTF32 NCHW convs' pixel rows in
#     pairs too: 8-byte stores into y where Ho x Wo is even; its A loads then two-way conflicted).
# Carry .gpu.tar.xz and the six binaries (8 paths at most). LIMIT: seconds it may take. PART=1
# (the first call): views on HEAD, the swap and x3 patches; PART=2 (a second call): the depthwise
# patch and the benchmark rows.
# (1) each patch against float64 (its specs, every shape set); (2) A/B against HEAD, medians of
# 20, two rounds; (3) memcheck of each at small awkward shapes; (4) HEAD's benchmark rows of
# session 71's landed changes (KernelBench 67 and the pools) beside PyTorch.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
LIMIT=${LIMIT:-560}
room() { [ $((LIMIT - SECONDS)) -gt "$1" ]; }
ab() {  # binary label spec op [run options]: one median of 20
  local K=$1 label=$2 spec=$3 op=$4; shift 4
  room 20 && echo "$K $label $op $(KILN_CACHE_DIR=/tmp/c-$K timeout 60 .gpu/bin/$K run $spec --op $op --iters 20 "$@" 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
}
memcheck() {  # test binary, specs
  room 90 && { KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=$2 KILN_GPU_SHAPES=ones,odd timeout 60 compute-sanitizer --error-exitcode 86 \
      .gpu/bin/$1 -tc="gpu: every covered spec matches*" > $logs/san_$1.txt 2>&1
    echo "[$SECONDS s] memcheck $1 ($2) rc=$? $(grep -c '^gpu-check .* ok ' $logs/san_$1.txt) checks $(grep -E 'ERROR SUMMARY' $logs/san_$1.txt | tail -1)"; }
}
check() {  # binary specs cases
  KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=$2 timeout 150 .gpu/bin/$1 -tc="$3" > $logs/checks_$1.txt 2>&1
  echo "[$SECONDS s] $1 checks ($2) rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/checks_$1.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/checks_$1.txt)"
  grep -E 'FAIL|ERROR|test cases|assertions' $logs/checks_$1.txt | head -6
}
# HEAD (session 71, not yet on a GPU): expand/broadcast_to (specs/views.kiln's expand_batch) and the
# rest of the views spec against float64 at every shape set.
kb=specs/kernelbench/level1
if [ "${PART:-1}" = 1 ]; then
  # HEAD (session 71, not yet on a GPU): expand/broadcast_to (specs/views.kiln's expand_batch) and
  # the rest of the views spec against float64 at every shape set.
  check kiln_test_gpu views "gpu: every covered spec matches*"
  check kiln_test_gpu_swap gemm,matmul,linear_dropout_softmax "gpu: every covered spec matches*,gpu: every covered spec's wgmma path*"
  check kiln_test_gpu_x3 conv,conv_nd,conv2d_3x3 "gpu: every covered spec matches*"
  for round in 1 2; do
    for K in kiln kiln_swap; do
      ab $K "round $round tf32" specs/matmul.kiln matmul_square --precision tf32
      ab $K "round $round tf32" specs/matmul.kiln matmul_batched --precision tf32
    done
    for K in kiln kiln_x3; do
      ab $K "round $round fp32" $kb/67_conv_standard_1D.kiln m
      ab $K "round $round fp32" specs/conv2d_3x3.kiln conv2d_3x3
      ab $K "round $round fp32" specs/conv_nd.kiln conv1d_padded_dilated_bias
      ab $K "round $round fp32" specs/conv_nd.kiln conv3d_asym_bias_relu
    done
  done | tee $logs/ab.txt
  memcheck kiln_test_gpu_swap matmul
  memcheck kiln_test_gpu_x3 conv_nd
else
  check kiln_test_gpu_dw conv "gpu: every covered spec matches*"
  for round in 1 2; do for K in kiln kiln_dw; do
    for f in 82_conv_depthwise_2D_square_input_square_kernel 83_conv_depthwise_2D_square_input_asymmetric_kernel \
             84_conv_depthwise_2D_asymmetric_input_square_kernel 85_conv_depthwise_2D_asymmetric_input_asymmetric_kernel; do
      ab $K "round $round" $kb/$f.kiln m
    done
  done; done | tee $logs/ab.txt
  memcheck kiln_test_gpu_dw conv
  left=$((LIMIT - SECONDS - 40))
  [ $left -gt 90 ] && KILN_SUITE_PARTS=bench BENCH_TIMEOUT=$left timeout $((left + 15)) bash scripts/gpu_suite.sh \
    --only "KernelBench 67,KernelBench 4" 2>&1 | tail -16
fi
