#!/usr/bin/env bash
# Session 42, call 2 (the whole-groups sweep loop in reduce_outer_rows_v4): reduction checks, then
# the seed min_reduce generic against specialized, then the whole bench.py table under the generic default.
cd "$(dirname "$0")/.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=$OUT/parts; mkdir -p $P
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
T=.gpu/bin/kiln_test_gpu
run() { local name=$1; shift; ( start=$(date +%s); "$@" > $P/$name.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/$name.txt ) & }
export KILN_CACHE_DIR=$(mktemp -d)
KILN_GPU_SPECS=min_reduce,reductions,norms,pooling run specs_red $T -tc="gpu: every covered spec matches*"
KILN_GPU_SPECS=min_reduce,reductions run odd_red $T -tc="gpu: memory-bound specs on odd sizes*"
run dyn_red $T -tc="gpu: dyn rows of reductions*,gpu: dyn lengths of reductions*"
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|gpu-check summary" $f | tail -3; done
export PYTHONPATH=$PWD/.gpu/python
timeout 100 python3 bench/shapes_bench.py --ops min_reduce --out $OUT 2>&1 | tail -8
KILN_SUITE_PARTS="bench" BENCH_TIMEOUT=380 bash scripts/gpu_suite.sh 2>&1 | tail -45
