#!/usr/bin/env bash
# Session 51, call 2. A/B in one call: `before` is the package of 0fad968 (this session's starting
# point: the pool template of session 46), `after` this build. pool_check's tiled and untiled
# variants three times over (42, 46 and a CNN pool, the rows pool_tile decides); the 26 KernelBench
# problems that pool, before then after; 41-46 again after then before; and 41-46 beside eager and
# torch.compile for README's table, with the copy ceiling of the same call.
cd "$(dirname "$0")/../../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python KILN_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu2.txt
for round in 1 2 3; do
  timeout 40 .gpu/bin/pool_check 42 46 "max_pool2d k3" > $OUT/pool_check-$round.txt 2>&1
  echo "pool_check round $round rc=$?"; grep -E "copy|4 rows, wide|vector run 4, wide" $OUT/pool_check-$round.txt
done
ONLY=1/41,1/42,1/43,1/44,1/45,1/46,2/10,2/11,2/35,2/38,2/3,2/43,2/46,2/50,2/55,2/65,2/6,2/72,2/74,2/78,2/82,2/85,2/89,2/8,2/96,2/98
POOLS=1/41,1/42,1/43,1/44,1/45,1/46
kb() {  # kb NAME PACKAGE PROBLEMS
  timeout 100 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln $2 --no-compile --out $OUT/$1 --only $3 > $OUT/$1.log 2>&1
  echo "$1 rc=$?"; tail -2 $OUT/$1.log | head -1
}
kb kb-before .gpu/python-before $ONLY
kb kb-after .gpu/python $ONLY
kb kb-pools-after .gpu/python $POOLS
kb kb-pools-before .gpu/python-before $POOLS
timeout 250 python3 bench/kernelbench.py --kernelbench .gpu/kb --out $OUT/kb-compile --only $POOLS > $OUT/kb-compile.log 2>&1
echo "kb compile rc=$?"; tail -2 $OUT/kb-compile.log | head -1
mkdir -p $OUT/logs && mv $OUT/*.log $OUT/logs/ && cd $OUT && tar czf kb-ab.tar.gz kb-before kb-after kb-pools-after kb-pools-before logs && rm -rf kb-before kb-after kb-pools-after kb-pools-before
