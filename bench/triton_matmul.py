"""A plain Triton matmul: the Triton column of bench.py's GEMM sweep.

This is the kernel a Triton user writes first, and so the yardstick kiln's GEMM should beat:
one program per BLOCK_M x BLOCK_N tile of C, a loop over K in BLOCK_K steps with `tl.dot`,
an fp32 accumulator, masks on every ragged edge, and the output stored in the inputs' dtype.
Nothing clever: no split-K, no persistent programs, no TMA descriptors, no warp
specialization; `triton.autotune` picks one of eight tile shapes per problem.

[Note: what the autotuner's key holds]
The key is (M, N, K) and the four strides of A and B. Triton adds the argument dtypes itself;
the strides are there so that a·b, a·bᵀ and aᵀ·b of one shape are tuned apart (which operand
has K contiguous changes the best tile), instead of the first layout's winner serving all.

Precision of f32 inputs (ignored for f16 / bf16): "tf32" (one TF32 tensor-core product),
"tf32x3" (Triton's split-precision 3xTF32, fp32-level accuracy) or "ieee" (FMA).
"""
import torch
import triton
import triton.language as tl

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages): large tiles for big problems (BLOCK_K 32
# variants so that f32 operands fit a 3-stage pipeline too), middle ones for ragged and
# mid-size shapes, 64x64 and 32x64 for problems whose grid of large tiles leaves most SMs idle
# (large K, a GEMV). _prune drops those whose pipeline does not fit for the dtype at hand.
_TILES = [
    (128, 256, 64, 8, 3),
    (128, 256, 32, 8, 3),
    (256, 128, 32, 8, 3),
    (128, 128, 64, 8, 3),
    (128, 128, 32, 4, 4),
    (128, 64, 64, 4, 4),
    (64, 64, 64, 4, 4),
    (32, 64, 128, 4, 4),
]

GROUP_M = 8   # rows of tiles walked together, so consecutive programs reuse B's tiles in L2


def _configs():
    return [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=w, num_stages=s)
            for bm, bn, bk, w, s in _TILES]


def _shared_memory_limit():
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return getattr(props, "shared_memory_per_block_optin", 0) or 232448


def _prune(configs, named_args, **kwargs):
    """Drops tiles whose pipeline cannot fit in shared memory for this dtype (f32 halves what fits)."""
    elem = named_args["a_ptr"].element_size()
    limit = _shared_memory_limit()
    fits = [c for c in configs
            if c.num_stages * (c.kwargs["BLOCK_M"] + c.kwargs["BLOCK_N"]) * c.kwargs["BLOCK_K"] * elem <= limit]
    return fits or configs[-1:]


@triton.autotune(configs=_configs(), key=["M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                   stride_ab, stride_am, stride_ak,
                   stride_bb, stride_bk, stride_bn,
                   stride_cb, stride_cm, stride_cn,
                   INPUT_PRECISION: tl.constexpr, GROUP: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Which tile: program ids run down a band of GROUP tile rows before moving right, so the
    # programs in flight at once touch GROUP row panels of A and a few column panels of B.
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    band = pid // (GROUP * tiles_n)
    band_first = band * GROUP
    band_rows = tl.minimum(tiles_m - band_first, GROUP)
    in_band = pid % (GROUP * tiles_n)
    tile_m = band_first + in_band % band_rows
    tile_n = in_band // band_rows

    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    row_ok = rows < M
    col_ok = cols < N
    a_tile = a_ptr + batch * stride_ab + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_tile = b_ptr + batch * stride_bb + ks[:, None] * stride_bk + cols[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = ks < K - k0
        a = tl.load(a_tile, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_tile, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk

    c_tile = c_ptr + batch * stride_cb + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_tile, acc.to(c_ptr.dtype.element_ty), mask=row_ok[:, None] & col_ok[None, :])


def best_config():
    """The tile the autotuner picked for the last problem it saw, as text (None before a call)."""
    c = getattr(_matmul_kernel, "best_config", None)
    if c is None:
        return None
    k = c.kwargs
    return f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} w{c.num_warps} s{c.num_stages}"


def triton_matmul(a, b, out=None, precision="tf32"):
    """a @ b for 2-D a [M, K] and b [K, N], or 3-D a [B, M, K] with b [B, K, N] or [K, N].

    Any strides (a transposed view is read in place); f32, f16 or bf16, both the same; fp32
    accumulation; the result has the inputs' dtype. `out`, when given, is written and returned.
    """
    if a.dtype != b.dtype or a.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise TypeError(f"triton_matmul: f32, f16 or bf16 operands of one dtype, got {a.dtype} and {b.dtype}")
    if precision not in ("tf32", "tf32x3", "ieee"):
        raise ValueError(f"triton_matmul: precision is tf32, tf32x3 or ieee, got {precision!r}")
    if a.dim() not in (2, 3) or b.dim() not in (2, 3) or (a.dim() == 2 and b.dim() == 3):
        raise ValueError(f"triton_matmul: 2-D x 2-D or 3-D x 2/3-D, got {tuple(a.shape)} and {tuple(b.shape)}")
    batched = a.dim() == 3
    batch = a.shape[0] if batched else 1
    m, k = a.shape[-2:]
    k2, n = b.shape[-2:]
    if k != k2 or (b.dim() == 3 and b.shape[0] != batch):
        raise ValueError(f"triton_matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} do not multiply")
    shape = (batch, m, n) if batched else (m, n)
    if out is None:
        out = torch.empty(shape, device=a.device, dtype=a.dtype)
    elif tuple(out.shape) != shape or out.dtype != a.dtype:
        raise ValueError(f"triton_matmul: out is {tuple(out.shape)} {out.dtype}, expected {shape} {a.dtype}")
    sa = a.stride() if batched else (0,) + a.stride()
    sb = b.stride() if b.dim() == 3 else (0,) + b.stride()   # a 2-D b serves every batch
    sc = out.stride() if batched else (0,) + out.stride()

    def grid(meta):
        return (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]), batch)
    _matmul_kernel[grid](a, b, out, m, n, k, *sa, *sb, *sc, INPUT_PRECISION=precision, GROUP=GROUP_M)
    return out
