#!/bin/bash
# The scan bench rows beside PyTorch eager and torch.compile (run from .gpu/ after run.sh).
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
PYTHONPATH=.gpu/python timeout 400 python3 bench/bench.py --only cumsum --out $OUT/bench > $OUT/bench.log 2>&1
echo "bench rc=$?"
tail -14 $OUT/bench.log
