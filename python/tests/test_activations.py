"""specs/activations.kiln against PyTorch: kiln's float64 reference of each activation function,
clamp, log1p, expm1 and erf (docs/semantics.md, "Activations") beside torch.nn.functional on the
CPU, on random values and the special ones (zeros of both signs, the branch points, the softplus
threshold, infinities, NaN). The GPU kernels are held to the same reference by the GPU suite's
"every covered spec" test. Skips where there is no PyTorch (fails under KILN_TEST_TORCH=1)."""

import kiln
from conftest import SPECS, import_torch

torch = import_torch("the comparison with PyTorch needs PyTorch")
F = torch.nn.functional

SPECIAL = [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 0.5, -0.5, 5.0, 10.0, 20.0, 21.0, -20.0, 88.0, -88.0, 100.0,
           float("inf"), float("-inf"), float("nan"), 1e-7, -1e-7]


def inputs(dtype, rows=4, cols=1024):
    g = torch.Generator().manual_seed(7)
    x = torch.rand(rows, cols, generator=g, dtype=torch.float64) * 16 - 8
    x.view(-1)[: len(SPECIAL)] = torch.tensor(SPECIAL, dtype=torch.float64)
    return x.to(dtype)


def check(got, want, rtol, atol, name=""):
    assert got.dtype == want.dtype and got.shape == want.shape, name
    g, w = got.double(), want.double()
    assert torch.equal(g.isnan(), w.isnan()), f"{name}: NaN where PyTorch has none, or the other way"
    finite = ~w.isnan()
    torch.testing.assert_close(g[finite], w[finite], rtol=rtol, atol=atol, equal_nan=False, msg=lambda m: f"{name}: {m}")


def program(tmp_path):
    return kiln.load(SPECS / "activations.kiln",
                     kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False))


def test_f32_activations_match_torch(tmp_path):
    x = inputs(torch.float32)
    got = program(tmp_path).activations.reference(x)
    want = (F.leaky_relu(x, 0.2), F.elu(x, alpha=0.5), F.selu(x), F.softplus(x, beta=2.0, threshold=10.0), F.mish(x),
            F.hardtanh(x, -0.5, 0.5), F.hardswish(x * 4.0))
    for name, g, w in zip(("leaky_relu", "elu", "selu", "softplus", "mish", "hardtanh", "hardswish"), got, want):
        check(g, w, rtol=2e-6, atol=1e-6, name=name)


def test_bf16_activations_compute_in_f32_and_round_once(tmp_path):
    x = inputs(torch.bfloat16)
    got = program(tmp_path).activations_bf16.reference(x)
    want = (F.mish(x), F.hardsigmoid(x * 4.0), F.relu6(x * 8.0))
    for name, g, w in zip(("mish", "hardsigmoid", "relu6"), got, want):
        # One bf16 rounding of the f32 result (PyTorch's opmath): equal but for a rare tie.
        check(g, w, rtol=2 ** -8, atol=1e-6, name=name)


def test_shrinks_and_log_sigmoid_match_torch(tmp_path):
    x = inputs(torch.float32)
    got = program(tmp_path).activations_shrink.reference(x)
    want = (F.celu(x, alpha=2.0), F.logsigmoid(x), F.hardshrink(x, lambd=0.75), F.softshrink(x), F.softsign(x),
            F.tanhshrink(x))
    for name, g, w in zip(("celu", "logsigmoid", "hardshrink", "softshrink", "softsign", "tanhshrink"), got, want):
        check(g, w, rtol=2e-6, atol=1e-6, name=name)


def test_bf16_composites_round_each_step(tmp_path):
    x = inputs(torch.bfloat16)
    got = program(tmp_path).softsign_bf16.reference(x)
    want = (F.softsign(x), F.tanhshrink(x), F.logsigmoid(x))
    for name, g, w in zip(("softsign", "tanhshrink", "logsigmoid"), got, want):
        check(g, w, rtol=2 ** -8, atol=1e-6, name=name)


def test_clamp_with_a_tensor_bound_and_a_number(tmp_path):
    x = inputs(torch.float32, rows=3, cols=1000)
    lo = torch.linspace(-1, 0.5, 1000)
    lo[0] = float("nan")   # a NaN bound gives NaN (torch.maximum's rule)
    got = program(tmp_path).clamp_bias.reference(x, lo)
    want = torch.minimum(torch.maximum(x + 0.25, lo), torch.tensor(0.75))
    check(got, want, rtol=0, atol=0)
    # Where no bound is NaN, torch.clamp agrees.
    check(got[:, 1:], torch.clamp(x + 0.25, min=lo, max=torch.full_like(lo, 0.75))[:, 1:], rtol=0, atol=0)


def test_log1p_expm1_erf_match_torch(tmp_path):
    x = inputs(torch.float32, rows=1, cols=65536).reshape(-1)
    got = program(tmp_path).special_functions.reference(x)
    want = torch.log1p(x * x) + torch.expm1(x * 0.5) * torch.erf(x)
    check(got, want, rtol=2e-6, atol=1e-6)
