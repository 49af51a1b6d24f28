"""kiln ops as torch custom operators (kiln.torch.library, library_op): torch.library's own
checks, the fake implementation's shapes for every op in specs/, torch.compile with fullgraph (no
graph break) and torch.export, on meta tensors without a GPU and on CUDA tensors with one. Skips
where there is no PyTorch (fails instead under KILN_TEST_TORCH=1, as in CI)."""

import pytest

import kiln
from conftest import SPECS, import_torch

torch = import_torch("kiln.torch needs PyTorch")
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


SCALAR_VALUES = {"f32": 0.5, "f64": 0.5, "f16": 0.5, "bf16": 0.5, "i32": 3, "i64": 3, "u64": 7, "bool": True}


@pytest.mark.parametrize("spec", sorted(p.name for p in SPECS.glob("*.kiln")))
def test_fake_shapes_of_every_spec_op_match_the_binder(spec, tmp_path):
    """Each op of specs/ at its default dims: the torch operator's fake implementation gives the
    outputs the C++ binder gives the specialization (names, shapes, dtypes)."""
    options = kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False)
    prog = kiln.load(SPECS / spec, options)
    ops = kiln.torch.library(prog, namespace="kiln_" + spec.split(".")[0])
    from torch._subclasses.fake_tensor import FakeTensorMode

    for name in prog.ops:
        args = prog[name].specialize().arguments
        inputs = [a for a in args if not a["is_output"]]
        expected = [(tuple(a["shape"]), a["dtype"]) for a in args if a["is_output"]]
        with FakeTensorMode():
            values = [torch.empty(a["shape"], dtype=kiln.torch.torch_dtype(a["dtype"]), device="cuda")
                      if a["is_tensor"] else SCALAR_VALUES[a["dtype"]] for a in inputs]
            got = getattr(ops, name)(*values)
        got = got if isinstance(got, tuple) else (got,)
        assert [(tuple(t.shape), t.dtype) for t in got] == [(s, kiln.torch.torch_dtype(d)) for s, d in expected], name
        assert all(t.device.type == "cuda" for t in got), name


def test_a_program_in_one_namespace(tmp_path):
    options = kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False)
    prog = kiln.load(SPECS / "elementwise.kiln", options)
    ops = kiln.torch.library(prog, namespace="kiln_ns_test")
    assert ops.relu_add is torch.ops.kiln_ns_test.relu_add
    assert sorted(vars(ops)) == sorted(prog.ops)
    assert kiln.torch.library(prog, namespace="kiln_ns_test").relu_add is ops.relu_add   # asking again: the same
    other = kiln.loads("op relu_add {\n  dims N = 4\n  in a: f32[N]\n  out y = a\n}\n", options=options)
    with pytest.raises(kiln.ArgumentError, match="torch.ops.kiln_ns_test.relu_add is already defined"):
        kiln.torch.library(other, namespace="kiln_ns_test")
    with pytest.raises(kiln.ArgumentError, match="'kiln-x' is not a namespace"):
        kiln.torch.library(prog, namespace="kiln-x")
    with pytest.raises(kiln.ArgumentError, match="takes a kiln.Program"):
        kiln.torch.library(prog.relu_add)


def test_compile_fullgraph_and_export_on_meta_tensors(tmp_path):
    """Tracing needs no GPU: the operator stays one node of the Dynamo graph (no graph break) and
    of the exported program."""
    options = kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False)
    relu_add = kiln.torch.library_op(kiln.load(SPECS / "elementwise.kiln", options).relu_add, name="relu_add_meta")
    a, b = torch.empty(300, 70, device="meta"), torch.empty(70, device="meta")
    graphs = []

    def keep_graph(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = torch.compile(lambda a, b: relu_add(a, b) * 2 + 1, fullgraph=True, backend=keep_graph)
    y = compiled(a, b)
    assert tuple(y.shape) == (300, 70) and y.device.type == "meta"
    (graph,) = graphs
    assert [n.target for n in graph.graph.nodes if n.op == "call_function"][0] is relu_add

    class Model(torch.nn.Module):
        def forward(self, a, b):
            return relu_add(a, b).sum(dim=1)

    exported = torch.export.export(Model(), (a, b))
    targets = [str(n.target) for n in exported.graph.nodes if n.op == "call_function"]
    assert targets[0] == "kiln.relu_add_meta.default", targets
    assert tuple(exported.graph_signature.user_outputs) and len(targets) == 2


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


def test_reference_on_cpu_tensors(tmp_path):
    """Op.reference on CPU PyTorch tensors (bf16 too, which NumPy lacks): outputs allocated by
    PyTorch, or written into out= in place."""
    options = kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False)
    prog = kiln.load(SPECS / "gemm.kiln", options)
    a, b = torch.rand(5, 7, dtype=torch.float64).bfloat16(), torch.rand(7, 3, dtype=torch.float64).bfloat16()
    c = prog.mm_bf16.reference(a, b)
    assert c.dtype == torch.bfloat16 and tuple(c.shape) == (5, 3)
    torch.testing.assert_close(c.double(), (a.double() @ b.double()).bfloat16().double(), rtol=0, atol=0)
    out = torch.full((5, 3), float("nan"), dtype=torch.bfloat16)
    assert prog.mm_bf16.reference(a, b, out=out) is out and torch.equal(out, c)
