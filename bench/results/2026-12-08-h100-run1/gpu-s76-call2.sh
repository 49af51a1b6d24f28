#!/usr/bin/env bash
# Session 76, call 2: GemvMma with each step's 32 k summed from zero on the tensor cores and added
# to the running sums in f32 ([Note: the step's sums]: call 1 lost accuracy with the K slice's
# length, 1.8e-5 at 5 slices of 8192). kiln run --check of gemv.kiln and the gemm spec's GemvMma
# ops, then kiln tune of the skinny products (every candidate checked first), torch beside them.
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bash scripts/gpu_unpack.sh > /dev/null 2>&1
export KILN_SOURCE_DIR=$PWD
start=$SECONDS
run6=bench/results/2026-12-07-h100-run6
cache=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
{
  for op in mm_skinny_mma linear_skinny_tf32 mm_skinny_mma_batched; do
    KILN_CACHE_DIR=$cache timeout 60 .gpu/bin/kiln run specs/gemm.kiln --op $op --check --iters 20 2>&1 | tail -n 3
  done
  KILN_CACHE_DIR=$cache timeout 120 .gpu/bin/kiln run $run6/gemv.kiln --check --iters 20 2>&1
  echo "gemv.kiln run --check rc=$?"
} > "$OUT/check.log" 2>&1
cat "$OUT/check.log"
for op in mid_n16; do
  timeout 40 .gpu/bin/kiln tune $run6/gemv.kiln --op $op --no-store --iters 30 --budget 20 2>&1
  echo "tune $op rc=$?"
done > "$OUT/tune.log" 2>&1
timeout 75 stdbuf -oL -eL .gpu/bin/kiln_test_gpu -tc='gpu: skinny products on the tensor cores*' > "$OUT/gemv-mma-test.log" 2>&1
echo "GemvMma GPU test rc=$?"; grep -E "^gpu-check|passed|failed|ERROR" "$OUT/gemv-mma-test.log" | tail -12
grep -E "rc=|^matmul|wrong|error" "$OUT/tune.log"
grep -E "gemv mma" "$OUT/tune.log" | grep -E "ms \(median" | head -40
timeout 30 python3 $run6/torch_skinny.py > "$OUT/torch.log" 2>&1; cat "$OUT/torch.log"
echo "at $((SECONDS - start)) s"
