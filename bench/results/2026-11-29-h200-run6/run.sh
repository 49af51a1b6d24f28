#!/bin/bash
# Session 33: the warp-specialized row look-back scan (issue 22) on the GPU, the final template.
# Correctness first (the standalone harnesses against float64 on poisoned outputs; kiln run
# --check over widths, copy paths, partial tiles, fewer tiles than blocks, prologues and
# epilogues; the GPU test suite's every-covered-spec and dyn-rows cases), then timing: the
# harness beside a device copy, `kiln bench`, and the bench rows beside PyTorch eager and
# torch.compile. Copied to .gpu/ and run from there (scripts/gpu_build.sh first).
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export KILN_CACHE_DIR=/tmp/kiln-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
K=.gpu/bin/kiln
.gpu/bin/scan_check lookback > $OUT/scan_check.txt 2>&1; echo "scan_check rc=$?" >> $OUT/scan_check.txt
.gpu/bin/memtpl_check cummax cover_scan > $OUT/memtpl_check.txt 2>&1; echo "memtpl_check rc=$?" >> $OUT/memtpl_check.txt
{
  for op in $(grep -o '^op [a-z0-9_]*' .gpu/lookback_dtypes.kiln | cut -d' ' -f2); do
    echo "-- lookback_dtypes.kiln $op"
    $K run .gpu/lookback_dtypes.kiln --op $op --check 2>&1 | tail -3; echo "rc=${PIPESTATUS[0]}"
  done
  for op in cumsum_long_rows cumsum_cols cumsum_reverse; do
    echo "-- specs/scans.kiln $op"
    $K run specs/scans.kiln --op $op --check 2>&1 | tail -3; echo "rc=${PIPESTATUS[0]}"
  done
  for op in cumsum_long_rows cumsum_reverse; do
    echo "-- kiln bench specs/scans.kiln $op"
    $K bench specs/scans.kiln --op $op 2>&1 | tail -6; echo "rc=${PIPESTATUS[0]}"
  done
} > $OUT/run_checks.txt 2>&1
cat $OUT/scan_check.txt $OUT/memtpl_check.txt $OUT/run_checks.txt
timeout 300 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*,*dyn rows of reductions, scans*" > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$?"; tail -3 $OUT/gpu_tests.log
PYTHONPATH=.gpu/python timeout 240 python3 bench/bench.py --only cumsum --out $OUT/bench > $OUT/bench.log 2>&1
echo "bench rc=$?"
tail -9 $OUT/bench.log
