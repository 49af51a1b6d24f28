"""Convolutions against PyTorch: conv{1,2,3}d and conv_transpose{1,2,3}d (docs/semantics.md,
"Convolution") over many random settings (kernel, stride, padding, dilation, groups,
output_padding) on odd sizes. On the CPU kiln's float64 reference is held to
torch.nn.functional's output shape and values; where a CUDA GPU is present, kiln's kernels too,
beside PyTorch's on the same device, in f32, f16 and bf16. Skips where there is no PyTorch (fails
under KILN_TEST_TORCH=1)."""

import random

import pytest

import kiln
from conftest import SPECS, import_torch

torch = import_torch("the comparison with PyTorch needs PyTorch")
F = torch.nn.functional


def random_case(rng, d, transposed):
    groups = rng.choice([1, 1, 2, 3])
    cg, kg = rng.randint(1, 4), rng.randint(1, 4)
    kernel = [rng.randint(1, 3 if d == 3 else 4) for _ in range(d)]
    stride = [rng.randint(1, 3) for _ in range(d)]
    dilation = [rng.randint(1, 2) for _ in range(d)]
    span = [dl * (k - 1) for k, dl in zip(kernel, dilation)]
    padding = [rng.randint(0, s) for s in span]
    case = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    top = 6 if d == 3 else 12 if d == 2 else 40
    if transposed:
        case["output_padding"] = [rng.randint(0, max(s, dl) - 1) for s, dl in zip(stride, dilation)]
        # (L - 1) * stride - 2 * padding + span + output_padding + 1 >= 1
        sizes = [max(1, -(-(2 * p - sp) // s) + 1) + rng.randint(0, top) for p, sp, s in zip(padding, span, stride)]
        w = [cg * groups, kg] + kernel
    else:
        sizes = [max(1, sp + 1 - 2 * p) + rng.randint(0, top) for p, sp in zip(padding, span)]
        w = [kg * groups, cg] + kernel
    x = [rng.randint(1, 3), cg * groups] + sizes
    return x, w, case


def torch_conv(x, w, d, transposed, case):
    fn = getattr(F, f"conv_transpose{d}d" if transposed else f"conv{d}d")
    return fn(x, w, **case)


def spec_text(d, transposed, dtype, xs, ws, case, precision=None):
    kw = ", ".join(f"{k}={v}" for k, v in case.items())
    if precision:
        kw += f', precision="{precision}"'
    fn = f"conv_transpose{d}d" if transposed else f"conv{d}d"
    return (f"op c {{\n  in x: {dtype}{xs}\n  in w: {dtype}{ws}\n  out y = {fn}(x, w, {kw})\n}}\n")


def randn(shape, dtype, rng):
    g = torch.Generator().manual_seed(rng.randint(0, 1 << 30))
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)


def check(got, want, name, rtol, atol):
    assert got.shape == want.shape, f"{name}: shape {tuple(got.shape)}, PyTorch {tuple(want.shape)}"
    assert got.dtype == want.dtype, name
    torch.testing.assert_close(got.double(), want.double(), rtol=rtol, atol=atol, msg=lambda m: f"{name}: {m}")


CASES = [(d, t, seed) for d in (1, 2, 3) for t in (False, True) for seed in range(10)]


@pytest.mark.parametrize("d,transposed,seed", CASES)
def test_reference_matches_torch(tmp_path, d, transposed, seed):
    rng = random.Random(1000 * d + 100 * transposed + seed)
    xs, ws, case = random_case(rng, d, transposed)
    x, w = randn(xs, torch.float64, rng), randn(ws, torch.float64, rng)
    text = spec_text(d, transposed, "f64", xs, ws, case)
    prog = kiln.loads(text, name="conv", options=kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False))
    check(prog.c.reference(x, w), torch_conv(x, w, d, transposed, case), text, 1e-12, 1e-12)


def test_the_spec_ops_match_torch(tmp_path):
    """specs/conv_nd.kiln's epilogue ops at small sizes (bound from the tensors)."""
    prog = kiln.load(SPECS / "conv_nd.kiln", kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False))
    rng = random.Random(5)
    x, w, b = randn([2, 64, 50], torch.float32, rng), randn([128, 64, 3], torch.float32, rng), randn([128, 1], torch.float32, rng)
    check(prog.conv1d_strided_dilated_bias.reference(x, w, b), F.relu(F.conv1d(x, w, stride=3, dilation=4) + b), "conv1d", 1e-5, 1e-5)
    x, w, b = randn([2, 48, 7, 9], torch.float16, rng), randn([48, 40, 4, 4], torch.float16, rng), randn([40, 1, 1], torch.float16, rng)
    want = F.relu(F.conv_transpose2d(x.float(), w.float(), stride=2, padding=1, output_padding=1) + b.float()).half()
    check(prog.conv_transpose2d_opad_f16.reference(x, w, b), want, "conv_transpose2d f16", 2e-3, 2e-3)


