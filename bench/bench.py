"""kiln against PyTorch eager and torch.compile, in one process, on one GPU.

Usage (on a machine with a GPU, PyTorch and Triton):
    python3 bench/bench.py [--quick] [--only NAME[,NAME]] [--precision P[,P]] [--out DIR]
                           [--kiln DIR] [--no-compile] [--no-ceilings]

kiln is the Python package (python/kiln): installed (`pip install .`), or the folder holding it
given as --kiln (default: the first of .gpu/python, build/python that exists).

For each problem: kiln's output is checked first (against a float64 computation
on the GPU); a wrong kernel is reported as wrong and not timed. Then kiln,
PyTorch eager and torch.compile are timed on the same inputs with device events
(triton.testing.do_bench: warm-up, then the median of many runs). Ceilings
measured in the same run: device-to-device copy bandwidth and an 8192^3 cuBLAS
matmul per precision. Results: JSON + markdown table (+ PNG chart when
matplotlib is there) under --out, rewritten after every row (a run cut short keeps
what it measured), and the table printed last.

The GEMM sweep (issue 18; `--only gemm` runs it alone, `--quick` a smaller set) adds a row per
case, named `matmul MxNxK <layout>` (layouts `a·b`, `a·bᵀ`, `aᵀ·b`, `aᵀ·bᵀ`: `aᵀ` means A is
stored [K, M] and read transposed), `matmul BxMxNxK a·b` when batched (`..., b shared` when B
has no batch dim: a linear layer over tokens; `--only shared` runs those), and `matmul Mx1xK a·b`
for a GEMV (B stored [K, 1]). Its precision is `tf32`, `3xTF32` or `fp32` (f32 operands;
`fp32` is kiln's default, fp32-accurate) or `bf16` / `f16` (fp32 accumulation, an output in the
input dtype). eager_ms is torch.matmul (cuBLAS) with TF32 allowed only on tf32 rows, so the
3xTF32 and fp32 rows meet cuBLAS fp32; triton_ms is the plain Triton matmul of
bench/triton_matmul.py on the same views (3xTF32 / fp32 rows: Triton's tf32x3). kiln's and
Triton's outputs are filled with NaN first and checked against a float64 product of the same
inputs; a wrong one is not timed. `--precision bf16,f16` (etc.) picks sweep rows by precision,
and `--only` by a piece of their name (`--only 8192x8192x8192`).

KernelBench level 1's pooling problems (41-46) and its 1-d, 3-d and transposed convolutions
(54, 57 at half its batch, 64, 67, 72, 75, 77, 79; the ops of specs/conv_nd.kiln) run at their own
shapes (issue 21; `--only KernelBench` runs them alone): the check is the first image in float64
against PyTorch's op of it; conv rows run fp32-accurate (cuDNN fp32) and tf32 (TF32 allowed).
"""
import argparse
import datetime
import json
import math
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy as np
    import torch
    import torch.nn.functional as F
    from triton.testing import do_bench

    from triton_matmul import best_config as triton_best_config, triton_matmul
except ImportError as e:   # reported by main(), after --help had its chance
    _MISSING = e
else:
    _MISSING = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEV = "cuda"
kiln_pkg = None   # the kiln package, imported by main() (--kiln says from where)


class Kiln:
    """The benchmark's way into kiln: the package, one runtime per cache folder. op() returns a
    callable taking the op's inputs then its outputs, as the rows' make() functions give them."""

    def __init__(self, cache_dir):
        self.options = kiln_pkg.Options(cache_dir=cache_dir)

    def op(self, spec, name, precision="fp32", consts=None):
        op = kiln_pkg.load(spec, self.options)[name]
        n, consts = len(op.inputs), dict(consts or {})

        def call(*args):
            op(*args[:n], out=tuple(args[n:]), precision=precision, **consts)

        return call

    def stats(self):
        return kiln_pkg.stats(self.options)


def fresh_kiln(cache_dir):
    """A Kiln whose runtime is new (empty memory cache, nothing loaded): its first call of an op
    reads the disk cache."""
    kiln_pkg.reset()
    return Kiln(cache_dir)


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def bench(fn, quick):
    fn()
    torch.cuda.synchronize()
    return do_bench(fn, warmup=10 if quick else 25, rep=60 if quick else 200, return_mode="median")


# ---------------------------------------------------------------- dropout's mask (docs/semantics.md)
M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85


def philox4x32_10(ctr, key):
    c = [x.astype(np.uint64) for x in ctr]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    mask = np.uint64(0xFFFFFFFF)
    for r in range(10):
        if r:
            k0 = (k0 + np.uint64(W0)) & mask
            k1 = (k1 + np.uint64(W1)) & mask
        p0 = np.uint64(M0) * c[0]
        p1 = np.uint64(M1) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & mask, p1 & mask, ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & mask,
             p0 & mask]
    return c


def dropout_keep(seed, flat_index, p):
    idx = flat_index.astype(np.uint64)
    q = idx >> np.uint64(2)
    words = philox4x32_10([q & np.uint64(0xFFFFFFFF), q >> np.uint64(32), np.zeros_like(q), np.zeros_like(q)],
                          (seed & 0xFFFFFFFF, seed >> 32))
    lane = (idx & np.uint64(3)).astype(np.int64)
    r = np.choose(lane, words)
    threshold = math.ceil(p * 16777216.0)
    return (r >> np.uint64(8)) >= np.uint64(threshold)


def dropout_rows(seed, rows, cols, p):
    """kiln's keep mask over whole rows `rows` (a CUDA index tensor) of a [*, cols] output, on DEV."""
    flat = (rows.cpu().numpy()[:, None] * cols + np.arange(cols)[None, :]).reshape(-1)
    return torch.from_numpy(dropout_keep(seed, flat, p).reshape(len(rows), cols)).to(DEV)


# ---------------------------------------------------------------- problems
def cumsum_excl(x):
    c = torch.cumsum(x.narrow(1, 0, x.size(1) - 1), dim=1)
    return torch.cat((torch.zeros_like(x.select(1, 0).unsqueeze(1)), c), dim=1)


class Problem:
    def __init__(self, name, spec, op, modes, make, eager, check, bytes_moved=0, flops=0, consts=None,
                 quick_ok=True, label=None, peers=None):
        self.__dict__.update(locals())
        del self.__dict__["self"]


def check_close(got, ref, tf32=False):
    """Norm-wise relative error and the element-wise allclose of the design (atol = rtol = 1e-4)."""
    got64, ref64 = got.double(), ref.double()
    nan_mismatch = bool((torch.isnan(got64) != torch.isnan(ref64)).any())
    diff = (got64 - ref64).nan_to_num(0)
    norm = float(diff.norm() / max(float(ref64.nan_to_num(0).norm()), 1e-300))
    if tf32:
        ok = norm < 5e-3 and not nan_mismatch
    else:
        ok = norm < 1e-5 and bool(torch.allclose(got64, ref64, atol=1e-4, rtol=1e-4, equal_nan=True))
    return ok and not nan_mismatch, norm


# matmul_square of specs/matmul.kiln with bf16 operands (that file also holds f32-only ops, such
# as one with precision="tf32", so it is not retyped whole).
MATMUL_BF16_SPEC = """op matmul_square {
  dims M = 4096, N = 4096, K = 4096
  in  a: bf16[M, K]
  in  b: bf16[K, N]
  out c = matmul(a, b)
}
"""


def temp_spec(name, text):
    path = os.path.join(tempfile.mkdtemp(prefix="kiln-bench-spec-"), name)
    with open(path, "w") as f:
        f.write(text)
    return path


