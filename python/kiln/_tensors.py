"""Tensors from any framework: what kiln reads from them, how it allocates outputs, which stream.

A tensor argument is a PyTorch tensor (read directly), an object with ``__cuda_array_interface__``
(CuPy, Numba, PyTorch) or one with ``__dlpack__`` (JAX, CuPy, PyTorch, ...). It must live on a CUDA
device; its dtype, rank and shape are checked by the runtime against the op's signature. A strided
(non-contiguous) PyTorch or CuPy tensor is copied to a contiguous one, with a warning the first
time; other frameworks' strided arrays are an ArgumentError. What the extension receives for a
tensor is (pointer, dtype code, shape).

The host reference (Op.reference) takes host arrays instead: CPU PyTorch tensors and NumPy arrays.
"""

import warnings

from . import _kiln
from .errors import ArgumentError

# __cuda_array_interface__ typestrs (little-endian) to kiln's dtype names. bf16 has no typestr.
_TYPESTR = {"<f4": "f32", "<f2": "f16", "<f8": "f64", "<i4": "i32", "<i8": "i64", "<u8": "u64", "|b1": "bool"}
_NUMPY = {name: typestr for typestr, name in _TYPESTR.items()}
_ITEMSIZE = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4, "i64": 8, "u64": 8, "bool": 1}
CODES = _kiln.DTYPE_CODES   # dtype name -> the code the extension takes
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13

_warned_strided = set()


class Tensor:
    """One tensor argument as kiln passes it: the object (kept alive), its device pointer, dtype
    name and shape, and the framework that made it (for allocating outputs and picking streams)."""

    __slots__ = ("obj", "ptr", "dtype", "shape", "framework", "device")

    def __init__(self, obj, ptr, dtype, shape, framework, device):
        self.obj, self.ptr, self.dtype, self.shape, self.framework, self.device = obj, ptr, dtype, shape, framework, device

    def arg(self):
        return (self.ptr, CODES[self.dtype], self.shape)


class _NotYet:
    """Stands for torch.Tensor until PyTorch is imported: nothing has this exact type."""


TorchTensor = _NotYet  # torch.Tensor, once a torch tensor has been seen (the calls' fast path tests type(x) is)
ONE_DEVICE = False     # PyTorch sees exactly one CUDA device, once a torch tensor has been seen (torch_fast)
_torch = None          # the torch module, then
_torch_dtypes = {}     # torch dtype -> kiln dtype name
_torch_codes = {}      # torch dtype -> dtype code
_kiln_to_torch = {}    # kiln dtype name -> torch dtype
_torch_raw_stream = None
_torch_current_device = None
_torch_empty_like = None
_torch_contiguous = None


def _init_torch():
    """Imports torch and builds what a call on torch tensors reads, once."""
    global _torch, _torch_dtypes, _torch_codes, _kiln_to_torch, _torch_raw_stream, _torch_current_device, TorchTensor
    global ONE_DEVICE, _torch_empty_like, _torch_contiguous
    if _torch is None:
        import torch

        _torch_dtypes = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
                         torch.int32: "i32", torch.int64: "i64", torch.uint64: "u64", torch.bool: "bool"}
        _torch_codes = {dtype: CODES[name] for dtype, name in _torch_dtypes.items()}
        _kiln_to_torch = {name: dtype for dtype, name in _torch_dtypes.items()}
        # The current stream's handle without building a torch.cuda.Stream object (a call's largest
        # host cost otherwise); the public path where this private function is missing.
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _torch_raw_stream = raw if raw is not None else (lambda index: torch.cuda.current_stream(index).cuda_stream)
        _torch_current_device = getattr(torch._C, "_cuda_getDevice", torch.cuda.current_device)
        ONE_DEVICE = torch.cuda.device_count() == 1   # a process's visible devices do not change
        _torch_empty_like, _torch_contiguous = torch.empty_like, torch.contiguous_format
        _kiln.set_torch(torch.Tensor, _torch_codes, torch.empty_like, torch.contiguous_format)   # Op.call_torch
        _torch = torch
        TorchTensor = torch.Tensor
    return _torch


def torch_dtype(name):
    """The torch dtype of a kiln dtype name."""
    _init_torch()
    return _kiln_to_torch[name]


def _torch_module(obj):
    if _torch is not None:
        return _torch if isinstance(obj, _torch.Tensor) else None
    if not type(obj).__module__.startswith("torch"):
        return None
    torch = _init_torch()
    return torch if isinstance(obj, torch.Tensor) else None


def _warn_strided(name, framework):
    if framework not in _warned_strided:
        _warned_strided.add(framework)
        warnings.warn(f"kiln: argument '{name}' is not contiguous; it is copied to a contiguous {framework} tensor "
                      "(this version of kiln's templates read row-major contiguous tensors only; warned once per "
                      "framework)", stacklevel=4)


