#!/usr/bin/env bash
# Session 60, call 3: the streaming hint on the 16-byte pieces of a wider result vector
# (common.cuh store_vec_bits; kiln_vs has it, kiln does not): kiln bench of the ops whose row
# templates store 32-byte vectors (f16 or bool rows to f32 or i64 results), alternately, device-time
# medians of 100 launches; then the every-spec check of stream_widths with kiln_vs's templates.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
for op in half_long_rows half_in_f32 mask_stats; do
  for bin in kiln kiln_vs kiln kiln_vs; do
    KILN_CACHE_DIR=$(mktemp -d) timeout 60 .gpu/bin/$bin bench specs/stream_widths.kiln --op $op --iters 100 > $OUT/b.txt 2>&1
    echo "$op $bin $(grep -E 'correct|device time' $OUT/b.txt | tr '\n' ' ')"
  done
done | tee $OUT/before_after_vs.txt
