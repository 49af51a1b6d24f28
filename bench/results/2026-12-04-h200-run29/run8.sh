#!/usr/bin/env bash
# Session 52, call 8: TmaConv tiles of 32 out channels (wgmma m64n32) where a pixel-rows conv has
# at most 32. Correctness (the wgmma-path cases: conv_transpose3d_s1 with 24 out channels takes
# the 32-wide tile; test_conv_nd.py, whose engine cases draw 16 out channels too), then the 8
# KernelBench problems whose conv takes the 32-wide tile, the build before (76e6a6e: 64-wide) and this one,
# each as one process, beside eager PyTorch; the runner's output tarred (the device returns few files).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
P=$OUT/parts; mkdir -p $P
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
T=.gpu/bin/kiln_test_gpu
run() { local name=$1; shift; ( start=$(date +%s); "$@" > $P/$name.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/$name.txt ) & }
export KILN_CACHE_DIR=$(mktemp -d)
run wgmma timeout 200 $T -tc="gpu: every covered spec's wgmma path*"
run pytest_conv env PYTHONPATH=.gpu/python:python/tests timeout 200 python3 -m pytest -q python/tests/test_conv_nd.py -k tma_engine
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|passed|failed" $f | tail -3; echo "checks ok: $(grep -c '^gpu-check .* ok ' $f) failed: $(grep -c '^gpu-check .* FAIL' $f)"; done
grep -E 'conv_transpose3d_s1' $P/wgmma.txt
ONLY=1/58,1/70,1/71,1/73,1/78,2/15,2/21,2/74
for v in before after; do
  p=.gpu/python; [ $v = before ] && p=.gpu/python-before
  timeout 100 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln $p --no-compile --out $P/kb-$v --only $ONLY > $P/kb-$v.log 2>&1
  echo "kb $v rc=$?"; tail -2 $P/kb-$v.log | head -1
done
cd $OUT && tar czf parts.tar.gz parts && rm -rf parts
