#!/usr/bin/env bash
# Session 45, call 5: KernelBench L2 82 (and 65) ran 12% (one round 10%) slower with the plane index
# in call 4, though the pool kernel's SASS is the same before and after (checked offline): the
# per-kernel times of both packages, interleaved, two rounds.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KILN_CACHE_DIR=$(mktemp -d)
for round in 1 2; do for v in before after; do
  p=.gpu/python; [ $v = before ] && p=.gpu/python-before
  timeout 100 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln $p --no-compile --profile --only 2/82,2/65 \
    --out /tmp/kb-$v-$round > $OUT/prof-$v-$round.log 2>&1; echo "$v $round rc=$?"
  grep -h '^{' $OUT/prof-$v-$round.log | python3 -c "
import sys, json
for l in sys.stdin:
    r = json.loads(l); print('$v $round', r['problem'][:6], round(r['kiln_ms'], 3), [(k[0][-22:], k[1]) for k in r.get('kiln_kernels') or []])"
done; done
