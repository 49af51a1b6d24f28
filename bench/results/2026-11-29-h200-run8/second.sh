#!/bin/bash
# Run 8, call 2: the same two pool rows after generic mode stopped making a pool's channels dyn
# (only its batch, N). Run from the repository root.
PYTHONPATH=.gpu/python timeout 300 python3 bench/shapes_bench.py --only memory --ops max_pool2d_relu,pool3d \
  --out $OUT/bench > $OUT/shapes_bench.log 2>&1
echo "bench rc=$?"
sed -n '/^| problem/,$p' $OUT/shapes_bench.log; tail -3 $OUT/shapes_bench.log
