"""Pooling against PyTorch: max_pool{1,2,3}d and avg_pool{1,2,3}d (docs/semantics.md, "Pooling")
over many random window settings (kernel, stride, padding, dilation, ceil_mode,
count_include_pad, divisor_override) on odd sizes, NaN and infinities included. On the CPU kiln's
float64 reference is held to torch.nn.functional's output shape and values; where a CUDA GPU is
present, kiln's kernels too, beside PyTorch's on the same device. Skips where there is no PyTorch
(fails under KILN_TEST_TORCH=1)."""

import random

import pytest

import kiln
from conftest import SPECS, import_torch

torch = import_torch("the comparison with PyTorch needs PyTorch")
F = torch.nn.functional

AXES = {1: ["L"], 2: ["H", "W"], 3: ["D", "H", "W"]}


def random_case(rng, d, is_max):
    kernel = [rng.randint(1, 4) for _ in range(d)]
    stride = [rng.randint(1, 3) for _ in range(d)]
    padding = [rng.randint(0, k // 2) for k in kernel]
    dilation = [rng.randint(1, 3) if is_max else 1 for _ in range(d)]
    span = [dl * (k - 1) + 1 for k, dl in zip(kernel, dilation)]
    sizes = [rng.randint(max(1, s - 2 * p), s + 9) for s, p in zip(span, padding)]
    if d == 3 and not is_max:   # PyTorch's avg_pool3d alone refuses an input smaller than its kernel
        sizes = [max(n, k) for n, k in zip(sizes, kernel)]
    case = dict(kernel=kernel, stride=stride, padding=padding, ceil_mode=rng.random() < 0.5)
    if is_max:
        case["dilation"] = dilation
    else:
        case["count_include_pad"] = rng.random() < 0.5
        if rng.random() < 0.25:
            case["divisor_override"] = rng.choice([1, 3, 7])
    return sizes, case


def torch_pool(x, d, is_max, case):
    args = dict(case)
    if "divisor_override" in args and d == 1:   # avg_pool1d has none: PyTorch's 2-d form with H = 1
        k, s, p = args.pop("kernel"), args.pop("stride"), args.pop("padding")
        return F.avg_pool2d(x.unsqueeze(-2), [1] + k, stride=[1] + s, padding=[0] + p, **args).squeeze(-2)
    fn = getattr(F, f"{'max' if is_max else 'avg'}_pool{d}d")
    return fn(x, args.pop("kernel"), **args)


def spec_text(d, is_max, dtype, case, rank):
    names = ["N", "C"][: rank - d] + AXES[d]
    kw = ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in case.items() if k != "kernel")
    fn = f"{'max' if is_max else 'avg'}_pool{d}d"
    return (f"op p {{\n  dims {', '.join(f'{n} = 1' for n in names)}\n  in x: {dtype}[{', '.join(names)}]\n"
            f"  out y = {fn}(x, {case['kernel']}{', ' + kw if kw else ''})\n}}\n")


def inputs(shape, dtype, rng):
    g = torch.Generator().manual_seed(rng.randint(0, 1 << 30))
    x = torch.randn(*shape, generator=g, dtype=torch.float64)
    flat = x.view(-1)
    if flat.numel() > 8 and rng.random() < 0.3:   # a NaN and infinities in some cases
        flat[rng.randrange(flat.numel())] = float("nan")
        flat[rng.randrange(flat.numel())] = float("inf")
        flat[rng.randrange(flat.numel())] = float("-inf")
    return x.to(dtype)


def check(got, want, name, rtol, atol):
    assert got.shape == want.shape, f"{name}: shape {tuple(got.shape)}, PyTorch {tuple(want.shape)}"
    assert got.dtype == want.dtype, name
    torch.testing.assert_close(got.double(), want.double(), rtol=rtol, atol=atol, equal_nan=True,
                               msg=lambda m: f"{name}: {m}")


CASES = [(d, is_max, seed) for d in (1, 2, 3) for is_max in (True, False) for seed in range(12)]


@pytest.mark.parametrize("d,is_max,seed", CASES)
def test_reference_matches_torch(tmp_path, d, is_max, seed):
    rng = random.Random(1000 * d + 100 * is_max + seed)
    sizes, case = random_case(rng, d, is_max)
    rank = d + rng.choice([1, 2])
    shape = [rng.randint(1, 3) for _ in range(rank - d)] + sizes
    x = inputs(shape, torch.float32, rng)
    text = spec_text(d, is_max, "f32", case, rank)
    prog = kiln.loads(text, name="pool", options=kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False))
    check(prog.p.reference(x), torch_pool(x, d, is_max, case), text, 1e-6, 1e-6)