def problems():
    ps = []

    def cumsum_make():
        x = torch.rand(32768, 32768, device=DEV)
        return (x,), [torch.empty_like(x)]

    def cumsum_check(args, outs, mode):
        x, = args
        ref = torch.zeros_like(x, dtype=torch.float64)
        ref[:, 1:] = torch.cumsum(x[:, :-1].double(), dim=1)
        return check_close(outs[0], ref)
    ps.append(Problem("cumsum_exclusive 32768x32768", "specs/cumsum_exclusive.kiln", "cumsum_exclusive", ["fp32"],
                      cumsum_make, cumsum_excl, cumsum_check, bytes_moved=2 * 32768 * 32768 * 4))

    for axis in (1, 2):
        def min_make(axis=axis):
            x = torch.rand(128, 4096, 4095, device=DEV)
            shape = (128, 4095) if axis == 1 else (128, 4096)
            return (x,), [torch.empty(shape, device=DEV)]

        def min_check(args, outs, mode, axis=axis):
            ref = torch.amin(args[0], dim=axis)
            return bool(torch.equal(outs[0], ref)), float((outs[0] - ref).abs().max())
        ps.append(Problem(f"min_reduce axis={axis} 128x4096x4095", "specs/min_reduce.kiln", "min_reduce", ["fp32"],
                          min_make, (lambda x, axis=axis: torch.min(x, dim=axis)[0]), min_check,
                          bytes_moved=128 * 4096 * 4095 * 4, consts={"axis": axis}))

    def conv_make():
        x = torch.rand(8, 64, 512, 1024, device=DEV)
        w = torch.randn(128, 64, 3, 3, device=DEV) * 0.05
        return (x, w), [torch.empty(8, 128, 510, 1022, device=DEV)]

    def conv_check(args, outs, mode):
        x, w = args
        ref = F.conv2d(x[:1].double(), w.double())   # first image: 1/8 of the output, in float64
        return check_close(outs[0][:1], ref, tf32=(mode == "tf32"))
    ps.append(Problem("conv2d_3x3 8x64x512x1024 -> 128", "specs/conv2d_3x3.kiln", "conv2d_3x3", ["fp32", "tf32"],
                      conv_make, lambda x, w: F.conv2d(x, w), conv_check,
                      flops=2 * 8 * 128 * 510 * 1022 * 64 * 9, quick_ok=False))

    # NHWC (channels-last), padding 1, bias + relu fused: kiln's NHWC conv on the TMA engine beside
    # cuDNN on a channels_last tensor (the permutes are views: x and y stay NHWC in memory).
    def nhwc_make():
        x = torch.rand(8, 512, 1024, 64, device=DEV)
        w = torch.randn(128, 64, 3, 3, device=DEV) * 0.05
        b = torch.randn(128, device=DEV)
        return (x, w, b), [torch.empty(8, 512, 1024, 128, device=DEV)]

    def nhwc_eager(x, w, b):
        return torch.relu(F.conv2d(x.permute(0, 3, 1, 2), w, b, padding=1)).permute(0, 2, 3, 1)

    def nhwc_check(args, outs, mode):
        x, w, b = args
        ref = nhwc_eager(x[:1].double(), w.double(), b.double())   # first image, in float64
        return check_close(outs[0][:1], ref, tf32=(mode == "tf32"))
    ps.append(Problem("conv2d_nhwc 3x3 pad 1 + bias + relu 8x512x1024x64 -> 128", "specs/conv.kiln",
                      "conv2d_nhwc_bias_relu", ["fp32", "tf32"], nhwc_make, nhwc_eager, nhwc_check,
                      flops=2 * 8 * 128 * 512 * 1024 * 64 * 9, quick_ok=False))

    seed = 0x1234_5678_9ABC_DEF0
    p = 0.2

    def mds_make():
        x = torch.rand(128, 16384, device=DEV)
        lin = torch.nn.Linear(16384, 16384).to(DEV)
        return (x, lin.weight.detach().contiguous(), lin.bias.detach().contiguous(), seed), \
            [torch.empty(128, 16384, device=DEV)]

    def mds_eager(x, w, b, s):
        return torch.softmax(F.dropout(F.linear(x, w, b), p, training=True), dim=1)

    def mds_check(args, outs, mode):
        x, w, b, _ = args
        rows = torch.tensor([0, 1, 63, 127], device=DEV)
        h = x[rows].double() @ w.double().t() + b.double()
        keep = dropout_rows(seed, rows, 16384, p)
        d = torch.where(keep, h / (1 - p), torch.zeros_like(h))
        ref = torch.softmax(d, dim=1)
        return check_close(outs[0][rows], ref, tf32=(mode == "tf32"))
    ps.append(Problem("linear+dropout+softmax 128x16384x16384", "specs/linear_dropout_softmax.kiln",
                      "linear_dropout_softmax", ["fp32", "tf32"], mds_make, mds_eager, mds_check,
                      flops=2 * 128 * 16384 * 16384, bytes_moved=16384 * 16384 * 4))

    # Dropout alone (elementwise, memory-bound once a Philox block serves four elements).
    def dropout_make():
        x = torch.rand(16384, 16384, device=DEV) - 0.5
        return (x, seed), [torch.empty_like(x)]

    def dropout_check(args, outs, mode):
        x = args[0]
        rows = torch.tensor([0, 1, 8191, 16383], device=DEV)
        keep = dropout_rows(seed, rows, 16384, 0.3)
        x64 = x[rows].double()
        return check_close(outs[0][rows], torch.where(keep, x64 / (1 - 0.3), torch.zeros_like(x64)) * 2.0)
    ps.append(Problem("dropout(x, 0.3) * 2 16384x16384", "specs/elementwise.kiln", "dropout_scale", ["fp32"],
                      dropout_make, lambda x, s: F.dropout(x, 0.3, training=True) * 2.0, dropout_check,
                      bytes_moved=2 * 16384 * 16384 * 4))

    def smallk_make():
        a = torch.rand(32768, 64, device=DEV)
        b = torch.rand(64, 32768, device=DEV)
        return (a, b), [torch.empty(32768, 32768, device=DEV)]

    def smallk_check(args, outs, mode):
        a, b = args
        rows = slice(0, 2048)
        ref = a[rows].double() @ b.double()
        return check_close(outs[0][rows], ref, tf32=(mode == "tf32"))
    ps.append(Problem("matmul_small_k 32768x64 . 64x32768", "specs/matmul_small_k.kiln", "matmul_small_k",
                      ["fp32", "tf32"], smallk_make, lambda a, b: a @ b, smallk_check,
                      flops=2 * 32768 * 32768 * 64, bytes_moved=32768 * 32768 * 4))
    # Contraction context rows: a square matmul (a row-major B: the sm_80 templates) and a linear
    # layer with bias and relu (W transposed, k contiguous: the sm_90a wgmma template), 4096^3.
    def square_make():
        a = torch.rand(4096, 4096, device=DEV)
        b = torch.rand(4096, 4096, device=DEV)
        return (a, b), [torch.empty(4096, 4096, device=DEV)]

    def square_check(args, outs, mode):
        a, b = args
        rows = slice(0, 256)
        return check_close(outs[0][rows], a[rows].double() @ b.double(), tf32=(mode == "tf32"))
    ps.append(Problem("matmul 4096^3 (a . b)", "specs/matmul.kiln", "matmul_square", ["fp32", "tf32"], square_make,
                      lambda a, b: a @ b, square_check, flops=2 * 4096**3, bytes_moved=3 * 4096 * 4096 * 4))

    # The issue's other context rows: 8192^3 in f32, and 4096^3 / 8192^3 with bf16 inputs (f32
    # accumulation, a bf16 output as PyTorch's a @ b; the f32 precision does not apply).
    def square_of(n, dtype):
        def make():
            a = torch.rand(n, n, device=DEV).to(dtype)
            b = torch.rand(n, n, device=DEV).to(dtype)
            return (a, b), [torch.empty(n, n, device=DEV, dtype=dtype)]

        def check(args, outs, mode):
            a, b = args
            rows = slice(0, 128)
            ref = a[rows].double() @ b.double()
            if dtype == torch.bfloat16:   # the output's own rounding (2^-9) dominates
                norm = float((outs[0][rows].double() - ref).norm() / ref.norm())
                return norm < 1e-2 and not bool(torch.isnan(outs[0][rows]).any()), norm
            return check_close(outs[0][rows], ref, tf32=(mode == "tf32"))
        return make, check
    make8k, check8k = square_of(8192, torch.float32)
    ps.append(Problem("matmul 8192^3 (a . b)", "specs/matmul.kiln", "matmul_square", ["fp32", "tf32"], make8k,
                      lambda a, b: a @ b, check8k, flops=2 * 8192**3, bytes_moved=3 * 8192 * 8192 * 4,
                      quick_ok=False))
    bf16_spec = temp_spec("matmul_bf16.kiln", MATMUL_BF16_SPEC)
    for n in (4096, 8192):
        make, check = square_of(n, torch.bfloat16)
        ps.append(Problem(f"matmul {n}^3 (a . b) bf16", bf16_spec, "matmul_square", ["fp32"], make,
                          lambda a, b: a @ b, check, flops=2 * n**3, bytes_moved=3 * n * n * 2,
                          quick_ok=n == 4096, label="bf16"))

    def lin4k_make():
        x = torch.rand(4096, 4096, device=DEV)
        w = torch.rand(4096, 4096, device=DEV) - 0.5
        bias = torch.rand(4096, device=DEV) - 0.5
        return (x, w, bias), [torch.empty(4096, 4096, device=DEV)]

    def lin4k_check(args, outs, mode):
        x, w, bias = args
        rows = slice(0, 256)
        ref = torch.relu(x[rows].double() @ w.double().t() + bias.double())
        return check_close(outs[0][rows], ref, tf32=True)
    ps.append(Problem("relu(x . w^T + b) 4096^3 (tf32 on the op)", "specs/matmul.kiln", "gemm_bias_relu", ["tf32"],
                      lin4k_make, lambda x, w, bias: torch.relu(F.linear(x, w, bias)), lin4k_check,
                      flops=2 * 4096**3, bytes_moved=3 * 4096 * 4096 * 4))

    def lin4k_dropout_make():
        (x, w, bias), outs = lin4k_make()
        return (x, w, bias, seed), outs

    def lin4k_dropout_check(args, outs, mode):
        x, w, bias, _ = args
        rows = torch.arange(0, 256, device=DEV)
        h = torch.relu(x[rows].double() @ w.double().t() + bias.double())
        keep = dropout_rows(seed, rows, 4096, 0.1)
        return check_close(outs[0][rows], torch.where(keep, h / (1 - 0.1), torch.zeros_like(h)), tf32=True)
    ps.append(Problem("dropout(relu(x . w^T + b)) 4096^3 (tf32 on the op)", "specs/matmul.kiln", "linear_relu_dropout",
                      ["tf32"], lin4k_dropout_make,
                      lambda x, w, bias, s: F.dropout(torch.relu(F.linear(x, w, bias)), 0.1, training=True),
                      lin4k_dropout_check, flops=2 * 4096**3, bytes_moved=3 * 4096 * 4096 * 4))
    # Memory-bound context rows on tensors of 1 GiB or more (issue 4): fractions of the copy ceiling.
    def one_gib(rows=32768, cols=8192, out_shape=None, view=None, dtype=torch.float32):
        def make():
            x = torch.rand(rows, cols, device=DEV)
            return (x.view(view) if view else x,), [torch.empty(out_shape or (rows, cols), device=DEV, dtype=dtype)]
        return make

    def relu_add_make():
        a = torch.rand(16384, 16384, device=DEV) - 0.5
        b = torch.rand(16384, device=DEV) - 0.5
        return (a, b), [torch.empty_like(a)]
    ps.append(Problem("relu_add 16384x16384 (+row bias)", "specs/elementwise.kiln", "relu_add", ["fp32"],
                      relu_add_make, lambda a, b: torch.relu(a + b),
                      lambda args, outs, mode: check_close(outs[0], torch.relu(args[0].double() + args[1].double())),
                      bytes_moved=2 * 16384 * 16384 * 4 + 16384 * 4))
    ps.append(Problem("softmax 32768x8192 (last axis)", "specs/norms.kiln", "softmax", ["fp32"], one_gib(),
                      lambda x: torch.softmax(x, dim=-1),
                      lambda args, outs, mode: check_close(outs[0], torch.softmax(args[0].double(), dim=-1)),
                      bytes_moved=2 * 32768 * 8192 * 4))

    def softmax_dropout_make():
        x = torch.rand(32768, 8192, device=DEV)
        return (x, seed), [torch.empty_like(x)]

    def softmax_dropout_check(args, outs, mode):
        x = args[0]
        rows = torch.tensor([0, 1, 16383, 32767], device=DEV)
        keep = dropout_rows(seed, rows, 8192, 0.1)
        sm = torch.softmax(x[rows].double(), dim=-1)
        return check_close(outs[0][rows], torch.where(keep, sm / (1 - 0.1), torch.zeros_like(sm)))
    ps.append(Problem("dropout(softmax(x), 0.1) 32768x8192", "specs/norms.kiln", "softmax_dropout", ["fp32"],
                      softmax_dropout_make,
                      lambda x, s: F.dropout(torch.softmax(x, dim=-1), 0.1, training=True), softmax_dropout_check,
                      bytes_moved=2 * 32768 * 8192 * 4))
    # Norms written as compositions, as users write them (issue 22): bytes_moved is x read once and
    # y written once (the parameters are a row's worth). The check: the whole output in float64.
    norm_spec = temp_spec("norms_bench.kiln", NORM_BENCH_SPEC)
    for rows, cols in NORM_BENCH_SHAPES:
        def norm_make(rows=rows, cols=cols, rms=False):
            x = torch.randn(rows, cols, device=DEV) * 2 + 0.5
            g = torch.rand(cols, device=DEV) + 0.5
            b = torch.rand(cols, device=DEV) - 0.5
            return ((x, g) if rms else (x, g, b)), [torch.empty(rows, cols, device=DEV)]
        ps.append(Problem(f"layernorm {rows}x{cols} (composition)", norm_spec, f"layernorm_{rows}x{cols}", ["fp32"],
                          norm_make, lambda x, g, b: F.layer_norm(x, x.shape[-1:], g, b, 1e-5),
                          lambda args, outs, mode: check_close(outs[0], F.layer_norm(
                              args[0].double(), args[0].shape[-1:], args[1].double(), args[2].double(), 1e-5)),
                          bytes_moved=2 * rows * cols * 4))
        ps.append(Problem(f"rmsnorm {rows}x{cols} (composition)", norm_spec, f"rmsnorm_{rows}x{cols}", ["fp32"],
                          lambda rows=rows, cols=cols: norm_make(rows, cols, rms=True), rms_norm_eager,
                          lambda args, outs, mode: check_close(outs[0], rms_norm_eager(args[0].double(),
                                                                                        args[1].double())),
                          bytes_moved=2 * rows * cols * 4))
    ps.append(Problem("sum over axis 1, 32768x8192", "specs/reductions.kiln", "sum_rows", ["fp32"],
                      one_gib(out_shape=(32768,)), lambda x: x.sum(dim=1),
                      lambda args, outs, mode: check_close(outs[0], args[0].double().sum(dim=1)),
                      bytes_moved=32768 * 8192 * 4))
    ps.append(Problem("sum over axis 0, 32768x8192", "specs/reductions.kiln", "sum_cols", ["fp32"],
                      one_gib(out_shape=(8192,)), lambda x: x.sum(dim=0),
                      lambda args, outs, mode: check_close(outs[0], args[0].double().sum(dim=0)),
                      bytes_moved=32768 * 8192 * 4))
    # Issue 22's memory-bound targets at its shapes: elementwise (16384² and 4096x393216), sums,
    # means, argmax and argmin over each axis of a 3-D tensor, norms over 16x64x256x256, scans on
    # each axis of 32768² and along 4 x 2^26. bytes_moved: every input read once and the output
    # written once (for a norm: x and y; its parameters are small). The check: the whole output
    # against float64, a block of rows at a time (a 6 GiB tensor in float64 does not fit twice).
    mem_spec = temp_spec("memory_bound_bench.kiln", MEMORY_BENCH_SPEC)
    for rows, cols in ELEMENTWISE_BENCH_SHAPES:
        for name, op, n_in, fn in (("relu(a+b)", "relu_add2", 2, lambda a, b: torch.relu(a + b)),
                                   ("sigmoid", "sigmoid1", 1, torch.sigmoid),
                                   ("gelu", "gelu1", 1, F.gelu)):
            def ew_make(rows=rows, cols=cols, n_in=n_in):
                xs = tuple(torch.randn(rows, cols, device=DEV) for _ in range(n_in))
                return xs, [torch.empty(rows, cols, device=DEV)]
            ps.append(Problem(f"{name} {rows}x{cols}", mem_spec, op, ["fp32"], ew_make, fn,
                              lambda args, outs, mode, fn=fn: check_rows(outs[0], args, fn),
                              bytes_moved=(n_in + 1) * rows * cols * 4))
    a, b, c = REDUCE_BENCH_SHAPE
    for axis in range(3):
        out_shape = [a, b, c]
        del out_shape[axis]
        for red, torch_red in (("sum", torch.sum), ("mean", torch.mean)):
            ps.append(Problem(f"{red} over axis {axis}, {a}x{b}x{c}", mem_spec, f"{red}_axis{axis}", ["fp32"],
                              one_gib(a, b * c, out_shape=out_shape, view=(a, b, c)),
                              lambda x, axis=axis, f=torch_red: f(x, dim=axis),
                              lambda args, outs, mode, axis=axis, f=torch_red: check_close(
                                  outs[0], f(args[0].double(), dim=axis)),
                              bytes_moved=a * b * c * 4))
    for red, axis, torch_red in (("argmax", 2, torch.argmax), ("argmin", 1, torch.argmin)):
        out_shape = [a, b, c]
        del out_shape[axis]
        ps.append(Problem(f"{red} over axis {axis}, {a}x{b}x{c}", mem_spec, f"{red}_axis{axis}", ["fp32"],
                          one_gib(a, b * c, out_shape=out_shape, view=(a, b, c), dtype=torch.int64),
                          lambda x, axis=axis, f=torch_red: f(x, dim=axis),
                          lambda args, outs, mode, axis=axis, f=torch_red: (
                              bool(torch.equal(outs[0], f(args[0], dim=axis))), 0.0),
                          bytes_moved=a * b * c * 4))
    # The 4-D norms at one large shape, then batch norm at the short images of a CNN (segments under
    # 2048 elements: the ganged split norm).
    norm4_rows = [(row, NORM4D_BENCH_SHAPE) for row in NORM4D_BENCH_ROWS]
    norm4_rows += [(NORM4D_BENCH_ROWS[-1], shape) for shape in BATCHNORM_SHORT_BENCH_SHAPES]
    for (name, op, eager, params), (n, ch, h, w) in norm4_rows:
        def norm4_make(params=params, n=n, ch=ch, h=h, w=w):   # (bound now: later loops reuse the names)
            x = torch.randn(n, ch, h, w, device=DEV) * 2 + 0.5
            ps_ = tuple(torch.rand(*shape, device=DEV) + off for shape, off in params(ch, h, w))
            return (x, *ps_), [torch.empty_like(x)]
        ps.append(Problem(f"{name} {n}x{ch}x{h}x{w}", mem_spec, op, ["fp32"], norm4_make, eager,
                          lambda args, outs, mode, eager=eager: check_close(
                              outs[0], eager(*(t.double() for t in args))),
                          bytes_moved=2 * n * ch * h * w * 4))
    for rows, cols, axis in SCAN_BENCH_ROWS:
        ps.append(Problem(f"cumsum over axis {axis}, {rows}x{cols}", mem_spec, f"cumsum_{rows}x{cols}_axis{axis}",
                          ["fp32"], one_gib(rows, cols), lambda x, axis=axis: torch.cumsum(x, dim=axis),
                          lambda args, outs, mode, axis=axis: check_close(
                              outs[0], torch.cumsum(args[0].double(), dim=axis)),
                          bytes_moved=2 * rows * cols * 4))
    # Attention written out (issue 22): softmax(q·kᵀ·scale [causal]) · v as one flash kernel. eager
    # is PyTorch's scaled_dot_product_attention with its own backend choice; each backend is a
    # peer column of the same run (cudnn_ms, flash_ms, efficient_ms). The check: two (batch, head)
    # slices in float64 against the composition.
    att_spec = temp_spec("attention_bench.kiln", ATTENTION_BENCH_SPEC)
    for b, h, s_len, d, dt, causal in ATTENTION_BENCH_SHAPES:
        torch_dt = torch.float16 if dt == "f16" else torch.bfloat16

        def att_make(b=b, h=h, s_len=s_len, d=d, torch_dt=torch_dt):
            q, k, v = (torch.randn(b, h, s_len, d, device=DEV, dtype=torch_dt) for _ in range(3))
            return (q, k, v), [torch.empty(b, h, s_len, d, device=DEV, dtype=torch_dt)]

        def att_check(args, outs, mode, causal=causal, d=d):
            q, k, v = (a[:1, :2].double() for a in args)
            sc = q @ k.transpose(-1, -2) / math.sqrt(d)
            if causal:
                n = sc.shape[-1]
                sc = sc.masked_fill(torch.ones(n, n, device=DEV, dtype=torch.bool).triu(1), float("-inf"))
            ref = torch.softmax(sc, dim=-1) @ v
            got = outs[0][:1, :2].double()
            norm = float((got - ref).nan_to_num(1e9).norm() / ref.norm())
            return norm < 1e-2 and bool(torch.allclose(got, ref, atol=1e-2, rtol=1e-2)), norm

        def sdpa(backend, causal=causal):
            def run(q, k, v):
                with torch.nn.attention.sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            return run
        SB = torch.nn.attention.SDPBackend
        ps.append(Problem(f"attention {b}x{h}x{s_len}x{d} {dt}{' causal' if causal else ''}", att_spec,
                          attention_op_name(dt, causal), ["fp32"], att_make,
                          lambda q, k, v, causal=causal: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                          att_check, flops=4 * b * h * s_len * s_len * d // (2 if causal else 1), label=dt,
                          quick_ok=False,
                          peers={"cudnn": sdpa(SB.CUDNN_ATTENTION), "flash": sdpa(SB.FLASH_ATTENTION),
                                 "efficient": sdpa(SB.EFFICIENT_ATTENTION)}))
    # KernelBench level 1's six pooling problems (41-46) at their own shapes and settings
    # (issue 21): one kiln/pool.cuh kernel each; bytes_moved is the input read once and the
    # output written once. The check: the first image in float64 against PyTorch's pool of it.
    pool_spec = temp_spec("kernelbench_pool.kiln", KERNELBENCH_POOL_SPEC)
    for name, op, in_shape, torch_pool in KERNELBENCH_POOLS:
        def pool_make(in_shape=in_shape, torch_pool=torch_pool):
            x = torch.randn(*in_shape, device=DEV)
            return (x,), [torch.empty(in_shape[0], *torch_pool(x[:1]).shape[1:], device=DEV)]

        def pool_check(args, outs, mode, torch_pool=torch_pool):
            return check_close(outs[0][:1], torch_pool(args[0][:1].double()))
        out_elems = torch_pool(torch.empty(1, *in_shape[1:], device="meta")).numel() * in_shape[0]
        ps.append(Problem(name, pool_spec, op, ["fp32"], pool_make, torch_pool, pool_check,
                          bytes_moved=4 * (math.prod(in_shape) + out_elems), quick_ok=False))
    # KernelBench level 1's 1-d, 3-d and transposed convolutions at their shapes (issue 21): the
    # ops of specs/conv_nd.kiln at their default dims. The check: the first image in float64
    # against PyTorch's conv of it.
    for name, op, x_shape, w_shape, torch_conv in KERNELBENCH_CONVS:
        def conv_make(x_shape=x_shape, w_shape=w_shape, torch_conv=torch_conv):
            x = torch.randn(*x_shape, device=DEV)
            w = torch.randn(*w_shape, device=DEV) / math.sqrt(math.prod(w_shape[1:]))
            out = torch_conv(torch.empty(1, *x_shape[1:], device="meta"), torch.empty(*w_shape, device="meta"))
            return (x, w), [torch.empty(x_shape[0], *out.shape[1:], device=DEV)]

        def conv_check(args, outs, mode, torch_conv=torch_conv):
            return check_close(outs[0][:1], torch_conv(args[0][:1].double(), args[1].double()), tf32=(mode == "tf32"))
        out_elems = math.prod(torch_conv(torch.empty(*x_shape, device="meta"), torch.empty(*w_shape, device="meta")).shape)
        ps.append(Problem(name, "specs/conv_nd.kiln", op, ["fp32", "tf32"], conv_make, torch_conv, conv_check,
                          bytes_moved=4 * (math.prod(x_shape) + math.prod(w_shape) + out_elems), quick_ok=False))
    return ps


