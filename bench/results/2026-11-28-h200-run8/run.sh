#!/usr/bin/env bash
# Session 27 GPU call: dims as values (issue 21's KernelBench 98), correctness first, then the
# KernelBench runner beside PyTorch, then every covered spec.
cd "$(dirname "$0")/.."
K=.gpu/bin/kiln
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/gpu.txt 2>&1
{
for args in "" "--small" "-D B=2 -D N=2" "-D B=3 -D N=100003" "-D B=1000 -D N=33"; do
  echo "== dim_values $args"; $K run specs/indices.kiln --op dim_values --check $args; echo "rc=$?"
done
for args in "-D B=1000 -D N=4097" "-D B=77 -D N=100" "-D B=1 -D N=65536"; do
  echo "== KernelBench L1 98 $args"; $K run specs/kernelbench/level1/98_KLDivLoss.kiln --op m --check $args; echo "rc=$?"
done
} > $OUT/run_check.log 2>&1
echo "run checks: $(grep -c '^rc=0' $OUT/run_check.log) of 8 rc=0"
grep -i -E "mismatch|fail|error" $OUT/run_check.log | head -5
timeout 240 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*" > $OUT/specs.log 2>&1; echo "every-spec rc=$?"
tail -4 $OUT/specs.log
grep -n "dim_values" $OUT/specs.log | head -3
PYTHONPATH=.gpu/python timeout 150 python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln .gpu/python --only 1/98 \
  --out $OUT/kb --cache-dir /tmp/kbcache > $OUT/kb.log 2>&1; echo "kernelbench rc=$?"
tail -8 $OUT/kb.log
