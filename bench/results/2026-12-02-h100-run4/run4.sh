#!/usr/bin/env bash
# Session 42, call 4: at most one dyn dim among a memory-bound anchor's rows (generic default):
# reduction/norm/scan checks, then min_reduce generic vs specialized and the bench's reduction rows.
cd "$(dirname "$0")/.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
P=$OUT/parts; mkdir -p $P
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
T=.gpu/bin/kiln_test_gpu
run() { local name=$1; shift; ( start=$(date +%s); "$@" > $P/$name.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/$name.txt ) & }
export KILN_CACHE_DIR=$(mktemp -d)
KILN_GPU_SPECS=min_reduce,reductions,norms,scans,cumsum_exclusive run specs_mem $T -tc="gpu: every covered spec matches*"
KILN_GPU_SPECS=min_reduce,reductions,norms,scans run odd_mem $T -tc="gpu: memory-bound specs on odd sizes*"
run dyn $T -tc="gpu: dyn rows of reductions*,gpu: dyn lengths of reductions*,gpu: a dyn dim's values share*"
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|gpu-check summary" $f | tail -3; done
timeout 90 python3 bench/shapes_bench.py --ops min_reduce --out $OUT 2>&1 | grep "^|"
timeout 120 python3 bench/bench.py --only "min_reduce,over axis" --no-compile --out $OUT 2>&1 | grep "^|"
