#!/usr/bin/env bash
# Session 67, call 2: the bench part (bench/bench.py through the Python package: PyTorch eager,
# torch.compile, cuBLAS and Triton beside kiln, every kiln output checked against float64 before
# it is timed), with .gpu.tar.xz built from 1a17592 (batch norms over short images a block per row).
cd "$(dirname "$0")/../../.."
KILN_SUITE_PARTS=bench BENCH_TIMEOUT=500 timeout -s INT 540 bash scripts/gpu_suite.sh
echo "suite rc=$?"
