"""specs/reductions.kiln's stats_rows against PyTorch: kiln's float64 reference of var and std
(correction 1, torch's default) and any and all (written by the checker with mean, sum and
comparisons; docs/language.md, "Reductions") beside torch.var, torch.std, torch.any and torch.all on
the CPU. The GPU kernels are held to the same reference by the GPU suite's "every covered spec"
test. Skips where there is no PyTorch (fails under KILN_TEST_TORCH=1)."""

import kiln
from conftest import SPECS, import_torch

torch = import_torch("the comparison with PyTorch needs PyTorch")


def test_var_std_any_all_match_torch(tmp_path):
    g = torch.Generator().manual_seed(11)
    x = torch.randn(37, 1000, generator=g, dtype=torch.float32) * 3 + 1
    program = kiln.load(SPECS / "reductions.kiln",
                        kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False))
    v, s, a, l = program.stats_rows.reference(x)
    torch.testing.assert_close(v, x.var(dim=1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(s, x.std(dim=0, keepdim=True), rtol=1e-5, atol=1e-6)
    assert a.dtype == torch.bool and torch.equal(a, (x > 0.5).any(dim=1))
    assert l.dtype == torch.bool and torch.equal(l, (x > -2.0).all())
