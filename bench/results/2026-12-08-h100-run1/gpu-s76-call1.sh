#!/usr/bin/env bash
# Session 76, call 1: GemvMma (skinny products on mma.sync tf32, [Note: skinny products on the
# tensor cores]) checked against the float64 reference (kiln run --check of the gemm spec's three
# GemvMma ops and of every run6 gemv.kiln op under the new rule), its candidates beside Gemv's in
# kiln tune (every candidate checked before it is timed) with torch.matmul beside them; then what
# session 75's call 3 did not run: the tuner's small-K and wgmma engine cases, the gemm spec checks.
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bash scripts/gpu_unpack.sh > /dev/null 2>&1
export KILN_SOURCE_DIR=$PWD
start=$SECONDS
run6=bench/results/2026-12-07-h100-run6   # gemv.kiln and torch_skinny.py as session 74 ran them
cache=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for op in mm_skinny_mma linear_skinny_tf32 mm_skinny_mma_batched; do
  KILN_CACHE_DIR=$cache timeout 60 .gpu/bin/kiln run specs/gemm.kiln --op $op --check --iters 20 2>&1 | tail -n 3 | sed "s/^/$op: /"
done | tee "$OUT/mma-check.log"
KILN_CACHE_DIR=$cache timeout 120 .gpu/bin/kiln run $run6/gemv.kiln --check --iters 20 > "$OUT/gemv-run.log" 2>&1
echo "gemv.kiln run --check rc=$?"; tail -n 30 "$OUT/gemv-run.log"
for op in mid_n16 mid_n8 mid_n4 gemv_long4 linear_m16 batched_n4; do
  timeout 75 .gpu/bin/kiln tune $run6/gemv.kiln --op $op --no-store --iters 30 --budget 45 > "$OUT/tune-$op.log" 2>&1
  echo "tune $op rc=$?"; grep -E "gemv mma|heuristic|best|WRONG|wrong" "$OUT/tune-$op.log" | head -12
done
timeout 60 python3 $run6/torch_skinny.py > "$OUT/torch.log" 2>&1; cat "$OUT/torch.log"
echo "at $((SECONDS - start)) s"
timeout 150 stdbuf -oL -eL .gpu/bin/kiln_test_gpu -sf='*test_tuner_gpu.cpp' -tc='*small-K*,*cp.async wgmma engine*' > "$OUT/tuner.log" 2>&1
echo "tuner small-K, wgmma rc=$?"; grep -E "^tuned|passed|failed|ERROR" "$OUT/tuner.log" | tail -8
left=$((560 - (SECONDS - start)))
echo "spec checks with $left s left"
KILN_GPU_SPECS=gemm timeout "$left" stdbuf -oL -eL .gpu/bin/kiln_test_gpu \
  -tc='gpu: every covered spec matches*' > "$OUT/specs.log" 2>&1
echo "specs rc=$? ($(grep -c '^gpu-check .* ok ' "$OUT/specs.log") ok, $(grep -c '^gpu-check .* FAIL' "$OUT/specs.log") failed)"
grep '^gpu-check .* FAIL' "$OUT/specs.log" | head
