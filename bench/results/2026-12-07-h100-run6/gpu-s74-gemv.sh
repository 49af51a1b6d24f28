#!/usr/bin/env bash
# Session 74: kiln tune of skinny products (gemv.kiln) on the GPU, measure only (--no-store).
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bash scripts/gpu_unpack.sh > /dev/null 2>&1
spec=bench/results/2026-12-07-h100-run6/gemv.kiln
export KILN_CACHE_DIR=$(mktemp -d)
for op in $(grep -oE "^op [a-z0-9_]+" "$spec" | cut -d' ' -f2); do
  timeout 100 .gpu/bin/kiln tune "$spec" --op "$op" --no-store --budget 40 2>&1 | grep -vE ": correct$"
done
