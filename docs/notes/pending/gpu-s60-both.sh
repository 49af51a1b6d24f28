#!/usr/bin/env bash
# Session 60: calls 1 and 2 in one machine start.
cd "$(dirname "$0")/../../.."
mkdir -p $OUT/c1 $OUT/c2
OUT=$OUT/c1 bash docs/notes/pending/gpu-s60-call1.sh
OUT=$OUT/c2 bash docs/notes/pending/gpu-s60-call2.sh
