#!/usr/bin/env python3
"""Host time per call from Python (issue 19): a small relu(a + b) through the kiln package beside
PyTorch eager (a bare torch.add(out=) too), a Triton kernel and CuPy's ElementwiseKernel and
RawKernel, on the same tensors. One row times the extension's call alone, on arguments prepared
once: the C++ side (cache hit, checks, cuLaunchKernel) without the package's Python. The op runs
under the default shapes="generic" (B and N are kernel arguments, the grid computed per launch)
and again under shapes="specialized" (every dim a constant), so the two host paths sit side by side.

The tensors are tiny (64 x 64 f32), so a call's time is its host path: argument handling, the
cache lookup and the launch. Each row is the median over `--repeats` batches of `--calls` calls
(time.perf_counter around the batch, the stream synchronized before and after), after a warm-up
that compiles and fills the caches, and 2 s of launches first so that the GPU runs at its
clocks. Every result is checked against PyTorch first.

    PYTHONPATH=.gpu/python python3 bench/launch_overhead.py [--calls 2000] [--repeats 15]
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def warm(fn, seconds):
    """Calls fn for `seconds`: the caches fill and the GPU leaves its idle clocks (a row measured
    while it ramps up times the GPU, not the host: one batch of tiny kernels can then take 20 µs
    each)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(100):
            fn()
        torch.cuda.synchronize()


