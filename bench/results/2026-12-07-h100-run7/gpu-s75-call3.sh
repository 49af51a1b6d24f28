#!/usr/bin/env bash
# Session 75, call 3 (short: little device time left): Gemv's new rule (warps that carry rows
# against x stored [K, P]) checked against the float64 reference on every gemv.kiln op (kiln run
# --check); the tuner's small-K and cp.async wgmma engine cases (every candidate checked); the new
# rule timed (kiln bench) beside torch.matmul; then the gemm spec's reference checks.
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bash scripts/gpu_unpack.sh > /dev/null 2>&1
export KILN_SOURCE_DIR=$PWD
start=$SECONDS
dir=bench/results/2026-12-07-h100-run6   # gemv.kiln and torch_skinny.py as call 1 ran them
cache=$(mktemp -d)
timeout 200 stdbuf -oL -eL .gpu/bin/kiln_test_gpu -sf='*test_tuner_gpu.cpp' -tc='*small-K*,*cp.async wgmma engine*' > "$OUT/tuner.log" 2>&1
echo "tuner small-K, wgmma rc=$?"; grep -E "^tuned|passed|failed|ERROR" "$OUT/tuner.log" | tail -8
KILN_CACHE_DIR=$cache timeout 100 stdbuf -oL .gpu/bin/kiln run $dir/gemv.kiln --check > "$OUT/gemv-run.log" 2>&1
echo "run --check rc=$?"; tail -n 16 "$OUT/gemv-run.log"
for op in mid_n4 mid_n8 mid_n16 gemv_long4 tall_n2; do
  KILN_CACHE_DIR=$cache timeout 30 .gpu/bin/kiln bench $dir/gemv.kiln --op "$op" --iters 50 2>&1 | sed "s/^/$op: /"
done > "$OUT/gemv-bench.log"
grep -iE "device|median" "$OUT/gemv-bench.log" | head -20
timeout 60 python3 $dir/torch_skinny.py > "$OUT/torch.log" 2>&1; cat "$OUT/torch.log"
left=$((400 - (SECONDS - start)))
echo "spec checks with $left s left"
KILN_GPU_SPECS=gemm timeout "$left" stdbuf -oL -eL .gpu/bin/kiln_test_gpu \
  -tc='gpu: every covered spec matches*' > "$OUT/specs.log" 2>&1
echo "specs rc=$? ($(grep -c '^gpu-check .* ok ' "$OUT/specs.log") ok, $(grep -c '^gpu-check .* FAIL' "$OUT/specs.log") failed)"
grep '^gpu-check .* FAIL' "$OUT/specs.log" | head
