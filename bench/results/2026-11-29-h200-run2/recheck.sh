#!/bin/bash
# After the 16-bit batch norm spec became f16: the spec at its default and the suite's "long"
# shape, then every covered spec again.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export KILN_CACHE_DIR=/tmp/kiln-cache
K=.gpu/bin/kiln
{
  $K run specs/norms.kiln --op batchnorm_short_f16 --check 2>&1 | tail -2
  $K run specs/norms.kiln --op batchnorm_short_f16 --check -D N=3 -D C=100003 -D H=3 -D W=3 2>&1 | tail -2
} > $OUT/recheck.txt 2>&1
cat $OUT/recheck.txt
timeout 300 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*" > $OUT/every_spec.log 2>&1; echo "rc=$?"
grep -E "FAIL|summary|batchnorm_short" $OUT/every_spec.log | head; tail -4 $OUT/every_spec.log
