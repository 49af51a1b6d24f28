#!/usr/bin/env bash
# For session 65 (written in session 64, without device time left): avg pools in runs of output rows
# (docs/notes/pending/avg-pool-rows.patch: a sum folds each window row first in both paths, so runs
# of rows give the same bits, emulated on the CPU; pool_rows_fit no longer max-only; a new spec op
# avg_pool_same, 3x3 stride 1). Before the call: build .gpu as usual from the landed code, then
# .gpu/bin/kiln_avgrows and .gpu/bin/kiln_test_gpu_avgrows with the patch applied (`git apply`,
# build kiln_cli and kiln_test_gpu, copy, strip, `git apply -R`). This checks the patched binaries
# (the pooling spec at every shape set, the 3-d pool tuner case with rows for avg pools) and times
# 3x3 stride-1 avg pools and KernelBench 44-46 with both binaries, alternately.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
git apply docs/notes/pending/avg-pool-rows.patch   # the spec op and the templates the patched binaries read
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=pooling timeout 200 .gpu/bin/kiln_test_gpu_avgrows \
  -tc="gpu: every covered spec matches*,gpu: memory-bound specs on odd sizes*,gpu: 3-d pools tune*" > $logs/checks.txt 2>&1
echo "checks rc=$? ok=$(grep -c '^gpu-check .* ok ' $logs/checks.txt) failed=$(grep -c '^gpu-check .* FAIL' $logs/checks.txt)"
grep -E "^tuned|test cases" $logs/checks.txt
PYTHONPATH=$PWD/.gpu/python:$PWD/bench python3 -c "
import bench
open('$logs/kb_pools.kiln', 'w').write(bench.KERNELBENCH_POOL_SPEC)"
cat >> $logs/kb_pools.kiln <<'SPEC'
op avg_same_exc {
  dims N = 32, C = 64, H = 256, W = 256
  in  x: f32[N, C, H, W]
  out y = avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=false)
}
op avg_same_inc {
  dims N = 32, C = 64, H = 255, W = 255
  in  x: f32[N, C, H, W]
  out y = avg_pool2d(x, 3, stride=1, padding=1)
}
SPEC
for round in 1 2; do for K in kiln kiln_avgrows; do
  for op in avg_same_exc avg_same_inc kb44_avg_pool1d kb45_avg_pool2d kb46_avg_pool3d; do
    echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K .gpu/bin/$K run $logs/kb_pools.kiln --op $op --iters 30 2>&1 | grep -E 'median' | tr '\n' ' ')"
  done
done; done | tee $logs/ab.txt
