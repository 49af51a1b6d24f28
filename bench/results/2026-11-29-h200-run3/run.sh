#!/bin/bash
# Session 31: the look-back scan with tiles in shared memory (issue 22) on the GPU. Correctness
# first (the standalone harness against float64, kiln run --check over dtypes and odd lengths,
# the GPU test cases that cover scans), then the bench rows beside PyTorch.
# Copied to .gpu/ and run from there (scripts/gpu_build.sh first).
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export KILN_CACHE_DIR=/tmp/kiln-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
K=.gpu/bin/kiln
.gpu/bin/scan_check > $OUT/scan_check.txt 2>&1; echo "scan_check rc=$?" >> $OUT/scan_check.txt
{
  for op in lb_f16 lb_bf16_max lb_f64 lb_i32 lb_bool lb_f32_odd lb_f16_odd; do
    echo "-- lookback_dtypes.kiln $op"
    $K run .gpu/lookback_dtypes.kiln --op $op --check 2>&1 | tail -3
  done
  for op in cumsum_long_rows; do
    echo "-- specs/scans.kiln $op"
    $K run specs/scans.kiln --op $op --check 2>&1 | tail -3
  done
} > $OUT/run_checks.txt 2>&1
cat $OUT/scan_check.txt $OUT/run_checks.txt
.gpu/bin/kiln_test_gpu -tc="*every covered spec matches*,*dyn rows of reductions*,*memory-bound specs on odd sizes*" > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$?"; grep -E "^gpu-check (summary|templates)|test cases|assertions|FAIL" $OUT/gpu_tests.log | tail -8