def per_call_us(fn, calls, repeats):
    warm(fn, 0.2)
    samples = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--out", default="")
    args = ap.parse_args()

    a = torch.randn(64, 64, device="cuda")
    b = torch.randn(64, device="cuda")
    y = torch.empty(64, 64, device="cuda")
    ref = torch.relu(a + b)

    prog = kiln.load(os.path.join(ROOT, "specs", "elementwise.kiln"))
    op = prog.relu_add
    ex = op.specialize(B=64, N=64)
    rows = {}

    def check(name, got):
        torch.cuda.synchronize()
        if not torch.equal(torch.as_tensor(got, device="cuda"), ref):
            sys.exit(f"launch_overhead: {name} computed a wrong result")

    check("kiln op", op(a, b))
    warm(lambda: torch.add(a, b, out=y), 2.0)
    rows["kiln op(a, b) (allocates y)"] = per_call_us(lambda: op(a, b), args.calls, args.repeats)
    y.fill_(float("nan"))
    op(a, b, out=y)
    check("kiln out=", y)
    rows["kiln op(a, b, out=y)"] = per_call_us(lambda: op(a, b, out=y), args.calls, args.repeats)
    # stream= takes the general path ([Note: the Python fast path] in python/kiln/_api.py): every
    # tensor's device checked against the current one, the stream read from the argument.
    current = torch.cuda.current_stream()
    y.fill_(float("nan"))
    op(a, b, out=y, stream=current)
    check("kiln out= stream=", y)
    rows["kiln op(a, b, out=y, stream=s) (the general path)"] = per_call_us(lambda: op(a, b, out=y, stream=current),
                                                                          args.calls, args.repeats)
    y.fill_(float("nan"))
    ex(a, b, y)
    check("kiln Executable", y)
    rows["kiln Executable(a, b, y)"] = per_call_us(lambda: ex(a, b, y), args.calls, args.repeats)
    codes = getattr(kiln._kiln, "DTYPE_CODES", None)   # (kiln before 2026-11-26's run 19 had none: A/B runs)
    if codes is not None:
        items = [(t.data_ptr(), codes["f32"], t.shape) for t in (a, b, y)]
        stream = torch.cuda.current_stream().cuda_stream
        y.fill_(float("nan"))
        op._impl.call(stream, items)
        check("kiln extension call", y)
        rows["kiln extension call alone (arguments prepared once)"] = per_call_us(lambda: op._impl.call(stream, items),
                                                                                 args.calls, args.repeats)
        # The same op with every dim baked in (the rows above run the default, shapes="generic",
        # whose kernel takes B and N as arguments and whose launch computes its grid from them).
        op_s = kiln.load(os.path.join(ROOT, "specs", "elementwise.kiln"), kiln.Options(shapes="specialized")).relu_add
        y.fill_(float("nan"))
        op_s(a, b, out=y)
        check("kiln specialized out=", y)
        rows["kiln op(a, b, out=y), shapes=specialized"] = per_call_us(lambda: op_s(a, b, out=y), args.calls,
                                                                      args.repeats)
        y.fill_(float("nan"))
        op_s._impl.call(stream, items)
        check("kiln specialized extension call", y)
        rows["kiln extension call alone, shapes=specialized"] = per_call_us(lambda: op_s._impl.call(stream, items),
                                                                           args.calls, args.repeats)
    check("torch", torch.relu(a + b))
    rows["PyTorch eager torch.relu(a + b) (two kernels)"] = per_call_us(lambda: torch.relu(a + b), args.calls,
                                                                        args.repeats)
    rows["PyTorch eager torch.add(a, b) (allocates)"] = per_call_us(lambda: torch.add(a, b), args.calls, args.repeats)
    rows["PyTorch eager torch.add(a, b, out=y)"] = per_call_us(lambda: torch.add(a, b, out=y), args.calls, args.repeats)
    rows["PyTorch torch.empty((64, 64), device='cuda') alone"] = per_call_us(
        lambda: torch.empty((64, 64), device="cuda"), args.calls, args.repeats)

    try:
        import triton
        import triton.language as tl

        @triton.jit
        def relu_add_kernel(a_ptr, b_ptr, y_ptr, n, cols, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs % cols, mask=mask)
            tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)

        def triton_call():
            relu_add_kernel[(4,)](a, b, y, a.numel(), 64, BLOCK=1024)

        y.fill_(float("nan"))
        triton_call()
        check("Triton", y)
        rows[f"Triton {triton.__version__} kernel launch"] = per_call_us(triton_call, args.calls, args.repeats)
    except ImportError:
        print("launch_overhead: no Triton here", file=sys.stderr)

    try:
        import cupy

        kernel = cupy.ElementwiseKernel("float32 a, float32 b", "float32 y", "y = max(a + b, 0.0f)", "relu_add_cp")
        ca, cb, cy = cupy.asarray(a), cupy.asarray(b), cupy.asarray(y)
        kernel(ca, cb, cy)
        check("CuPy", cy)
        rows[f"CuPy {cupy.__version__} ElementwiseKernel(a, b, y)"] = per_call_us(lambda: kernel(ca, cb, cy), args.calls,
                                                                                  args.repeats)
        raw = cupy.RawKernel(r'''
extern "C" __global__ void relu_add_raw(const float* a, const float* b, float* y, int n, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(a[i] + b[i % cols], 0.0f);
}''', "relu_add_raw")
        cy.fill(float("nan"))
        raw((16,), (256,), (ca, cb, cy, cupy.int32(4096), cupy.int32(64)))
        check("CuPy RawKernel", cy)
        rows[f"CuPy {cupy.__version__} RawKernel(a, b, y)"] = per_call_us(
            lambda: raw((16,), (256,), (ca, cb, cy, cupy.int32(4096), cupy.int32(64))), args.calls, args.repeats)
        cy.fill(float("nan"))
        prog.relu_add(ca, cb, out=cy)
        check("kiln on CuPy", cy)
        rows["kiln op on CuPy arrays, out=y"] = per_call_us(lambda: op(ca, cb, out=cy), args.calls, args.repeats)
    except ImportError:
        print("launch_overhead: no CuPy here", file=sys.stderr)

    model_rows = compiled_model(prog)

    print(f"{torch.cuda.get_device_name()}, Python {sys.version.split()[0]}, PyTorch {torch.__version__}, "
          f"kiln {kiln.__version__}: host µs per call, median of {args.repeats} batches of {args.calls}")
    print("| call | µs per call |\n|---|---|")
    for name, us in rows.items():
        print(f"| {name} | {us:.2f} |")
    print("\nA model with a kiln operator (kiln.torch.library): relu_add(a, b) * 2 + 1 on 4096 x 4096 f32, "
          "eager against torch.compile(fullgraph=True); device ms, median of 50 after warm-up")
    print("| model | ms | max abs difference to eager |\n|---|---|---|")
    for name, (ms, diff) in model_rows.items():
        print(f"| {name} | {ms:.4f} | {diff:.3g} |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"per_call_us": rows, "model_ms": {k: v[0] for k, v in model_rows.items()}}, f, indent=1)
        chart(rows, os.path.splitext(args.out)[0] + ".png", torch.cuda.get_device_name())


def chart(rows, path, gpu):
    """A bar per call (µs, lower is better), where matplotlib is installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:  # noqa: BLE001
        return
    names = list(rows)
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(names) + 1))
    ax.barh(range(len(names)), [rows[n] for n in names],
            color=["tab:orange" if n.startswith("kiln") else "tab:blue" for n in names])
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("host µs per call (lower is better)")
    ax.set_title(f"Call overhead from Python, {gpu}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def compiled_model(prog):
    """The same small model eager and compiled, with the kiln op inside the graph: device time
    (CUDA events) and the compiled result's difference to eager."""
    import kiln.torch

    ops = kiln.torch.library(prog, namespace="kiln_bench")
    a = torch.randn(4096, 4096, device="cuda")
    b = torch.randn(4096, device="cuda")

    def model(a, b):
        return ops.relu_add(a, b) * 2 + 1

    compiled = torch.compile(model, fullgraph=True)
    eager_out = model(a, b)
    out = {}
    for name, fn in (("eager (kiln op, then PyTorch's mul and add)", model),
                     ("torch.compile fullgraph (kiln op, then one Inductor kernel)", compiled),
                     ("PyTorch only, eager: torch.relu(a + b) * 2 + 1", lambda a, b: torch.relu(a + b) * 2 + 1)):
        got = fn(a, b)
        diff = float((got - eager_out).abs().max())
        times = []
        for _ in range(10):
            fn(a, b)
        for _ in range(50):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(a, b)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        out[name] = (statistics.median(times), diff)
    return out


if __name__ == "__main__":
    main()
