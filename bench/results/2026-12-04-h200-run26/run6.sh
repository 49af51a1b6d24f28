# Session 50, call 6: the TMA heuristic change (7a59b3b): matmul specs checked, dyn matmul GPU tests, shared-B rows timed.
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KILN_CACHE_DIR=$(mktemp -d)
T=.gpu/bin/kiln_test_gpu
( KILN_GPU_SPECS=gemm,matmul,matmul_small_k,linear_dropout_softmax,attention timeout 200 $T -tc="gpu: every covered spec matches*" > $OUT/specs_mm.txt 2>&1; echo "specs_mm rc=$?" >> $OUT/specs_mm.txt ) &
( timeout 200 $T -tc="*of batched matmuls*,*dyn matmuls (M*,*dyn matmul N and K*,*folded batches*" > $OUT/dyn_mm.txt 2>&1; echo "dyn_mm rc=$?" >> $OUT/dyn_mm.txt ) &
wait
grep -E "rc=|gpu-check summary|test cases:|assertions:|ERROR" $OUT/specs_mm.txt $OUT/dyn_mm.txt | head -12
timeout 200 python3 bench/bench.py --only shared --no-ceilings --out $OUT --kiln .gpu/python > $OUT/bench.log 2>&1; echo "bench rc=$?"
sed -n '/^| problem/,$p' $OUT/bench.log
