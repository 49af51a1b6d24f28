"""kiln: a kernel generator with JIT compilation, from Python.

    import kiln, torch
    prog = kiln.load("specs/elementwise.kiln")        # or kiln.loads(text, name="inline")
    y = prog.relu_add(a, b)                           # allocates and returns the outputs
    prog.relu_add(a, b, out=y)                        # or writes into given ones
    ex = prog.relu_add.specialize(B=1024, N=512)      # ex.plan, ex.source, ex.ptx, ex.kernels

Tensors are anything with ``__cuda_array_interface__`` or ``__dlpack__`` on a CUDA device
(PyTorch, CuPy, JAX...). See docs/python.md.
"""

import atexit
import logging

from .errors import (ArgumentError, CompileError, CudaError, Error, InternalError, IoError, ShapeError, SpecError,
                     UnsupportedError)
from . import _kiln
from ._api import Executable, Op, Options, Program, arch, load, loads, preload, reset, stats


def device_count() -> int:
    """The CUDA devices this process sees (0 without a driver or a GPU)."""
    return _kiln.device_count()

__version__ = _kiln.__version__

# kiln's diagnostics (KILN_LOG's lines: warnings by default, info and debug on request) go to the
# `kiln` logger, which prints them to stderr as the C++ runtime does ("kiln: warning: ..."). To
# route them through your own logging configuration instead:
#     kiln.logger.handlers.clear(); kiln.logger.propagate = True
class _KilnLines(logging.Formatter):
    def format(self, record):
        return f"kiln: {record.levelname.lower()}: {record.getMessage()}"


logger = logging.getLogger("kiln")
if not logger.handlers:
    _stderr = logging.StreamHandler()
    _stderr.setFormatter(_KilnLines())
    logger.addHandler(_stderr)
    logger.propagate = False
if logger.level == logging.NOTSET:   # KILN_LOG / set_log_level decide what kiln emits
    logger.setLevel(logging.DEBUG)
_kiln.route_logs(logger.log)
atexit.register(_kiln.route_logs, None)


def set_log_level(name):
    """What kiln reports: "quiet", "warning" (the default, or KILN_LOG's), "info" or "debug"."""
    _kiln.set_log_level(name)

__all__ = [
    "ArgumentError", "CompileError", "CudaError", "Error", "Executable", "InternalError", "IoError", "Op",
    "Options", "Program", "ShapeError", "SpecError", "UnsupportedError", "arch", "device_count", "load", "loads", "logger", "preload",
    "reset", "set_log_level",
    "stats",
]
