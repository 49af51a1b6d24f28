#!/usr/bin/env bash
set -uo pipefail
K=.gpu/bin/kiln; fails=0; runs=0
for args in "" "--small" "-D W=8 -D H=5" "-D W=16 -D H=4" "-D W=24 -D H=7"; do
  runs=$((runs+1))
  if $K run .gpu/p64.kiln --check $args > /tmp/c.log 2>&1; then echo "ok: $args :: $(grep -c ' ok' /tmp/c.log) ok lines"; else fails=$((fails+1)); echo "FAIL: $args"; tail -8 /tmp/c.log; fi
  { echo "== $args"; cat /tmp/c.log; } >> $OUT/p64_checks.log
done
echo "p64/p16/pb3: $runs runs, $fails failed"
