#!/usr/bin/env bash
# Session 64, call 3: the GPU suite's bench part (bench/bench.py through the Python package: every
# row checked against float64, then timed beside PyTorch eager, torch.compile, cuBLAS and Triton).
cd "$(dirname "$0")/../../.."
KILN_SUITE_PARTS="bench" BENCH_TIMEOUT=520 timeout -s INT 570 bash scripts/gpu_suite.sh
echo "suite rc=$?"
