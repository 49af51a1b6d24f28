#!/usr/bin/env bash
# Session 67, call 1: the bench part (bench/bench.py through the Python package, PyTorch eager,
# torch.compile, cuBLAS and Triton beside kiln, every output checked against float64 first), then
# where docs/notes/pending/conv1d-direct.patch faults (gpu-s67-conv-direct.sh's question, shorter):
# .gpu/bin/kiln_new is kiln built with the patch; tpl-s67/nodense is the patched template library
# with the direct conv's engine in the GEMM's bank-conflict-free row order instead of dense rows
# (KILN_TEMPLATE_PATH), to see whether the fault follows the row order. Carry .gpu.tar.xz and
# .gpu/bin/kiln_new.
cd "$(dirname "$0")/../../.."
KILN_SUITE_PARTS=bench BENCH_TIMEOUT=380 timeout -s INT 400 bash scripts/gpu_suite.sh
echo "suite rc=$?"
source docs/notes/pending/s65-env.sh
run_case() {   # label, template dir ("" = embedded), dims
  local label=$1 tpl=$2; shift 2
  echo "$label $*: $(KILN_TEMPLATE_PATH=$tpl KILN_CACHE_DIR=/tmp/c-$label timeout 40 .gpu/bin/kiln_new run specs/conv_nd.kiln \
    --op conv1d_k3 --precision tf32 "$@" --check --iters 3 2>&1 | grep -E 'ok|FAIL|rror|median' | tr '\n' ' ' | cut -c1-300)"
}
nd=$PWD/docs/notes/pending/tpl-s67/nodense
{
  run_case dense "" -D N=1 -D C=64 -D L=32768 -D K=32
  run_case dense "" -D N=1 -D C=64 -D L=32768 -D K=130
  run_case nodense "$nd" -D N=1 -D C=64 -D L=32768 -D K=32
  run_case nodense "$nd" -D N=1 -D C=64 -D L=32768 -D K=130
  run_case dense "" -D N=3 -D C=36 -D L=20000 -D K=130
} 2>&1 | tee $logs/cases.txt
KILN_CACHE_DIR=/tmp/c-sass timeout 60 .gpu/bin/kiln_new gen specs/conv_nd.kiln --op conv1d_k3 --precision tf32 --arch sm_90a \
  -D N=1 -D C=64 -D L=32768 -D K=32 --sass > $logs/direct_k32.sass 2>&1; echo "sass rc=$? $(wc -l < $logs/direct_k32.sass) lines"
KILN_CACHE_DIR=/tmp/c-san timeout 90 compute-sanitizer --show-backtrace device .gpu/bin/kiln_new run specs/conv_nd.kiln \
  --op conv1d_k3 --precision tf32 -D N=1 -D C=64 -D L=32768 -D K=32 --check --iters 1 > $logs/sanitizer.txt 2>&1
echo "sanitizer rc=$?"; grep -E "Invalid|Illegal|at 0x|in kiln_|ERROR SUMMARY|rror" $logs/sanitizer.txt | head -20
