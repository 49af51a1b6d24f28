#!/usr/bin/env bash
# Session 43, call 1 (generic default): the norm specs every-spec + odd sizes (strided norms over a
# dyn batch fuse per size class; long norm rows kept static), the dyn checks, min_reduce generic vs
# specialized, the bench's norm and reduction rows, then the KernelBench runner (prebuilt cache).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
P=$OUT/parts; mkdir -p $P
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
T=.gpu/bin/kiln_test_gpu
run() { local name=$1; shift; ( start=$(date +%s); "$@" > $P/$name.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/$name.txt ) & }
export KILN_CACHE_DIR=$(mktemp -d)
KB=$(mktemp -d)
( start=$(date +%s); .gpu/bin/kiln build specs/kernelbench/level1/*.kiln specs/kernelbench/level2/*.kiln --arch sm_90a -j 12 -o $KB > $P/kb_build.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/kb_build.txt ) &
KILN_GPU_SPECS=norms,views,reductions,min_reduce run specs_norm $T -tc="gpu: every covered spec matches*"
KILN_GPU_SPECS=norms,views,reductions,min_reduce run odd_norm $T -tc="gpu: memory-bound specs on odd sizes*"
run dyn $T -tc="gpu: dyn*,gpu: a dyn dim's values share*"
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|gpu-check summary|kiln build:" $f | tail -3; done
timeout 100 python3 bench/shapes_bench.py --ops min_reduce --out $OUT 2>&1 | grep "^|"
timeout 150 python3 bench/bench.py --only "norm,min_reduce,over axis" --out $OUT 2>&1 | grep "^|"
R=$(ls bench/results/2026-12-03-h200-run1/kernelbench-*.json 2>/dev/null | tail -1)
timeout 330 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln .gpu/python --cache-dir $KB \
  --budget-s ${KB_BUDGET:-250} ${R:+--resume $R} --out $OUT > $OUT/kb.log 2>&1
echo "kernelbench rc=$?"; tail -6 $OUT/kb.log
tar czf $OUT/parts.tar.gz -C $OUT parts && rm -rf $P
