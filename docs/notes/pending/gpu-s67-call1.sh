#!/usr/bin/env bash
# Session 67, call 1 (the bench part is call 2: gpu-s67-call2.sh): where
# docs/notes/pending/conv1d-direct.patch faults (gpu-s67-conv-direct.sh's question, shorter):
# .gpu/bin/kiln_new is kiln built with the patch; tpl-s67/nodense is the patched template library
# with the direct conv's engine in the GEMM's bank-conflict-free row order instead of dense rows
# (KILN_TEMPLATE_PATH), to see whether the fault follows the row order. Then the batch norms over
# short images with a block per row (kSplitWhole, commit 1a17592) against the split picks, in one process: `kiln tune --no-store` times every candidate (each
# checked against float64 first), the heuristic (a block a row) among them. Carry .gpu.tar.xz
# (built from 1a17592) and .gpu/bin/kiln_new.
cd "$(dirname "$0")/../../.."
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
PYTHONPATH=$PWD/.gpu/python:$PWD/bench python3 -c "
import bench
open('$logs/mem.kiln', 'w').write(bench.MEMORY_BENCH_SPEC)"
for s in "128 512 7 7" "128 256 14 14" "128 128 28 28"; do
  set -- $s
  name=bn_$1x$2x$3x$4
  KILN_CACHE_DIR=$(mktemp -d) timeout 60 .gpu/bin/kiln tune $logs/mem.kiln --op batchnorm_train -D N=$1 -D C=$2 -D H=$3 -D W=$4 \
    --iters 30 --budget 40 --no-store > $logs/tune-$name.txt 2> $logs/tune-$name-progress.txt
  echo "$name rc=$?"; grep -E ': best |heuristic' $logs/tune-$name.txt | head -4
done
# Every op of norms.kiln against float64 at its default dims and at --small (the two new ops take a
# block a row at their defaults), then the irregular GEMM's question (gpu-s67-irr.sh).
for op in $(grep -oE '^op [a-z0-9_]+' specs/norms.kiln | cut -d' ' -f2); do
  for size in "" --small; do
    echo "$op ${size:-default}: $(KILN_CACHE_DIR=/tmp/c-norms timeout 60 .gpu/bin/kiln run specs/norms.kiln --op $op $size --check \
      --iters 5 2>&1 | grep -E ' ok| FAIL|rror|median' | tr '\n' ' ' | cut -c1-240)"
  done
done 2>&1 | tee $logs/norms.txt | grep -cE ' ok' | sed 's/^/norms outputs ok: /'
grep -E 'FAIL|rror' $logs/norms.txt | head
mkdir -p "$OUT/irr" && OUT=$OUT/irr bash docs/notes/pending/gpu-s67-irr.sh