# KernelBench level 1's 1-d, 3-d and transposed convolutions: (row name, op in specs/conv_nd.kiln,
# x shape, w shape, PyTorch's call).
KERNELBENCH_CONVS = [
    ("conv1d k3, 32x64x131072 -> 128 (KernelBench 67)", "conv1d_k3", (32, 64, 131072), (128, 64, 3),
     lambda x, w: F.conv1d(x, w)),
    ("conv3d k3, 16x3x64^3 -> 64 (KernelBench 54)", "conv3d_k3", (16, 3, 64, 64, 64), (64, 3, 3, 3, 3),
     lambda x, w: F.conv3d(x, w)),
    ("conv_transpose1d k3, 64x128x65536 -> 128 (KernelBench 64)", "conv_transpose1d_k3", (64, 128, 65536),
     (128, 128, 3), lambda x, w: F.conv_transpose1d(x, w)),
    ("conv_transpose1d k3 s2 p1 d2, 16x32x131072 -> 64 (KernelBench 79)", "conv_transpose1d_strided_dilated",
     (16, 32, 131072), (32, 64, 3), lambda x, w: F.conv_transpose1d(x, w, stride=2, padding=1, dilation=2)),
    ("conv_transpose2d k3, 4x64x1024^2 -> 64 (KernelBench 57, half its batch)", "conv_transpose2d_k3",
     (4, 64, 1024, 1024), (64, 64, 3, 3), lambda x, w: F.conv_transpose2d(x, w)),
    ("conv_transpose2d k3x5 s2x3 p1x2 d2x1 g4, 16x32x128x256 -> 64 (KernelBench 75)",
     "conv_transpose2d_grouped_dilated", (16, 32, 128, 256), (32, 16, 3, 5),
     lambda x, w: F.conv_transpose2d(x, w, stride=[2, 3], padding=[1, 2], dilation=[2, 1], groups=4)),
    ("conv_transpose3d k3x5x7 s2 g4 op1, 8x32x12x24x48 -> 32 (KernelBench 72)", "conv_transpose3d_grouped",
     (8, 32, 12, 24, 48), (32, 8, 3, 5, 7),
     lambda x, w: F.conv_transpose3d(x, w, stride=2, padding=[1, 2, 3], output_padding=1, groups=4)),
    ("conv_transpose3d k3 s2 p1 d2, 16x32x16x32x32 -> 64 (KernelBench 77)", "conv_transpose3d_dilated",
     (16, 32, 16, 32, 32), (32, 64, 3, 3, 3), lambda x, w: F.conv_transpose3d(x, w, stride=2, padding=1, dilation=2)),
]


