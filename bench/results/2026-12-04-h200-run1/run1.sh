#!/usr/bin/env bash
# Session 46, call 1: the pool template's functors get a per-step Lead (the coordinates of the axes
# before the pooled ones, computed once a thread step by lead(plane), outside every predicated
# load). Correctness first (every pooling spec, the dyn pool tests, the template's Python tests,
# the 26 KernelBench problems that pool at 1e-2 and 1e-4), then the dyn-against-specialized rows
# in one process each: the pool rows over dyn extents, and the memory rows run 6 did not reach.
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
ONLY=1/41,1/42,1/43,1/44,1/45,1/46,2/10,2/11,2/35,2/38,2/3,2/43,2/46,2/50,2/55,2/65,2/6,2/72,2/74,2/78,2/82,2/85,2/89,2/8,2/96,2/98
timeout 150 python3 bench/kernelbench.py --kernelbench .gpu/kb --no-compile --out $OUT/kb --only $ONLY > $OUT/kb.log 2>&1
echo "kb rc=$?"; tail -2 $OUT/kb.log | head -1
for round in 1 2; do
  timeout 100 python3 bench/shapes_bench.py --only len --ops max_pool_dyn_S,max_pool_dyn_W,avg_pool_dyn_S,max_pool_dyn_C \
    --out $OUT/shapes-len-$round > $OUT/shapes-len-$round.log 2>&1; echo "shapes len $round rc=$?"; grep "^|" $OUT/shapes-len-$round.log
done
timeout 240 python3 bench/shapes_bench.py --only memory \
  --ops min_reduce,argmax_rows,logsumexp_rows,cumsum_reverse,cumsum_long_rows,cumsum_mid_exclusive,cummin_mid_reverse,max_pool2d_relu,pool3d \
  --out $OUT/shapes-mem > $OUT/shapes-mem.log 2>&1; echo "shapes mem rc=$?"; grep "^|" $OUT/shapes-mem.log
cd $OUT && tar czf parts.tar.gz parts kb shapes-* kb.log && rm -rf parts kb shapes-*
