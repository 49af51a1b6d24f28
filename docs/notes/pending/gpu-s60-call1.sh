#!/usr/bin/env bash
# Session 60, call 1 (H100): session 59's call 6 (the known-vectorizable scans and row norms
# before and after, kiln bench device-time medians of 100 launches, old and new CLI alternately),
# then the every-spec check of specs/pooling.kiln (not run in session 59).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bash docs/notes/pending/gpu-s59-call6.sh
KILN_GPU_SPECS=pooling KILN_CACHE_DIR=$(mktemp -d) timeout 200 \
  .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*" > $OUT/pooling.txt 2>&1
echo "pooling specs rc=$?"; tail -3 $OUT/pooling.txt; grep -c " ok " $OUT/pooling.txt
grep -E "WRONG|FAIL|ERROR|gpu-check summary" $OUT/pooling.txt | head -20
