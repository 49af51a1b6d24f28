#!/usr/bin/env bash
# For session 66 (written in session 65, whose device time ran out before this could run): the
# dropout's keep bits drawn during the TMA engine's mainloop (docs/notes/pending/dropout-ahead.patch:
# [Note: dropout drawn ahead] in templates/kiln/gemm_store.cuh; on the CPU machine NVRTC compiles
# linear_relu_dropout in ~490 ms with it against ~680 without, a dropout-free GEMM ~400). Before
# the call: build .gpu as usual from the landed code, then .gpu/bin/kiln_new and
# .gpu/bin/kiln_test_gpu_new with the patch applied (`git apply`, build kiln_cli and kiln_test_gpu,
# copy, strip, `git apply -R`). Carry .gpu/bin/kiln (the old side of the A/B), kiln_new and
# kiln_test_gpu_new. (1) Correctness against the float64 reference: the wgmma-path cases (the
# dropout GEMMs on the TMA engine: long K, a rolled loop after three k tiles, bf16 batches on
# clusters) and every covered spec of matmul.kiln and pooling.kiln at every shape set. (2) Old
# and new binaries alternately on the dropout GEMMs (linear_relu_dropout 4096³: 0.394 ms in
# bench/results/2026-12-06-h100-run8).
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
KILN_CACHE_DIR=$(mktemp -d) timeout 120 .gpu/bin/kiln_test_gpu_new \
  -tc="gpu: every covered spec's wgmma path*" > $logs/checks_wgmma.txt 2>&1
echo "wgmma-path checks rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/checks_wgmma.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/checks_wgmma.txt)"
grep -E "dropout" $logs/checks_wgmma.txt | head -20
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=matmul,pooling timeout 150 .gpu/bin/kiln_test_gpu_new \
  -tc="gpu: every covered spec matches*" > $logs/checks_specs.txt 2>&1
echo "matmul+pooling spec checks rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/checks_specs.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/checks_specs.txt)"
grep -E "FAIL|test cases" $logs/checks_specs.txt | head
for round in 1 2; do for K in kiln kiln_new; do
  for op in linear_relu_dropout linear_xt_dropout bmm_dropout_bf16; do
    echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K timeout 60 .gpu/bin/$K run specs/matmul.kiln --op $op --iters 50 2>&1 | grep -E 'median|FAIL|error' | tr '\n' ' ')"
  done
done; done | tee $logs/ab.txt
