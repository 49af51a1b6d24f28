"""specs/promotion.kiln against PyTorch: kiln's float64 reference of a bool mask times a tensor,
an integer tensor plus a float one and a float literal on an integer tensor gives the values and
dtypes PyTorch's type promotion gives (docs/semantics.md, "Type promotion"). Skips where there is
no PyTorch (fails under KILN_TEST_TORCH=1)."""

import kiln
from conftest import SPECS, import_torch

torch = import_torch("the comparison with PyTorch needs PyTorch")


def program(tmp_path):
    return kiln.load(SPECS / "promotion.kiln", kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False))


def test_mask_times_tensor_plus_integer_bias(tmp_path):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(6, 1000, generator=g)
    keep = torch.rand(6, 1000, generator=g) > 0.3
    bias = torch.randint(-5, 5, (1000,), generator=g, dtype=torch.int32)
    y, n = program(tmp_path).masked_scale.reference(x, keep, bias)
    want_y = keep * x + bias
    want_n = keep.to(torch.int64).sum(dim=1) + 1
    assert y.dtype == want_y.dtype == torch.float32 and n.dtype == want_n.dtype == torch.int64
    torch.testing.assert_close(y, want_y, rtol=0, atol=0)
    assert torch.equal(n, want_n)


def test_bf16_mask_and_integer_times_float_literal(tmp_path):
    g = torch.Generator().manual_seed(4)
    h = torch.randn(4096, generator=g).to(torch.bfloat16)
    i = torch.randint(-1000, 1000, (4096,), generator=g, dtype=torch.int32)
    y, z = program(tmp_path).mixed_bf16.reference(h, i)
    want_y, want_z = (h > 0) * h, i * 0.5 + 1
    assert y.dtype == want_y.dtype == torch.bfloat16 and z.dtype == want_z.dtype == torch.float32
    torch.testing.assert_close(y, want_y, rtol=0, atol=0)
    torch.testing.assert_close(z, want_z, rtol=0, atol=0)
