#!/usr/bin/env bash
# Session 59, call 5: device times of the known-vectorizable scans and row norms (kiln bench,
# medians of 50 launches), to set against their bytes (a copy-speed check; no earlier build here).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
for so in cumsum_exclusive:cumsum_exclusive scans:cumsum_long_rows stream_widths:half_long_rows norms:softmax \
          norms:layernorm norms:softmax_dropout norms:batchnorm_train; do
  spec=${so%%:*}; op=${so#*:}
  KILN_CACHE_DIR=$(mktemp -d) timeout 40 .gpu/bin/kiln bench specs/$spec.kiln --op $op --iters 50 > $OUT/bench-$op.txt 2>&1
  echo "$op rc=$? $(grep -E 'device time' $OUT/bench-$op.txt)"
done
