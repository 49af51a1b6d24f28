#!/bin/bash
# call B (built at the working tree's commit): issue 22's rows, an A/B of the reduce_outer split
# against the previous package, the Python attention tests, then every covered spec.
R=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/bench $OUT/old
timeout 330 python bench/bench.py --kiln .gpu/python --only "attention,relu(a+b),sigmoid,gelu,over axis,argmax,argmin,16x64x256x256,layernorm,rmsnorm,softmax" --out $OUT/bench 2>&1 | grep "^|" 
timeout 60 python bench/bench.py --kiln .gpu/python_old --only "over axis 0, 512,over axis 1, 512" --no-compile --no-ceilings --out $OUT/old 2>&1 | grep "^|"
(cd python/tests && PYTHONPATH=$R/.gpu/python timeout 100 python -m pytest -q test_attention.py 2>&1 | tail -2)
timeout 280 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*" > $OUT/every_spec.txt 2>&1; echo "every-spec rc $?"; tail -4 $OUT/every_spec.txt
