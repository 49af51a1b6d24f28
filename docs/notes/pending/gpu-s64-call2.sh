#!/usr/bin/env bash
# Session 64, call 2: the GPU suite's test part, second half (every test file but test_specs_gpu.cpp:
# shape-generic kernels, the tuner's cases (split norms, strided scans, 3-d pools among them), the
# devices, reliability and tensor-map tests), the harnesses (built here) and the latency part.
cd "$(dirname "$0")/../../.."
KILN_SUITE_PARTS="tests harness latency" KILN_SUITE_TESTS="-sfe=*test_specs_gpu.cpp --duration=true" \
  timeout -s INT 560 bash scripts/gpu_suite.sh
echo "suite rc=$?"
