#!/usr/bin/env bash
# Session 71, call 2: located-columns-only.patch (session 70's located-columns.patch without the
# TransposedFilterLoader's unroll 1, which call 1 suggests made the two slow rows 4-5% slower) as
# .gpu/bin/kiln_new and kiln_test_gpu_new: the conv_nd specs against float64, then A/B of the
# ConvNchw transposed convs, three rounds; then the GPU suite's memcheck over every covered spec.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
LIMIT=${LIMIT:-560}
room() { [ $((LIMIT - SECONDS)) -gt "$1" ]; }
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=conv_nd timeout 150 .gpu/bin/kiln_test_gpu_new -tc="gpu: every covered spec matches*" > $logs/specs.txt 2>&1
echo "[$SECONDS s] conv_nd spec checks (columns only) rc=$? ok=$(grep -cE '^gpu-check .* ok ' $logs/specs.txt) failed=$(grep -cE '^gpu-check .* FAIL' $logs/specs.txt)"
grep -E 'FAIL|ERROR|test cases|assertions' $logs/specs.txt | head -8
for round in 1 2 3; do for K in kiln kiln_new; do for op in conv_transpose2d_grouped_dilated conv_transpose3d_grouped conv_transpose2d_opad_f16 conv_transpose1d_strided_dilated; do
  room 15 && echo "$K round $round $(KILN_CACHE_DIR=/tmp/c-$K timeout 30 .gpu/bin/$K run specs/conv_nd.kiln --op $op --iters 20 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
done; done; done
left=$((LIMIT - SECONDS - 30))
echo "[$SECONDS s] memcheck with $left s"
[ $left -gt 60 ] && KILN_SUITE_PARTS=sanitize SANITIZER_TOOLS=memcheck SANITIZER_TIMEOUT=$left timeout $((left + 20)) bash scripts/gpu_suite.sh 2>&1 | tail -14
