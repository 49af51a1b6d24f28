#!/usr/bin/env bash
# Session 60: calls 1 and 3 in one machine start (call 2 on its own).
cd "$(dirname "$0")/../../.."
mkdir -p $OUT/c1 $OUT/c3
OUT=$OUT/c3 bash docs/notes/pending/gpu-s60-call3.sh
OUT=$OUT/c1 bash docs/notes/pending/gpu-s60-call1.sh
