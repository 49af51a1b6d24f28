#!/bin/bash
# The second call of run 7 (the command as it was given to the device): the conv rows of
# bench/shapes_bench.py after the fix of its spec texts, then every covered spec against the
# float64 reference (every conv template's run() now takes the batch). Run from the repository root.
PYTHONPATH=.gpu/python timeout 300 python3 bench/shapes_bench.py --only conv --out $OUT/bench > $OUT/bench.log 2>&1; echo "bench rc=$?"; sed -n '/^| problem/,$p' $OUT/bench.log; tail -3 $OUT/bench.log; timeout 270 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*" > $OUT/covered.log 2>&1; echo "covered rc=$?"; tail -3 $OUT/covered.log
