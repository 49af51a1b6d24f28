#!/usr/bin/env bash
# Session 51, call 4 (after tiles were dropped): the final template. Correctness first (every
# pooling spec with NaN/inf and half types, the dyn pool tests, the Python pool tests incl. the
# wide stores, pool_check's float64 check of every variant), then the 26 KernelBench problems
# that pool with `before` (0fad968, this session's start) and this build, and KernelBench 41-46
# beside eager and torch.compile for README's table (the copy ceiling: pool_check's first line).
cd "$(dirname "$0")/../../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
P=$OUT/parts; mkdir -p $P
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu3.txt
T=.gpu/bin/kiln_test_gpu
run() { local name=$1; shift; ( start=$(date +%s); "$@" > $P/$name.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/$name.txt ) & }
export KILN_CACHE_DIR=$(mktemp -d)
run dyn_pool timeout 200 $T -tc="gpu: dyn pooled axes*,gpu: dyn conv batches and pool planes*,gpu: extents summed*"
KILN_GPU_SPECS=pooling run specs_pool timeout 200 $T -tc="gpu: every covered spec matches*"
run pytest_pool env PYTHONPATH=.gpu/python:python/tests timeout 250 python3 -m pytest -q python/tests/test_pooling.py
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|passed|failed" $f | tail -3; echo "checks ok: $(grep -c '^gpu-check .* ok ' $f) failed: $(grep -c '^gpu-check .* FAIL' $f)"; done
timeout 60 .gpu/bin/pool_check > $OUT/pool_check-final.txt 2>&1; echo "pool_check rc=$?"; grep -E "copy|yes|FAIL|correct" $OUT/pool_check-final.txt
ONLY=1/41,1/42,1/43,1/44,1/45,1/46,2/10,2/11,2/35,2/38,2/3,2/43,2/46,2/50,2/55,2/65,2/6,2/72,2/74,2/78,2/82,2/85,2/89,2/8,2/96,2/98
for v in before after; do
  p=.gpu/python; [ $v = before ] && p=.gpu/python-before
  timeout 100 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln $p --no-compile --out $OUT/kb-final-$v --only $ONLY > $OUT/kb-final-$v.log 2>&1
  echo "kb $v rc=$?"; tail -2 $OUT/kb-final-$v.log | head -1
done
timeout 250 python3 bench/kernelbench.py --kernelbench .gpu/kb --out $OUT/kb-final-compile --only 1/41,1/42,1/43,1/44,1/45,1/46 > $OUT/kb-final-compile.log 2>&1
echo "kb compile rc=$?"; tail -2 $OUT/kb-final-compile.log | head -1
mkdir -p $OUT/logs && mv $OUT/*.log $OUT/logs/ && cd $OUT && tar czf final.tar.gz parts logs kb-final-before kb-final-after && rm -rf parts logs kb-final-before kb-final-after
