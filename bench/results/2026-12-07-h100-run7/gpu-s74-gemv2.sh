#!/usr/bin/env bash
# Session 74, the warps that carry rows ([Note: rows a warp carries]): kiln tune of gemv.kiln's
# skinny products (every candidate checked, then timed; --no-store), torch.matmul on the same
# shapes, then the spec checks of the specs whose ops plan on Gemv at some shape set.
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bash scripts/gpu_unpack.sh > /dev/null 2>&1
export KILN_SOURCE_DIR=$PWD
start=$SECONDS
spec=bench/results/2026-12-07-h100-run6/gemv.kiln
cache=$(mktemp -d)
for op in $(grep -oE "^op [a-z0-9_]+" "$spec" | cut -d' ' -f2); do
  KILN_CACHE_DIR=$cache timeout 60 .gpu/bin/kiln tune "$spec" --op "$op" --no-store --budget 25 2>&1
  echo "tune $op rc=$?"
done > "$OUT/gemv-tune.log"
grep -E "^matmul|rc=[1-9]|FAIL|wrong|mismatch" "$OUT/gemv-tune.log"
python3 bench/results/2026-12-07-h100-run6/torch_skinny.py > "$OUT/torch.log" 2>&1; cat "$OUT/torch.log"
left=$((540 - (SECONDS - start)))
echo "spec checks with $left s left"
KILN_GPU_SPECS=$1 timeout "$left" stdbuf -oL -eL .gpu/bin/kiln_test_gpu -tc='gpu: every covered spec matches*' \
  > "$OUT/specs.log" 2>&1
echo "specs rc=$? ($(grep -c '^gpu-check .* ok ' "$OUT/specs.log") ok, $(grep -c '^gpu-check .* FAIL' "$OUT/specs.log") failed)"
grep '^gpu-check .* FAIL' "$OUT/specs.log" | head
