#!/usr/bin/env bash
# Session 37: three device calls after `scripts/gpu_build.sh` (the .gpu/run.sh of each call, here
# one after another; CALL=1, 2 or 3 picks one). Call 1 at 91a4565 (the session-36 patch applied);
# calls 2 and 3 with the test and KILN_GPU_SPECS edits of this session's first commit.
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
case ${CALL:-1} in
1)  # correctness (targeted), the len rows, then the whole suite for what time was left
  nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
  timeout 200 .gpu/bin/kiln_test_gpu -tc="*dyn lengths*,*dyn rows of reductions*,*memory-bound specs on odd sizes*" > $OUT/dyn_tests.txt 2>&1
  mkdir -p $OUT/bench
  PYTHONPATH=.gpu/python timeout 200 python3 bench/shapes_bench.py --only len --out $OUT/bench 2>&1 | tail -24
  timeout 150 .gpu/bin/kiln_test_gpu > $OUT/gpu_all.txt 2>&1 ;;
2)  # the dyn-length test with two values per look-back class; the two matrix tests, timed
  t() { timeout $2 .gpu/bin/kiln_test_gpu --duration=true -tc="$3" > $OUT/$1.txt 2>&1; }
  t dyn_len 150 "*dyn lengths*"
  t every_spec 200 "*every covered spec matches*"
  t odd_sizes 230 "*memory-bound specs on odd sizes*" ;;
3)  # the rest of call 2's matrix tests, concurrently
  KILN_GPU_SPECS=matmul,matmul_small_k,min_reduce,norms,pooling,promotion,reductions,scans,stream_widths,views \
    timeout 440 .gpu/bin/kiln_test_gpu --duration=true -tc="*every covered spec matches*" > $OUT/every_spec.txt 2>&1 &
  KILN_GPU_SPECS=reductions,scans \
    timeout 440 .gpu/bin/kiln_test_gpu --duration=true -tc="*memory-bound specs on odd sizes*" > $OUT/odd_sizes.txt 2>&1 &
  wait ;;
esac
