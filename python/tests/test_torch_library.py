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


ALL_SPECS = sorted(str(p.relative_to(SPECS)) for p in [*SPECS.glob("*.kiln"), *SPECS.glob("kernelbench/*/*.kiln")])


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_shape_rules_give_the_binders_shapes(spec, tmp_path):
    """Each op of specs/ and specs/kernelbench/: its shape rules (Op.shape_rules, what the fake
    implementation evaluates over torch.compile's symbolic sizes) give the outputs kiln's binder
    gives from concrete ones, at the default dims and at two other sets of sizes where the binder
    accepts them."""
    from kiln._tensors import CODES
    from kiln.torch import _evaluate, symbolic_outputs

    options = kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False)
    prog = kiln.load(SPECS / spec, options)
    for name in prog.ops:
        op = prog[name]
        rules = op.shape_rules()
        inputs = [a for a in rules["arguments"] if not a["is_output"]]
        compared = 0
        for change in (lambda v: v, lambda v: v + 1, lambda v: 2 * v + 3):
            dims = {dim: change(value) for dim, value in rules["defaults"].items()}
            shapes = [[_evaluate(e, dims, name) for e in a["shape"]] for a in inputs]
            items = [(1 << 20, CODES[a["dtype"]], tuple(shape)) if a["is_tensor"] else SCALAR_VALUES[a["dtype"]]
                     for a, shape in zip(inputs, shapes)]
            try:
                want = [(tuple(o["shape"]), o["dtype"]) for o in op._impl.arguments_for(items) if o["is_output"]]
            except kiln.Error:
                continue   # sizes the binder refuses (a kernel larger than its image, channels not divisible)
            values = [torch.empty(shape, dtype=kiln.torch.torch_dtype(a["dtype"]), device="meta") if a["is_tensor"]
                      else SCALAR_VALUES[a["dtype"]] for a, shape in zip(inputs, shapes)]
            got = [(tuple(shape), dtype) for shape, dtype in symbolic_outputs(rules, name, values)]
            assert got == want, (name, dims)
            compared += 1
        assert compared >= 1, f"{name}: the binder refused even the default dims"


def test_compile_dynamic_one_graph_for_every_size_on_meta_tensors(tmp_path):
    """torch.compile(dynamic=True): the fake implementation evaluates the shape rules over
    symbolic sizes, so one graph serves sizes that differ (an elementwise op, a pool whose output
    size takes a min under ceil_mode, a strided conv), each output of the shape the binder gives."""
    options = kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False)
    cases = [
        (kiln.load(SPECS / "elementwise.kiln", options).relu_add,
         [[(300, 70), (70,)], [(301, 71), (71,)], [(64, 3), (3,)]]),
        (kiln.load(SPECS / "pooling.kiln", options).max_pool_dilated_ceil,
         [[(8, 16, 65, 47)], [(3, 5, 40, 33)], [(2, 7, 17, 91)]]),
        (kiln.load(SPECS / "conv.kiln", options).conv2d_stride2_pad1,
         [[(4, 64, 112, 112), (128, 64, 3, 3)], [(3, 64, 57, 33), (128, 64, 3, 3)], [(2, 64, 20, 21), (128, 64, 3, 3)]]),
    ]
    for op, sizes in cases:
        operator = kiln.torch.library_op(op, name=f"{op.name}_dyn_meta")
        graphs = []

        def keep_graph(gm, example_inputs):
            graphs.append(gm)
            return gm.forward

        compiled = torch.compile(lambda *xs: operator(*xs), fullgraph=True, dynamic=True, backend=keep_graph)
        for shapes in sizes:
            xs = [torch.empty(shape, device="meta") for shape in shapes]
            items = [(1 << 20, kiln._tensors.CODES["f32"], tuple(shape)) for shape in shapes]
            want = [tuple(o["shape"]) for o in op._impl.arguments_for(items) if o["is_output"]]
            y = compiled(*xs)
            got = [tuple(t.shape) for t in (y if isinstance(y, tuple) else (y,))]
            assert got == want, (op.name, shapes)
        assert len(graphs) == 1, f"{op.name}: {len(graphs)} graphs for {len(sizes)} sizes"