# Layer norm and RMS norm as compositions (specs/norms.kiln's, at the benchmark's shapes).
NORM_BENCH_SHAPES = [(4096, 8192), (32768, 1024)]
NORM_BENCH_SPEC = "".join(f"""
op layernorm_{r}x{c} {{
  const eps: f32 = 1e-5
  dims B = {r}, N = {c}
  in  x: f32[B, N]
  in  gamma: f32[N]
  in  beta: f32[N]
  let mu = mean(x, axis=1, keepdims=true)
  let d = x - mu
  let var = mean(d * d, axis=1, keepdims=true)
  out y = d * rsqrt(var + eps) * gamma + beta
}}
op rmsnorm_{r}x{c} {{
  const eps: f32 = 1e-6
  dims B = {r}, N = {c}
  in  x: f32[B, N]
  in  gamma: f32[N]
  out y = x * rsqrt(mean(x * x, axis=-1, keepdims=true) + eps) * gamma
}}
""" for r, c in NORM_BENCH_SHAPES)


ATTENTION_BENCH_SHAPES = [(32, 32, 4096, 128, dt, causal) for dt in ("f16", "bf16") for causal in (False, True)]


def attention_op_name(dt, causal):
    return f"attention_{dt}{'_causal' if causal else ''}"


# -3.4e38 is -inf in f16 and bf16 (kiln warns that it overflows them): the causal fill.
ATTENTION_BENCH_SPEC = "".join(f"""
op {attention_op_name(dt, causal)} {{
  const scale: f32 = {1 / math.sqrt(d)!r}
  dims B = {b}, H = {h}, S = {s_len}, D = {d}
  in  q: {dt}[B, H, S, D]
  in  k: {dt}[B, H, S, D]
  in  v: {dt}[B, H, S, D]
  let s = matmul(q, transpose(k)) * scale
  out o = matmul(softmax({'where(iota(S, S, axis=1) <= iota(S, S, axis=0), s, -3.4e38)' if causal else 's'}, axis=-1), v)
}}
""" for b, h, s_len, d, dt, causal in ATTENTION_BENCH_SHAPES)


# Issue 22's memory-bound rows (problems(): "Issue 22's memory-bound targets").
ELEMENTWISE_BENCH_SHAPES = [(16384, 16384), (4096, 393216)]
REDUCE_BENCH_SHAPE = (512, 512, 1024)
NORM4D_BENCH_SHAPE = (16, 64, 256, 256)
BATCHNORM_SHORT_BENCH_SHAPES = [(128, 128, 28, 28), (128, 256, 14, 14), (128, 512, 7, 7)]
SCAN_BENCH_ROWS = [(32768, 32768, 0), (32768, 32768, 1), (4, 1 << 26, 1)]


def layer_norm_chw(x, g, b):
    return F.layer_norm(x, x.shape[1:], g, b, 1e-5)


def rms_norm_channels(x):
    return x * torch.rsqrt(x.pow(2).mean(dim=1, keepdim=True) + 1e-5)


def group_norm8(x, g, b):
    return F.group_norm(x, 8, g, b, 1e-5)


def batch_norm_train(x, g, b):
    return F.batch_norm(x, None, None, g, b, training=True, eps=1e-5)


# (row name, op, eager, the parameters' (shape, offset) for channels c, height h, width w)
NORM4D_BENCH_ROWS = [
    ("layer norm over C, H, W", "layernorm_chw", layer_norm_chw, lambda c, h, w: [((c, h, w), 0.5), ((c, h, w), -0.5)]),
    ("RMS norm over C", "rmsnorm_c", rms_norm_channels, lambda c, h, w: []),
    ("group norm, 8 groups", "groupnorm8", group_norm8, lambda c, h, w: [((c,), 0.5), ((c,), -0.5)]),
    ("batch norm (training)", "batchnorm_train", batch_norm_train, lambda c, h, w: [((c,), 0.5), ((c,), -0.5)]),
]


def check_rows(got, args, fn, block=256):
    """check_close over blocks of rows of a 2-D output: fn's float64 result on the same rows of each
    input. Ok when every block is; the error is the largest block's."""
    ok, worst = True, 0.0
    for r in range(0, got.shape[0], block):
        good, err = check_close(got[r:r + block], fn(*(a[r:r + block].double() for a in args)))
        ok, worst = ok and good, max(worst, err)
    return ok, worst


