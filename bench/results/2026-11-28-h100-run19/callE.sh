#!/bin/bash
# call E: norms over strided rows as one kernel: the 4-D norm rows, the new spec ops checked, then every covered spec
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/bench
timeout 100 python bench/bench.py --kiln .gpu/python --only "16x64x256x256" --out $OUT/bench 2>&1 | grep "^|"
K=.gpu/bin/kiln
for op in rmsnorm_channels layernorm_mid_f16; do
  $K run specs/norms.kiln --op $op --check 2>&1 | grep -v "^\s*$"
  $K run specs/norms.kiln --op $op --check --small 2>&1 | grep -v "^\s*$"
done
$K run specs/norms.kiln --op layernorm_mid_f16 --check -D A=1 -D B=2 -D C=3 -D D=1001 -D E=333 2>&1
$K run specs/kernelbench/level1/36_RMSNorm_.kiln --check -D N=8 -D H=256 -D W=257 2>&1
$K gen specs/kernelbench/level1/36_RMSNorm_.kiln -D N=8 -D H=256 -D W=257 2>&1 | grep -E "^  line|^  [0-9] kiln"
timeout 200 .gpu/bin/kiln_test_gpu -tc="*every covered spec matches*" > $OUT/every_spec.txt 2>&1; echo "every-spec rc $?"; grep "summary" $OUT/every_spec.txt; grep -i "fail\|rmsnorm_channels\|layernorm_mid" $OUT/every_spec.txt | head -20
