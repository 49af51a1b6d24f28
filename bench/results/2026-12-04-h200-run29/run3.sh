#!/usr/bin/env bash
# Session 52, call 3: strided transposed convs on the TMA engine by stride phase (TmaConvPhased).
# Correctness first (the wgmma-path spec cases, now with a 2-d and a 3-d strided transposed conv in
# tf32 and 3xTF32; every conv_nd spec op at its shape sets; the dyn conv batch tests; test_conv_nd.py
# with 30 random strided transposed convs over 1-3 axes on the engine against PyTorch), then the 21
# KernelBench problems whose transposed conv moved to the engine, with the build before (2d7fb24,
# ConvNchw) and this one in one call, beside eager PyTorch.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
P=$OUT/parts; mkdir -p $P
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
T=.gpu/bin/kiln_test_gpu
run() { local name=$1; shift; ( start=$(date +%s); "$@" > $P/$name.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/$name.txt ) & }
export KILN_CACHE_DIR=$(mktemp -d)
run wgmma timeout 280 $T -tc="gpu: every covered spec's wgmma path*"
KILN_GPU_SPECS=conv_nd run specs_conv timeout 280 $T -tc="gpu: every covered spec matches*"
run dyn_conv timeout 200 $T -tc="gpu: dyn conv batches*"
run pytest_conv env PYTHONPATH=.gpu/python:python/tests timeout 280 python3 -m pytest -q python/tests/test_conv_nd.py
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|passed|failed" $f | tail -3; echo "checks ok: $(grep -c '^gpu-check .* ok ' $f) failed: $(grep -c '^gpu-check .* FAIL' $f)"; done
ONLY=1/73,1/77,1/79,1/81,2/100,2/15,2/16,2/20,2/26,2/2,2/34,2/36,2/38,2/3,2/44,2/49,2/5,2/74,2/78,2/91,2/93
for v in before after; do
  p=.gpu/python; [ $v = before ] && p=.gpu/python-before
  timeout 140 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln $p --no-compile --out $OUT/kb-$v --only $ONLY > $OUT/kb-$v.log 2>&1
  echo "kb $v rc=$?"; tail -2 $OUT/kb-$v.log | head -1
done
cd $OUT && tar czf parts.tar.gz parts && rm -rf parts
