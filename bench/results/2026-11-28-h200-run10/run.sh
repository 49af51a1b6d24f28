#!/usr/bin/env bash
# Session 28: vector runs for pools. Correctness first, then the KernelBench pool rows.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee $OUT/gpu.txt
K=.gpu/bin/kiln; KB=specs/kernelbench/level1
fails=0; runs=0
chk() { runs=$((runs+1)); if ! "$@" > /tmp/c.log 2>&1; then fails=$((fails+1)); echo "FAIL: $*"; tail -5 /tmp/c.log; else echo "ok: $* :: $(grep -c ' ok' /tmp/c.log) ok lines"; fi; { echo "== $*"; cat /tmp/c.log; } >> $OUT/checks.log; }
for L in 4096 4100 4097 40 65536; do
  chk $K run $KB/41_Max_Pooling_1D.kiln --check -D N=2 -D C=3 -D L=$L
  chk $K run $KB/44_Average_Pooling_1D.kiln --check -D N=2 -D C=3 -D L=$L
done
for W in 64 61 8 12 512; do chk $K run $KB/42_Max_Pooling_2D.kiln --check -D N=2 -D C=3 -D H=37 -D W=$W; done
for W in 24 23 16 128; do chk $K run $KB/43_Max_Pooling_3D.kiln --check -D N=1 -D C=2 -D D1=20 -D D2=21 -D D3=$W; done
for W in 44 48 50 88; do chk $K run $KB/45_Average_Pooling_2D.kiln --check -D N=1 -D C=3 -D H=33 -D W=$W; done
for W in 16 15 32 256; do chk $K run $KB/46_Average_Pooling_3D.kiln --check -D N=1 -D C=2 -D D=10 -D H=12 -D W=$W; done
chk $K run specs/pooling.kiln --check --small
chk $K run specs/pooling.kiln --check
echo "kiln run --check: $runs runs, $fails failed" | tee $OUT/check_summary.txt
PYTHONPATH=.gpu/python:python/tests timeout 200 python3 -m pytest -q python/tests/test_pooling.py 2>&1 | tail -5 | tee $OUT/pytest.txt
.gpu/bin/pool_check 2>&1 | tee $OUT/pool_check.txt
PYTHONPATH=.gpu/python timeout 200 python3 bench/bench.py --only kb41_max_pool1d,kb42_max_pool2d,kb43_max_pool3d,kb44_avg_pool1d,kb45_avg_pool2d,kb46_avg_pool3d --out $OUT/bench 2>&1 | tail -12
timeout 300 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*" > $OUT/every_spec.log 2>&1; echo "every-spec rc=$? ok=$(grep -c '^gpu-check .* ok ' $OUT/every_spec.log) fail=$(grep -c '^gpu-check .* FAIL' $OUT/every_spec.log)"; tail -3 $OUT/every_spec.log
