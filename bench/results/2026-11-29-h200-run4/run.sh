#!/bin/bash
# Session 32: the strided look-back scan (issue 22) on the GPU. Correctness first (the standalone
# harness against float64 on poisoned outputs, kiln run --check over widths, copy paths and odd
# shapes), then the bench rows beside PyTorch eager and torch.compile.
# Copied to .gpu/ and run from there (scripts/gpu_build.sh first).
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export KILN_CACHE_DIR=/tmp/kiln-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
K=.gpu/bin/kiln
.gpu/bin/scan_check > $OUT/scan_check.txt 2>&1; echo "scan_check rc=$?" >> $OUT/scan_check.txt
{
  for op in sl_f16 sl_bf16_max_rev sl_f64_excl sl_i32 sl_bool sl_f32_odd sl_f16_odd sl_epilogue sl_prod; do
    echo "-- strided_lookback_dtypes.kiln $op"
    $K run .gpu/strided_lookback_dtypes.kiln --op $op --check 2>&1 | tail -3
  done
  for op in cumsum_cols cumsum_mid_exclusive cummax_cols_epilogue cumsum_long_rows; do
    echo "-- specs/scans.kiln $op"
    $K run specs/scans.kiln --op $op --check 2>&1 | tail -3
  done
} > $OUT/run_checks.txt 2>&1
cat $OUT/scan_check.txt $OUT/run_checks.txt
PYTHONPATH=.gpu/python timeout 300 python3 bench/bench.py --only cumsum --out $OUT/bench > $OUT/bench.log 2>&1
echo "bench rc=$?"
tail -14 $OUT/bench.log
