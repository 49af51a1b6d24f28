#!/usr/bin/env bash
# Session 46, call 2. `after`: reduce_outer_rows_v4 splits counted in threads (rows of 1001:
# 256-thread blocks, now split about 4 ways), the generic default freeing a pool's channels, and
# the Op call path keying extents computed from dyn dims by nothing. `before`: the package of run 1
# (blocks counted; pools' batch alone dyn; computed extents keyed by value). Correctness first,
# then A/B in one process each, interleaved.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
P=$OUT/parts; mkdir -p $P
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
T=.gpu/bin/kiln_test_gpu
run() { local name=$1; shift; ( start=$(date +%s); "$@" > $P/$name.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/$name.txt ) & }
export KILN_CACHE_DIR=$(mktemp -d)
run dyn $T -tc="gpu: dyn pooled axes*,gpu: dyn conv batches and pool planes*,gpu: extents summed*,gpu: dyn rows of reductions*,gpu: dyn lengths of reductions*,gpu: a dyn dim's values share*,gpu: an executable of a dyn op refuses*,gpu: an executable with dyn rows refuses*"
KILN_GPU_SPECS=min_reduce,reductions,pooling run specs $T -tc="gpu: every covered spec matches*"
run pytest env PYTHONPATH=.gpu/python:python/tests timeout 250 python3 -m pytest -q python/tests/test_pooling.py
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|passed|failed" $f | tail -3; echo "checks ok: $(grep -c '^gpu-check .* ok ' $f) failed: $(grep -c '^gpu-check .* FAIL' $f)"; done
grep -E "executables made|NVRTC compiles" $P/dyn.txt | head -40
ONLY=1/41,1/42,1/43,1/44,1/45,1/46,2/10,2/11,2/35,2/38,2/3,2/43,2/46,2/50,2/55,2/65,2/6,2/72,2/74,2/78,2/82,2/85,2/89,2/8,2/96,2/98,1/47,1/48,1/49,1/51,1/52,1/53
for v in before after; do
  p=.gpu/python; [ $v = before ] && p=.gpu/python-before
  timeout 100 python3 bench/shapes_bench.py --kiln $p --only memory --ops min_reduce --out $OUT/shapes-$v > $OUT/shapes-$v.log 2>&1
  echo "shapes $v rc=$?"; grep "^|" $OUT/shapes-$v.log
  timeout 150 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln $p --no-compile --out $OUT/kb-$v --only $ONLY > $OUT/kb-$v.log 2>&1
  echo "kb $v rc=$?"; tail -2 $OUT/kb-$v.log | head -1
done
cd $OUT && tar czf parts.tar.gz parts shapes-* kb-* && rm -rf parts shapes-* kb-*