MEMORY_BENCH_SPEC = """
op relu_add2 {
  dims M = 16384, N = 16384
  in  a: f32[M, N]
  in  b: f32[M, N]
  out y = relu(a + b)
}
op sigmoid1 {
  dims M = 16384, N = 16384
  in  x: f32[M, N]
  out y = sigmoid(x)
}
op gelu1 {
  dims M = 16384, N = 16384
  in  x: f32[M, N]
  out y = gelu(x)
}
""" + "".join(f"""
op {red}_axis{axis} {{
  dims A = 512, B = 512, C = 1024
  in  x: f32[A, B, C]
  out y = {red}(x, axis={axis})
}}
""" for red in ("sum", "mean", "argmax", "argmin") for axis in range(3)) + """
op layernorm_chw {
  dims N = 16, C = 64, H = 256, W = 256
  in  x: f32[N, C, H, W]
  in  gamma: f32[C, H, W]
  in  beta: f32[C, H, W]
  let mu = mean(x, axis=[1, 2, 3], keepdims=true)
  let d = x - mu
  let var = mean(d * d, axis=[1, 2, 3], keepdims=true)
  out y = d * rsqrt(var + 1e-5) * gamma + beta
}
op rmsnorm_c {
  dims N = 16, C = 64, H = 256, W = 256
  in  x: f32[N, C, H, W]
  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-5)
}
op groupnorm8 {
  dims N = 16, C = 64, H = 256, W = 256
  in  x: f32[N, C, H, W]
  in  gamma: f32[C]
  in  beta: f32[C]
  out y = group_norm(x, 8, weight=gamma, bias=beta, eps=1e-5)
}
op batchnorm_train {
  dims N = 16, C = 64, H = 256, W = 256
  in  x: f32[N, C, H, W]
  in  gamma: f32[C]
  in  beta: f32[C]
  let g = reshape(gamma, [C, 1, 1])
  let b = reshape(beta, [C, 1, 1])
  let mu = mean(x, axis=[0, 2, 3], keepdims=true)
  let d = x - mu
  let var = mean(d * d, axis=[0, 2, 3], keepdims=true)
  out y = d * rsqrt(var + 1e-5) * g + b
}
""" + "".join(f"""
op cumsum_{r}x{c}_axis{axis} {{
  dims R = {r}, C = {c}
  in  x: f32[R, C]
  out y = cumsum(x, axis={axis})
}}
""" for r, c, axis in SCAN_BENCH_ROWS)


def rms_norm_eager(x, g):
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * g


# KernelBench level 1, problems 41-46: the pooling layers at their default shapes.
KERNELBENCH_POOL_SPEC = """
op kb41_max_pool1d {
  dims N = 64, C = 192, L = 65536
  in  x: f32[N, C, L]
  out y = max_pool1d(x, 8, stride=1, padding=4, dilation=3)
}
op kb42_max_pool2d {
  dims N = 32, C = 64, H = 512, W = 512
  in  x: f32[N, C, H, W]
  out y = max_pool2d(x, 4, stride=1, padding=1, dilation=1)
}
op kb43_max_pool3d {
  dims N = 16, C = 32, D = 128, H = 128, W = 128
  in  x: f32[N, C, D, H, W]
  out y = max_pool3d(x, 3, stride=2, padding=1, dilation=3)
}
op kb44_avg_pool1d {
  dims N = 64, C = 128, L = 65536
  in  x: f32[N, C, L]
  out y = avg_pool1d(x, 8, stride=1, padding=4)
}
op kb45_avg_pool2d {
  dims N = 16, C = 64, H = 2048, W = 2048
  in  x: f32[N, C, H, W]
  out y = avg_pool2d(x, 11)
}
op kb46_avg_pool3d {
  dims N = 16, C = 32, D = 128, H = 128, W = 256
  in  x: f32[N, C, D, H, W]
  out y = avg_pool3d(x, 3, stride=2, padding=1)
}
"""
KERNELBENCH_POOLS = [
    ("max_pool1d k8 s1 p4 d3, 64x192x65536 (KernelBench 41)", "kb41_max_pool1d", (64, 192, 65536),
     lambda x: F.max_pool1d(x, 8, stride=1, padding=4, dilation=3)),
    ("max_pool2d k4 s1 p1, 32x64x512x512 (KernelBench 42)", "kb42_max_pool2d", (32, 64, 512, 512),
     lambda x: F.max_pool2d(x, 4, stride=1, padding=1, dilation=1)),
    ("max_pool3d k3 s2 p1 d3, 16x32x128^3 (KernelBench 43)", "kb43_max_pool3d", (16, 32, 128, 128, 128),
     lambda x: F.max_pool3d(x, 3, stride=2, padding=1, dilation=3)),
    ("avg_pool1d k8 s1 p4, 64x128x65536 (KernelBench 44)", "kb44_avg_pool1d", (64, 128, 65536),
     lambda x: F.avg_pool1d(x, 8, stride=1, padding=4)),
    ("avg_pool2d k11, 16x64x2048x2048 (KernelBench 45)", "kb45_avg_pool2d", (16, 64, 2048, 2048),
     lambda x: F.avg_pool2d(x, 11)),
    ("avg_pool3d k3 s2 p1, 16x32x128x128x256 (KernelBench 46)", "kb46_avg_pool3d", (16, 32, 128, 128, 256),
     lambda x: F.avg_pool3d(x, 3, stride=2, padding=1)),
]


# ---------------------------------------------------------------- the GEMM sweep (issue 18)
# [Note: how a sweep row is measured]
# Every case is one kiln op of a spec written by gemm_spec_text() (dims bound from the
# tensors at the call; a transposed operand is stored transposed and read through
# transpose(), never copied). kiln, cuBLAS (torch.matmul), torch.compile and Triton all see
# the same stored tensors. The check compares against a float64 product of the very inputs
# (so input rounding is no error) and asks for three things: no NaN left from the poison;
# the norm-wise ‖got − ref‖/‖ref‖ under `norm`; every element within
# 1.5·u_out·|ref| + `elem`·rms(ref) (u_out: the output dtype's unit roundoff, the rounding
# of an fp32 result to bf16 / f16). bf16 / f16 rows: `norm` just above u_out (what rounding
# the output can cost at most) and `elem` 2e-3 (fp32 accumulation costs ~1e-5; a K block
# lost from one tile costs ~√(BK/K) ≥ 1e-2). tf32: 5e-3 and 2e-2 (TF32's own rounding is
# ~1e-3 per element). fp32-accurate: the design's 1e-5, widened to 2·√K·2⁻²⁴ where K makes
# plain fp32 accumulation need more (K = 262144), and `elem` 10·norm. Inputs are uniform in
# [-1, 1): sums cancel, so a wrong tile cannot hide behind a large positive mean.
GEMM_LAYOUTS = {"a·b": (False, False), "a·bᵀ": (False, True), "aᵀ·b": (True, False), "aᵀ·bᵀ": (True, True)}
GEMM_LAYOUT_TAGS = {"a·b": "ab", "a·bᵀ": "abt", "aᵀ·b": "atb", "aᵀ·bᵀ": "atbt"}


class GemmPrecision:
    """A sweep row's precision: the kiln dtype, the spec's precision= (None: the runtime's
    default, fp32-accurate), cuBLAS's TF32 switch, Triton's input_precision and the check's
    bounds (elem None: 10·norm)."""

    def __init__(self, dtype, spec_precision, kiln_precision, cublas_tf32, triton_precision, norm, elem, out_eps):
        self.__dict__.update(locals())
        del self.__dict__["self"]


GEMM_PRECISIONS = {
    "tf32": GemmPrecision("f32", "tf32", "tf32", True, "tf32", 5e-3, 2e-2, 2.0**-24),
    "3xTF32": GemmPrecision("f32", "3xtf32", "3xtf32", False, "tf32x3", 1e-5, None, 2.0**-24),
    "fp32": GemmPrecision("f32", None, "fp32", False, "tf32x3", 1e-5, None, 2.0**-24),
    "bf16": GemmPrecision("bf16", None, "fp32", False, "tf32", 5e-3, 2e-3, 2.0**-8),
    "f16": GemmPrecision("f16", None, "fp32", False, "tf32", 1e-3, 2e-3, 2.0**-11),
}


class GemmCase:
    """One sweep row: C[batch, m, n] = op(A) · op(B) with K = k, in one precision and layout.
    target: None (context), ("cublas", x): at least x times cuBLAS's speed, or ("copy", x):
    A read at x of the copy bandwidth (the GEMV)."""

    def __init__(self, m, n, k, layout, precision, batch=0, quick=False, target=("cublas", 0.9), shared_b=False):
        assert layout in GEMM_LAYOUTS and precision in GEMM_PRECISIONS
        assert not shared_b or (batch and not GEMM_LAYOUTS[layout][0])
        self.__dict__.update(locals())
        del self.__dict__["self"]

    @property
    def name(self):
        dims = ([self.batch] if self.batch else []) + [self.m, self.n, self.k]
        return f"matmul {'x'.join(str(d) for d in dims)} {self.layout}{', b shared' if self.shared_b else ''}"

    @property
    def op_name(self):
        p = GEMM_PRECISIONS[self.precision]
        suffix = f"_{p.spec_precision}" if p.spec_precision else ""
        batched = ("_shared" if self.shared_b else "_batched") if self.batch else ""
        return f"gemm_{GEMM_LAYOUT_TAGS[self.layout]}_{p.dtype}{batched}{suffix}"

    @property
    def flops(self):
        return 2 * max(self.batch, 1) * self.m * self.n * self.k

    @property
    def target_text(self):
        if self.target is None:
            return ""
        kind, x = self.target
        return f"≥ {x:.2f}× cuBLAS" if kind == "cublas" else f"≥ {100 * x:.0f}% of copy"


