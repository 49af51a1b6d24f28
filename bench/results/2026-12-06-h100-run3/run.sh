#!/usr/bin/env bash
# Session 62, call 1: the GPU suite's bench part (bench.py: the README's table, the GEMM sweep with
# Triton, the KernelBench rows; every kiln output checked against float64 first; eager and
# torch.compile in the same process), not run since session 57; then the reduction tuner's GPU case.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
export KILN_CACHE_DIR=$(mktemp -d)
start=$SECONDS
KILN_SUITE_PARTS=bench BENCH_TIMEOUT=430 bash scripts/gpu_suite.sh > $OUT/bench_suite.txt 2>&1
echo "bench rc=$? [$((SECONDS - start)) s]"
sed -n '/================ summary/,$p' $OUT/bench_suite.txt | head -80
KILN_CACHE_DIR=$(mktemp -d) timeout 70 .gpu/bin/kiln_test_gpu -tc="gpu: contiguous-row reductions tune*" > $OUT/reduce_tune.txt 2>&1
echo "reduce tune rc=$?"; grep -E "best|heuristic|test cases|ERROR" $OUT/reduce_tune.txt | tail -20
