#!/usr/bin/env bash
# Session 43, call 2: min_reduce generic vs specialized, then the rest of the KernelBench runner
# (--resume call 1's JSON; the cache prebuilt by `kiln build` on the GPU machine).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu2.txt
KB=$(mktemp -d)
( .gpu/bin/kiln build specs/kernelbench/level1/*.kiln specs/kernelbench/level2/*.kiln --arch sm_90a -j 14 -o $KB > $OUT/kb_build.txt 2>&1 ) &
timeout 100 python3 bench/shapes_bench.py --ops min_reduce --out $OUT > $OUT/shapes.log 2>&1; echo "shapes rc=$?"; tail -8 $OUT/shapes.log
wait; tail -1 $OUT/kb_build.txt
R=$(ls bench/results/2026-12-03-h200-run1/kernelbench-*.json | tail -1)
timeout 380 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln .gpu/python --cache-dir $KB \
  --budget-s 340 --resume $R --out $OUT > $OUT/kb2.log 2>&1
echo "kernelbench rc=$?"; tail -3 $OUT/kb2.log
