#!/usr/bin/env bash
# Session 42, call 3: min_reduce generic vs specialized over both axes, memcheck of the reduction
# specs (the sweep loop changed), the Python tests whole.
cd "$(dirname "$0")/.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
timeout 120 python3 bench/shapes_bench.py --ops min_reduce --out $OUT 2>&1 | grep "^|"
( KILN_GPU_SPECS=min_reduce,reductions KILN_GPU_SHAPES=ones,odd,long timeout 150 compute-sanitizer --tool memcheck --error-exitcode 86 \
  .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec*" > $OUT/memcheck_red.txt 2>&1; echo "memcheck rc=$?" >> $OUT/memcheck_red.txt ) &
KILN_CACHE_DIR=$(mktemp -d) timeout 260 python3 -m pytest -q -x python/tests > $OUT/python.txt 2>&1; echo "pytest rc=$?" >> $OUT/python.txt
wait
tail -4 $OUT/memcheck_red.txt; tail -4 $OUT/python.txt
