#!/usr/bin/env bash
# Session 45, call 4: the pool template's Load and Store take the plane index (the axes before the
# pooled ones from it, once a step, not a division chain per element). Correctness first (every
# pooling spec, the dyn pool tests, the template's Python tests), then A/B in one run: `before` the
# Python package of 7d3... (the committed tree before this change), `after` this one, interleaved
# twice: the dyn-against-specialized pool rows (shapes_bench) and the KernelBench problems that pool.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
P=$OUT/parts; mkdir -p $P
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
T=.gpu/bin/kiln_test_gpu
run() { local name=$1; shift; ( start=$(date +%s); "$@" > $P/$name.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/$name.txt ) & }
export KILN_CACHE_DIR=$(mktemp -d)
run dyn_pool $T -tc="gpu: dyn pooled axes*,gpu: dyn conv batches and pool planes*,gpu: extents summed*"
KILN_GPU_SPECS=pooling run specs_pool $T -tc="gpu: every covered spec matches*"
run pytest_pool env PYTHONPATH=.gpu/python:python/tests timeout 250 python3 -m pytest -q python/tests/test_pooling.py
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|passed|failed" $f | tail -3; echo "checks ok: $(grep -c '^gpu-check .* ok ' $f) failed: $(grep -c '^gpu-check .* FAIL' $f)"; done
grep -E "(dyn pooled axes|dyn sum extents|dyn conv) .*(WRONG|compiles)" $P/dyn_pool.txt | head -30
ONLY=1/41,1/42,1/43,1/44,1/45,1/46,2/10,2/11,2/35,2/38,2/3,2/43,2/46,2/50,2/55,2/65,2/6,2/72,2/74,2/78,2/82,2/85,2/89,2/8,2/96,2/98
for round in 1 2; do for v in before after; do
  p=.gpu/python; [ $v = before ] && p=.gpu/python-before
  timeout 150 python3 bench/shapes_bench.py --kiln $p --only len --ops max_pool_dyn_S,max_pool_dyn_W,avg_pool_dyn_S,max_pool_dyn_C \
    --out $OUT/shapes-$v-$round > $OUT/shapes-$v-$round.log 2>&1; echo "shapes $v $round rc=$?"; grep "^|" $OUT/shapes-$v-$round.log
  timeout 200 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln $p --no-compile --out $OUT/kb-$v-$round --only $ONLY \
    > $OUT/kb-$v-$round.log 2>&1; echo "kb $v $round rc=$?"; tail -2 $OUT/kb-$v-$round.log | head -1
done; done
cd $OUT && tar czf ab.tar.gz parts shapes-* kb-* && rm -rf parts shapes-* kb-*
