#!/usr/bin/env bash
# Session 51, call 5: wide stores for max pools only (avg pools back to their stores of before).
# Correctness (every pooling spec with NaN/inf and half types, the dyn pool tests, the Python pool
# tests, pool_check's float64 check), then KernelBench 41-46 beside eager and torch.compile for
# README's table, with the copy ceiling of the same call (pool_check's first line).
cd "$(dirname "$0")/../../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
P=$OUT/parts; mkdir -p $P
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu5.txt
T=.gpu/bin/kiln_test_gpu
run() { local name=$1; shift; ( start=$(date +%s); "$@" > $P/$name.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/$name.txt ) & }
export KILN_CACHE_DIR=$(mktemp -d)
run dyn_pool timeout 200 $T -tc="gpu: dyn pooled axes*,gpu: dyn conv batches and pool planes*,gpu: extents summed*"
KILN_GPU_SPECS=pooling run specs_pool timeout 200 $T -tc="gpu: every covered spec matches*"
run pytest_pool env PYTHONPATH=.gpu/python:python/tests timeout 250 python3 -m pytest -q python/tests/test_pooling.py
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|passed|failed" $f | tail -3; echo "checks ok: $(grep -c '^gpu-check .* ok ' $f) failed: $(grep -c '^gpu-check .* FAIL' $f)"; done
timeout 60 .gpu/bin/pool_check > $OUT/pool_check-5.txt 2>&1; echo "pool_check rc=$?"; grep -E "copy|yes|FAIL|correct" $OUT/pool_check-5.txt
timeout 250 python3 bench/kernelbench.py --kernelbench .gpu/kb --out $OUT/kb-compile-5 --only 1/41,1/42,1/43,1/44,1/45,1/46 > $OUT/kb-compile-5.log 2>&1
echo "kb compile rc=$?"; grep -E "^\*\*|^\| L1" $OUT/kb-compile-5/*.md
cd $OUT && tar czf parts5.tar.gz parts kb-compile-5.log && rm -rf parts kb-compile-5.log
