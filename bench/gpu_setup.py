"""The GPU modules a side benchmark needs (shapes_bench.py, dyn_scenario.py), or a clear exit."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def gpu_modules(script, kiln_dir=""):
    """(torch, torch.nn.functional, triton.testing.do_bench, kiln) with a CUDA GPU; the kiln package
    from `kiln_dir`, default .gpu/python (scripts/gpu_build.sh). Exits naming `script` otherwise."""
    try:
        import torch
        import torch.nn.functional as F
        from triton.testing import do_bench
    except ImportError as e:
        sys.exit(f"{script}: {e}; it needs PyTorch with CUDA and Triton: run it on the GPU machine")
    if not torch.cuda.is_available():
        sys.exit(f"{script}: PyTorch sees no CUDA GPU; run it on the GPU machine")
    sys.path.insert(0, os.path.abspath(kiln_dir or os.path.join(ROOT, ".gpu", "python")))
    import kiln
    return torch, F, do_bench, kiln
