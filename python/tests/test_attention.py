"""Attention written out (specs/attention.kiln; docs/design-notes.md, "Attention compositions")
against PyTorch's scaled_dot_product_attention. On the CPU: the plan for sm_90a is one
flash_attention kernel (and says so under `fusions:`), sm_80 plans it unfused, and kiln's float64
reference of the op as written matches SDPA. Where a CUDA GPU is present, the kernel too, on
random shapes (odd lengths, queries != keys, causal, heads in the middle, one k shared by
every batch).
Skips where there is no PyTorch (fails under KILN_TEST_TORCH=1)."""

import math
import random

import pytest

import kiln
from conftest import SPECS, import_torch

torch = import_torch("the comparison with PyTorch needs PyTorch")
F = torch.nn.functional


def sdpa(q, k, v, causal, scale=None):
    """PyTorch's attention in float64 (its math backend on the CPU or the GPU)."""
    return F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal, scale=scale)


def load(tmp_path, arch=None):
    opts = kiln.Options(cache_dir=str(tmp_path), use_environment=False, **({"arch": arch} if arch else {}))
    return kiln.load(SPECS / "attention.kiln", opts)


def test_the_plan_is_one_flash_kernel_on_sm90a_and_unfused_on_sm80(tmp_path):
    ex = load(tmp_path / "a", "sm_90a").attention_causal_bf16.specialize(B=2, H=3, S=200)
    assert [k["template"] for k in ex.kernels] == ["flash_attention"], ex.plan
    assert "causal: one flash attention kernel" in ex.plan
    ex80 = load(tmp_path / "b", "sm_80").attention_causal_bf16.specialize(B=2, H=3, S=200)
    assert "flash_attention" not in [k["template"] for k in ex80.kernels]
    assert "not fused, the fused kernel needs sm_90a" in ex80.plan


@pytest.mark.parametrize("seed", range(3))
def test_the_reference_matches_sdpa(tmp_path, seed):
    g = torch.Generator().manual_seed(seed)
    prog = load(tmp_path, "sm_90a")
    q, k, v = (torch.randn(1, 2, 33 + seed, 64, generator=g).bfloat16() for _ in range(3))
    got = prog.attention_causal_bf16.reference(q, k, v)
    torch.testing.assert_close(got.double(), sdpa(q, k, v, True, 0.125), rtol=3e-2, atol=3e-2)
    q, k, v = (torch.randn(2, 4, 21, 128, generator=g).half() for _ in range(3))
    got = prog.attention_f16.reference(q, k, v)
    torch.testing.assert_close(got.double(), sdpa(q, k, v, False, 1 / math.sqrt(128)), rtol=2e-2, atol=2e-2)


gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here: the kernel comparison needs one")


@gpu
@pytest.mark.parametrize("seed", range(4))
def test_the_kernel_matches_sdpa_on_the_gpu(tmp_path, seed):
    rng = random.Random(seed)
    prog = load(tmp_path)
    dev = "cuda"
    # plain f16, queries != keys
    b, h, s, t = rng.randint(1, 3), rng.randint(1, 5), rng.randint(1, 700), rng.randint(1, 700)
    q = torch.randn(b, h, s, 128, device=dev).half()
    k, v = (torch.randn(b, h, t, 128, device=dev).half() for _ in range(2))
    torch.testing.assert_close(prog.attention_f16(q, k, v).double(), sdpa(q, k, v, False, 1 / math.sqrt(128)),
                               rtol=1e-2, atol=1e-2)
    # causal bf16
    s = rng.randint(1, 700)
    q, k, v = (torch.randn(b, h, s, 64, device=dev).bfloat16() for _ in range(3))
    torch.testing.assert_close(prog.attention_causal_bf16(q, k, v).double(), sdpa(q, k, v, True, 0.125),
                               rtol=2e-2, atol=2e-2)
    # heads in the middle (every operand read through its own strides), a run-time temperature
    s = rng.randint(1, 700)
    q, k, v = (torch.randn(b, s, h, 64, device=dev).half() for _ in range(3))
    temperature = 0.5 + rng.random()
    got = prog.attention_bshd_f16(q, k, v, temperature)
    want = sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), False, 1 / float(torch.tensor(temperature).half()))
    torch.testing.assert_close(got.double(), want, rtol=1e-2, atol=1e-2)
    # head dim 256, causal, one k shared by every batch
    bh, s = rng.randint(1, 6), rng.randint(1, 400)
    q, v = (torch.randn(bh, s, 256, device=dev).half() for _ in range(2))
    k = torch.randn(s, 256, device=dev).half()
    torch.testing.assert_close(prog.attention_causal_d256(q, k, v).double(),
                               sdpa(q, k.expand(bh, s, 256), v, True, 0.0625), rtol=1e-2, atol=1e-2)
