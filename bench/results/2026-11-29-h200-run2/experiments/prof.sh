#!/bin/bash
# Nsight Compute of the two split-norm kernels (blocks of 512, two waves: the rule before) and of
# cuDNN's batch norm, at the three short-image shapes.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export KILN_CACHE_DIR=/tmp/kiln-cache
K=.gpu/bin/kiln
M=gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
for shape in "128 128 28 28" "128 256 14 14" "128 512 7 7"; do
  set -- $shape
  echo "== kiln N=$1 C=$2 H=$3 W=$4"
  ncu --kernel-name regex:rownorm --launch-count 4 --metrics $M $K bench .gpu/norm4d.kiln --op batchnorm_train -D N=$1 -D C=$2 -D H=$3 -D W=$4 --iters 2 2>&1 | grep -E "rownorm|duration|registers|occupancy|warps_active|bytes|hit_rate" | head -40
  echo "== cudnn"
  cat > /tmp/bn.py <<PY
import torch, torch.nn.functional as F
x = torch.randn($1, $2, $3, $4, device="cuda"); g = torch.rand($2, device="cuda"); b = torch.rand($2, device="cuda")
for _ in range(3): F.batch_norm(x, None, None, g, b, training=True, eps=1e-5)
torch.cuda.synchronize()
PY
  ncu --launch-skip 0 --launch-count 6 --metrics gpu__time_duration.sum python3 /tmp/bn.py 2>&1 | grep -E "^  [a-zA-Z_].*\(|duration" | head -20
done
