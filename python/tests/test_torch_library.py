"""kiln ops as torch custom operators (kiln.torch.library_op): torch.library's own checks, the
fake implementation's shapes, torch.compile with fullgraph (no graph break) and torch.export.
The GPU parts skip where there is no GPU or no PyTorch."""

import pytest

import kiln
from conftest import SPECS

torch = pytest.importorskip("torch", reason="kiln.torch needs PyTorch")
import kiln.torch  # noqa: E402

TWO_OUTPUTS = """
op scale2 {
  const alpha: f32 = 2.0
  dims N = 16
  in  x: f32[N]
  in  s: f32
  out y = alpha * x * s
  out z = relu(x)
}
"""


def test_schema_and_fake_shapes_without_a_gpu(tmp_path):
    options = kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False)
    relu_add = kiln.torch.library_op(kiln.load(SPECS / "elementwise.kiln", options).relu_add, name="relu_add_fake")
    assert "relu_add_fake(Tensor a, Tensor b) -> Tensor" in str(relu_add.default._schema)
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        y = relu_add(torch.empty(5, 7, device="cuda"), torch.empty(7, device="cuda"))
    assert tuple(y.shape) == (5, 7) and y.dtype == torch.float32
    op2 = kiln.torch.library_op(kiln.loads(TWO_OUTPUTS, name="two.kiln", options=options).scale2, alpha=3.0)
    assert "(Tensor x, float s) -> (Tensor, Tensor)" in str(op2.default._schema)
    with pytest.raises(kiln.ArgumentError, match="no const named"):
        kiln.torch.library_op(kiln.loads(TWO_OUTPUTS, options=options).scale2, beta=1.0)
    with pytest.raises(kiln.ArgumentError, match="already defined by another kiln op"):
        kiln.torch.library_op(kiln.load(SPECS / "elementwise.kiln", options).relu_add, name="relu_add_fake")


gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here: these need one")


@pytest.fixture(scope="module")
def relu_add_op(tmp_path_factory):
    options = kiln.Options(cache_dir=str(tmp_path_factory.mktemp("cache")))
    return kiln.torch.library_op(kiln.load(SPECS / "elementwise.kiln", options).relu_add)


@gpu
@pytest.mark.gpu
def test_opcheck_and_eager(relu_add_op):
    relu_add = relu_add_op
    a, b = torch.randn(300, 70, device="cuda"), torch.randn(70, device="cuda")
    torch.library.opcheck(relu_add, (a, b), test_utils=("test_schema", "test_faketensor"))
    torch.testing.assert_close(relu_add(a, b), torch.relu(a + b), rtol=0, atol=0)


@gpu
@pytest.mark.gpu
def test_compile_fullgraph_keeps_the_op(relu_add_op):
    relu_add = relu_add_op
    a, b = torch.randn(256, 128, device="cuda"), torch.randn(128, device="cuda")
    compiled = torch.compile(lambda a, b: relu_add(a, b) * 2 + 1, fullgraph=True)
    torch.testing.assert_close(compiled(a, b), torch.relu(a + b) * 2 + 1, rtol=1e-6, atol=1e-6)
    # another shape: a recompile, the same operator
    a2, b2 = torch.randn(100, 33, device="cuda"), torch.randn(33, device="cuda")
    torch.testing.assert_close(compiled(a2, b2), torch.relu(a2 + b2) * 2 + 1, rtol=1e-6, atol=1e-6)


@gpu
@pytest.mark.gpu
def test_export_and_two_outputs(tmp_path):
    prog = kiln.loads(TWO_OUTPUTS, name="two.kiln", options=kiln.Options(cache_dir=str(tmp_path)))
    op = kiln.torch.library_op(prog.scale2, name="scale2_export", alpha=3.0)

    class M(torch.nn.Module):
        def forward(self, x):
            y, z = op(x, 0.5)
            return y + z

    x = torch.randn(1000, device="cuda")
    exported = torch.export.export(M(), (x,))
    assert any("kiln." in str(n.target) for n in exported.graph.nodes)
    torch.testing.assert_close(exported.module()(x), 1.5 * x + torch.relu(x), rtol=1e-6, atol=1e-6)