def test_symbolic_shapes_refuse_what_the_binder_refuses(tmp_path):
    """The shape rules on concrete sizes raise the binder's kind of error: a dim that two inputs
    give differently, a wrong rank or dtype."""
    from kiln.torch import symbolic_outputs

    options = kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False)
    op = kiln.load(SPECS / "elementwise.kiln", options).relu_add
    rules = op.shape_rules()
    meta = lambda *shape, dtype=torch.float32: torch.empty(shape, dtype=dtype, device="meta")  # noqa: E731
    assert symbolic_outputs(rules, "relu_add", [meta(5, 7), meta(7)]) == [([5, 7], "f32")]
    with pytest.raises(kiln.ShapeError, match="dim N is 7 from a.shape\\[1\\] but 6 from b.shape\\[0\\]"):
        symbolic_outputs(rules, "relu_add", [meta(5, 7), meta(6)])
    with pytest.raises(kiln.ShapeError, match="'b' must have rank 1"):
        symbolic_outputs(rules, "relu_add", [meta(5, 7), meta(1, 7)])
    with pytest.raises(kiln.ArgumentError, match="'a' has dtype torch.float16, expected torch.float32"):
        symbolic_outputs(rules, "relu_add", [meta(5, 7, dtype=torch.float16), meta(7)])


def test_the_extensions_fast_path_declines_what_it_does_not_read(tmp_path):
    """Op.call_torch (the fast path's reads, in C++: [Note: the Python fast path]) takes only
    contiguous CUDA torch tensors and exact numbers; for anything else it returns None without
    launching, and the call goes the package's own way (test_gpu.py runs the taken path)."""
    from kiln import _tensors

    _tensors._init_torch()
    options = kiln.Options(arch="sm_90a", cache_dir=str(tmp_path), use_environment=False)
    impl = kiln.load(SPECS / "elementwise.kiln", options).relu_add._impl
    a, b = torch.zeros(4, 4), torch.zeros(4)
    for inputs, out in [((a, b), None), ((a, b), torch.zeros(4, 4)), ((a.to("meta"), b.to("meta")), None),
                        ((object(), b), None), ((a, 1.5), None), ((a.t(), b), (torch.zeros(4, 4),))]:
        assert impl.call_torch(id(impl), inputs, out, {}, 0, 1) is None
    # out= of another count than the op's outputs: not taken (the package names the count)
    assert impl.call_torch(id(impl), (a, b), (a, a), {}, 0, 1) is None


class _TensorLike:
    """What the extension's fast path reads of a CUDA torch.Tensor: stands for torch.Tensor
    (set_torch, below). Its address is a real CUDA allocation's where there is a GPU (a launch
    reads it), and one nothing reads where there is none (a launch fails at the driver)."""

    is_cuda = True
    requires_grad = False

    def __init__(self, shape, dtype, ptr):
        self.shape, self.dtype, self._ptr = torch.Size(shape), dtype, ptr

    def is_contiguous(self):
        return True

    def data_ptr(self):
        return self._ptr


