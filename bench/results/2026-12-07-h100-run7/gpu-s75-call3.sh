#!/usr/bin/env bash
# Session 75, call 3: Gemv's new rule (warps that carry rows against x stored [K, P]) checked
# against the float64 reference on every gemv.kiln op (kiln run --check), then tuned beside
# torch.matmul (heuristic against every candidate), the tuner's small-K case, and spec checks.
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bash scripts/gpu_unpack.sh > /dev/null 2>&1
export KILN_SOURCE_DIR=$PWD
start=$SECONDS
dir=bench/results/2026-12-07-h100-run7
cache=$(mktemp -d)
KILN_CACHE_DIR=$cache timeout 120 .gpu/bin/kiln run $dir/gemv.kiln --check > "$OUT/gemv-run.log" 2>&1
echo "run --check rc=$?"; grep -cE " ok" "$OUT/gemv-run.log"; grep -iE "fail|wrong|mismatch|error" "$OUT/gemv-run.log" | head
for op in $(grep -oE "^op [a-z0-9_]+" $dir/gemv.kiln | cut -d' ' -f2); do
  KILN_CACHE_DIR=$cache timeout 60 .gpu/bin/kiln tune $dir/gemv.kiln --op "$op" --no-store --budget 25 2>&1
  echo "tune $op rc=$?"
done > "$OUT/gemv-tune.log"
grep -E "^matmul|rc=[1-9]|FAIL|wrong|mismatch" "$OUT/gemv-tune.log"
python3 $dir/torch_skinny.py > "$OUT/torch.log" 2>&1; cat "$OUT/torch.log"
timeout 150 stdbuf -oL -eL .gpu/bin/kiln_test_gpu -sf='*test_tuner_gpu.cpp' -tc='*small-K*,*cp.async wgmma engine*' > "$OUT/tuner.log" 2>&1
echo "tuner small-K, wgmma rc=$?"; grep -E "^tuned|passed|failed|ERROR" "$OUT/tuner.log" | tail -8
left=$((440 - (SECONDS - start)))
echo "spec checks with $left s left"
KILN_GPU_SPECS=gemm,matmul_small_k,views,matmul timeout "$left" stdbuf -oL -eL .gpu/bin/kiln_test_gpu \
  -tc='gpu: every covered spec matches*' > "$OUT/specs.log" 2>&1
echo "specs rc=$? ($(grep -c '^gpu-check .* ok ' "$OUT/specs.log") ok, $(grep -c '^gpu-check .* FAIL' "$OUT/specs.log") failed)"
grep '^gpu-check .* FAIL' "$OUT/specs.log" | head
