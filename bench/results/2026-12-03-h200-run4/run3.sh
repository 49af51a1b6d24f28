#!/usr/bin/env bash
# Session 45, call 3: the rule as committed: __launch_bounds__(256, 2) for a transposed conv on conv_nchw only
# (forward convs back to plain 256). Correctness first (every conv spec, the dyn conv tests), then
# KernelBench L2 13 generic against specialized, and the 26 KernelBench problems of call 2 (generic).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
P=$OUT/parts; mkdir -p $P
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu3.txt
T=.gpu/bin/kiln_test_gpu
run() { local name=$1; shift; ( start=$(date +%s); "$@" > $P/$name.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/$name.txt ) & }
export KILN_CACHE_DIR=$(mktemp -d)
KILN_GPU_SPECS=conv run specs_conv $T -tc="gpu: every covered spec matches*"
KILN_GPU_SPECS=conv2d_3x3,conv_nd run specs_conv_nd $T -tc="gpu: every covered spec matches*"
run dyn_conv $T -tc="gpu: dyn conv batches and pool planes*,gpu: matmul and conv specs with f16*"
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|assertions:" $f | tail -3; echo "checks ok: $(grep -c '^gpu-check .* ok ' $f) failed: $(grep -c '^gpu-check .* FAIL' $f)"; done
for m in generic specialized; do
  KILN_SHAPES=$m timeout 100 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln .gpu/python --only 2/13 --profile \
    --no-compile --out /tmp/kb13-$m > $OUT/kb13-$m-3.log 2>&1; echo "kb13 $m rc=$?"; grep -E "L2 13|kernel|ms" $OUT/kb13-$m-3.log | head -12
done
timeout 300 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln .gpu/python --no-compile --out $OUT/kb3 \
  --only 1/54,1/59,1/60,1/66,1/75,1/79,1/81,2/6,2/7,2/8,2/13,2/15,2/23,2/24,2/27,2/48,2/50,2/58,2/60,2/72,2/74,2/79,2/83,2/89,2/90,2/96 \
  > $OUT/kb3.log 2>&1; echo "kb rc=$?"; tail -2 $OUT/kb3.log | head -1
tar czf $OUT/parts3.tar.gz -C $OUT parts kb3 kb3.log kb13-generic-3.log kb13-specialized-3.log && rm -rf $P
rm -rf $OUT/kb3 $OUT/*.log
