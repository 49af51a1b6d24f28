#!/usr/bin/env python3
"""Where a kiln op call's host time goes (issue 19): each PyTorch accessor the package's fast path
reads, the package's Python with the extension call replaced by a no-op, and the extension call
alone, on 64x64 f32 relu(a + b). Medians of 15 batches of 20000 (accessors) or 2000 (calls).

    PYTHONPATH=.gpu/python python3 bench/results/2026-12-04-h200-run12/call_breakdown.py
"""
import os
import statistics
import sys
import time

import torch

import kiln
from kiln import _tensors

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def per_call_us(fn, calls=2000, repeats=15, sync=True):
    for _ in range(200):
        fn()
    samples = []
    for _ in range(repeats):
        if sync:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        if sync:
            torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples)


a = torch.randn(64, 64, device="cuda")
b = torch.randn(64, device="cuda")
y = torch.empty(64, 64, device="cuda")
rows = {}
loop = per_call_us(lambda: None, 20000, sync=False)
rows["empty lambda (subtracted below)"] = loop
acc = {
    "a.is_cuda": lambda: a.is_cuda,
    "a.requires_grad": lambda: a.requires_grad,
    "a.is_contiguous()": lambda: a.is_contiguous(),
    "a.dtype": lambda: a.dtype,
    "a.data_ptr()": lambda: a.data_ptr(),
    "a.shape": lambda: a.shape,
    "a.get_device()": lambda: a.get_device(),
    "a.device": lambda: a.device,
    "a.stride()": lambda: a.stride(),
    "torch.is_grad_enabled()": lambda: torch.is_grad_enabled(),
    "torch._C._cuda_getDevice()": lambda: torch._C._cuda_getDevice(),
    "torch._C._cuda_getCurrentRawStream(0)": lambda: torch._C._cuda_getCurrentRawStream(0),
    "torch.empty((64, 64), dtype=f32, device=a.device)": lambda: torch.empty((64, 64), dtype=torch.float32, device=a.device),
    "torch.empty_like(a)": lambda: torch.empty_like(a),
}
for name, fn in acc.items():
    rows[name] = per_call_us(fn, 20000, sync=False) - loop

prog = kiln.load(os.path.join(ROOT, "specs", "elementwise.kiln"))
op = prog.relu_add
ref = torch.relu(a + b)
y.fill_(float("nan"))
op(a, b, out=y)
torch.cuda.synchronize()
assert torch.equal(y, ref), "kiln out= wrong"
rows["kiln op(a, b, out=y)"] = per_call_us(lambda: op(a, b, out=y))
rows["kiln op(a, b)"] = per_call_us(lambda: op(a, b))
items = [(t.data_ptr(), _tensors.CODES["f32"], t.shape) for t in (a, b, y)]
stream = torch.cuda.current_stream().cuda_stream
rows["extension call alone"] = per_call_us(lambda: op._impl.call(stream, items))


class NoOp:
    """op._impl with call() doing nothing: the package's Python alone."""

    def __init__(self, impl):
        self.impl = impl

    def call(self, *args):
        pass

    def arguments_for(self, items):
        return self.impl.arguments_for(items)


real = op._impl
op._impl = NoOp(real)
rows["package Python alone, out= (extension call a no-op)"] = per_call_us(lambda: op(a, b, out=y), sync=False)
rows["package Python alone, allocating"] = per_call_us(lambda: op(a, b), sync=False)
op._impl = real
rows["nanobind: op._impl.name() (a bound method, no work)"] = per_call_us(lambda: real.name(), 20000, sync=False) - loop

w = max(len(k) for k in rows)
print(f"{'what':<{w}} | us per call")
for k, v in rows.items():
    print(f"{k:<{w}} | {v:7.3f}")
