import sys, os, statistics, tempfile, json
sys.path.insert(0, ".gpu/python")
import torch, kiln, kiln.torch
from torch.profiler import profile, ProfilerActivity
cache = tempfile.mkdtemp()
path = "specs/min_reduce.kiln"
ops = {m: kiln.load(path, kiln.Options(cache_dir=cache, shapes=m))["min_reduce"] for m in ("generic", "specialized")}
B = int(os.environ.get("B", "128"))
x = torch.rand(B, 4096, 4095, device="cuda")
ref = torch.amin(x, dim=1)
outs = {}
for m, op in ops.items():
    y = torch.full_like(ref, float("nan")); op(x, out=y); torch.cuda.synchronize()
    print(m, "correct", bool(torch.equal(y, ref)))
    outs[m] = y
    ex = op.specialize(B=B)
    print(m, ex.kernels)
def events(fn, n=20):
    ts = []
    for _ in range(n):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts)
fns = {m: (lambda op=op, y=outs[m]: op(x, out=y)) for m, op in ops.items()}
fns["eager"] = lambda: torch.amin(x, dim=1)
for r in range(3):
    print("round", r, {m: round(events(f), 4) for m, f in fns.items()})
for m in ("generic", "specialized"):
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        for _ in range(5): fns[m]()
        torch.cuda.synchronize()
    print("==", m)
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12))
