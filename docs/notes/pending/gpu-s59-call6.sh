#!/usr/bin/env bash
# Session 59, call 6: before and after in one call. .gpu/bin/kiln_old is the CLI of 24913f8 (the
# session's start, its templates embedded), .gpu/bin/kiln this session's (embedded too: no
# KILN_TEMPLATE_PATH); `kiln bench` of the same ops alternately, device-time medians of 100 launches.
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
for so in norms:softmax norms:layernorm norms:softmax_dropout scans:cumsum_reverse scans:cumsum_long_rows \
          stream_widths:half_long_rows norms:batchnorm_train; do
  spec=${so%%:*}; op=${so#*:}
  for bin in kiln_old kiln kiln_old kiln; do
    KILN_CACHE_DIR=$(mktemp -d) timeout 40 .gpu/bin/$bin bench specs/$spec.kiln --op $op --iters 100 > $OUT/b.txt 2>&1
    echo "$op $bin $(grep -E 'correct|device time' $OUT/b.txt | tr '\n' ' ')"
  done
done | tee $OUT/before_after.txt
