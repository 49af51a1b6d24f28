#!/usr/bin/env bash
# Issue 20's tuned-against-heuristic table for the GEMM sweep (written in session 61, for a later
# call): `kiln tune --no-store` of the engine's layouts and dtypes at the benchmark's shapes, each
# candidate checked (against the heuristic kernel's output at these sizes) and timed in three
# interleaved rounds. Prints each op's best against its heuristic and how long the tuning took.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
while read -r op dims; do
  [[ -z "$op" ]] && continue
  start=$SECONDS
  # shellcheck disable=SC2086
  KILN_CACHE_DIR=$(mktemp -d) timeout 48 .gpu/bin/kiln tune specs/gemm.kiln --op "$op" $dims --iters 30 --budget 32 \
    --no-store > $OUT/t.txt 2> $OUT/t-progress.txt
  rc=$?
  echo "$op $dims rc=$rc $(grep -E ': best ' $OUT/t.txt | head -1) [$((SECONDS - start)) s]"
done <<'SHAPES' | tee $OUT/gemm_tune.txt
mm_bf16 -D M=4096 -D N=4096 -D K=4096
mm_bf16_nt -D M=4096 -D N=4096 -D K=4096
mm_bf16_tn -D M=4096 -D N=4096 -D K=4096
mm_f16 -D M=8192 -D N=8192 -D K=8192
mm_tf32 -D M=4096 -D N=4096 -D K=4096
mm_tf32_nt -D M=4096 -D N=4096 -D K=4096
mm_bf16 -D M=6007 -D N=3331 -D K=4799
mm_bf16 -D M=1000 -D N=1000 -D K=1000
mm_tf32 -D M=512 -D N=512 -D K=262144
mm_f16_batched -D B=32 -D M=1024 -D N=1024 -D K=1024
SHAPES
