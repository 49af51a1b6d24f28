#!/usr/bin/env bash
# Session 71, call 5: two template patches, each its own binary.
# kiln_pool / kiln_test_gpu_pool: the pool change of the commit after it (then pool-nobranch.patch) ([Note: pool windows without branches]).
# kiln_pairs / kiln_test_gpu_pairs: the conv change of that commit (then conv-pairs.patch) (a direct conv's lanes hold adjacent pixel
# pairs, one 8-byte store per channel: kRowsPairs, store_fragment_pairs).
# Correctness against float64 first, then A/B against HEAD's kiln (medians of 20, two rounds),
# then memcheck of each at small awkward shapes.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
LIMIT=${LIMIT:-560}
room() { [ $((LIMIT - SECONDS)) -gt "$1" ]; }
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=pooling timeout 120 .gpu/bin/kiln_test_gpu_pool \
  -tc="gpu: every covered spec matches*,gpu: dyn pooled axes*,gpu: dyn conv batches and pool planes*,gpu: an Op shares one executable across a pool*,gpu: 3-d pools tune*" > $logs/pool_checks.txt 2>&1
echo "[$SECONDS s] pool checks rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/pool_checks.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/pool_checks.txt)"
grep -E 'FAIL|ERROR|test cases|assertions' $logs/pool_checks.txt | head -6
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=conv_nd,conv timeout 150 .gpu/bin/kiln_test_gpu_pairs \
  -tc="gpu: every covered spec matches*" > $logs/pairs_checks.txt 2>&1
echo "[$SECONDS s] conv pairs checks rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/pairs_checks.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/pairs_checks.txt)"
grep -E 'FAIL|ERROR|test cases|assertions' $logs/pairs_checks.txt | head -6
kb=specs/kernelbench/level1
for round in 1 2; do
  for K in kiln kiln_pool; do for f in 42_Max_Pooling_2D 43_Max_Pooling_3D 44_Average_Pooling_1D 45_Average_Pooling_2D 46_Average_Pooling_3D; do
    room 20 && echo "$K round $round $f $(KILN_CACHE_DIR=/tmp/c-$K timeout 40 .gpu/bin/$K run $kb/$f.kiln --op m --iters 20 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
  done; for op in max_pool2d_relu pool3d pool_half wide_windows; do
    room 15 && echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K timeout 30 .gpu/bin/$K run specs/pooling.kiln --op $op --iters 20 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
  done; done
  for K in kiln kiln_pairs; do
    room 20 && echo "$K round $round KB67 tf32 $(KILN_CACHE_DIR=/tmp/c-$K timeout 40 .gpu/bin/$K run $kb/67_conv_standard_1D.kiln --op m --precision tf32 --iters 20 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
    for op in conv1d_k3 conv1d_padded_dilated_bias; do
      room 15 && echo "$K round $round $op tf32 $(KILN_CACHE_DIR=/tmp/c-$K timeout 30 .gpu/bin/$K run specs/conv_nd.kiln --op $op --precision tf32 --iters 20 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
    done
  done
done | tee $logs/ab.txt
room 60 && { KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=pooling KILN_GPU_SHAPES=ones,odd timeout 80 compute-sanitizer --error-exitcode 86 \
    .gpu/bin/kiln_test_gpu_pool -tc="gpu: every covered spec matches*" > $logs/san_pool.txt 2>&1
  echo "[$SECONDS s] memcheck pool rc=$? $(grep -c '^gpu-check .* ok ' $logs/san_pool.txt) checks $(grep -E 'ERROR SUMMARY' $logs/san_pool.txt | tail -1)"; }
room 60 && { KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=conv_nd KILN_GPU_SHAPES=ones,odd timeout $((LIMIT - SECONDS - 10)) compute-sanitizer --error-exitcode 86 \
    .gpu/bin/kiln_test_gpu_pairs -tc="gpu: every covered spec matches*" > $logs/san_pairs.txt 2>&1
  echo "[$SECONDS s] memcheck pairs rc=$? $(grep -c '^gpu-check .* ok ' $logs/san_pairs.txt) checks $(grep -E 'ERROR SUMMARY' $logs/san_pairs.txt | tail -1)"; }
