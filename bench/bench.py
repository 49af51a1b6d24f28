"""kiln against PyTorch eager and torch.compile, in one process, on one GPU.

Usage (on a machine with a GPU and PyTorch):
    python3 bench/bench.py [--quick] [--only NAME[,NAME]] [--out DIR] [--lib build/lib/libkiln_capi.so]

For each problem: kiln's output is checked first (against a float64 computation
on the GPU); a wrong kernel is reported as wrong and not timed. Then kiln,
PyTorch eager and torch.compile are timed on the same inputs with device events
(triton.testing.do_bench: warm-up, then the median of many runs). Ceilings
measured in the same run: device-to-device copy bandwidth and an 8192^3 cuBLAS
matmul per precision. Results: JSON + markdown table (+ PNG chart when
matplotlib is there) under --out, and the table printed last.
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

import numpy as np
import torch
import torch.nn.functional as F
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Kiln, KilnError  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEV = "cuda"


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


# ---------------------------------------------------------------- problems
def cumsum_excl(x):
    c = torch.cumsum(x.narrow(1, 0, x.size(1) - 1), dim=1)
    return torch.cat((torch.zeros_like(x.select(1, 0).unsqueeze(1)), c), dim=1)


class Problem:
    def __init__(self, name, spec, op, modes, make, eager, check, bytes_moved=0, flops=0, consts=None,
                 quick_ok=True, label=None):
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

    seed = 0x1234_5678_9ABC_DEF0
    p = 0.2

    def mds_make():
        x = torch.rand(128, 16384, device=DEV)
        lin = torch.nn.Linear(16384, 16384).to(DEV)
        return (x, lin.weight.detach().contiguous(), lin.bias.detach().contiguous(), (seed, "u64")), \
            [torch.empty(128, 16384, device=DEV)]

    def mds_eager(x, w, b, s):
        return torch.softmax(F.dropout(F.linear(x, w, b), p, training=True), dim=1)

    def mds_check(args, outs, mode):
        x, w, b, _ = args
        rows = torch.tensor([0, 1, 63, 127], device=DEV)
        h = x[rows].double() @ w.double().t() + b.double()
        flat = (rows.cpu().numpy()[:, None] * 16384 + np.arange(16384)[None, :]).reshape(-1)
        keep = torch.from_numpy(dropout_keep(seed, flat, p).reshape(len(rows), 16384)).to(DEV)
        d = torch.where(keep, h / (1 - p), torch.zeros_like(h))
        ref = torch.softmax(d, dim=1)
        return check_close(outs[0][rows], ref, tf32=(mode == "tf32"))
    ps.append(Problem("linear+dropout+softmax 128x16384x16384", "specs/linear_dropout_softmax.kiln",
                      "linear_dropout_softmax", ["fp32", "tf32"], mds_make, mds_eager, mds_check,
                      flops=2 * 128 * 16384 * 16384, bytes_moved=16384 * 16384 * 4))

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

    # The other context rows: 8192^3 in f32, and 4096^3 / 8192^3 with bf16 inputs (f32
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
    # Memory-bound context rows on tensors of 1 GiB or more (issue 4): fractions of the copy ceiling.
    def one_gib(rows=32768, cols=8192, out_shape=None):
        def make():
            x = torch.rand(rows, cols, device=DEV)
            return (x,), [torch.empty(out_shape or (rows, cols), device=DEV)]
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
    ps.append(Problem("sum over axis 1, 32768x8192", "specs/reductions.kiln", "sum_rows", ["fp32"],
                      one_gib(out_shape=(32768,)), lambda x: x.sum(dim=1),
                      lambda args, outs, mode: check_close(outs[0], args[0].double().sum(dim=1)),
                      bytes_moved=32768 * 8192 * 4))
    ps.append(Problem("sum over axis 0, 32768x8192", "specs/reductions.kiln", "sum_cols", ["fp32"],
                      one_gib(out_shape=(8192,)), lambda x: x.sum(dim=0),
                      lambda args, outs, mode: check_close(outs[0], args[0].double().sum(dim=0)),
                      bytes_moved=32768 * 8192 * 4))
    return ps


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "lib", "libkiln_capi.so"))
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--precision", default="", help="only these precisions (fp32,tf32)")
    ap.add_argument("--no-ceilings", action="store_true",
                    help="skip the copy and cuBLAS ceilings (for profiling one row)")
    args = ap.parse_args()
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

    if args.no_ceilings:
        res.update(copy_TBps=float("nan"), gemm8192_fp32_TFLOPs=float("nan"),
                   gemm8192_tf32_TFLOPs=float("nan"), gemm8192_bf16_TFLOPs=float("nan"))
    else:
        measure_ceilings(res, args.quick)

    cache_dir = tempfile.mkdtemp(prefix="kiln-bench-cache-")
    kiln = Kiln(args.lib, cache_dir=cache_dir)
    only = [s for s in args.only.split(",") if s]
    for prob in problems():
        if only and not any(o in prob.name or o == prob.op for o in only):
            continue
        if args.quick and not prob.quick_ok and not only:
            continue
        inputs, outs = prob.make()
        precisions = [s for s in args.precision.split(",") if s]
        for mode in prob.modes:
            if precisions and mode not in precisions:
                continue
            row = {"problem": prob.name, "precision": prob.label or ("fp32-accurate" if mode == "fp32" else mode)}
            set_tf32(mode == "tf32")
            try:
                op = kiln.op(os.path.join(ROOT, prob.spec), prob.op, precision=mode, consts=prob.consts)
                for o in outs:
                    o.fill_(float("nan"))
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
                    k2 = Kiln(args.lib, cache_dir=cache_dir)
                    op2 = k2.op(os.path.join(ROOT, prob.spec), prob.op, precision=mode, consts=prob.consts)
                    t0 = time.perf_counter()
                    op2(*inputs, *outs)
                    torch.cuda.synchronize()
                    row["disk_hit_first_call_ms"] = (time.perf_counter() - t0) * 1e3
                    row["disk_hits"] = k2.stats()["disk_hits"]
            except KilnError as e:
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
            if "kiln_ms" in row:
                row["speedup_vs_eager"] = row["eager_ms"] / row["kiln_ms"]
                if "compile_ms" in row:
                    row["speedup_vs_compile"] = row["compile_ms"] / row["kiln_ms"]
                if prob.bytes_moved:
                    row["TBps"] = prob.bytes_moved / row["kiln_ms"] / 1e9
                    row["copy_fraction"] = row["TBps"] / res["copy_TBps"]
                if prob.flops:
                    row["TFLOPs"] = prob.flops / row["kiln_ms"] / 1e9
                    # The matching cuBLAS ceiling: fp32 for fp32-accurate rows, tf32 for tf32 rows.
                    ceiling = prob.label or ("tf32" if mode == "tf32" else "fp32")
                    row["flop_fraction"] = row["TFLOPs"] / res[f"gemm8192_{ceiling}_TFLOPs"]
            res["rows"].append(row)
            print(json.dumps(row), flush=True)
        del inputs, outs
        torch.cuda.empty_cache()
    shutil.rmtree(cache_dir, ignore_errors=True)

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    with open(os.path.join(args.out, f"bench-{stamp}.json"), "w") as f:
        json.dump(res, f, indent=1)
    table = markdown_table(res)
    with open(os.path.join(args.out, f"bench-{stamp}.md"), "w") as f:
        f.write(table)
    chart(res, os.path.join(args.out, f"bench-{stamp}.png"))
    print("\n" + table)


def fmt_ms(v):
    return "—" if v is None else f"{v:.3f}"


def markdown_table(res):
    lines = [f"{res['gpu']} ({res['sms']} SMs), driver {res.get('driver', '?')}, CUDA {res['cuda']}, "
             f"PyTorch {res['torch']}, {res['date']}. Copy ceiling {res['copy_TBps']:.2f} TB/s; cuBLAS 8192³ "
             f"fp32 {res['gemm8192_fp32_TFLOPs']:.1f} / tf32 {res['gemm8192_tf32_TFLOPs']:.1f} / bf16 "
             f"{res['gemm8192_bf16_TFLOPs']:.1f} TFLOP/s.", "",
             "| problem | precision | correct | kiln ms | eager ms | compile ms | vs eager | vs compile | achieved |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        correct = {True: "yes", False: "NO (not timed)", None: "n/a"}[r.get("correct")]
        if r.get("note"):
            correct += f": {r['note']}"
        achieved = ""
        if "TFLOPs" in r:
            achieved = f"{r['TFLOPs']:.1f} TFLOP/s = {100 * r.get('flop_fraction', 0):.0f}% of cuBLAS 8192³"
        elif "copy_fraction" in r:
            achieved = f"{r['TBps']:.2f} TB/s = {100 * r['copy_fraction']:.0f}% of copy"
        ratio = lambda k: f"{r[k]:.2f}x" if k in r else "—"  # noqa: E731
        lines.append(f"| {r['problem']} | {r['precision']} | {correct} | {fmt_ms(r.get('kiln_ms'))} | "
                     f"{fmt_ms(r.get('eager_ms'))} | {fmt_ms(r.get('compile_ms'))} | {ratio('speedup_vs_eager')} | "
                     f"{ratio('speedup_vs_compile')} | {achieved} |")
    return "\n".join(lines) + "\n"


def chart(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:  # noqa: BLE001
        return
    rows = [r for r in res["rows"] if "speedup_vs_eager" in r]
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


if __name__ == "__main__":
    main()
