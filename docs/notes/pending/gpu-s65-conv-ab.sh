#!/usr/bin/env bash
# For session 65 (written in session 64, without device time left): NCHW tf32 convs on the TMA engine
# take out channels as the GEMM's rows (conv_tma_pixel_rows in templates/kiln/config/conv.h, for
# 16-byte stores along y's pixel rows), but on an H100 (bench/results/2026-12-06-h100-run3/)
# KernelBench 67's conv1d ran 3.718 ms in tf32 against 3.219 ms in 3xTF32, which takes pixels as
# rows and does three times the MMAs. This A/B times both orientations: before the call, build
# .gpu/bin/kiln_pixrows and .gpu/bin/kiln_test_gpu_pixrows with docs/notes/pending/conv-pixel-rows.patch
# applied (pixel rows for every conv; `git apply`, build kiln_cli and kiln_test_gpu, copy, strip,
# `git apply -R`). Correctness of the patched planner: the every-spec check of the conv specs.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=conv,conv_nd,conv2d_3x3 timeout 200 .gpu/bin/kiln_test_gpu_pixrows \
  -tc="gpu: every covered spec matches*,gpu: every covered spec's wgmma path*" > $logs/checks_pixrows.txt 2>&1
echo "pixel-rows checks rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/checks_pixrows.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/checks_pixrows.txt)"
for round in 1 2; do for K in kiln kiln_pixrows; do
  while read -r spec op; do
    echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K .gpu/bin/$K run $spec --op $op --precision tf32 --iters 30 2>&1 | grep -E 'median' | tr '\n' ' ')"
  done <<'OPS'
specs/conv_nd.kiln conv1d_k3
specs/conv_nd.kiln conv1d_strided_dilated_bias
specs/conv_nd.kiln conv_transpose1d_k3
specs/conv_nd.kiln conv_transpose2d_k3
specs/conv_nd.kiln conv3d_asym_bias_relu
specs/conv.kiln conv2d_stride2_pad1
specs/conv.kiln conv2d_asym_bias_relu
specs/conv2d_3x3.kiln conv2d_3x3
OPS
done; done | tee $logs/ab.txt
