"""One call each of min over the middle axis of 512x1024x1001, specialized then generic, through
the kiln package (for Nsight Compute: the kernels' times, DRAM throughput, registers, instructions)."""
import sys
import tempfile

import torch

import kiln

cache = tempfile.mkdtemp(prefix="kiln-prof-")
x = torch.rand(512, 1024, 1001, device="cuda")
for shapes in ("specialized", "generic"):
    op = kiln.load("specs/min_reduce.kiln", kiln.Options(cache_dir=cache, shapes=shapes)).min_reduce
    y = op(x)
    torch.cuda.synchronize()
    op(x, out=y)
    torch.cuda.synchronize()
    ok = torch.equal(y, x.amin(dim=1))
    print(shapes, "correct" if ok else "WRONG", file=sys.stderr)
