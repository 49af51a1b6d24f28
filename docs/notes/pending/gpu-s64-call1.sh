#!/usr/bin/env bash
# Session 64, call 1: the GPU suite's test part, first half (test_specs_gpu.cpp: every covered spec
# against float64 at every shape set), and the offline pack run with NVRTC unloadable. Carry .gpu
# (rebuilt from this commit by scripts/gpu_build.sh). A 560 s timeout keeps the logs coming back.
cd "$(dirname "$0")/../../.."
KILN_SUITE_PARTS="tests pack" KILN_SUITE_TESTS="-sf=*test_specs_gpu.cpp --duration=true" \
  timeout -s INT 560 bash scripts/gpu_suite.sh
echo "suite rc=$?"