def test_checker_errors_are_located(tmp_path):
    bad = [("conv_transpose2d(x, w, stride=2, output_padding=2)", "output_padding of conv_transpose2d() must be smaller"),
           ("conv3d(x, w)", "conv3d() needs a rank-5 input x"),
           ("conv_transpose2d(x, w, layout=\"NHWC\")", "conv_transpose2d() has no argument 'layout'"),
           ("conv_transpose2d(x, w, groups=3)", "input channels w.shape[0] = 4 are not divisible by groups = 3")]
    for call, message in bad:
        text = f"op c {{\n  in x: f32[1, 4, 5, 5]\n  in w: f32[4, 2, 3, 3]\n  out y = {call}\n}}\n"
        with pytest.raises(kiln.SpecError) as e:
            kiln.loads(text, name="bad", options=kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False))
        assert message in str(e.value), str(e.value)
        assert e.value.line == 4, str(e.value)


gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here: the kernel comparison needs one")


@gpu
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_kernels_match_torch_on_the_gpu(tmp_path, dtype):
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    tol = {"f32": 1e-4, "f16": 1e-2, "bf16": 5e-2}[dtype]
    rng = random.Random(91 + len(dtype))
    options = kiln.Options(cache_dir=str(tmp_path), use_environment=False)
    for d in (1, 2, 3):
        for transposed in (False, True):
            for _ in range(6):
                xs, ws, case = random_case(rng, d, transposed)
                xs = xs[:2] + [s + rng.randint(0, 30 if d < 3 else 6) for s in xs[2:]]
                x, w = randn(xs, tdt, rng).cuda(), randn(ws, tdt, rng).cuda()
                text = spec_text(d, transposed, dtype, xs, ws, case, "3xtf32" if dtype == "f32" else None)
                got = kiln.loads(text, name="conv", options=options).c(x, w)
                want = torch_conv(x.double(), w.double(), d, transposed, case).to(tdt)
                check(got, want, text, tol, tol)