def test_the_extensions_fast_path_reads_tensors_as_the_package_does(tmp_path):
    """Op.call_torch with a stand-in tensor type: the reads give the C++ checks the same arguments
    the package's own path does (errors name the argument; a valid call gets as far as the driver,
    and with a GPU computes the result), and an allocating call finds the templates under the
    package's key (Op._key) and allocates through empty_like."""
    from kiln import _kiln, _tensors

    _tensors._init_torch()
    on_gpu = torch.cuda.is_available()
    held = {}   # address -> the CUDA tensor behind a stand-in (with a GPU)

    def like(shape, dtype, fake_address, fill=None):
        if not on_gpu:
            return _TensorLike(shape, dtype, fake_address)
        t = torch.empty(shape, dtype=dtype, device="cuda") if fill is None else fill.to("cuda", dtype)
        held[t.data_ptr()] = t
        return _TensorLike(shape, dtype, t.data_ptr())

    made = []

    def empty_like(template, memory_format=None):
        made.append(like(template.shape, template.dtype, (8 << 20) + 4096 * len(made)))
        return made[-1]

    def launched(call, output):   # with a GPU the call computes relu(a + b) into output(); without, no driver
        if not on_gpu:
            with pytest.raises(kiln.CudaError):
                call()
            return
        call()
        torch.cuda.synchronize()
        torch.testing.assert_close(held[output()._ptr].cpu(), expected_y, rtol=0, atol=0)

    codes = {torch.float32: _tensors.CODES["f32"], torch.float16: _tensors.CODES["f16"]}
    _kiln.set_torch(_TensorLike, codes, empty_like, torch.contiguous_format)
    try:
        options = kiln.Options(arch="" if on_gpu else "sm_90a", cache_dir=str(tmp_path), use_environment=False)
        op = kiln.load(SPECS / "elementwise.kiln", options).relu_add
        impl = op._impl
        host_a, host_b = torch.randn(5, 7), torch.randn(7)
        expected_y = torch.relu(host_a + host_b)
        a, b = like((5, 7), torch.float32, 1 << 20, host_a), like((7,), torch.float32, 2 << 20, host_b)
        y = like((5, 7), torch.float32, 4 << 20)
        with pytest.raises(kiln.ArgumentError, match="'b' has dtype f16, expected f32"):
            impl.call_torch(id(impl), (a, like((7,), torch.float16, 2 << 20)), y, {}, 0, 1)
        with pytest.raises(kiln.ShapeError, match="'b' has rank 2, expected 1"):
            impl.call_torch(id(impl), (a, like((1, 7), torch.float32, 2 << 20)), y, {}, 0, 1)
        with pytest.raises(kiln.ArgumentError, match="output 'y' overlaps input 'a' in memory"):
            impl.call_torch(id(impl), (a, b), a, {}, 0, 1)
        launched(lambda: impl.call_torch(id(impl), (a, b), (y,), {}, 0, 1), lambda: y)   # every check passed
        # Allocating: no templates under the key, not taken; under the package's key, allocated.
        assert impl.call_torch(id(impl), (a, b), None, {}, 0, 1) is None and not made
        key = kiln.Op._key(impl, [(a._ptr, codes[torch.float32], a.shape), (b._ptr, codes[torch.float32], b.shape)])
        template = _TensorLike((5, 7), torch.float32, 0)
        launched(lambda: impl.call_torch(id(impl), (a, b), None, {key: [(template, codes[torch.float32], (5, 7))]}, 0, 1),
                 lambda: made[-1])
        assert len(made) == 1 and tuple(made[0].shape) == (5, 7)
    finally:
        _kiln.set_torch(torch.Tensor, _tensors._torch_codes, torch.empty_like, torch.contiguous_format)


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
def test_compile_dynamic_one_graph_and_one_kernel_per_bucket(tmp_path):
    """torch.compile(dynamic=True) on CUDA tensors: one graph for every size, each result against
    eager in float64, and kiln's generic shapes compile the op once for sizes of one bucket."""
    options = kiln.Options(cache_dir=str(tmp_path / "cache"), disk_cache=False)
    relu_add = kiln.torch.library_op(kiln.load(SPECS / "elementwise.kiln", options).relu_add, name="relu_add_dyn_gpu")
    graphs = []

    def inductor_counting(gm, example_inputs):
        graphs.append(gm)
        from torch._inductor.compile_fx import compile_fx

        return compile_fx(gm, example_inputs)

    compiled = torch.compile(lambda a, b: relu_add(a, b) * 2 + 1, fullgraph=True, dynamic=True,
                             backend=inductor_counting)
    before = kiln.stats(options)["compiles"]
    for rows, cols in ((300, 70), (1001, 333), (7, 5), (4095, 1025)):
        a = torch.randn(rows, cols, device="cuda", dtype=torch.float64).float()
        b = torch.randn(cols, device="cuda", dtype=torch.float64).float()
        want = torch.relu(a.double() + b.double()) * 2 + 1
        torch.testing.assert_close(compiled(a, b).double(), want, rtol=1e-6, atol=1e-6)
    assert len(graphs) == 1
    # relu_add's B and N are generic: sizes that are not multiples of 16 share one bucket.
    assert kiln.stats(options)["compiles"] - before == 1


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