def test_the_spec_ops_match_torch(tmp_path):
    prog = kiln.load(SPECS / "pooling.kiln", kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False))
    g = torch.Generator().manual_seed(11)
    x = torch.randn(2, 3, 20, 17, generator=g)
    s = torch.randn(3, 1, 1, generator=g)
    check(prog.max_pool2d_relu.reference(x, s), F.relu(F.max_pool2d(x * s, 3, stride=2, padding=1)), "relu", 0, 0)
    h = torch.randn(2, 4, 9, 11, generator=g).half()
    b = torch.randn(4, 9, 11, generator=g).bfloat16()
    mh, ah, ab = prog.pool_half.reference(h, b)
    check(mh, F.max_pool2d(h.float(), 2).half(), "f16 max", 0, 0)
    check(ah, F.avg_pool2d(h.float(), 3, stride=1, padding=1).half(), "f16 avg", 1e-3, 1e-3)
    check(ab, F.avg_pool2d(b.float(), 2, ceil_mode=True).bfloat16(), "bf16 avg", 1e-2, 1e-2)


gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here: the kernel comparison needs one")


@gpu
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_kernels_match_torch_on_the_gpu(tmp_path, dtype):
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    tol = {"f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}[dtype]
    rng = random.Random(77 + len(dtype))
    options = kiln.Options(cache_dir=str(tmp_path), use_environment=False)
    vector_runs = 0
    for d in (1, 2, 3):
        for is_max in (True, False):
            for i in range(6):
                sizes, case = random_case(rng, d, is_max)
                rank = d + rng.choice([1, 2])
                shape = [rng.randint(1, 5) for _ in range(rank - d)] + [s + rng.randint(0, 40) for s in sizes]
                if i % 2:   # rows of a multiple of 16 bytes: the vector runs (config/pool.h, pool_vec)
                    shape[-1] += -shape[-1] % 8
                x = inputs(shape, tdt, rng).cuda()
                text = spec_text(d, is_max, dtype, case, rank)
                prog = kiln.loads(text, name="pool", options=options)
                got = prog.p(x)
                want = torch_pool(x, d, is_max, case)
                check(got, want, text, tol, tol)
                names = ["N", "C"][: rank - d] + AXES[d]
                plan = prog.p.specialize(**dict(zip(names, shape))).plan
                vector_runs += "aligned 16-byte vectors" in plan
    assert vector_runs >= 6, f"only {vector_runs} of 36 cases planned vector runs"


# Max pools whose runs are stored as aligned vectors (templates/kiln/config/pool.h, [Note: pool wide
# stores]): rows of 255 outputs, whose runs start at every flat index mod 4, and aligned rows; in
# runs of 4 rows, a 3-d one; and an avg pool, whose runs are stored one by one.
WIDE = [
    ("max_pool2d", [2, 3, 64, 255], dict(kernel=3, stride=1, padding=1)),
    ("max_pool2d", [1, 2, 67, 256], dict(kernel=[4, 3], stride=1, padding=1)),
    ("avg_pool2d", [2, 2, 128, 256], dict(kernel=3, stride=2, padding=1)),
    ("max_pool3d", [1, 2, 5, 64, 255], dict(kernel=3, stride=1, padding=1)),
]


@gpu
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_wide_stores_on_the_gpu(tmp_path, dtype):
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    tol = {"f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}[dtype]
    rng = random.Random(5 + len(dtype))
    options = kiln.Options(cache_dir=str(tmp_path), use_environment=False)
    for fn, shape, case in WIDE:
        d = int(fn[-2])
        x = inputs(shape, tdt, rng).cuda()
        text = spec_text(d, fn.startswith("max"), dtype, case, len(shape))
        prog = kiln.loads(text, name="pool", options=options)
        check(prog.p(x), torch_pool(x, d, fn.startswith("max"), dict(case)), text, tol, tol)
        names = ["N", "C"][: len(shape) - d] + AXES[d]
        plan = prog.p.specialize(**dict(zip(names, shape))).plan
        assert ("stored as aligned vectors" in plan) == fn.startswith("max"), plan