def tma_case(rng, transposed):
    """A conv over three spatial axes that the sm_90a TMA engine takes (x a 5-D im2col map): at
    least 16 input channels (config/conv.h's kConvTmaMinChannels3d), one group, a forward conv or a stride-1 transposed one, odd sizes and
    channel counts that are not multiples of 32, and images enough for 2^31 flops (twice the
    engine's floor, plan_contraction.cpp's kPadMinFlops, under which its copies do not pay)."""
    c, k = rng.choice([16, 20, 36]), rng.choice([16, 40, 70])
    kernel = [rng.randint(2, 3) for _ in range(3)]
    dilation = [rng.randint(1, 2) for _ in range(3)]
    span = [dl * (kk - 1) for kk, dl in zip(kernel, dilation)]
    padding = [rng.randint(0, s) for s in span]
    stride = [1, 1, 1] if transposed else [rng.randint(1, 2) for _ in range(3)]
    sizes = [rng.randint(9, 17), rng.randint(20, 33), rng.randint(30, 61)]
    if transposed:
        case = dict(padding=padding, dilation=dilation)
        w = [c, k] + kernel
        out = [n - 2 * p + sp for n, p, sp in zip(sizes, padding, span)]
    else:
        case = dict(stride=stride, padding=padding, dilation=dilation)
        w = [k, c] + kernel
        out = [(n + 2 * p - sp - 1) // st + 1 for n, p, sp, st in zip(sizes, padding, span, stride)]
    image_flops = 2 * k * c * kernel[0] * kernel[1] * kernel[2] * out[0] * out[1] * out[2]
    return [min(256, -(-(1 << 31) // image_flops)), c] + sizes, w, case


@gpu
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("precision", ["tf32", "3xtf32"])
def test_tma_engine_over_three_axes_matches_torch(tmp_path, transposed, precision):
    """conv3d and stride-1 conv_transpose3d on the TMA engine (sm_90a): each plan must say so."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the TMA engine needs an sm_90a GPU")
    rng = random.Random(7 + 10 * transposed + len(precision))
    options = kiln.Options(cache_dir=str(tmp_path), use_environment=False)
    tol = 1e-2 if precision == "tf32" else 1e-4   # docs/semantics.md, "Tolerances"
    on_engine = 0
    for _ in range(5):
        xs, ws, case = tma_case(rng, transposed)
        # Filters scaled by 1 / sqrt(fan-in), as PyTorch initializes them: outputs of magnitude ~1,
        # the scale the tolerances are written for (unscaled, tf32's error grows with sqrt(K)).
        fan_in = xs[1] * ws[2] * ws[3] * ws[4]
        x, w = randn(xs, torch.float32, rng).cuda(), (randn(ws, torch.float32, rng) / fan_in ** 0.5).cuda()
        text = spec_text(3, transposed, "f32", xs, ws, case, precision)
        prog = kiln.loads(text, name="conv", options=options)
        on_engine += "over three spatial axes" in prog.c.specialize().plan
        got = prog.c(x, w)
        want = torch_conv(x.double(), w.double(), 3, transposed, case).float()
        check(got, want, text, tol, tol)
    assert on_engine == 5, f"only {on_engine} of 5 cases planned the TMA engine"


def phased_case(rng, d):
    """A transposed conv over d axes with a stride over 1 that the sm_90a TMA engine runs by stride
    phase: at least 16 channels, one group, output_padding, phases no tap reaches (stride over the
    filter's reach), a GEMM K (channels x taps) of at least 128 where the w stride is over 1
    (plan_contraction.cpp's kConvPhaseWMinK), and images enough for 2^31 flops (as tma_case)."""
    while True:
        c, k = rng.choice([16, 20, 36]), rng.choice([16, 40, 70])
        kernel = [rng.randint(2, 3 if d == 3 else 5) for _ in range(d)]
        stride = [rng.randint(1, 3) for _ in range(d)]
        stride[rng.randrange(d)] = rng.randint(2, 4)
        taps = 1
        for kk in kernel:
            taps *= kk
        if stride[-1] == 1 or c * taps >= 128:
            break
    dilation = [rng.randint(1, 2) for _ in range(d)]
    span = [dl * (kk - 1) for kk, dl in zip(kernel, dilation)]
    padding = [rng.randint(0, s) for s in span]
    output_padding = [rng.randint(0, max(s, dl) - 1) for s, dl in zip(stride, dilation)]
    case = dict(stride=stride, padding=padding, output_padding=output_padding, dilation=dilation)
    sizes = {1: lambda: [rng.randint(300, 3000)], 2: lambda: [rng.randint(15, 41), rng.randint(30, 91)],
             3: lambda: [rng.randint(5, 11), rng.randint(9, 21), rng.randint(15, 33)]}[d]()
    image_flops = 2 * k * c * taps
    for n in sizes:
        image_flops *= n
    return [min(1024, -(-(1 << 31) // image_flops)), c] + sizes, [c, k] + kernel, case


@gpu
@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("precision", ["tf32", "3xtf32"])
def test_tma_engine_by_stride_phase_matches_torch(tmp_path, d, precision):
    """Strided transposed convs on the TMA engine by stride phase (sm_90a): each plan must say so."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the TMA engine needs an sm_90a GPU")
    rng = random.Random(31 + d + len(precision))
    options = kiln.Options(cache_dir=str(tmp_path), use_environment=False)
    tol = 1e-2 if precision == "tf32" else 1e-4   # docs/semantics.md, "Tolerances"
    phased = 0
    for _ in range(5):
        xs, ws, case = phased_case(rng, d)
        fan_in = xs[1]
        for kk in ws[2:]:
            fan_in *= kk
        x, w = randn(xs, torch.float32, rng).cuda(), (randn(ws, torch.float32, rng) / fan_in ** 0.5).cuda()
        text = spec_text(d, True, "f32", xs, ws, case, precision)
        prog = kiln.loads(text, name="conv", options=options)
        phased += "one implicit GEMM per stride phase" in prog.c.specialize().plan
        got = prog.c(x, w)
        want = torch_conv(x.double(), w.double(), d, True, case).float()
        check(got, want, text, tol, tol)
    assert phased == 5, f"only {phased} of 5 cases planned the TMA engine by stride phase"