def _contiguous_strides(shape, itemsize):
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


_NUMBERS = (bool, int, float)


def torch_fast(values, items):
    """The calls' fast path ([Note: the Python fast path] in python/kiln/_api.py): appends each
    value's argument to `items` while every value is a contiguous CUDA torch.Tensor (of that exact
    type) that needs no grad check, of a dtype kiln has, or a bool, int or float. Only where
    ONE_DEVICE holds, so every such tensor is on the one device, the current one. Returns False at
    the first value that is anything else; `items` then holds a part, and the caller starts over
    on the general path (arguments), which checks, converts or refuses it."""
    for v in values:
        if type(v) is TorchTensor:
            if not v.is_cuda or v.requires_grad or not v.is_contiguous():
                return False
            code = _torch_codes.get(v.dtype)
            if code is None:
                return False
            items.append((v.data_ptr(), code, v.shape))
        elif type(v) in _NUMBERS:
            items.append(v)
        else:
            return False
    return True


def torch_current_stream():
    """PyTorch's current stream on the one device (the fast path's; ONE_DEVICE)."""
    return _torch_raw_stream(0)


def torch_template(dtype, shape):
    """A tensor that torch_empty turns into a new contiguous output of `dtype` and `shape` on the one
    device (ONE_DEVICE): one element, expanded. torch.empty_like of it costs half of
    torch.empty(shape, dtype=, device=) on the host (run 12 of 2026-12-04: 1.9 against 4.0 us)."""
    return _torch.empty((), dtype=_kiln_to_torch[dtype], device="cuda:0").expand(shape)


def torch_empty(template):
    """A new contiguous tensor of `template`'s shape, dtype and device (torch_template)."""
    return _torch_empty_like(template, memory_format=_torch_contiguous)


def arguments(names, values, items, first=None, want=None):
    """Appends each value's argument to `items`: a tensor's (pointer, dtype code, shape), a number
    as itself. Returns the first tensor (`first` if given: the inputs' first, when these are the
    outputs), a torch.Tensor on the fast path, else a Tensor, or None. The fast path is a
    contiguous CUDA torch.Tensor (of that exact type) that needs no grad check; everything else
    goes through as_tensor's checks and conversions. PyTorch tensors must all be on one device:
    PyTorch's current one (kiln launches in the current context), or device `want` when the call
    names one (device_index)."""
    for name, v in zip(names, values):
        if type(v) is TorchTensor and v.is_cuda and not v.requires_grad and v.is_contiguous():
            code = _torch_codes.get(v.dtype)
            if code is not None:
                items.append((v.data_ptr(), code, v.shape))
                if first is None:
                    _check_device(v.get_device(), name, want)
                    first = v
                elif type(first) is TorchTensor and v.get_device() != first.get_device():
                    _different_devices(name, v.get_device(), first.get_device())
                continue
        if isinstance(v, (bool, int, float)):
            items.append(v)
            continue
        t = as_tensor(v, name)
        items.append(t.arg())
        if t.framework == "torch":
            if first is None:
                _check_device(t.device.index, name, want)
            elif _torch_index(first) not in (None, t.device.index):
                _different_devices(name, t.device.index, _torch_index(first))
        if first is None:
            first = t
    return first


def _torch_index(proto):
    """The CUDA device index of a PyTorch first tensor (a torch.Tensor or a Tensor); None for others."""
    if type(proto) is TorchTensor:
        return proto.get_device()
    if proto is not None and proto.framework == "torch":
        return proto.device.index
    return None


def _check_device(index, name, want):
    if want is None:
        current = _torch_current_device()
        if index != current:
            raise ArgumentError(f"argument '{name}' is on cuda:{index} but PyTorch's current device is cuda:{current}: "
                                f"kiln launches on the current device (call under `with torch.cuda.device({index}):`, "
                                f"or pass device={index})")
    elif index != want:
        raise ArgumentError(f"argument '{name}' is on cuda:{index} but the call names device={want}")


def device_index(device):
    """A call's device= as an index (None: the current device): an int, or an object with .index or
    .id (torch.device("cuda:N"), cupy.cuda.Device)."""
    if device is None:
        return None
    wanted = device if isinstance(device, int) else getattr(device, "index", getattr(device, "id", None))
    if not isinstance(wanted, int) or isinstance(wanted, bool) or wanted < 0:
        raise ArgumentError(f"device= must be a CUDA device index (an int, torch.device('cuda:N') or "
                            f"cupy.cuda.Device), not {device!r}")
    return wanted


def _different_devices(name, index, first):
    raise ArgumentError(f"argument '{name}' is on cuda:{index} and the first tensor argument on cuda:{first}: a call's "
                        "tensors must share one device")


