#!/usr/bin/env bash
# Runs on the GPU machine, in one call: the GPU test suite, the standalone template
# harnesses, and the PyTorch side-by-side benchmarks; prints a short summary last.
# Expects .gpu/ from scripts/gpu_build.sh. Usage: bash scripts/gpu_suite.sh [--quick] [--only NAMES]
set -uo pipefail
cd "$(dirname "$0")/.."
export KILN_SOURCE_DIR=$PWD
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/kiln-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
summary=()

echo "=== GPU test suite"
if .gpu/bin/kiln_test_gpu 2>&1 | tee "$out/gpu_tests.log"; then summary+=("gpu tests: PASS"); else summary+=("gpu tests: FAIL"); fi
checks=$(grep -c '^gpu-check .* ok ' "$out/gpu_tests.log" || true)
fails=$(grep -c '^gpu-check .* FAIL' "$out/gpu_tests.log" || true)
summary+=("  reference checks: $checks ok, $fails failed")

echo "=== examples/host_app"
if [ -x .gpu/bin/host_app ] && .gpu/bin/host_app examples/host_app/app.kiln 2>&1 | tee "$out/host_app.log"; then
  summary+=("host_app example: PASS"); else summary+=("host_app example: FAIL"); fi

for h in .gpu/bin/*_check; do
  [ -x "$h" ] || continue
  echo "=== $(basename "$h")"
  if timeout 240 "$h" 2>&1 | tee "$out/$(basename "$h").log"; then summary+=("$(basename "$h"): PASS"); else summary+=("$(basename "$h"): FAIL"); fi
done

echo "=== compile and launch latency (kiln bench, C++ side)"
while read -r spec op defs; do
  [ -n "$spec" ] || continue
  echo "--- $op $defs"
  # shellcheck disable=SC2086
  timeout 120 .gpu/bin/kiln bench "$spec" --op "$op" $defs 2>&1 | tee -a "$out/latency.log" || true
done <<'OPS'
specs/elementwise.kiln relu_add
specs/reductions.kiln sum_rows
specs/cumsum_exclusive.kiln cumsum_exclusive -D B=1024 -D N=4096
specs/min_reduce.kiln min_reduce -D B=8 -D M=512 -D N=4095
specs/matmul_small_k.kiln matmul_small_k -D M=2048 -D N=2048
specs/conv2d_3x3.kiln conv2d_3x3 -D N=1 -D H=64 -D W=128
OPS

if [ "${KILN_SKIP_BENCH:-0}" = 1 ]; then echo; echo "================ summary"; printf "%s\n" "${summary[@]}"; exit 0; fi
echo "=== benchmarks (kiln vs PyTorch, same process)"
PYTHONUNBUFFERED=1 python3 bench/bench.py --lib .gpu/lib/libkiln_capi.so --out "$out" "$@" 2>&1 | tee "$out/bench.log"

echo
echo "================ summary"
printf '%s\n' "${summary[@]}"
sed -n '/^| problem/,$p' "$out/bench.log"
