#!/usr/bin/env bash
# Session 45, call 2: the same 26 KernelBench problems (every conv on conv_nchw at two CTAs per SM)
# A/B in one run: `before` is the Python package built with the planner before this change (HEAD~1 of run1) (plain
# __launch_bounds__(256)), `after` asks for 2 CTAs per SM. Interleaved twice, generic (the default).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KILN_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu2.txt
for v in before after; do
  p=.gpu/python; [ $v = before ] && p=.gpu/python-before
  PYTHONPATH=$p python3 -c "
import kiln
ex = kiln.load('specs/kernelbench/level1/59_conv_standard_3D__asymmetric_input__square_kernel.kiln').m.specialize()
print('$v', [l for l in ex.source.splitlines() if '__launch_bounds__' in l][0][:80])"
done
ONLY=1/54,1/59,1/60,1/66,1/75,1/79,1/81,2/6,2/7,2/8,2/13,2/15,2/23,2/24,2/27,2/48,2/50,2/58,2/60,2/72,2/74,2/79,2/83,2/89,2/90,2/96
for round in 1 2; do for v in before after; do
  p=.gpu/python; [ $v = before ] && p=.gpu/python-before
  timeout 200 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln $p --no-compile --out $OUT/$v-$round --only $ONLY \
    > $OUT/$v-$round.log 2>&1; echo "$v $round rc=$?"; tail -2 $OUT/$v-$round.log | head -1
done; done
cd $OUT && tar czf ab.tar.gz before-* after-* *.log && rm -rf before-* after-* *.log
