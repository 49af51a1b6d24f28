#!/usr/bin/env bash
# For session 67: where docs/notes/pending/conv1d-direct.patch faults. In session 66 (run 9, call 2)
# its first kernel (conv1d_k3 tf32 at N 3, C 36, L 20000, K 130: 128x256 tiles, x read in place by
# tiled copies, A through the consumers' registers) raised CUDA_ERROR_ILLEGAL_INSTRUCTION; the
# PTX holds the same kinds of instructions as the tf32 a·b GEMM that takes A through registers
# (wgmma m64n256k8 tf32 with register A, 3-d tiled TMA copies, setmaxnreg), so the fault is in
# what the conv feeds them. Build kiln_new with the patch (git apply, build kiln_cli, copy, strip,
# git apply -R) and carry .gpu/bin/kiln_new. Each case alone (a fault kills the context): out
# channels 32, 64, 130 (tiles of 32, 64, 256 columns), padding 0 and 2, then compute-sanitizer on
# the first that faults.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
for dims in "-D N=1 -D C=64 -D L=32768 -D K=32" "-D N=1 -D C=64 -D L=32768 -D K=64" "-D N=1 -D C=64 -D L=32768 -D K=128" \
            "-D N=1 -D C=64 -D L=32768 -D K=130"; do
  for op in conv1d_k3 conv_transpose1d_k3; do
    echo "$op $dims: $(KILN_CACHE_DIR=/tmp/c-new timeout 60 .gpu/bin/kiln_new run specs/conv_nd.kiln --op $op --precision tf32 \
      $dims --check --iters 3 2>&1 | grep -E 'ok|FAIL|error|median' | tr '\n' ' ' | cut -c1-300)"
  done
done | tee $logs/cases.txt
KILN_CACHE_DIR=/tmp/c-new timeout 200 compute-sanitizer --show-backtrace device .gpu/bin/kiln_new run specs/conv_nd.kiln \
  --op conv1d_k3 --precision tf32 -D N=1 -D C=64 -D L=32768 -D K=130 --check --iters 1 > $logs/sanitizer.txt 2>&1
echo "sanitizer rc=$?"; grep -E "Invalid|Illegal|at 0x|in kiln_|ERROR SUMMARY" $logs/sanitizer.txt | head -20
