#!/usr/bin/env bash
# Session 67, call 3: the GPU suite's memory-bound test case (norms, reductions, scans at odd sizes,
# one huge row of 2^24 + 43, NaN and +-inf, f16 and bf16) on 6790151's binaries: the split norms'
# scalar normalize pass (8 loads before their stores) and the batch norms a block per row. Then
# whether an operand's rows 16 bytes off a 128-byte line slow the TMA engine when it is A (K =
# 4808) as they did as B (N = 3336 in call 1): three rounds of each. Carry .gpu.tar.xz.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
timeout ${TEST_TIMEOUT:-300} .gpu/bin/kiln_test_gpu -tc="gpu: memory-bound specs on odd*" > $logs/memory_bound.txt 2>&1
echo "memory-bound test rc=$?"
grep -cE '^gpu-check .* ok ' $logs/memory_bound.txt | sed 's/^/checks ok: /'
grep -E '^gpu-check .* FAIL|^gpu-check summary|test cases|assertions' $logs/memory_bound.txt | head -12
for round in $(seq 1 ${ROUNDS:-3}); do for op in mm_6007x3584x4808 mm_6007x3584x4864 mm_6007x3584x4800; do
  echo "round $round $(KILN_CACHE_DIR=/tmp/c-irr timeout 60 .gpu/bin/kiln run docs/notes/pending/irr-shapes.kiln --op $op --iters 50 2>&1 | grep -E 'median|FAIL|error' | tr '\n' ' ')"
done; done | tee $logs/irr_a.txt
