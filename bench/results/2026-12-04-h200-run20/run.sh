set -u
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
echo "=== reliability (scratch OOM, the caller's allocator) and tuner GPU tests"
timeout 200 .gpu/bin/kiln_test_gpu -tc="*scratch*,*caller's scratch*" > $OUT/scratch.log 2>&1; echo rc=$?
grep "scratch OOM\|ERROR\|test cases\|assertions" $OUT/scratch.log | tail -8
timeout 150 .gpu/bin/kiln_test_gpu -sf="*test_tuner_gpu*" > $OUT/tuner.log 2>&1; echo rc=$?
grep "tune mm16.*k[24]\|^tuned\|test cases\|assertions" $OUT/tuner.log | cut -c1-120 | tail -12
echo "=== kiln run medians (a synchronize after every launch): old (34b307b, the device's default pool) / new"
for op in split_f16 two_steps small_add; do
  for bin in .gpu/old/kiln .gpu/bin/kiln; do
    $bin run .gpu/scratch.kiln --op $op --check --iters 200 2>&1 | grep -v "^  " | sed "s|^|$bin: |"
  done
done