def gemm_cases():
    """The sweep, in run order. quick=True marks the --quick subset: 4096³ in tf32 / bf16 / f16 and
    the issue's three layouts, 3xTF32 at 4096³, the GEMV, large K in tf32, 1000³ in bf16 and the
    batched row (no 8192³, no 6007×3331×4799, no aᵀ·bᵀ)."""
    cases = []
    for n in (4096, 8192):
        for precision in ("tf32", "bf16", "f16"):
            for layout in ("a·b", "a·bᵀ", "aᵀ·b"):
                cases.append(GemmCase(n, n, n, layout, precision, quick=n == 4096))
    # aᵀ·bᵀ is not in the issue's list: context rows, no target.
    for precision in ("tf32", "bf16"):
        cases.append(GemmCase(4096, 4096, 4096, "aᵀ·bᵀ", precision, quick=False, target=None))
    # fp32-accurate on tensor cores against cuBLAS fp32 (TF32 off): the target is at 8192³.
    cases.append(GemmCase(4096, 4096, 4096, "a·b", "3xTF32", quick=True, target=None))
    for layout in ("a·b", "a·bᵀ", "aᵀ·b"):
        cases.append(GemmCase(8192, 8192, 8192, layout, "3xTF32", target=("cublas", 1.5)))
    cases.append(GemmCase(4096, 1, 262144, "a·b", "fp32", quick=True, target=("copy", 0.9)))   # GEMV
    for precision in ("tf32", "bf16"):
        cases.append(GemmCase(512, 512, 262144, "a·b", precision, quick=precision == "tf32"))
        cases.append(GemmCase(6007, 3331, 4799, "a·b", precision))
        cases.append(GemmCase(1000, 1000, 1000, "a·b", precision, quick=precision == "bf16"))
    cases.append(GemmCase(1024, 1024, 1024, "a·b", "bf16", batch=32, quick=True))
    # A batched A times a B shared by every batch (a linear layer over [batch, tokens, features]):
    # kiln folds the batches into M ([Note: folded batches]), as torch.matmul does before cuBLAS;
    # Triton gets the folded views too. Context rows (`--only shared`), no target.
    for batch, m, n, k, layout, precision in ((64, 1, 4096, 4096, "a·bᵀ", "bf16"), (64, 8, 4096, 4096, "a·bᵀ", "bf16"),
                                              (16, 77, 1024, 768, "a·bᵀ", "bf16"), (8, 512, 4096, 4096, "a·bᵀ", "bf16"),
                                              (128, 3, 2048, 2048, "a·bᵀ", "f16"), (32, 512, 512, 256, "a·b", "tf32"),
                                              (4, 100, 4096, 4096, "a·bᵀ", "tf32")):
        cases.append(GemmCase(m, n, k, layout, precision, batch=batch, target=None, shared_b=True))
    return cases


def gemm_selected(case, only, precisions, quick):
    """--only: "gemm" (or "matmul") takes the whole sweep, another word the cases whose name
    holds it; --precision: the rows' precision labels; --quick drops the cases not marked
    quick unless --only named them."""
    generic = ("gemm", "matmul")
    if precisions and case.precision not in precisions:
        return False
    if only and not any(o in generic or o in case.name for o in only):
        return False
    named = any(o not in generic and o in case.name for o in only)
    return case.quick or not quick or named


def gemm_spec_text(cases):
    """One op per distinct (layout, dtype, batched, precision) of `cases`, dims bound at the call."""
    ops = {}
    for case in cases:
        if case.op_name in ops:
            continue
        p = GEMM_PRECISIONS[case.precision]
        ta, tb = GEMM_LAYOUTS[case.layout]
        batch_dim, batch_idx = ("B = 32, ", "B, ") if case.batch else ("", "")
        a_shape = f"{p.dtype}[{batch_idx}{'K, M' if ta else 'M, K'}]"
        b_shape = f"{p.dtype}[{'' if case.shared_b else batch_idx}{'N, K' if tb else 'K, N'}]"
        a_arg = "transpose(a)" if ta else "a"
        b_arg = "transpose(b)" if tb else "b"
        prec = f', precision="{p.spec_precision}"' if p.spec_precision else ""
        batched = (", b shared by the batches" if case.shared_b else ", batched") if case.batch else ""
        ops[case.op_name] = (f"# {case.layout}, {case.precision}{batched}\n"
                             f"op {case.op_name} {{\n"
                             f"  dims {batch_dim}M = 4096, N = 4096, K = 4096\n"
                             f"  in  a: {a_shape}\n"
                             f"  in  b: {b_shape}\n"
                             f"  out c = matmul({a_arg}, {b_arg}{prec})\n"
                             "}\n")
    return "# The GEMM sweep's ops, written by bench/bench.py (gemm_spec_text).\n\n" + "\n".join(ops.values())


def gemm_tolerance(precision, k):
    """(norm-wise bound, element bound in units of rms(ref)) of a sweep row (see the note above)."""
    p = GEMM_PRECISIONS[precision]
    norm = p.norm
    if p.dtype == "f32" and precision != "tf32":
        norm = max(norm, 2 * math.sqrt(k) * 2.0**-24)
    return norm, (p.elem if p.elem is not None else 10 * norm)


def gemm_make(case):
    """The stored operands (transposed ones stored [.., K, M] / [.., N, K]), their views as
    A[.., M, K] and B[.., K, N], and the float64 reference."""
    p = GEMM_PRECISIONS[case.precision]
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[p.dtype]
    ta, tb = GEMM_LAYOUTS[case.layout]
    lead = (case.batch,) if case.batch else ()

    def uniform(*shape, batched=True):
        return torch.rand(*(lead if batched else ()), *shape, device=DEV).mul_(2).sub_(1).to(dtype)
    a_s = uniform(case.k, case.m) if ta else uniform(case.m, case.k)
    b_s = uniform(case.n, case.k, batched=not case.shared_b) if tb else uniform(case.k, case.n, batched=not case.shared_b)
    a_v = a_s.transpose(-1, -2) if ta else a_s
    b_v = b_s.transpose(-1, -2) if tb else b_s
    return a_s, b_s, a_v, b_v, gemm_reference(a_v, b_v)


def gemm_reference(a, b):
    """a @ b in float64; 2-D in row chunks of at most 2^27 elements of A (1 GiB as float64)."""
    if a.dim() == 3:
        return torch.matmul(a.double(), b.double())
    m, k = a.shape
    b64 = b.double()
    ref = torch.empty(m, b.shape[1], dtype=torch.float64, device=a.device)
    rows = max(1, (1 << 27) // k)
    for i in range(0, m, rows):
        ref[i:i + rows] = a[i:i + rows].double() @ b64
    return ref


def gemm_check(got, ref, precision, k):
    """(ok, norm-wise relative error, non-finite count, max |error| / rms(ref))."""
    norm_tol, elem_tol = gemm_tolerance(precision, k)
    g = got.double()
    finite = torch.isfinite(g)
    bad = int((~finite).sum())
    d = torch.where(finite, g - ref, torch.zeros_like(g))
    del g
    ref_norm = float(ref.norm())
    rms = max(ref_norm / math.sqrt(ref.numel()), 1e-300)
    norm = float(d.norm()) / max(ref_norm, 1e-300)
    bound = ref.abs().mul_(1.5 * GEMM_PRECISIONS[precision].out_eps).add_(elem_tol * rms)
    d.abs_()
    elem_ok = bool((d <= bound).all())
    worst = float(d.max()) / rms
    return bad == 0 and norm <= norm_tol and elem_ok, norm, bad, worst


def gemm_eager(case):
    """torch.matmul on the stored operands, transposing as the layout says (also torch.compile's input)."""
    ta, tb = GEMM_LAYOUTS[case.layout]

    def mm(a, b):
        return torch.matmul(a.transpose(-1, -2) if ta else a, b.transpose(-1, -2) if tb else b)
    return mm


def first_line(e, limit=300):
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:limit]


def run_gemm_case(case, kiln, spec_path, res, args):
    """One sweep row (see the note above); a failure of one engine is recorded, not raised."""
    p = GEMM_PRECISIONS[case.precision]
    row = {"problem": case.name, "precision": case.precision, "sweep": "gemm",
           "shape": [case.batch or 1, case.m, case.n, case.k], "layout": case.layout, "dtype": p.dtype,
           "shared_b": case.shared_b,
           "kiln_op": case.op_name, "kiln_precision": p.kiln_precision, "target": case.target_text,
           "correct": None, "error": None, "kiln_ms": None, "eager_ms": None, "compile_ms": None,
           "triton_ms": None}
    set_tf32(p.cublas_tf32)
    a_s, b_s, a_v, b_v, ref = gemm_make(case)
    out_shape = ((case.batch,) if case.batch else ()) + (case.m, case.n)
    c = torch.empty(out_shape, device=DEV, dtype=a_s.dtype)

    # kiln: plan + NVRTC happen at the first call, so both are inside the try.
    try:
        op = kiln.op(spec_path, case.op_name, precision=p.kiln_precision)
        c.fill_(float("nan"))
        t0 = time.perf_counter()
        op(a_s, b_s, c)
        torch.cuda.synchronize()
        row["first_call_ms"] = (time.perf_counter() - t0) * 1e3
        ok, err, bad, worst = gemm_check(c, ref, case.precision, case.k)
        row.update(correct=ok, error=err, max_err_over_rms=worst)
        if bad:
            row["nonfinite"] = bad
        if ok:
            row["kiln_ms"] = bench(lambda: op(a_s, b_s, c), args.quick)
    except kiln_pkg.Error as e:   # a spec, plan, NVRTC or launch failure: the row says which
        note = first_line(e)
        row["note"] = note if note.startswith("kiln") else "kiln: " + note
        row["kiln_error"] = str(e)[:4000]

    mm = gemm_eager(case)
    with torch.no_grad():
        got = mm(a_s, b_s)
        row["eager_error"] = gemm_check(got, ref, case.precision, case.k)[1]
        del got
        row["eager_ms"] = bench(lambda: mm(a_s, b_s), args.quick)
        if not args.no_compile:
            torch._dynamo.reset()
            cf = torch.compile(mm)
            cf(a_s, b_s)
            row["compile_ms"] = bench(lambda: cf(a_s, b_s), args.quick)

    # Triton on the views; its first call autotunes (eight tiles, pruned by shared memory). A shared
    # b: on the folded views ([batch x M, K] . b), as a Triton user would write it.
    try:
        out = torch.empty_like(c)
        out.fill_(float("nan"))
        ta_v, to = (a_v.reshape(-1, case.k), out.view(-1, case.n)) if case.shared_b else (a_v, out)
        triton_matmul(ta_v, b_v, out=to, precision=p.triton_precision)
        torch.cuda.synchronize()
        row["triton_config"] = triton_best_config()
        ok, err, _, _ = gemm_check(out, ref, case.precision, case.k)
        row.update(triton_correct=ok, triton_error=err)
        if ok:
            row["triton_ms"] = bench(lambda: triton_matmul(ta_v, b_v, out=to, precision=p.triton_precision),
                                     args.quick)
    except Exception as e:  # noqa: BLE001  (a Triton compile error must not end the sweep)
        row["triton_correct"] = None
        row["triton_note"] = f"{type(e).__name__}: {first_line(e)}"

    gemm_ratios(row, case, res)
    return row


