#!/usr/bin/env bash
# Session 59 (no GPU lent; for the next session that has one): scans and row norms whose rows the
# plan knows are 16-byte vectorizable compile the vector path only (ScanConfig::aligned,
# RownormConfig::aligned; [Note: rows known vectorizable] in generator/plan/plan_memory.cpp).
# First correctness against the float64 reference (every covered spec, the memory-bound specs on
# odd sizes and half types, dyn rows and lengths), then the benchmark's scan and norm rows beside
# PyTorch, to compare with the last whole run's (bench/results/2026-12-02-h100-run2/ and later).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
KILN_CACHE_DIR=$(mktemp -d) timeout 300 .gpu/bin/kiln_test_gpu \
  -tc="gpu: every covered spec matches*,gpu: memory-bound specs on odd sizes*,gpu: dyn rows of reductions*,gpu: dyn lengths of reductions*" \
  > $OUT/rows.txt 2>&1
echo "rows rc=$?"; tail -3 $OUT/rows.txt; grep -E "WRONG|FAIL|ERROR" $OUT/rows.txt | head -40
KILN_CACHE_DIR=$(mktemp -d) timeout 280 python3 bench/bench.py --only cumsum,softmax,layernorm,rmsnorm --no-compile \
  --out $OUT/bench > $OUT/bench.log 2>&1
echo "bench rc=$?"; tail -30 $OUT/bench.log
# A dropout after a row scan through the store's lanes form (one Philox block for four outputs):
# cumsum_dropout beside the plain cumsum of the same 4096x4096 rows (scans.kiln's cumsum_reverse,
# cumprod_rows); within a few percent of them means the dropout is free.
for op in cumsum_dropout cumsum_reverse cumprod_rows; do
  KILN_CACHE_DIR=$(mktemp -d) timeout 60 .gpu/bin/kiln bench specs/scans.kiln --op $op --iters 50 > $OUT/bench-$op.txt 2>&1
  echo "kiln bench $op rc=$?"; grep -iE "device|median" $OUT/bench-$op.txt | head -3
done
