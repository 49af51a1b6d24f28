"""One call each of min over the middle axis, specialized then generic, at the seed's shape and at
rows of 1001, through the kiln package (for Nsight Compute). KILN_TEMPLATE_PATH picks the
template variant."""
import sys
import tempfile

import torch

import kiln

cache = tempfile.mkdtemp(prefix="kiln-prof-")
for shape in ((512, 1024, 1001), (128, 4096, 4095)):
    x = torch.rand(*shape, device="cuda")
    for shapes in ("specialized", "generic"):
        op = kiln.load("specs/min_reduce.kiln", kiln.Options(cache_dir=cache, shapes=shapes)).min_reduce
        y = op(x)
        torch.cuda.synchronize()
        print(shape, shapes, "correct" if torch.equal(y, x.amin(dim=1)) else "WRONG", file=sys.stderr)
    del x
