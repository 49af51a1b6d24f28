# Session 50, call 7: the review's runtime change (precomputed size-class checks) on the GPU.
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KILN_CACHE_DIR=$(mktemp -d)
timeout 200 .gpu/bin/kiln_test_gpu -tc="*folded batches*,*refuses a value of another size class*,*dyn rows of reductions*,*dyn lengths*" > $OUT/dyn.txt 2>&1; echo "rc=$?"
grep -E "ERROR|test cases:|assertions:" $OUT/dyn.txt | tail -6
