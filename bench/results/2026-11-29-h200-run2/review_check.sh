#!/bin/bash
# After the review mend (split_chunk's gang count through launch::ceil_div): the split norms again.
cd "$(dirname "$0")/.."
export KILN_CACHE_DIR=/tmp/kiln-cache
K=.gpu/bin/kiln
for shape in "128 512 7 7" "3 5 33 33" "100 64 7 7" "128 128 28 28" "5 7 45 47"; do
  set -- $shape
  echo "-- batchnorm_train N=$1 C=$2 H=$3 W=$4"
  $K run .gpu/norm4d.kiln --op batchnorm_train --check -D N=$1 -D C=$2 -D H=$3 -D W=$4 2>&1 | tail -2
done
for op in batchnorm_short_f16 batchnorm_relu_7x7 batchnorm_train layernorm_long rmsnorm_long_bf16; do
  echo "-- specs/norms.kiln $op"; $K run specs/norms.kiln --op $op --check 2>&1 | tail -2
done