def gemm_ratios(row, case, res):
    """Speed ratios (> 1: the first is faster) and the achieved rate of a sweep row."""
    kiln_ms, eager_ms, compile_ms, triton_ms = (row.get(k) for k in ("kiln_ms", "eager_ms", "compile_ms",
                                                                      "triton_ms"))
    if eager_ms and triton_ms:
        row["triton_vs_eager"] = eager_ms / triton_ms
    if eager_ms and case.n == 1:
        row["eager_TBps"] = case.m * case.k * 4 / eager_ms / 1e9
    if not kiln_ms:
        return
    row["speedup_vs_eager"] = eager_ms / kiln_ms
    if compile_ms:
        row["speedup_vs_compile"] = compile_ms / kiln_ms
    if triton_ms:
        row["speedup_vs_triton"] = triton_ms / kiln_ms
    row["TFLOPs"] = case.flops / kiln_ms / 1e9
    if case.n == 1:   # a GEMV: the bytes of A (read once) over kiln's time
        row["TBps"] = case.m * case.k * 4 / kiln_ms / 1e9
        row["copy_fraction"] = share(row["TBps"], res["copy_TBps"])
    if case.target:
        kind, x = case.target
        got = row["speedup_vs_eager"] if kind == "cublas" else row["copy_fraction"]
        if got is not None:   # (no copy ceiling under --no-ceilings: the target is not judged)
            row["meets_target"] = bool(got >= x)


def share(value, ceiling):
    """value as a fraction of a ceiling measured in this run; None where none was (--no-ceilings)."""
    return None if ceiling is None else value / ceiling


def percent_of(fraction, ceiling):
    return "" if fraction is None else f" = {100 * fraction:.0f}% of {ceiling}"


def ceilings_text(res):
    if res.get("copy_TBps") is None:
        return "Ceilings not measured (--no-ceilings)."
    return (f"Copy ceiling {res['copy_TBps']:.2f} TB/s; cuBLAS 8192³ fp32 {res['gemm8192_fp32_TFLOPs']:.1f} / "
            f"tf32 {res['gemm8192_tf32_TFLOPs']:.1f} / bf16 {res['gemm8192_bf16_TFLOPs']:.1f} TFLOP/s.")


def run_gemm_sweep(res, args, kiln, only, precisions, save):
    cases = [c for c in gemm_cases() if gemm_selected(c, only, precisions, args.quick)]
    if not cases:
        return
    spec_dir = tempfile.mkdtemp(prefix="kiln-bench-gemm-")
    spec_path = os.path.join(spec_dir, "gemm_sweep.kiln")
    with open(spec_path, "w") as f:
        f.write(gemm_spec_text(cases))
    res["gemm_spec"] = gemm_spec_text(cases)
    for case in cases:
        try:
            row = run_gemm_case(case, kiln, spec_path, res, args)
        except Exception as e:  # noqa: BLE001  (out of memory, a broken context: say so, go on)
            row = {"problem": case.name, "precision": case.precision, "sweep": "gemm", "correct": None,
                   "error": None, "kiln_ms": None, "eager_ms": None, "compile_ms": None, "triton_ms": None,
                   "target": case.target_text, "note": f"sweep: {type(e).__name__}: {first_line(e)}"}
        res["rows"].append(row)
        print(json.dumps(row), flush=True)
        save()
        torch.cuda.empty_cache()
    shutil.rmtree(spec_dir, ignore_errors=True)


# ---------------------------------------------------------------- main
def measure_ceilings(res, quick):
    """Copy bandwidth and cuBLAS 8192^3 throughput in this run, the yardsticks of every row."""
    x = torch.empty(2**28, device=DEV)
    y = torch.empty_like(x)
    t = bench(lambda: y.copy_(x), quick)
    res["copy_TBps"] = 2 * x.numel() * 4 / t / 1e9
    del x, y
    a = torch.randn(8192, 8192, device=DEV)
    b = torch.randn(8192, 8192, device=DEV)
    for mode in ("fp32", "tf32"):
        set_tf32(mode == "tf32")
        t = bench(lambda: a @ b, quick)
        res[f"gemm8192_{mode}_TFLOPs"] = 2 * 8192**3 / t / 1e9
    ab, bb = a.bfloat16(), b.bfloat16()
    res["gemm8192_bf16_TFLOPs"] = 2 * 8192**3 / bench(lambda: ab @ bb, quick) / 1e9
    del a, b, ab, bb
    torch.cuda.empty_cache()
    print(f"ceilings: copy {res['copy_TBps']:.2f} TB/s, cuBLAS 8192^3 fp32 {res['gemm8192_fp32_TFLOPs']:.1f} "
          f"tf32 {res['gemm8192_tf32_TFLOPs']:.1f} bf16 {res['gemm8192_bf16_TFLOPs']:.1f} TFLOP/s", flush=True)


