"""kiln from Python through its C interface (build/lib/libkiln_capi.so), on torch tensors."""
import ctypes
import os

import torch

_DTYPES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2, torch.float64: 3,
           torch.int32: 4, torch.int64: 5, torch.uint64: 6, torch.bool: 7}


class KilnError(RuntimeError):
    pass


class Kiln:
    def __init__(self, lib_path, arch="", cache_dir=None):
        self.lib = ctypes.CDLL(lib_path)
        self.err = ctypes.create_string_buffer(1 << 16)
        self.rt = ctypes.c_void_p()
        self._check(self.lib.kiln_runtime_new(arch.encode(), cache_dir.encode() if cache_dir else None,
                                              ctypes.byref(self.rt), self.err, len(self.err)))

    def _check(self, rc):
        if rc != 0:
            raise KilnError(self.err.value.decode(errors="replace"))

    def op(self, spec, name, precision="fp32", consts=None):
        handle = ctypes.c_void_p()
        self._check(self.lib.kiln_op_load(self.rt, spec.encode(), name.encode(), precision.encode(),
                                          ctypes.byref(handle), self.err, len(self.err)))
        for k, v in (consts or {}).items():
            fixed = ctypes.c_void_p()
            self._check(self.lib.kiln_op_with_const(handle, k.encode(), ctypes.c_double(v), ctypes.byref(fixed),
                                                    self.err, len(self.err)))
            handle = fixed
        return KilnOp(self, handle)

    def stats(self):
        out = (ctypes.c_uint64 * 4)()
        self.lib.kiln_runtime_stats(self.rt, out)
        return dict(memory_hits=out[0], disk_hits=out[1], compiles=out[2], launches=out[3])


class KilnOp:
    def __init__(self, kiln, handle):
        self.k = kiln
        self.h = handle

    def __call__(self, *args):
        n = len(args)
        is_tensor = (ctypes.c_int * n)()
        data = (ctypes.c_void_p * n)()
        dtype = (ctypes.c_int * n)()
        rank = (ctypes.c_int * n)()
        sf = (ctypes.c_double * n)()
        su = (ctypes.c_uint64 * n)()
        shapes = []
        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor):
                assert a.is_contiguous() and a.is_cuda
                is_tensor[i] = 1
                data[i] = a.data_ptr()
                dtype[i] = _DTYPES[a.dtype]
                rank[i] = a.dim()
                shapes += list(a.shape)
            elif isinstance(a, tuple):   # (value, "u64"|"f32"|...)
                value, t = a
                dtype[i] = {"f32": 0, "f64": 3, "i32": 4, "i64": 5, "u64": 6, "bool": 7}[t]
                if t in ("f32", "f64"):
                    sf[i] = value
                else:
                    su[i] = value & 0xFFFFFFFFFFFFFFFF
            else:
                raise TypeError(f"argument {i}: {type(a)}")
        shape_arr = (ctypes.c_int64 * max(1, len(shapes)))(*shapes)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self.k._check(self.k.lib.kiln_op_call(self.h, stream, n, is_tensor, data, dtype, rank, shape_arr, sf, su,
                                              self.k.err, len(self.k.err)))
