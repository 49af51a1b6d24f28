set -x
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
python3 .gpu/diag.py 2>&1 | tail -80
cat > /tmp/ncu.py <<'PY'
import sys, os, tempfile
sys.path.insert(0, ".gpu/python")
import torch, kiln
cache = tempfile.mkdtemp()
x = torch.rand(128, 4096, 4095, device="cuda")
for m in ("generic", "specialized"):
    op = kiln.load("specs/min_reduce.kiln", kiln.Options(cache_dir=cache, shapes=m))["min_reduce"]
    op(x); op(x); torch.cuda.synchronize()
PY
timeout 300 ncu --kernel-name regex:min_reduce --launch-skip 0 --launch-count 8 --metrics gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,lts__t_sectors_srcunit_tex_op_read.sum python3 /tmp/ncu.py 2>&1 | grep -v "^==PROF==" | tail -80
