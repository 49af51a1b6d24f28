set -u
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "=== tuner GPU tests"
timeout 300 .gpu/bin/kiln_test_gpu -sf="*test_tuner_gpu*" > $OUT/tuner.log 2>&1; echo rc=$?
grep "^tuned\|ERROR\|test cases\|assertions" $OUT/tuner.log | tail -12
echo "=== adversarial batched dyn specs, kiln run --check"
fails=0; runs=0
for op in bcast_a_k bcast_b_k_bf16 bcast_b_n_res tt_k_tf32 four_d_m split_n_f16 softmax_m softmax_n; do
  d=$(grep -A1 "op $op " .gpu/adv.kiln | grep -o "dyn [A-Z]" | cut -c5)
  for v in 1 3 16 100 1000 1001 1008 3000; do
    runs=$((runs+1))
    .gpu/bin/kiln run .gpu/adv.kiln --op $op -D $d=$v --check --iters 2 --seed $v >> $OUT/adv.log 2>&1 || { fails=$((fails+1)); echo "FAIL $op $d=$v"; }
  done
done
echo "adversarial: $runs runs, $fails failed; ok outputs: $(grep -c ' ok ' $OUT/adv.log)"
