"""kiln: a kernel generator with JIT compilation, from Python.

    import kiln, torch
    prog = kiln.load("specs/elementwise.kiln")        # or kiln.loads(text, name="inline")
    y = prog.relu_add(a, b)                           # allocates and returns the outputs
    prog.relu_add(a, b, out=y)                        # or writes into given ones
    ex = prog.relu_add.specialize(B=1024, N=512)      # ex.plan, ex.source, ex.ptx, ex.kernels

Tensors are anything with ``__cuda_array_interface__`` or ``__dlpack__`` on a CUDA device
(PyTorch, CuPy, JAX...). See docs/python.md.
"""

from .errors import (ArgumentError, CompileError, CudaError, Error, InternalError, IoError, SpecError,
                     UnsupportedError)
from . import _kiln
from ._api import Executable, Op, Options, Program, load, loads, reset, stats

__version__ = _kiln.__version__

__all__ = [
    "ArgumentError", "CompileError", "CudaError", "Error", "Executable", "InternalError", "IoError", "Op",
    "Options", "Program", "SpecError", "UnsupportedError", "load", "loads", "reset", "stats",
]
