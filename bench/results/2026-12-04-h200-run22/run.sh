set -u
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "=== dyn matmul GPU tests (folded batches among them)"
timeout 300 .gpu/bin/kiln_test_gpu -tc="*of batched matmuls*,*dyn matmuls (M*" > $OUT/dyn_matmul.log 2>&1; echo rc=$?
grep "ERROR\|test cases\|assertions" $OUT/dyn_matmul.log | tail -8
echo "=== folded products, kiln run --check"
fails=0; runs=0
for op in heads_bias decode_gemv decode_wide rows_softmax long_k two_outs tokens_dropout; do
  runs=$((runs+1))
  .gpu/bin/kiln run .gpu/fold.kiln --op $op --check --iters 2 --seed 11 >> $OUT/fold.log 2>&1 || { fails=$((fails+1)); echo "FAIL $op"; }
done
for v in 1 2 3 16 17 100 1000 1001 3000; do
  runs=$((runs+2))
  .gpu/bin/kiln run .gpu/fold.kiln --op dyn_s_heads -D S=$v --check --iters 2 --seed $v >> $OUT/fold.log 2>&1 || { fails=$((fails+1)); echo "FAIL dyn_s_heads S=$v"; }
  .gpu/bin/kiln run .gpu/fold.kiln --op dyn_b_odd -D B=$v --check --iters 2 --seed $v >> $OUT/fold.log 2>&1 || { fails=$((fails+1)); echo "FAIL dyn_b_odd B=$v"; }
done
for so in matmul.kiln:linear_tokens matmul.kiln:matmul_batched gemm.kiln:mm_tf32_bias_batched gemm.kiln:mm_f16_batched; do
  runs=$((runs+1))
  .gpu/bin/kiln run specs/${so%%:*} --op ${so##*:} --check --iters 2 >> $OUT/fold.log 2>&1 || { fails=$((fails+1)); echo "FAIL $so"; }
done
echo "fold checks: $runs runs, $fails failed; ok lines: $(grep -c ' ok' $OUT/fold.log)"
echo "=== bench: shared-B products, this build"
timeout 300 python3 bench/bench.py --only shared --no-ceilings --out $OUT/new --kiln .gpu/python > $OUT/bench_new.log 2>&1; echo rc=$?
tail -12 $OUT/bench_new.log
echo "=== bench: shared-B products, the old build (34b307b, unfolded)"
timeout 200 python3 bench/bench.py --only shared --no-ceilings --no-compile --out $OUT/old --kiln .gpu/old-python > $OUT/bench_old.log 2>&1; echo rc=$?
tail -12 $OUT/bench_old.log