def _framework(obj):
    """The framework that made `obj` ("cupy", "jax", ...), from its type's module. A JAX array is
    waited for here: kiln's stream does not wait for JAX's, so its values must exist first."""
    framework = type(obj).__module__.split(".")[0]
    if framework in ("jax", "jaxlib"):
        obj.block_until_ready()
        return "jax"
    return framework


def as_tensor(obj, name):
    """`obj` as a Tensor, or an ArgumentError naming the argument."""
    if type(obj) is KilnArray:
        return Tensor(obj, obj.ptr, obj.dtype, obj.shape, "kiln", obj.device)
    torch = _torch_module(obj)
    if torch is not None:
        if not obj.is_cuda:
            raise ArgumentError(f"argument '{name}' is a PyTorch tensor on {obj.device}; kiln runs on CUDA devices")
        if obj.requires_grad and torch.is_grad_enabled():
            raise ArgumentError(f"argument '{name}' requires grad, and kiln ops have no autograd formula: the gradient "
                                "would be dropped silently (call under torch.no_grad(), or pass .detach())")
        if not obj.is_contiguous():
            _warn_strided(name, "torch")
            obj = obj.contiguous()
        dtype = _torch_dtypes.get(obj.dtype)
        if dtype is None:
            raise ArgumentError(f"argument '{name}' has dtype {obj.dtype}, which kiln does not support")
        return Tensor(obj, obj.data_ptr(), dtype, tuple(obj.shape), "torch", obj.device)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        dtype = _TYPESTR.get(cai["typestr"])
        if dtype is None:
            raise ArgumentError(f"argument '{name}' has typestr {cai['typestr']!r}, which kiln does not support")
        shape = tuple(int(e) for e in cai["shape"])
        strides = cai.get("strides")
        framework = _framework(obj)
        if strides is not None and tuple(strides) != _contiguous_strides(shape, _ITEMSIZE[dtype]):
            if framework != "cupy":
                raise ArgumentError(f"argument '{name}' is not contiguous (strides {tuple(strides)} bytes); pass a "
                                    "contiguous array")
            _warn_strided(name, "cupy")
            import cupy

            return as_tensor(cupy.ascontiguousarray(obj), name)
        return Tensor(obj, int(cai["data"][0]), dtype, shape, framework, None)
    if hasattr(obj, "__dlpack__"):
        device_type, device_id = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (_DL_CUDA, 0)
        if device_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
            where = "on the CPU" if device_type in (_DL_CPU, _DL_CUDA_HOST) else f"on DLPack device type {device_type}"
            raise ArgumentError(f"argument '{name}' is {where}; kiln runs on CUDA devices")
        framework = _framework(obj)
        ptr, dtype, shape, strides, _, _ = _kiln.dlpack_info(obj)
        if dtype not in _ITEMSIZE:
            raise ArgumentError(f"argument '{name}' has dtype {dtype}, which kiln does not support")
        if tuple(strides) != tuple(s // _ITEMSIZE[dtype] for s in _contiguous_strides(shape, _ITEMSIZE[dtype])):
            raise ArgumentError(f"argument '{name}' is not contiguous (strides {tuple(strides)} elements)")
        return Tensor(obj, ptr, dtype, tuple(shape), framework, device_id)
    if hasattr(obj, "__array_interface__"):
        raise ArgumentError(f"argument '{name}' is a host (CPU) array; kiln runs on CUDA devices (pass a CuPy, "
                            "PyTorch or JAX array on the GPU)")
    raise ArgumentError(f"argument '{name}' is a {type(obj).__name__}, not a tensor (an object with "
                        "__cuda_array_interface__ or __dlpack__ on a CUDA device)")


def empty(proto, dtype, shape, name):
    """A new output tensor of `proto`'s framework and device (`proto` a torch.Tensor or a Tensor).
    For JAX, kiln's own device memory: finish() hands it to JAX once the op has written it."""
    if type(proto) is TorchTensor or proto.framework == "torch":
        return _torch.empty(shape, dtype=_kiln_to_torch[dtype], device=proto.device)
    if proto.framework == "jax":
        return KilnArray(dtype, shape)
    if proto.framework == "cupy":
        import cupy

        if dtype == "bf16":
            raise ArgumentError(f"output '{name}' is bf16, which CuPy has no dtype for: pass out=")
        np_dtype = {"f32": "float32", "f16": "float16", "f64": "float64", "i32": "int32", "i64": "int64",
                    "u64": "uint64", "bool": "bool"}[dtype]
        with cupy.cuda.Device(proto.obj.device.id):
            return cupy.empty(shape, dtype=np_dtype)
    raise ArgumentError(f"output '{name}': kiln allocates outputs for PyTorch, CuPy and JAX inputs; the inputs here "
                        f"come from '{proto.framework}', so pass out=")


class KilnArray:
    """A device array in kiln's own memory, for a framework kiln does not allocate through (JAX):
    a call writes it, then finish() hands it over through DLPack (__dlpack__ gives the capsule,
    once)."""

    __slots__ = ("capsule", "ptr", "device", "dtype", "shape")

    def __init__(self, dtype, shape):
        self.capsule, self.ptr, self.device = _kiln.device_empty(list(shape), CODES[dtype])
        self.dtype, self.shape = dtype, tuple(shape)

    def __dlpack__(self, stream=None, **_):
        return self.capsule

    def __dlpack_device__(self):
        return (_DL_CUDA, self.device)


def finish(proto, outs):
    """The outputs as the caller gets them: for JAX inputs, kiln's arrays become JAX arrays
    (through DLPack, no copy) after the launch has completed; others as they are."""
    if type(proto) is TorchTensor or proto.framework != "jax":
        return outs
    import jax.dlpack

    _kiln.synchronize()   # JAX's streams do not wait for kiln's
    return [jax.dlpack.from_dlpack(o) for o in outs]


def as_host_tensor(obj, name):
    """A host (CPU) array for the reference: a CPU PyTorch tensor or a NumPy array, contiguous
    (copied when not)."""
    torch = _torch_module(obj)
    if torch is not None:
        if obj.is_cuda:
            raise ArgumentError(f"argument '{name}' is on {obj.device}; the reference takes host (CPU) tensors "
                                "(pass .cpu())")
        if obj.requires_grad:
            obj = obj.detach()
        if not obj.is_contiguous():
            obj = obj.contiguous()
        dtype = _torch_dtypes.get(obj.dtype)
        if dtype is None:
            raise ArgumentError(f"argument '{name}' has dtype {obj.dtype}, which kiln does not support")
        return Tensor(obj, obj.data_ptr(), dtype, tuple(obj.shape), "torch", obj.device)
    if hasattr(obj, "__array_interface__"):
        import numpy

        obj = numpy.ascontiguousarray(obj)
        dtype = _TYPESTR.get(obj.__array_interface__["typestr"])
        if dtype is None:
            raise ArgumentError(f"argument '{name}' has dtype {obj.dtype}, which kiln does not support")
        return Tensor(obj, obj.__array_interface__["data"][0], dtype, tuple(obj.shape), "numpy", None)
    raise ArgumentError(f"argument '{name}' is a {type(obj).__name__}, not a host array (a CPU PyTorch tensor or a "
                        "NumPy array)")


def host_arguments(names, values, items, outputs_at):
    """Appends each host value's argument to `items` (as arguments() does for device ones); the
    values from index `outputs_at` on are outputs, written in place, so they must be contiguous
    host arrays as given. Returns the first input tensor (a Tensor), or None."""
    first = None
    for i, (name, v) in enumerate(zip(names, values)):
        if isinstance(v, (bool, int, float)):
            items.append(v)
            continue
        t = as_host_tensor(v, name)
        if i >= outputs_at and t.obj is not v:
            raise ArgumentError(f"output '{name}' must be a contiguous host array (it is written in place)")
        if first is None and i < outputs_at:
            first = t
        items.append(t.arg())
    return first


def host_empty(proto, dtype, shape, name):
    """A new host output like `proto` (a Tensor from as_host_tensor; None: NumPy)."""
    if proto is not None and proto.framework == "torch":
        return _torch.empty(shape, dtype=_kiln_to_torch[dtype])
    import numpy

    if dtype == "bf16":
        raise ArgumentError(f"output '{name}' is bf16, which NumPy has no dtype for: pass CPU PyTorch tensors")
    return numpy.empty(shape, dtype=_NUMPY[dtype])


def stream_handle(stream, proto):
    """The CUstream of a call: `stream` (an int handle, or an object with __cuda_stream__, a
    PyTorch or a CuPy stream), else the inputs' framework's current stream, else 0 (the legacy
    default stream)."""
    if stream is None:
        if type(proto) is TorchTensor:
            return _torch_raw_stream(proto.get_device())
        if proto is not None and proto.framework == "torch":
            return _torch_raw_stream(proto.device.index)
        if proto is not None and proto.framework == "cupy":
            import cupy

            return cupy.cuda.get_current_stream().ptr
        return 0
    if isinstance(stream, int):
        return stream
    if hasattr(stream, "__cuda_stream__"):
        value = stream.__cuda_stream__()
        return int(value[1] if isinstance(value, tuple) else value)
    for attr in ("cuda_stream", "ptr"):   # torch.cuda.Stream, cupy.cuda.Stream
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise ArgumentError(f"stream= must be an int handle or a stream object (__cuda_stream__), not {type(stream).__name__}")
