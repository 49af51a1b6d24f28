set -u
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "=== every dyn GPU test (test_dyn_gpu.cpp), the tuner's"
timeout 330 .gpu/bin/kiln_test_gpu -sf="*test_dyn_gpu*" > $OUT/dyn_all.log 2>&1; echo rc=$?
grep "ERROR\|test cases\|assertions" $OUT/dyn_all.log | tail -8
grep "dyn folded matmul tokens_b[hs]*:" $OUT/dyn_all.log
timeout 120 .gpu/bin/kiln_test_gpu -sf="*test_tuner_gpu*" > $OUT/tuner.log 2>&1; echo rc=$?
grep "ERROR\|test cases\|assertions" $OUT/tuner.log | tail -4
echo "=== shapes_bench: tokens rows, dyn B and S against the specialized product, cuBLAS and Triton"
timeout 200 python3 bench/shapes_bench.py --only matmul --ops tokens_bf16,tokens_tf32 --kiln .gpu/python --out $OUT > $OUT/shapes.log 2>&1; echo rc=$?
tail -12 $OUT/shapes.log
