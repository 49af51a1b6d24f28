#!/usr/bin/env bash
# Session 52, call 4: after the K >= 128 rule for TmaConvPhased with a w stride (KernelBench 79
# back on ConvNchw). Correctness (the wgmma-path cases with the strided transposed convs at shapes
# past the engine's flops floor; test_conv_nd.py; every conv_nd spec op), then KernelBench 79 and
# 81 before/after in one call, and six problems that moved to the engine beside eager and
# torch.compile.
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
run pytest_conv env PYTHONPATH=.gpu/python:python/tests timeout 280 python3 -m pytest -q python/tests/test_conv_nd.py
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|passed|failed" $f | tail -3; echo "checks ok: $(grep -c '^gpu-check .* ok ' $f) failed: $(grep -c '^gpu-check .* FAIL' $f)"; done
for v in before after; do
  p=.gpu/python; [ $v = before ] && p=.gpu/python-before
  timeout 60 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln $p --no-compile --out $OUT/kb-$v --only 1/79,1/81 > $OUT/kb-$v.log 2>&1
  echo "kb $v rc=$?"; tail -2 $OUT/kb-$v.log | head -1
done
timeout 240 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln .gpu/python --out $OUT/kb-compile --only 1/58,1/81,2/47,2/93,2/34,2/61 > $OUT/kb-compile.log 2>&1
echo "kb compile rc=$?"; tail -2 $OUT/kb-compile.log | head -1
cd $OUT && tar czf parts.tar.gz parts && rm -rf parts
