#!/bin/bash
# The second call of run 7: every covered spec (566 checks at the last run) against the float64
# reference, since every conv template's run() now takes the batch.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
timeout 500 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*" > $OUT/covered.log 2>&1
echo "covered rc=$?"; tail -3 $OUT/covered.log
