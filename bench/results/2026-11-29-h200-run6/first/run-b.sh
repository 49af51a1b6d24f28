#!/bin/bash
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export KILN_CACHE_DIR=/tmp/kiln-cache
K=.gpu/bin/kiln
.gpu/bin/scan_check lookback > $OUT/scan_check_stages.txt 2>&1; echo "scan_check rc=$?" >> $OUT/scan_check_stages.txt
.gpu-base/scan_check_u4 "lookback cummax" "lookback cumsum 2x" > $OUT/scan_check_unroll4.txt 2>&1; echo "rc=$?" >> $OUT/scan_check_unroll4.txt
{
  for op in lb_epilogue lb_epilogue_cancelling; do
    echo "-- lookback_dtypes.kiln $op"
    $K run .gpu/lookback_dtypes.kiln --op $op --check 2>&1 | tail -3
  done
  $K bench specs/scans.kiln --op cumsum_long_rows 2>&1 | tail -12
} > $OUT/run_checks_b.txt 2>&1
cat $OUT/scan_check_stages.txt $OUT/scan_check_unroll4.txt $OUT/run_checks_b.txt
timeout 420 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*,*dyn rows of reductions, scans*" > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
tail -4 $OUT/gpu_tests.log
