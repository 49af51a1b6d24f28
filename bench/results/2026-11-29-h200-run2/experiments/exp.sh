#!/bin/bash
# Ran with a planner patch that was never committed: in plan_split_norm, for segments under 2048,
# KX_T set the block size and KX_W the waves of 2048 threads an SM that the chunk target aims at
# (target = clamp(elements / (KX_W * 2048 / KX_T * SMs), 4 * KX_T, 64 * KX_T)). "default" was the
# committed rule then: blocks of 512, two waves. The winner (256, 1) became the rule.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for v in "default" "256 2" "256 1" "512 1" "128 2" "256 4" "1024 1"; do
  set -- $v
  if [ "$1" = default ]; then unset KX_T KX_W; else export KX_T=$1 KX_W=$2; fi
  echo "== variant $v"
  PYTHONPATH=.gpu/python timeout 100 python3 bench/bench.py --only batchnorm_train --out $OUT/exp-${1}-${2:-x} > $OUT/exp-${1}-${2:-x}.log 2>&1
  grep "^| batch" $OUT/exp-${1}-${2:-x}.log
done
