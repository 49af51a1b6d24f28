# Session 50, call 5: kiln tune (measure only) on the small linear layers that trail cuBLAS folded.
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KILN_CACHE_DIR=$(mktemp -d)
for spec in "lin_bf16 -D M=64" "lin_bf16 -D M=512" "lin_bf16 -D M=231 -D N=1024 -D K=768" "lin_f16" "lin_tf32"; do
  set -- $spec
  echo "=== $spec"
  timeout 80 .gpu/bin/kiln tune .gpu/tune.kiln --op $spec --budget 25 --no-store 2>&1 | tail -40
done > $OUT/tune.log
grep -E "^===|heuristic|best|tuned|fastest" $OUT/tune.log | head -40
