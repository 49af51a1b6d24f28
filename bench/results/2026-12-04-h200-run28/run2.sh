#!/usr/bin/env bash
# Session 51, call 2: KernelBench 41-46 (the pools) beside eager and torch.compile, for README's
# table, with the copy ceiling measured in the same call (pool_check's first line).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python KILN_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu2.txt
timeout 30 .gpu/bin/pool_check 41 > $OUT/copy.txt 2>&1; head -1 $OUT/copy.txt
timeout 400 python3 bench/kernelbench.py --kernelbench .gpu/kb --out $OUT/kb-compile --only 1/41,1/42,1/43,1/44,1/45,1/46 > $OUT/kb-compile.log 2>&1
echo "kb compile rc=$?"; grep -E "^\*\*|^\| L1" $OUT/kb-compile/*.md
