#!/usr/bin/env bash
# Session 43, call 3: dyn pooled axes ([Note: dyn pooled axes]). Correctness first (the dyn GPU
# tests, every pooling spec and odd sizes, the static pools' Python tests), then dyn against
# specialized pools beside PyTorch, the static KernelBench pool rows, and KernelBench L2 13 generic
# against specialized (call 2 ran it 1.37x its 2026-11-27 H100 time).
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
KILN_GPU_SPECS=pooling run odd_pool $T -tc="gpu: memory-bound specs on odd sizes*"
run pytest_pool env PYTHONPATH=.gpu/python:python/tests timeout 250 python3 -m pytest -q python/tests/test_pooling.py
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|gpu-check summary|passed|failed" $f | tail -3; done
grep -E "(dyn pooled axes|dyn sum extents|dyn conv) .*(WRONG|compiles)" $P/dyn_pool.txt | head -30
timeout 150 python3 bench/shapes_bench.py --only len --ops max_pool_dyn_S,max_pool_dyn_W,avg_pool_dyn_S,max_pool_dyn_C --out $OUT > $OUT/shapes.log 2>&1; echo "shapes rc=$?"; grep "^|" $OUT/shapes.log
timeout 120 python3 bench/bench.py --only "KernelBench 41),KernelBench 42),KernelBench 43),KernelBench 44),KernelBench 45),KernelBench 46)" --out $OUT 2>&1 | grep "^|"
for m in generic specialized; do
  KILN_SHAPES=$m timeout 100 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln .gpu/python --only 2/13 --profile \
    --no-compile --out $OUT/kb13-$m > $OUT/kb13-$m.log 2>&1; echo "kb13 $m rc=$?"; grep -E "L2 13|kernel|ms" $OUT/kb13-$m.log | head -12
done
tar czf $OUT/parts.tar.gz -C $OUT parts && rm -rf $P
