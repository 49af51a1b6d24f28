#!/usr/bin/env bash
# Session 52, call 2: as call 1 (run1.sh), after the 3-d channel floor of 16 (KernelBench level 2's
# 7, 8 and 90, C = 8, back on ConvNchw) and the python test's filters scaled by 1/sqrt(fan-in).
# Correctness first, then the 12 KernelBench problems with the build before (2d7fb24) and this one.
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
ONLY=1/58,1/61,1/68,1/70,2/13,2/43,2/47,2/61,2/77,2/7,2/8,2/90
for v in before after; do
  p=.gpu/python; [ $v = before ] && p=.gpu/python-before
  timeout 150 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln $p --no-compile --out $OUT/kb-$v --only $ONLY > $OUT/kb-$v.log 2>&1
  echo "kb $v rc=$?"; tail -2 $OUT/kb-$v.log | head -1
done
cd $OUT && tar czf parts.tar.gz parts && rm -rf parts
