#!/bin/bash
# call D: the strided scan's chunk rule (this build) against the package of 66df7ac, then every covered spec
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/new $OUT/old
timeout 120 python bench/bench.py --kiln .gpu/python --only "cumsum over axis" --out $OUT/new 2>&1 | grep "^|"
timeout 60 python bench/bench.py --kiln .gpu/python_old --only "cumsum over axis" --no-compile --no-ceilings --out $OUT/old 2>&1 | grep "^|"
timeout 300 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*" > $OUT/every_spec.txt 2>&1; echo "every-spec rc $?"; grep "summary" $OUT/every_spec.txt; tail -3 $OUT/every_spec.txt
