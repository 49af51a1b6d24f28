"""What baking a dim into a kernel buys (issue 20): each op run with kiln.Options(shapes="generic")
(one kernel per bucket of sizes) and with shapes="specialized" (every dim a constant), side by side
with PyTorch eager, in one process on one GPU.

Usage (on the GPU machine): python3 bench/shapes_bench.py [--quick] [--kiln DIR] [--out DIR]
       python3 bench/shapes_bench.py --chart RESULT.json   (redraws a result's chart)

For each case, both of kiln's outputs are filled with NaN, computed, and checked against
Op.reference (kiln's float64 CPU reference) on the same inputs; a wrong one is reported and not
timed. Then specialized, generic and eager are timed in turns (three rounds, or --rounds, of
triton.testing.do_bench medians; the row keeps the median of the rounds), so clock drift
touches all three alike. The row schema is bench.py's (problem, precision, kiln_ms = the generic
kernel, eager_ms, compile_ms = null here, correct) plus specialized_ms and generic_over_specialized.
Only ops whose plan under "generic" has a dyn dim are rows: the elementwise family, and the rows
of reductions, scans and row norms (docs/api.md, KILN_SHAPES; docs/language.md, "dyn").

Matmul, conv and dyn-length rows (MATMUL_CASES, CONV_CASES, LEN_CASES; generic mode leaves their
dims baked in): each op written twice, with `dims dyn M` (or `dyn B`, `dyn N`, `dyn L`) and with the
value baked in, both checked against the PyTorch form in float64 on the GPU, then timed side by
side with it (torch.matmul: cuBLAS; F.conv2d: cuDNN; PyTorch's softmax, sum, cumsum) and, for
matmuls, the plain Triton matmul of bench/triton_matmul.py (autotuned per shape, its tuning outside
the timing).
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (spec, op, dims, input makers, eager). Shapes: the benchmark's elementwise row (16384², a row
# bias), each elementwise op of specs/elementwise.kiln at 8192², and sizes in the buckets
# "general" (an innermost extent not a multiple of 16) to show what losing the vectors costs.
CASES = [
    ("specs/elementwise.kiln", "relu_add", dict(B=16384, N=16384), "relu(a + b)"),
    ("specs/elementwise.kiln", "relu_add", dict(B=16384, N=16383), "relu(a + b)"),
    ("specs/elementwise.kiln", "relu_add", dict(B=16384, N=16388), "relu(a + b)"),
    ("specs/elementwise.kiln", "relu_add", dict(B=8192, N=8192), "relu(a + b)"),
    ("specs/elementwise.kiln", "axpby", dict(N=1 << 26), "2 x + 0.5 y0"),
    ("specs/elementwise.kiln", "axpby", dict(N=(1 << 26) - 3), "2 x + 0.5 y0"),
    ("specs/elementwise.kiln", "where_clamp", dict(B=8192, N=8192), "clamp"),
    ("specs/elementwise.kiln", "gelu", dict(B=8192, N=8192), "gelu"),
    ("specs/elementwise.kiln", "silu", dict(B=8192, N=8192), "silu"),
    ("specs/elementwise.kiln", "scale_cast_f16", dict(B=8192, N=8192), "f32(x) * scale"),
    ("specs/elementwise.kiln", "sigmoid_tanh_mix", dict(B=8192, N=8192), "two outputs"),
    ("specs/elementwise.kiln", "sigmoid_tanh_mix", dict(B=8192, N=8190), "two outputs"),
    # The memory-bound family with dyn rows ([Note: dyn rows]): the benchmark's 4096² rows, and few
    # rows, where a specialized plan splits, chunks or looks back and a dyn one does not.
    ("specs/norms.kiln", "softmax", dict(B=4096, N=4096), "softmax"),
    ("specs/norms.kiln", "softmax", dict(B=1000, N=1000), "softmax"),
    ("specs/norms.kiln", "log_softmax", dict(B=4096, N=4096), "log_softmax"),
    ("specs/norms.kiln", "layernorm", dict(B=4096, N=4096), "layer norm"),
    ("specs/norms.kiln", "rmsnorm", dict(B=4096, N=4096), "RMS norm"),
    ("specs/reductions.kiln", "sum_rows", dict(B=4096, N=4096), "sum over rows"),
    ("specs/reductions.kiln", "sum_rows", dict(B=16, N=1 << 20), "sum, few long rows"),
    ("specs/min_reduce.kiln", "min_reduce", dict(B=128, M=4096, N=4095), "min over the middle axis, the seed"),
    ("specs/min_reduce.kiln", "min_reduce", dict(B=512, M=1024, N=1001), "min over the middle axis, rows of 1001"),
    ("specs/min_reduce.kiln", "min_reduce", dict(B=128, M=4096, N=4095), "min over the last axis, the seed", {"axis": 2}),
    ("specs/reductions.kiln", "argmax_rows", dict(B=4096, N=4096), "argmax"),
    ("specs/reductions.kiln", "logsumexp_rows", dict(B=4096, N=4096), "logsumexp"),
    ("specs/scans.kiln", "cumsum_reverse", dict(B=4096, N=4096), "reverse cumsum"),
    ("specs/scans.kiln", "cumsum_long_rows", dict(B=2, N=4194304), "cumsum, few long rows"),
    ("specs/scans.kiln", "cumsum_mid_exclusive", dict(B=4, M=65536, N=32), "cumsum, middle axis"),
    ("specs/scans.kiln", "cummin_mid_reverse", dict(B=64, M=128, N=8192), "cummin, middle axis"),
    # Pools with dyn planes ([Note: dyn pool planes]): N and C go dyn, the pooled axes stay baked in.
    ("specs/pooling.kiln", "max_pool2d_relu", dict(N=64, C=64, H=128, W=128), "max pool 3x3 s2 p1, relu"),
    ("specs/pooling.kiln", "pool3d", dict(N=8, C=32, D=33, H=65, W=63), "max and avg pool 3-d"),
]
QUICK = {0, 1, 4, 12, 17}
# Scans and sums add thousands of f32 values: their error grows with the row (docs/semantics.md).
TOLERANCE = {"cumsum_reverse": 2e-3, "cumsum_long_rows": 2e-2, "cumsum_mid_exclusive": 2e-3, "sum_rows": 1e-3,
             "logsumexp_rows": 1e-3}


# Matmuls with a dyn dim ([Note: dyn matmul]): (name, spec text with {D} where the dyn
# dim is declared, the dim, its value, what, precision, tolerance). The benchmark shapes
# (4096³ in bf16 and tf32, a·b and a·bᵀ), an irregular M, a batched product, and the linear seed
# at fp32 accuracy (static: WgGemm split-K; dyn: the mma.sync split-K).
MATMUL_CASES = [
    ("lin_bf16", "op p {{\n  dims {D}, N = 4096, K = 4096\n  in a: bf16[M, K]\n  in w: bf16[N, K]\n"
                 "  out c = matmul(a, transpose(w))\n}}\n", "M", 4096, "bf16 a·bᵀ", "bf16", 2e-2),
    ("mm_bf16", "op p {{\n  dims {D}, N = 4096, K = 4096\n  in a: bf16[M, K]\n  in b: bf16[K, N]\n"
                "  out c = matmul(a, b)\n}}\n", "M", 4096, "bf16 a·b", "bf16", 2e-2),
    ("lin_bf16", "op p {{\n  dims {D}, N = 4096, K = 4096\n  in a: bf16[M, K]\n  in w: bf16[N, K]\n"
                 "  out c = matmul(a, transpose(w))\n}}\n", "M", 1000, "bf16 a·bᵀ, irregular M", "bf16", 2e-2),
    ("lin_bf16", "op p {{\n  dims {D}, N = 8192, K = 8192\n  in a: bf16[M, K]\n  in w: bf16[N, K]\n"
                 "  out c = matmul(a, transpose(w))\n}}\n", "M", 8192, "bf16 a·bᵀ", "bf16", 2e-2),
    ("lin_tf32", "op p {{\n  dims {D}, N = 4096, K = 4096\n  in a: f32[M, K]\n  in w: f32[N, K]\n"
                 "  out c = matmul(a, transpose(w), precision=\"tf32\")\n}}\n", "M", 4096, "tf32 a·bᵀ", "tf32", 1e-2),
    ("mm_tf32", "op p {{\n  dims {D}, N = 4096, K = 4096\n  in a: f32[M, K]\n  in b: f32[K, N]\n"
                "  out c = matmul(a, b, precision=\"tf32\")\n}}\n", "M", 4096, "tf32 a·b", "tf32", 1e-2),
    ("bmm_f16", "op p {{\n  dims {D}, M = 1024, N = 1024, K = 1024\n  in a: f16[B, M, K]\n  in b: f16[B, K, N]\n"
                "  out c = matmul(a, b)\n}}\n", "B", 32, "f16 batched", "f16", 2e-2),
    ("lin_f32", "op p {{\n  dims {D}, N = 16384, K = 16384\n  in a: f32[M, K]\n  in w: f32[N, K]\n"
                "  out c = matmul(a, transpose(w))\n}}\n", "M", 128, "fp32 a·bᵀ, the linear seed", "fp32-accurate",
     1e-4),
    # A dyn N or K (an unbatched product): the weights' rows, B's row length, under swap_ab (tf32
    # a·b), K in both layouts; irregular values in the bucket general (no tensor map over a dyn row
    # length: 1000 K in a·b takes the mma.sync Gemm, where the specialized product maps it).
    ("lin_bf16_n", "op p {{\n  dims M = 4096, {D}, K = 4096\n  in a: bf16[M, K]\n  in w: bf16[N, K]\n"
                   "  out c = matmul(a, transpose(w))\n}}\n", "N", 4096, "bf16 a·bᵀ", "bf16", 2e-2),
    ("mm_bf16_n", "op p {{\n  dims M = 4096, {D}, K = 4096\n  in a: bf16[M, K]\n  in b: bf16[K, N]\n"
                  "  out c = matmul(a, b)\n}}\n", "N", 4096, "bf16 a·b", "bf16", 2e-2),
    ("mm_bf16_k", "op p {{\n  dims M = 4096, N = 4096, {D}\n  in a: bf16[M, K]\n  in b: bf16[K, N]\n"
                  "  out c = matmul(a, b)\n}}\n", "K", 4096, "bf16 a·b", "bf16", 2e-2),
    ("lin_bf16_k", "op p {{\n  dims M = 4096, N = 4096, {D}\n  in a: bf16[M, K]\n  in w: bf16[N, K]\n"
                   "  out c = matmul(a, transpose(w))\n}}\n", "K", 4096, "bf16 a·bᵀ", "bf16", 2e-2),
    ("mm_tf32_n", "op p {{\n  dims M = 4096, {D}, K = 4096\n  in a: f32[M, K]\n  in b: f32[K, N]\n"
                  "  out c = matmul(a, b, precision=\"tf32\")\n}}\n", "N", 4096, "tf32 a·b", "tf32", 1e-2),
    ("lin_tf32_k", "op p {{\n  dims M = 4096, N = 4096, {D}\n  in a: f32[M, K]\n  in w: f32[N, K]\n"
                   "  out c = matmul(a, transpose(w), precision=\"tf32\")\n}}\n", "K", 4096, "tf32 a·bᵀ", "tf32", 1e-2),
    ("lin_bf16_n", "op p {{\n  dims M = 4096, {D}, K = 4096\n  in a: bf16[M, K]\n  in w: bf16[N, K]\n"
                   "  out c = matmul(a, transpose(w))\n}}\n", "N", 1000, "bf16 a·bᵀ, irregular N", "bf16", 2e-2),
    ("mm_bf16_k", "op p {{\n  dims M = 4096, N = 4096, {D}\n  in a: bf16[M, K]\n  in b: bf16[K, N]\n"
                  "  out c = matmul(a, b)\n}}\n", "K", 1000, "bf16 a·b, irregular K", "bf16", 2e-2),
    # A dyn M, N or K of a batched product (its batch strides read at run time): attention-like
    # products over a sequence length (q·kᵀ with dyn M = the queries, p·v with dyn K = the keys),
    # a batched a·b with a dyn N, and tf32.
    ("bmm_bf16_m", "op p {{\n  dims B = 32, {D}, N = 1024, K = 128\n  in a: bf16[B, M, K]\n  in w: bf16[B, N, K]\n"
                   "  out c = matmul(a, transpose(w))\n}}\n", "M", 1024, "bf16 batched a·bᵀ", "bf16", 2e-2),
    ("bmm_bf16_k", "op p {{\n  dims B = 32, M = 1024, N = 128, {D}\n  in a: bf16[B, M, K]\n  in b: bf16[B, K, N]\n"
                   "  out c = matmul(a, b)\n}}\n", "K", 1024, "bf16 batched a·b", "bf16", 2e-2),
    ("bmm_f16_n", "op p {{\n  dims B = 32, M = 1024, {D}, K = 1024\n  in a: f16[B, M, K]\n  in b: f16[B, K, N]\n"
                  "  out c = matmul(a, b)\n}}\n", "N", 1024, "f16 batched a·b", "f16", 2e-2),
    ("bmm_tf32_m", "op p {{\n  dims B = 16, {D}, N = 1024, K = 1024\n  in a: f32[B, M, K]\n  in b: f32[B, K, N]\n"
                   "  out c = matmul(a, b, precision=\"tf32\")\n}}\n", "M", 1000, "tf32 batched a·b, irregular M",
     "tf32", 1e-2),
    # A linear layer over tokens [B, S, D] with a dyn batch and a dyn sequence length: the batches
    # fold into M, classed by B x S ([Note: size classes of a product]); S = 1 is the bucket one
    # (decode steps: B alone is classed).
    ("tokens_bf16", "op p {{\n  dims {D}, K = 4096, N = 4096\n  in x: bf16[B, S, K]\n  in w: bf16[N, K]\n"
                    "  out c = matmul(x, transpose(w))\n}}\n", ("B", "S"), (8, 512), "bf16 tokens·wᵀ", "bf16", 2e-2),
    ("tokens_bf16", "op p {{\n  dims {D}, K = 4096, N = 4096\n  in x: bf16[B, S, K]\n  in w: bf16[N, K]\n"
                    "  out c = matmul(x, transpose(w))\n}}\n", ("B", "S"), (64, 1), "bf16 tokens·wᵀ, decode", "bf16",
     2e-2),
    ("tokens_bf16", "op p {{\n  dims {D}, K = 4096, N = 4096\n  in x: bf16[B, S, K]\n  in w: bf16[N, K]\n"
                    "  out c = matmul(x, transpose(w))\n}}\n", ("B", "S"), (3, 77), "bf16 tokens·wᵀ, irregular",
     "bf16", 2e-2),
    ("tokens_tf32", "op p {{\n  dims {D}, K = 1024, N = 1024\n  in x: f32[B, S, K]\n  in w: f32[N, K]\n"
                    "  out c = matmul(x, transpose(w), precision=\"tf32\")\n}}\n", ("B", "S"), (16, 100),
     "tf32 tokens·wᵀ", "tf32", 1e-2),
]


# Convs with a dyn batch ([Note: dyn conv] in generator/plan/plan_contraction.cpp), written twice
# like the matmuls: (name, spec text, dyn dim, value, what, precision, tolerance, the PyTorch form
# (F, x, w), which the reference runs in float64). The conv seed (KernelBench level1/55) in tf32 and
# fp32-accurate, where the specialized conv takes the TMA engine and the dyn one WgConvNchw; a
# ResNet layer; f16 and depthwise convs, where both take the same template.
def conv_text(c, h, w, k, dtype, cg, args):
    """A conv op's spec text with `{D}` for the batch's declaration (formatted as MATMUL_CASES' texts)."""
    return ("op p {{\n  dims {D}, " + f"C = {c}, H = {h}, W = {w}, K = {k}\n  in x: {dtype}[N, C, H, W]\n"
            f"  in w: {dtype}[K, {cg}, 3, 3]\n  out y = conv2d(x, w{args})\n" + "}}\n")


def conv_hw_text(n, c, k, dtype, cg, args):
    """A conv op's spec text with `{D}` for its spatial extents' declaration (H and W)."""
    return ("op p {{\n  dims " + f"N = {n}, C = {c}, " + "{D}" + f", K = {k}\n  in x: {dtype}[N, C, H, W]\n"
            f"  in w: {dtype}[K, {cg}, 3, 3]\n  out y = conv2d(x, w{args})\n" + "}}\n")


CONV_CASES = [
    ("conv_seed_tf32", conv_text(64, 512, 1024, 128, "f32", "C", ", precision=\"tf32\""),
     "N", 8, "the conv seed 8x64x512x1024, 3x3", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w)),
    ("conv_seed_fp32", conv_text(64, 512, 1024, 128, "f32", "C", ""),
     "N", 8, "the conv seed 8x64x512x1024, 3x3", "fp32-accurate", 1e-4, lambda F, x, w: F.conv2d(x, w)),
    ("resnet_tf32", conv_text(64, 56, 56, 64, "f32", "C", ", padding=1, precision=\"tf32\""),
     "N", 32, "a ResNet layer 32x64x56x56 -> 64, 3x3 pad 1", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("resnet_f16", conv_text(64, 56, 56, 64, "f16", "C", ", padding=1"),
     "N", 32, "a ResNet layer 32x64x56x56 -> 64, 3x3 pad 1", "f16", 2e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("depthwise", conv_text(128, 112, 112, 128, "f32", 1, ", padding=1, groups=128"),
     "N", 32, "depthwise 32x128x112x112, 3x3 pad 1", "fp32-accurate", 1e-4,
     lambda F, x, w: F.conv2d(x, w, padding=1, groups=128)),
    # Dyn spatial extents ([Note: dyn conv spatial extents]): WgConvNchw (sm_90a, f32), ConvNchw or
    # DepthwiseDirect at every value, where the specialized conv may take the TMA engine.
    ("conv_seed_HW_tf32", conv_hw_text(8, 64, 128, "f32", "C", ", precision=\"tf32\""), ("H", "W"), (512, 1024),
     "the conv seed 8x64x512x1024, 3x3", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w)),
    ("conv_seed_HW_fp32", conv_hw_text(8, 64, 128, "f32", "C", ""), ("H", "W"), (512, 1024),
     "the conv seed 8x64x512x1024, 3x3", "fp32-accurate", 1e-4, lambda F, x, w: F.conv2d(x, w)),
    ("resnet_HW_tf32", conv_hw_text(32, 64, 64, "f32", "C", ", padding=1, precision=\"tf32\""), ("H", "W"), (56, 56),
     "a ResNet layer 32x64x56x56 -> 64, 3x3 pad 1", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    # A small image (2^27 flops): the specialized conv takes WgConvNchw, the dyn one the TMA engine
    # with its copies (its route is the same at every extent).
    ("small_HW_tf32", conv_hw_text(8, 64, 64, "f32", "C", ", padding=1, precision=\"tf32\""), ("H", "W"), (14, 14),
     "a small layer 8x64x14x14 -> 64, 3x3 pad 1", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    # Below the flops where the specialized conv takes the TMA engine (kPadMinFlops, 2^30): 2.3e8
    # and 9.2e8 flops, and a ResNet stage-1 layer of one image.
    ("small_HW_tf32", conv_hw_text(16, 32, 32, "f32", "C", ", padding=1, precision=\"tf32\""), ("H", "W"), (28, 28),
     "a small layer 16x32x28x28 -> 32, 3x3 pad 1", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("small_HW_tf32", conv_hw_text(4, 128, 128, "f32", "C", ", padding=1, precision=\"tf32\""), ("H", "W"), (28, 28),
     "a layer 4x128x28x28 -> 128, 3x3 pad 1", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("small_HW_tf32", conv_hw_text(1, 64, 64, "f32", "C", ", padding=1, precision=\"tf32\""), ("H", "W"), (56, 56),
     "a ResNet layer of one image 1x64x56x56 -> 64, 3x3 pad 1", "tf32", 1e-2,
     lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("small_HW_tf32", conv_hw_text(1, 64, 64, "f32", "C", ", padding=1, precision=\"tf32\""), ("H", "W"), (7, 7),
     "a tiny layer 1x64x7x7 -> 64, 3x3 pad 1", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("small_HW_tf32", conv_hw_text(8, 32, 32, "f32", "C", ", padding=1, precision=\"tf32\""), ("H", "W"), (14, 14),
     "a small layer 8x32x14x14 -> 32, 3x3 pad 1", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("small_HW_tf32", conv_hw_text(32, 32, 32, "f32", "C", ", padding=1, precision=\"tf32\""), ("H", "W"), (28, 28),
     "a layer 32x32x28x28 -> 32, 3x3 pad 1", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("small_HW_tf32", conv_hw_text(16, 32, 64, "f32", "C", ", padding=1, precision=\"tf32\""), ("H", "W"), (28, 28),
     "a layer 16x32x28x28 -> 64, 3x3 pad 1", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("small_HW_tf32", conv_hw_text(16, 64, 32, "f32", "C", ", padding=1, precision=\"tf32\""), ("H", "W"), (28, 28),
     "a layer 16x64x28x28 -> 32, 3x3 pad 1", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("small_HW_tf32", conv_hw_text(2, 256, 256, "f32", "C", ", padding=1, precision=\"tf32\""), ("H", "W"), (14, 14),
     "a layer 2x256x14x14 -> 256, 3x3 pad 1", "tf32", 1e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("small_HW_fp32", conv_hw_text(16, 32, 32, "f32", "C", ", padding=1"), ("H", "W"), (28, 28),
     "a small layer 16x32x28x28 -> 32, 3x3 pad 1", "fp32-accurate", 1e-4, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("small_HW_fp32", conv_hw_text(8, 64, 64, "f32", "C", ", padding=1"), ("H", "W"), (14, 14),
     "a small layer 8x64x14x14 -> 64, 3x3 pad 1", "fp32-accurate", 1e-4, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("small_HW_fp32", conv_hw_text(4, 128, 128, "f32", "C", ", padding=1"), ("H", "W"), (28, 28),
     "a layer 4x128x28x28 -> 128, 3x3 pad 1", "fp32-accurate", 1e-4, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("resnet_HW_f16", conv_hw_text(32, 64, 64, "f16", "C", ", padding=1"), ("H", "W"), (56, 56),
     "a ResNet layer 32x64x56x56 -> 64, 3x3 pad 1", "f16", 2e-2, lambda F, x, w: F.conv2d(x, w, padding=1)),
    ("depthwise_HW", conv_hw_text(32, 128, 128, "f32", 1, ", padding=1, groups=128"), ("H", "W"), (112, 112),
     "depthwise 32x128x112x112, 3x3 pad 1", "fp32-accurate", 1e-4,
     lambda F, x, w: F.conv2d(x, w, padding=1, groups=128)),
]


# Reductions, scans and row norms over a dyn length ([Note: dyn lengths] in
# generator/plan/plan_memory.cpp), written twice like the matmuls (generic mode leaves their worked
# axes baked in): (name, spec text, dyn dim, value, what, precision, tolerance, the PyTorch form).
# Rows where both plans are alike (softmax and sums over rows that fill the GPU), and few long rows,
# where the specialized plan splits a row or looks back and the dyn one cannot.
def len_text(b, dtype, ins, out):
    """An op `out` over x: dtype[B, L] (B = b; L's declaration `{D}`), with more inputs `ins`."""
    return "op p {{\n  dims B = " + f"{b}, " + "{D}" + f"\n  in x: {dtype}[B, L]\n{ins}  out y = {out}\n" + "}}\n"


LEN_CASES = [
    ("softmax_L", len_text(4096, "f32", "", "softmax(x, axis=-1)"), "L", 1000, "softmax 4096 rows",
     "fp32-accurate", 1e-4, lambda F, x: F.softmax(x, dim=-1)),
    ("softmax_L", len_text(4096, "f32", "", "softmax(x, axis=-1)"), "L", 1024, "softmax 4096 rows",
     "fp32-accurate", 1e-4, lambda F, x: F.softmax(x, dim=-1)),
    ("softmax_L", len_text(4096, "f32", "", "softmax(x, axis=-1)"), "L", 3000, "softmax 4096 rows",
     "fp32-accurate", 1e-4, lambda F, x: F.softmax(x, dim=-1)),
    ("softmax_L", len_text(1024, "f32", "", "softmax(x, axis=-1)"), "L", 32768, "softmax, long rows",
     "fp32-accurate", 1e-4, lambda F, x: F.softmax(x, dim=-1)),
    ("softmax_L", len_text(4096, "f32", "", "softmax(x, axis=-1)"), "L", 640, "softmax 4096 rows",
     "fp32-accurate", 1e-4, lambda F, x: F.softmax(x, dim=-1)),
    ("softmax_L", len_text(4096, "f32", "", "softmax(x, axis=-1)"), "L", 5000, "softmax 4096 rows",
     "fp32-accurate", 1e-4, lambda F, x: F.softmax(x, dim=-1)),
    # Norm compositions over a dyn length: fused into one kernel where the rows are many and static.
    ("layernorm_L", len_text(4096, "f32", "  in g: f32[L]\n  in b: f32[L]\n  let d = x - mean(x, axis=1, keepdims=true)\n",
                             "d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5) * g + b"),
     "L", 3000, "layer norm 4096 rows (composition)", "fp32-accurate", 1e-4,
     lambda F, x, g, b: F.layer_norm(x, (x.shape[-1],), g, b, eps=1e-5)),
    ("rmsnorm_L_f16", len_text(4096, "f16", "", "x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)"),
     "L", 4096, "f16 RMS norm 4096 rows (composition)", "f16", 2e-2,
     lambda F, x: x * ((x * x).mean(dim=-1, keepdim=True) + 1e-6).rsqrt()),
    ("log_softmax_bias_f16", len_text(4096, "f16", "  in bias: f16[L]\n", "log_softmax(x + bias, axis=-1)"),
     "L", 1000, "f16 log_softmax(x + bias)", "f16", 2e-2, lambda F, x, bias: F.log_softmax(x + bias, dim=-1)),
    ("sum_L", len_text(4096, "f32", "", "sum(x, axis=1)"), "L", 4096, "sum over rows", "fp32-accurate", 1e-4,
     lambda F, x: x.sum(dim=1)),
    ("sum_L", len_text(16, "f32", "", "sum(x, axis=1)"), "L", 1 << 20, "sum, few long rows (split)",
     "fp32-accurate", 1e-4, lambda F, x: x.sum(dim=1)),
    ("cumsum_L", len_text(4096, "f32", "", "cumsum(x, axis=1)"), "L", 4096, "cumsum over rows", "fp32-accurate",
     1e-4, lambda F, x: x.cumsum(dim=1)),
    ("cumsum_L", len_text(2, "f32", "", "cumsum(x, axis=1)"), "L", 1 << 22,
     "cumsum, few long rows (specialized: look-back)", "fp32-accurate", 1e-3, lambda F, x: x.cumsum(dim=1)),
    ("cumsum_L", len_text(2, "f32", "", "cumsum(x, axis=1)"), "L", 3000001,
     "cumsum, few long rows, odd length (look-back)", "fp32-accurate", 1e-3, lambda F, x: x.cumsum(dim=1)),
    ("mean_mid_L", "op p {{\n  dims B = 64, {D}, C = 256\n  in x: f32[B, L, C]\n  out y = mean(x, axis=1)\n}}\n",
     "L", 4096, "mean over a middle axis, 256 columns", "fp32-accurate", 1e-4, lambda F, x: x.mean(dim=1)),
    # Not a length: few dyn rows of a sum down a middle axis, split in classes 8 times apart.
    ("colsum_B", "op p {{\n  dims {D}, R = 100000, C = 64\n  in x: f32[B, R, C]\n  out y = sum(x, axis=1)\n}}\n",
     "B", 3, "sum down a middle axis of 100000, 64 columns, few rows (split)", "fp32-accurate", 1e-4,
     lambda F, x: x.sum(dim=1)),
    ("colsum_B", "op p {{\n  dims {D}, R = 100000, C = 64\n  in x: f32[B, R, C]\n  out y = sum(x, axis=1)\n}}\n",
     "B", 100, "sum down a middle axis of 100000, 64 columns, few rows (split)", "fp32-accurate", 1e-4,
     lambda F, x: x.sum(dim=1)),
    # Not a length: few dyn rows of a sum along long contiguous rows, split below 2 rows an SM.
    ("sum_B", "op p {{\n  dims {D}, N = 1048576\n  in x: f32[B, N]\n  out y = sum(x, axis=1)\n}}\n",
     "B", 7, "sum over few rows of 2^20 (split)", "fp32-accurate", 1e-4, lambda F, x: x.sum(dim=1)),
    ("sum_B", "op p {{\n  dims {D}, N = 1048576\n  in x: f32[B, N]\n  out y = sum(x, axis=1)\n}}\n",
     "B", 100, "sum over few rows of 2^20 (split)", "fp32-accurate", 1e-4, lambda F, x: x.sum(dim=1)),
    # Not a length: a dyn inner extent ([Note: dyn inner extents]), the columns of a sum or a scan
    # down a middle axis: 16-byte columns (1000), the v4 sweep (1001), a split planned for the
    # class's narrowest and each launch's own count (few rows), an f16 whole-row sweep, and a
    # strided scan cut into chunks at the class's narrowest.
    ("colsum_C", "op p {{\n  dims B = 64, R = 1000, {D}\n  in x: f32[B, R, C]\n  out y = sum(x, axis=1)\n}}\n",
     "C", 1000, "sum down a middle axis of 1000, 64 rows", "fp32-accurate", 1e-4, lambda F, x: x.sum(dim=1)),
    ("colsum_C", "op p {{\n  dims B = 64, R = 1000, {D}\n  in x: f32[B, R, C]\n  out y = sum(x, axis=1)\n}}\n",
     "C", 1001, "sum down a middle axis of 1000, 64 rows", "fp32-accurate", 1e-4, lambda F, x: x.sum(dim=1)),
    ("colsum_C", "op p {{\n  dims B = 2, R = 100000, {D}\n  in x: f32[B, R, C]\n  out y = sum(x, axis=1)\n}}\n",
     "C", 100, "sum down a middle axis of 100000, 2 rows (split)", "fp32-accurate", 1e-4, lambda F, x: x.sum(dim=1)),
    ("colmax_C_f16", "op p {{\n  dims B = 4, R = 4096, {D}\n  in x: f16[B, R, C]\n  out y = max(x, axis=1)\n}}\n",
     "C", 4095, "f16 max down a middle axis of 4096", "f16", 1e-3, lambda F, x: x.amax(dim=1)),
    ("cumsum_mid_C", "op p {{\n  dims B = 2, R = 3000, {D}\n  in x: f32[B, R, C]\n  out y = cumsum(x, axis=1)\n}}\n",
     "C", 1000, "cumsum down a middle axis of 3000, 2 rows (chunked)", "fp32-accurate", 1e-3,
     lambda F, x: x.cumsum(dim=1)),
    ("cumsum_mid_C", "op p {{\n  dims B = 512, R = 256, {D}\n  in x: f32[B, R, C]\n  out y = cumsum(x, axis=1)\n}}\n",
     "C", 1000, "cumsum down a middle axis of 256, 512 rows (one pass)", "fp32-accurate", 1e-3,
     lambda F, x: x.cumsum(dim=1)),
    # Fused attention with a dyn batch and sequence length ([Note: dyn attention]): the kernel reads
    # them at launch, its maps set by each launch; beside PyTorch's scaled_dot_product_attention.
    ("attention_BS", "op p {{\n  dims {D}, H = 32\n  in q: f16[B, H, S, 128]\n  in k: f16[B, H, S, 128]\n"
                     "  in v: f16[B, H, S, 128]\n"
                     "  out o = matmul(softmax(matmul(q, transpose(k)) * 0.08838834764831845, axis=-1), v)\n}}\n",
     ("B", "S"), (2, 4096), "f16 attention, 32 heads, head dim 128", "f16", 2e-2,
     lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.08838834764831845)),
    ("attention_BS", "op p {{\n  dims {D}, H = 32\n  in q: f16[B, H, S, 128]\n  in k: f16[B, H, S, 128]\n"
                     "  in v: f16[B, H, S, 128]\n"
                     "  out o = matmul(softmax(matmul(q, transpose(k)) * 0.08838834764831845, axis=-1), v)\n}}\n",
     ("B", "S"), (16, 1000), "f16 attention, 32 heads, head dim 128", "f16", 2e-2,
     lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.08838834764831845)),
    ("attention_causal_S", "op p {{\n  dims B = 4, H = 32, {D}\n  in q: bf16[B, H, S, 128]\n"
                           "  in k: bf16[B, H, S, 128]\n  in v: bf16[B, H, S, 128]\n"
                           "  let s = matmul(q, transpose(k)) * 0.08838834764831845\n"
                           "  out o = matmul(softmax(where(iota(S, S, axis=1) <= iota(S, S, axis=0), s, -3.4e38), "
                           "axis=-1), v)\n}}\n",
     "S", 3000, "bf16 causal attention, 4 x 32 heads, head dim 128", "bf16", 2e-2,
     lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.08838834764831845)),
    # Not a length: a pool's dyn channels, which generic mode also bakes in, whose per-channel
    # prologue operand's index divides by C per element ([Note: dividing by a dyn extent]).
    ("max_pool_dyn_C", "op p {{\n  dims N = 64, {D}, H = 128, W = 128\n  in x: f32[N, C, H, W]\n  in s: f32[C, 1, 1]\n"
                       "  out y = relu(max_pool2d(x * s, 3, stride=2, padding=1))\n}}\n",
     "C", 64, "max pool 3x3 s2 p1 of x * s[C], relu", "fp32-accurate", 1e-4,
     lambda F, x, s: F.relu(F.max_pool2d(x * s, 3, stride=2, padding=1))),
    # Dyn pooled axes ([Note: dyn pooled axes]): a square image's side S (both axes), and a dyn W
    # under runs of 4 output rows (KernelBench 42's window); the extents come per launch.
    ("max_pool_dyn_S", "op p {{\n  dims N = 64, C = 64, {D}\n  in x: f32[N, C, S, S]\n  in s: f32[C, 1, 1]\n"
                       "  out y = relu(max_pool2d(x * s, 3, stride=2, padding=1)) + s\n}}\n",
     "S", 128, "max pool 3x3 s2 p1 of x * s[C], relu, + s[C]", "fp32-accurate", 1e-4,
     lambda F, x, s: F.relu(F.max_pool2d(x * s, 3, stride=2, padding=1)) + s),
    ("max_pool_dyn_W", "op p {{\n  dims N = 16, C = 64, H = 512, {D}\n  in x: f32[N, C, H, W]\n"
                       "  out y = max_pool2d(x, 4, stride=1, padding=1)\n}}\n",
     "W", 512, "max pool 4x4 s1 p1 (KernelBench 42's window)", "fp32-accurate", 1e-4,
     lambda F, x: F.max_pool2d(x, 4, stride=1, padding=1)),
    ("avg_pool_dyn_S", "op p {{\n  dims N = 64, C = 64, {D}\n  in x: f32[N, C, S, S]\n"
                       "  out y = avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=true, count_include_pad=false)\n}}\n",
     "S", 127, "avg pool 3x3 s2 p1 ceil, in-bounds count", "fp32-accurate", 1e-4,
     lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
]


def matmul_form(text):
    """A MATMUL_CASES product as the PyTorch form that conv cases give."""
    return lambda F, a, b: a @ b.transpose(-1, -2) if "transpose(w)" in text else a @ b


def written_twice_rows(args, torch, F, do_bench, kiln, cache, res, cases, kind, triton=None):
    """The rows of ops written twice, with `dims dyn D` and with D's value baked in (MATMUL_CASES,
    CONV_CASES, LEN_CASES; `kind` starts each row's problem): both checked against the PyTorch form
    in float64 on the GPU, then timed side by side with it (cuBLAS / cuDNN / PyTorch's kernels) and,
    for matmuls, the Triton kernel; returns how many were wrong."""
    opts = kiln.Options(cache_dir=cache)
    failures = 0
    for name, text, dim, value, what, precision, tol, form in cases:
        if args.quick and value not in (4096, 32) or args.ops and name not in args.ops.split(","):
            continue
        # One dyn dim, or several (a tuple of dims and a tuple of their values).
        dim_list, value_list = (dim, value) if isinstance(dim, tuple) else ((dim,), (value,))
        dyn_decl = ", ".join(f"dyn {d}" for d in dim_list)
        static_decl = ", ".join(f"{d} = {v}" for d, v in zip(dim_list, value_list))
        op_d = kiln.loads(text.format(D=dyn_decl), name=name + "_dyn.kiln", options=opts)["p"]
        op_s = kiln.loads(text.format(D=static_decl), name=name + ".kiln", options=opts)["p"]
        ex_d = op_d.specialize(**dict(zip(dim_list, value_list)))
        header = ex_d.plan.split("\n", 1)[0]
        args_info = [a for a in ex_d.arguments if not a["is_output"]]
        dims = " · ".join("x".join(str(v) for v in a["shape"]) for a in args_info)
        row = {"problem": f"{kind} {name} {dims} ({what}; dyn {', '.join(dim_list)})", "precision": precision,
               "plan_generic": header,
               "compile_ms": None}
        inputs = [(torch.rand(a["shape"], dtype=torch.float32, device="cuda") * 2 - 1).to(
            kiln.torch.torch_dtype(a["dtype"])) for a in args_info]
        want = form(F, *[t.double() for t in inputs])
        first = op_d(*inputs)
        outs = {}
        ok = True
        worst = 0.0
        for key, op in (("generic", op_d), ("specialized", op_s)):
            o = torch.full_like(first, float("nan"))
            op(*inputs, out=o)
            torch.cuda.synchronize()
            outs[key] = o
            scale = float(want.abs().max())   # sums of many products: relative to the largest output
            err = float(((o.double() - want).abs() / scale).nan_to_num(float("inf")).max())
            worst = max(worst, err)
            ok = ok and err <= tol
        row["correct"] = ok
        row["max_rel_error"] = worst
        if not ok:
            failures += 1
            res["rows"].append(row)
            print(json.dumps(row), flush=True)
            continue
        tri_prec = {"tf32": "tf32", "fp32-accurate": "tf32x3"}.get(precision, "tf32")
        fns = {"specialized": lambda: op_s(*inputs, out=outs["specialized"]),
               "generic": lambda: op_d(*inputs, out=outs["generic"]),
               "eager": lambda: form(F, *inputs)}
        if triton:
            a, b = inputs
            b_mat = b.transpose(-1, -2) if "transpose(w)" in text else b
            if a.dim() == 3 and b_mat.dim() == 2:   # shared weights: the folded views, as torch.matmul takes them
                a = a.reshape(-1, a.shape[-1])
            triton(a, b_mat, precision=tri_prec)   # autotunes this shape, outside the timing
            fns["triton"] = lambda: triton(a, b_mat, precision=tri_prec)
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        torch.backends.cudnn.allow_tf32 = precision == "tf32"
        runs = {k: [] for k in fns}
        for _ in range(1 if args.quick else args.rounds):
            for key, fn in fns.items():
                fn()
                torch.cuda.synchronize()
                runs[key].append(do_bench(fn, warmup=25, rep=100 if args.quick else 200, return_mode="median"))
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        for key in runs:
            row[{"generic": "kiln_ms", "eager": "eager_ms"}.get(key, key + "_ms")] = statistics.median(runs[key])
        row["rounds"] = runs
        row["generic_over_specialized"] = row["kiln_ms"] / row["specialized_ms"]
        row["speedup_vs_eager"] = row["eager_ms"] / row["kiln_ms"]
        res["rows"].append(row)
        print(json.dumps(row), flush=True)
        del inputs, first, outs, want
        torch.cuda.empty_cache()
    return failures


def eager_of(op_name, torch, F, consts):
    return {
        "relu_add": lambda a, b: torch.relu(a + b),
        "axpby": lambda x, y0: 2.0 * x + 0.5 * y0,
        "where_clamp": lambda x: torch.clamp(x, -1.0, 1.0),
        "gelu": lambda x: F.gelu(x),
        "silu": lambda x: F.silu(x),
        "scale_cast_f16": lambda x, s: x.float() * s,
        "sigmoid_tanh_mix": lambda x, g: (torch.sigmoid(g) * torch.tanh(x) + (1 - torch.sigmoid(g)) * x,
                                          torch.maximum(x.abs(), g.abs().sqrt())),
        "softmax": lambda x: torch.softmax(x, dim=-1),
        "log_softmax": lambda x: torch.log_softmax(x, dim=1),
        "layernorm": lambda x, g, b: F.layer_norm(x, x.shape[-1:], g, b, 1e-5),
        "rmsnorm": lambda x, g: x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + 1e-6) * g,
        "sum_rows": lambda x: x.sum(dim=-1),
        "min_reduce": lambda x: x.amin(dim=consts.get("axis", 1)),
        "argmax_rows": lambda x: x.argmax(dim=1),
        "logsumexp_rows": lambda x: torch.logsumexp(x, dim=1),
        "cumsum_reverse": lambda x: x.flip(-1).cumsum(-1).flip(-1),
        "cumsum_long_rows": lambda x: x.cumsum(1),
        "cumsum_mid_exclusive": lambda x: x.cumsum(1) - x,
        "cummin_mid_reverse": lambda x: x.flip(1).cummin(1).values.flip(1),
        "max_pool2d_relu": lambda x, s: torch.relu(F.max_pool2d(x * s, 3, stride=2, padding=1)),
        "pool3d": lambda x: (F.max_pool3d(x, 3, stride=2, padding=1),
                             F.avg_pool3d(x, [2, 3, 3], stride=[2, 2, 1], padding=[1, 1, 0], count_include_pad=False)),
    }[op_name]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the three timings (the row keeps their median)")
    ap.add_argument("--kiln", default="", help="the folder holding the kiln package (default: .gpu/python)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--chart", default="", help="only draw the chart of this result JSON (beside it, .png)")
    ap.add_argument("--only", choices=["all", "memory", "matmul", "conv", "len"], default="all",
                    help="the elementwise and memory-bound rows, the matmul rows, the conv rows, the rows over a "
                         "dyn length (and dyn rows and inner extents written twice), or all")
    ap.add_argument("--ops", default="", help="comma-separated op names: only these rows (of CASES, or the names "
                                              "of MATMUL_CASES, CONV_CASES and LEN_CASES)")
    args = ap.parse_args()
    if args.chart:
        with open(args.chart) as f:
            chart(json.load(f), os.path.splitext(args.chart)[0] + ".png")
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpu_setup import gpu_modules
    torch, F, do_bench, kiln = gpu_modules("shapes_bench.py", args.kiln)
    import kiln.torch

    cache = tempfile.mkdtemp(prefix="kiln-shapes-cache-")
    generic = kiln.Options(cache_dir=cache, shapes="generic")
    special = kiln.Options(cache_dir=cache, shapes="specialized")
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "kiln": kiln.__version__,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "rows": [],
           "rounds": 1 if args.quick else args.rounds}
    torch.manual_seed(0)
    failures = 0
    for i, (spec, name, dims, what, *rest) in enumerate(CASES):
        consts = rest[0] if rest else {}   # a case's const values (keyword arguments), if any
        if args.only not in ("all", "memory") or (args.quick and i not in QUICK) or \
                (args.ops and name not in args.ops.split(",")):
            continue
        path = os.path.join(ROOT, spec)
        op_g, op_s = kiln.load(path, generic)[name], kiln.load(path, special)[name]
        ex_g = op_g.specialize(**dims, **consts)
        header = ex_g.plan.split("\n", 1)[0]
        row = {"problem": f"{name} {'x'.join(str(v) for v in dims.values())} ({what})", "precision": "fp32-accurate",
               "plan_generic": header, "compile_ms": None}
        if "(dyn" not in header:
            row.update(correct=None, note="generic mode leaves every dim baked in for this op")
            res["rows"].append(row)
            print(json.dumps(row), flush=True)
            continue
        inputs = []
        for a in ex_g.arguments:
            if a["is_output"]:
                continue
            if a["is_tensor"]:
                t = kiln.torch.torch_dtype(a["dtype"])
                inputs.append((torch.rand(a["shape"], dtype=torch.float32, device="cuda") * 4 - 2).to(t))
            else:
                inputs.append(1.75)
        host = [x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs]
        first = op_g(*inputs, **consts)
        first = first if isinstance(first, tuple) else (first,)
        expected = [torch.as_tensor(e).double() for e in
                    (lambda r: r if isinstance(r, tuple) else (r,))(op_g.reference(*host, **consts))]
        outs = {}
        ok = True
        worst = 0.0
        for key, op in (("generic", op_g), ("specialized", op_s)):
            o = tuple(torch.full_like(f, float("nan") if f.is_floating_point() else -1) for f in first)
            op(*inputs, out=o, **consts)
            torch.cuda.synchronize()
            outs[key] = o
            for g, e in zip(o, expected):
                gd = g.cpu().double()
                err = float(((gd - e).abs() / (e.abs() + 1e-6)).nan_to_num(float("inf")).max())
                worst = max(worst, err)
                tol = TOLERANCE.get(name, 1e-4)
                ok = ok and bool(torch.allclose(gd, e, rtol=tol, atol=tol))
        row["correct"] = ok
        row["max_rel_error"] = worst
        stats_g = kiln.stats(generic)
        row["generic_compiles"] = stats_g["compiles"]
        if not ok:
            failures += 1
            res["rows"].append(row)
            print(json.dumps(row), flush=True)
            continue
        eager = eager_of(name, torch, F, consts)
        runs = {"specialized": [], "generic": [], "eager": []}
        fns = {"specialized": lambda: op_s(*inputs, out=outs["specialized"], **consts),
               "generic": lambda: op_g(*inputs, out=outs["generic"], **consts),
               "eager": lambda: eager(*inputs)}
        for _ in range(1 if args.quick else args.rounds):
            for key, fn in fns.items():
                fn()
                torch.cuda.synchronize()
                runs[key].append(do_bench(fn, warmup=25, rep=100 if args.quick else 200, return_mode="median"))
        row["specialized_ms"] = statistics.median(runs["specialized"])
        row["kiln_ms"] = statistics.median(runs["generic"])
        row["eager_ms"] = statistics.median(runs["eager"])
        row["rounds"] = runs
        row["generic_over_specialized"] = row["kiln_ms"] / row["specialized_ms"]
        row["speedup_vs_eager"] = row["eager_ms"] / row["kiln_ms"]
        res["rows"].append(row)
        print(json.dumps(row), flush=True)
        del inputs, first, outs
        torch.cuda.empty_cache()

    if args.only in ("all", "matmul"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from triton_matmul import triton_matmul
        cases = [c[:7] + (matmul_form(c[1]),) for c in MATMUL_CASES]
        failures += written_twice_rows(args, torch, F, do_bench, kiln, cache, res, cases, "matmul",
                                       triton=triton_matmul)
    if args.only in ("all", "conv"):
        failures += written_twice_rows(args, torch, F, do_bench, kiln, cache, res, CONV_CASES, "conv")
    if args.only in ("all", "len"):
        failures += written_twice_rows(args, torch, F, do_bench, kiln, cache, res, LEN_CASES, "memory")

    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    base = os.path.join(args.out, f"shapes-{stamp}")
    with open(base + ".json", "w") as f:
        json.dump(res, f, indent=1)
    table = markdown(res)
    with open(base + ".md", "w") as f:
        f.write(table)
    chart(res, base + ".png")
    print("\n" + table)
    sys.exit(1 if failures else 0)


def chart(res, path):
    """generic/specialized per row (a PNG; skipped without matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    rows = [r for r in res["rows"] if r.get("generic_over_specialized")]
    fig, ax = plt.subplots(figsize=(9, 0.4 * len(rows) + 1.5))
    ax.barh([r["problem"] for r in rows], [r["generic_over_specialized"] for r in rows])
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(1.1, color="red", linewidth=0.8, linestyle="--")
    ax.set_xlabel("generic kernel time / specialized kernel time (lower is better; red: +10%)")
    ax.set_title(f"{res['gpu']}, {res['date']}")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def markdown(res):
    lines = [f"{res['gpu']}, torch {res['torch']}, kiln {res['kiln']}, {res['date']}; medians of {res.get('rounds', 3)} rounds", "",
             "(matmul and conv rows: generic = the `dyn` op; eager = torch.matmul (cuBLAS) or F.conv2d (cuDNN); "
             "Triton = bench/triton_matmul.py)", "",
             "| problem | specialized ms | generic ms | generic/specialized | eager ms | eager/generic | Triton ms | "
             "correct | generic plan |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        f = lambda k: "—" if r.get(k) is None else f"{r[k]:.3f}"  # noqa: E731
        lines.append(f"| {r['problem']} | {f('specialized_ms')} | {f('kiln_ms')} | {f('generic_over_specialized')} | "
                     f"{f('eager_ms')} | {f('speedup_vs_eager')} | {f('triton_ms')} | {r['correct']} | "
                     f"`{r['plan_generic']}` |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