def import_kiln(folder, who):
    """The kiln package: from `folder` if given, else .gpu/python or build/python, else the installed one."""
    for candidate in [folder] if folder else [os.path.join(ROOT, ".gpu", "python"), os.path.join(ROOT, "build", "python")]:
        if os.path.isdir(os.path.join(candidate, "kiln")):
            sys.path.insert(0, os.path.abspath(candidate))
            break
    try:
        import kiln
    except ImportError as e:
        sys.exit(f"{who}: cannot import the kiln package ({e}); pip install . or build it (scripts/gpu_build.sh "
                 "makes .gpu/python for the GPU machine) and pass --kiln")
    print(f"kiln {kiln.__version__} from {os.path.dirname(kiln.__file__)}", flush=True)
    return kiln


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="shorter timing, fewer problems and sweep cases")
    ap.add_argument("--only", default="",
                    help="problems whose name holds one of these words (or whose op is one); 'gemm' = the sweep")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--kiln", default="", help="the folder holding the kiln package (default: .gpu/python or "
                    "build/python, else the installed one)")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--precision", default="",
                    help="only these precisions (fp32,tf32; sweep rows: tf32,3xTF32,fp32,bf16,f16)")
    ap.add_argument("--no-ceilings", action="store_true",
                    help="skip the copy and cuBLAS ceilings (for profiling one row)")
    args = ap.parse_args()
    if _MISSING is not None:
        sys.exit(f"bench.py: {_MISSING}. It needs NumPy, PyTorch with CUDA and Triton, and a GPU: run it on "
                 "the GPU machine (scripts/gpu_suite.sh runs it there).")
    if not torch.cuda.is_available():
        sys.exit("bench.py: PyTorch sees no CUDA GPU (torch.cuda.is_available() is False); run it on the GPU "
                 "machine (scripts/gpu_suite.sh runs it there).")
    global kiln_pkg
    kiln_pkg = import_kiln(args.kiln, "bench.py")
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    props = torch.cuda.get_device_properties(0)
    res = {"gpu": torch.cuda.get_device_name(), "sms": props.multi_processor_count,
           "torch": torch.__version__, "cuda": torch.version.cuda,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "rows": []}
    try:
        import subprocess
        res["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                       capture_output=True, text=True).stdout.strip()
    except Exception:  # noqa: BLE001
        res["driver"] = "?"
    try:
        import triton
        res["triton"] = triton.__version__
    except Exception:  # noqa: BLE001
        res["triton"] = "?"
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    base = os.path.join(args.out, f"bench-{stamp}")

    def save():
        with open(base + ".json", "w") as f:
            json.dump(res, f, indent=1)
        with open(base + ".md", "w") as f:
            f.write(markdown_table(res))

    if args.no_ceilings:
        res.update(copy_TBps=None, gemm8192_fp32_TFLOPs=None, gemm8192_tf32_TFLOPs=None, gemm8192_bf16_TFLOPs=None)
    else:
        measure_ceilings(res, args.quick)

    cache_dir = tempfile.mkdtemp(prefix="kiln-bench-cache-")
    kiln = Kiln(cache_dir)
    only = [s for s in args.only.split(",") if s]
    precisions = [s for s in args.precision.split(",") if s]
    for prob in problems():
        if only and not any(o in prob.name or o == prob.op for o in only):
            continue
        if args.quick and not prob.quick_ok and not only:
            continue
        modes = [m for m in prob.modes if not precisions or m in precisions]
        if not modes:
            continue
        inputs, outs = prob.make()
        for mode in modes:
            row = {"problem": prob.name, "precision": prob.label or ("fp32-accurate" if mode == "fp32" else mode),
                   "triton_ms": None}   # the Triton column belongs to the GEMM sweep
            set_tf32(mode == "tf32")
            try:
                op = kiln.op(os.path.join(ROOT, prob.spec), prob.op, precision=mode, consts=prob.consts)
                for o in outs:   # poisoned: NaN, or -1 for an index output
                    o.fill_(float("nan") if o.is_floating_point() else -1)
                t0 = time.perf_counter()
                op(*inputs, *outs)
                torch.cuda.synchronize()
                row["first_call_ms"] = (time.perf_counter() - t0) * 1e3
                ok, err = prob.check(inputs, outs, mode)
                row["correct"] = ok
                row["error"] = err
                if ok:
                    row["kiln_ms"] = bench(lambda: op(*inputs, *outs), args.quick)
                    # Second runtime, same cache dir: the first call is a disk hit.
                    k2 = fresh_kiln(cache_dir)
                    op2 = k2.op(os.path.join(ROOT, prob.spec), prob.op, precision=mode, consts=prob.consts)
                    t0 = time.perf_counter()
                    op2(*inputs, *outs)
                    torch.cuda.synchronize()
                    row["disk_hit_first_call_ms"] = (time.perf_counter() - t0) * 1e3
                    row["disk_hits"] = k2.stats()["disk_hits"]
            except kiln_pkg.Error as e:
                row["correct"] = None
                row["note"] = str(e).splitlines()[0][:200]
            with torch.no_grad():
                eager_args = [a for a in inputs]
                row["eager_ms"] = bench(lambda: prob.eager(*eager_args), args.quick)
                if not args.no_compile:
                    torch._dynamo.reset()
                    cf = torch.compile(prob.eager)
                    cf(*eager_args)
                    row["compile_ms"] = bench(lambda: cf(*eager_args), args.quick)
                for peer, fn in (prob.peers or {}).items():   # other implementations, same inputs
                    try:
                        row[f"{peer}_ms"] = bench(lambda: fn(*eager_args), args.quick)
                        if "kiln_ms" in row:
                            row[f"speedup_vs_{peer}"] = row[f"{peer}_ms"] / row["kiln_ms"]
                    except Exception as e:  # noqa: BLE001  (a backend this GPU or build lacks)
                        row[f"{peer}_note"] = f"{type(e).__name__}: {first_line(e)}"
            if "kiln_ms" in row:
                row["speedup_vs_eager"] = row["eager_ms"] / row["kiln_ms"]
                if "compile_ms" in row:
                    row["speedup_vs_compile"] = row["compile_ms"] / row["kiln_ms"]
                if prob.bytes_moved:
                    row["TBps"] = prob.bytes_moved / row["kiln_ms"] / 1e9
                    row["copy_fraction"] = share(row["TBps"], res["copy_TBps"])
                if prob.flops:
                    row["TFLOPs"] = prob.flops / row["kiln_ms"] / 1e9
                    # The matching cuBLAS ceiling: fp32 for fp32-accurate rows, tf32 for tf32 rows.
                    ceiling = prob.label or ("tf32" if mode == "tf32" else "fp32")
                    ceiling = "bf16" if ceiling == "f16" else ceiling   # the same tensor-core rate
                    row["flop_fraction"] = share(row["TFLOPs"], res[f"gemm8192_{ceiling}_TFLOPs"])
            res["rows"].append(row)
            print(json.dumps(row), flush=True)
            save()
        del inputs, outs
        torch.cuda.empty_cache()

    run_gemm_sweep(res, args, kiln, only, precisions, save)
    shutil.rmtree(cache_dir, ignore_errors=True)

    save()
    if res.get("gemm_spec"):
        with open(base + "-gemm.kiln", "w") as f:
            f.write(res["gemm_spec"])
    chart(res, base + ".png")
    gemm_chart(res, base + "-gemm.png")
    print("\n" + markdown_table(res))
    # A wrong output fails the run (the JSON, table and chart are written first, the row marked).
    wrong = wrong_rows(res)
    if wrong:
        sys.exit(f"bench.py: {len(wrong)} row(s) not correct: " + ", ".join(wrong))


def wrong_rows(res):
    """The rows whose kiln or Triton output failed its check, as "problem (precision)"; a row that
    could not run (correct None: a kiln error, noted on the row) is not one of them."""
    return [f"{r['problem']} ({r['precision']})" for r in res["rows"]
            if r.get("correct") is False or r.get("triton_correct") is False]


def fmt_ms(v):
    return "—" if v is None else f"{v:.3f}"


def markdown_table(res):
    lines = [f"{res['gpu']} ({res['sms']} SMs), driver {res.get('driver', '?')}, CUDA {res['cuda']}, "
             f"PyTorch {res['torch']}, {res['date']}. " + ceilings_text(res), ""]
    rows = [r for r in res["rows"] if r.get("sweep") != "gemm"]
    if rows:
        lines += ["| problem | precision | correct | kiln ms | eager ms | compile ms | vs eager | vs compile | achieved |",
                  "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        correct = {True: "yes", False: "NO (not timed)", None: "n/a"}[r.get("correct")]
        if r.get("note"):
            correct += f": {r['note']}"
        achieved = ""
        if "TFLOPs" in r:
            achieved = f"{r['TFLOPs']:.1f} TFLOP/s" + percent_of(r.get("flop_fraction"), "cuBLAS 8192³")
        elif "copy_fraction" in r:
            achieved = f"{r['TBps']:.2f} TB/s" + percent_of(r["copy_fraction"], "copy")
        ratio = lambda k: f"{r[k]:.2f}x" if k in r else "—"  # noqa: E731
        lines.append(f"| {r['problem']} | {r['precision']} | {correct} | {fmt_ms(r.get('kiln_ms'))} | "
                     f"{fmt_ms(r.get('eager_ms'))} | {fmt_ms(r.get('compile_ms'))} | {ratio('speedup_vs_eager')} | "
                     f"{ratio('speedup_vs_compile')} | {achieved} |")
    sweep = [r for r in res["rows"] if r.get("sweep") == "gemm"]
    if sweep:
        if rows:
            lines.append("")
        lines += gemm_table(sweep, res)
    return "\n".join(lines) + "\n"


def gemm_table(rows, res):
    """The sweep's own table: speeds as ratios to cuBLAS (> 1: faster than cuBLAS)."""
    lines = [f"GEMM sweep (issue 18): cuBLAS = torch.matmul (TF32 only on tf32 rows), Triton = "
             f"bench/triton_matmul.py (Triton {res.get('triton', '?')}); ratios are speeds, eager ms / "
             "other ms (> 1: faster than cuBLAS); kiln / Triton = Triton ms / kiln ms.", "",
             "| problem | precision | correct | kiln ms | cuBLAS ms | compile ms | Triton ms | kiln / cuBLAS | "
             "Triton / cuBLAS | kiln / Triton | achieved | target |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        correct = {True: "yes", False: "NO (not timed)", None: "n/a"}[r.get("correct")]
        if r.get("note"):
            correct += f": {r['note'][:120]}"
        triton = fmt_ms(r.get("triton_ms"))
        if r.get("triton_correct") is False:
            triton = "wrong"
        elif r.get("triton_note"):
            triton = "failed"
        ratio = lambda k: f"{r[k]:.2f}×" if r.get(k) is not None else "—"  # noqa: E731
        achieved = ""
        if r.get("TBps") is not None:
            achieved = f"{r['TBps']:.2f} TB/s" + percent_of(r.get("copy_fraction"), "copy")
        elif r.get("TFLOPs") is not None:
            achieved = f"{r['TFLOPs']:.1f} TFLOP/s"
        target = r.get("target") or ""
        if target and "meets_target" in r:
            target += " ✓" if r["meets_target"] else " ✗"
        lines.append(f"| {r['problem']} | {r['precision']} | {correct} | {fmt_ms(r.get('kiln_ms'))} | "
                     f"{fmt_ms(r.get('eager_ms'))} | {fmt_ms(r.get('compile_ms'))} | {triton} | "
                     f"{ratio('speedup_vs_eager')} | {ratio('triton_vs_eager')} | {ratio('speedup_vs_triton')} | "
                     f"{achieved} | {target} |")
    return lines


def chart(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:  # noqa: BLE001
        return
    rows = [r for r in res["rows"] if "speedup_vs_eager" in r and r.get("sweep") != "gemm"]
    if not rows:
        return
    labels = [f"{r['problem'].split()[0]}\n{r['precision']}" for r in rows]
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(rows)), 4))
    xs = np.arange(len(rows))
    ax.bar(xs - 0.2, [r["speedup_vs_eager"] for r in rows], 0.4, label="vs PyTorch eager")
    ax.bar(xs + 0.2, [r.get("speedup_vs_compile", 0) for r in rows], 0.4, label="vs torch.compile")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(xs, labels, fontsize=7)
    ax.set_ylabel("speedup (higher is better)")
    ax.set_title(f"kiln on {res['gpu']}, {res['date']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def gemm_chart(res, path):
    """The sweep's speeds relative to cuBLAS: kiln and Triton, one pair of bars per row."""
    rows = [r for r in res["rows"] if r.get("sweep") == "gemm" and r.get("eager_ms")]
    if not rows:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:  # noqa: BLE001
        return
    labels = [f"{r['problem'][len('matmul '):]}\n{r['precision']}" for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, 0.5 * len(rows)), 6))
    xs = np.arange(len(rows))
    ax.bar(xs - 0.2, [r.get("speedup_vs_eager") or 0 for r in rows], 0.4, label="kiln")
    ax.bar(xs + 0.2, [r.get("triton_vs_eager") or 0 for r in rows], 0.4, label="Triton (plain matmul)")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.axhline(0.9, color="r", lw=0.6, ls="--")
    ax.set_xticks(xs, labels, fontsize=7, rotation=60, ha="right")
    ax.set_ylabel("speed relative to cuBLAS (higher is better)")
    ax.set_title(f"GEMM sweep on {res['gpu']}, {res['date']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
