#!/bin/bash
# Session 29: the KernelBench problems whose plan now has a split norm, beside PyTorch.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
PYTHONPATH=.gpu/python timeout 540 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln .gpu/python \
  --only 1/33,1/40,2/52,2/73,2/61,2/15,2/72,2/77 --budget-s 470 --out $OUT/kb --cache-dir /tmp/kbcache > $OUT/kb.log 2>&1
echo "kernelbench rc=$?"
tail -25 $OUT/kb.log
