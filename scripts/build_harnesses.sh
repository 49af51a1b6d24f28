#!/usr/bin/env bash
# Builds the standalone template harnesses (bench/standalone/*_check.cu) into DIR (default
# .gpu/bin) with nvcc for sm_90a, in parallel. scripts/gpu_build.sh runs it here; scripts/gpu_suite.sh
# runs it on the GPU machine (CUDA 13.0, nvcc) when the binaries were not carried (they are ~17 MB
# of the carry's 64 MiB). Exits 1 if nvcc is missing or any harness did not build.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
dir=${1:-.gpu/bin}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$NVCC" ] || { echo "build_harnesses: no nvcc at $NVCC (set NVCC)" >&2; exit 1; }
mkdir -p "$dir"
pids=()
names=()
for harness in bench/standalone/*_check.cu; do
  [ -f "$harness" ] || continue
  name=$(basename "$harness" .cu)
  extra=""
  grep -q cublas "$harness" && extra="-lcublas"
  # shellcheck disable=SC2086
  "$NVCC" -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I templates -I tests/templates "$harness" \
    -o "$dir/$name" $extra &
  pids+=($!)
  names+=("$harness")
done
failed=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { echo "build_harnesses: ${names[$i]} did not build" >&2; failed=1; }
done
exit $failed
