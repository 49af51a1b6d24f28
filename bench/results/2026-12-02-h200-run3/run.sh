#!/usr/bin/env bash
# Session 37, run 5: rows over a dyn length skip the bound check on the register slots below
# their class's lowest length (RownormConfig::min_len, rownorm_rows' kDynMinLen). Correctness first
# (the dyn lengths case: 15 ops, every class boundary), then the len rows of bench/shapes_bench.py.
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
s=$SECONDS
timeout 150 .gpu/bin/kiln_test_gpu --duration=true -tc="*dyn lengths*" > $OUT/dyn_len.txt 2>&1
echo "== dyn lengths rc=$? in $((SECONDS-s)) s"; grep -E "ERROR|WRONG|FAIL|CRASH" $OUT/dyn_len.txt | head -8
grep -c "output .*: ok" $OUT/dyn_len.txt; tail -3 $OUT/dyn_len.txt
mkdir -p $OUT/bench
PYTHONPATH=.gpu/python timeout 150 python3 bench/shapes_bench.py --only len --out $OUT/bench 2>&1 | tail -24
