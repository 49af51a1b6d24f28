"""The kiln package on a GPU (label `gpu`): PyTorch tensors in and out, out=, streams, consts,
several outputs, strided inputs, CuPy; each against a float64 reference. Skips where there is no
GPU or no PyTorch."""

import os
import warnings

import pytest

import kiln
from conftest import SPECS, import_torch

torch = import_torch("the GPU tests use PyTorch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU here: the GPU tests of the kiln package need one", allow_module_level=True)

pytestmark = pytest.mark.gpu

import kiln.torch  # noqa: E402


@pytest.fixture
def prog(tmp_path):
    return kiln.load(SPECS / "elementwise.kiln", kiln.Options(cache_dir=str(tmp_path / "cache")))


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda", dtype=torch.float64).to(dtype)


def test_relu_add_allocates_its_output(prog):
    a, b = randn(1000, 333), randn(333)
    y = prog.relu_add(a, b)
    assert y.shape == (1000, 333) and y.dtype == torch.float32 and y.device == a.device
    torch.testing.assert_close(y.double(), torch.relu(a.double() + b.double()), rtol=1e-6, atol=1e-6)


def test_out_is_written_in_place(prog):
    a, b = randn(64, 48), randn(48)
    y = torch.full((64, 48), float("nan"), device="cuda")
    assert prog.relu_add(a, b, out=y) is y
    torch.testing.assert_close(y.double(), torch.relu(a.double() + b.double()), rtol=1e-6, atol=1e-6)


def test_consts_and_the_current_stream(prog):
    x, y0 = randn(4097), randn(4097)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = prog.axpby(x, y0, alpha=3.0, beta=-1.0)
    s.synchronize()
    torch.testing.assert_close(y.double(), 3.0 * x.double() - y0.double(), rtol=1e-6, atol=1e-6)


def test_a_strided_input_is_copied_with_one_warning(prog):
    a, b = randn(48, 64).t(), randn(48)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = prog.relu_add(a, b)
    assert any("not contiguous" in str(w.message) for w in caught)
    torch.testing.assert_close(y.double(), torch.relu(a.double() + b.double()), rtol=1e-6, atol=1e-6)


def test_wrong_device_and_dtype_name_the_argument(prog):
    with pytest.raises(kiln.ArgumentError, match="argument 'a' is a PyTorch tensor on cpu"):
        prog.relu_add(torch.zeros(4, 4), randn(4))
    with pytest.raises(kiln.ArgumentError, match="'b' has dtype f16, expected f32"):
        prog.relu_add(randn(4, 4), randn(4, dtype=torch.float16))
    with pytest.raises(kiln.ArgumentError, match="'a' requires grad, and kiln ops have no autograd formula"):
        prog.relu_add(randn(4, 4).requires_grad_(), randn(4))
    with torch.no_grad():
        prog.relu_add(randn(4, 4).requires_grad_(), randn(4))
    a, b = randn(5, 7), randn(7)
    y = torch.full((4, 7), float("nan"), device="cuda")
    with pytest.raises(kiln.ShapeError, match="dim B is 5 from a.shape\\[0\\] but 4 from y.shape\\[0\\]"):
        prog.relu_add(a, b, out=y)
    with pytest.raises(kiln.ArgumentError, match="output 'y' overlaps input 'a' in memory"):
        prog.relu_add(a, b, out=a)
    with pytest.raises(kiln.ShapeError, match="'a' has extent 0 in dim 0"):
        prog.relu_add(torch.empty(0, 7, device="cuda"), b)
    torch.cuda.synchronize()
    assert torch.isnan(y).all()   # nothing was launched


def test_specialized_executable_launches(prog, tmp_path):
    ex = prog.relu_add.specialize(B=32, N=16)
    a, b, y = randn(32, 16), randn(16), torch.empty(32, 16, device="cuda")
    ex(a, b, y)
    torch.cuda.synchronize()
    torch.testing.assert_close(y.double(), torch.relu(a.double() + b.double()), rtol=1e-6, atol=1e-6)
    # The default shapes are generic: the executable serves B and N by bucket (31 is not a multiple of 16).
    with pytest.raises(kiln.ShapeError, match="dyn dim B=31 is outside this executable's bucket"):
        ex(randn(31, 16), b, y)
    declared = kiln.load(SPECS / "elementwise.kiln", kiln.Options(cache_dir=str(tmp_path / "declared"), shapes="declared"))
    with pytest.raises(kiln.ShapeError, match="specialized for 32x16"):
        declared.relu_add.specialize(B=32, N=16)(randn(31, 16), b, y)


def test_matmul_bf16(tmp_path):
    prog = kiln.load(SPECS / "gemm.kiln", kiln.Options(cache_dir=str(tmp_path / "cache")))
    op = prog["mm_bf16"]
    a, b = randn(257, 130, dtype=torch.bfloat16), randn(130, 99, dtype=torch.bfloat16)
    c = op(a, b)
    ref = a.double() @ b.double()
    assert (c.double() - ref).abs().max().item() <= 2e-2 * ref.abs().max().item()


def test_tune_stores_a_pick_that_later_calls_use(tmp_path):
    """Op.tune (kiln tune from Python): every candidate checked and timed, the winner stored; a
    call with tuning="stored" plans with it and still matches torch."""
    text = """op mm {
  dims M = 1000, N = 1000, K = 1000
  in  a: bf16[M, K]
  in  b: bf16[K, N]
  out c = matmul(a, b)
}
"""
    options = kiln.Options(cache_dir=str(tmp_path / "cache"))
    op = kiln.loads(text, "mm.kiln", options)["mm"]
    r = op.tune(M=1000, N=1000, K=1000, iters=10)
    assert r["checked_against"] == "the float64 reference"
    (product,) = r["products"]
    assert all(c["correct"] and c["median_ms"] > 0 for c in product["candidates"])
    assert product["best_ms"] <= product["heuristic_ms"]
    assert r["stored_path"] and os.path.isfile(r["stored_path"])
    assert "config: tuned" in op.specialize(M=1000, N=1000, K=1000).plan
    a = torch.rand(1000, 1000, device="cuda", dtype=torch.bfloat16)
    b = torch.rand(1000, 1000, device="cuda", dtype=torch.bfloat16)
    torch.testing.assert_close(op(a, b).float(), (a.double() @ b.double()).float(), rtol=2e-2, atol=2e-2)


def test_cupy_arrays_in_and_out(prog):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    a, b = cupy.random.randn(100, 30).astype("float32"), cupy.random.randn(30).astype("float32")
    y = prog.relu_add(a, b)
    assert isinstance(y, cupy.ndarray)
    assert float(abs(y - cupy.maximum(a + b, 0)).max()) <= 1e-6


def test_sixteen_threads_compile_one_kernel_once(tmp_path):
    import threading

    options = kiln.Options(cache_dir=str(tmp_path / "threads"))
    prog = kiln.load(SPECS / "elementwise.kiln", options)
    a, b = randn(100, 10), randn(10)
    ref = torch.relu(a + b)
    results, errors = [], []

    def work():
        try:
            for _ in range(20):
                results.append(prog.relu_add(a, b))
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    torch.cuda.synchronize()
    assert not errors, errors
    assert len(results) == 320 and all(torch.equal(r, ref) for r in results)
    stats = kiln.stats(options)
    assert stats["compiles"] == 1 and stats["launches"] == 320


def test_a_dyn_dim_compiles_once_per_bucket(tmp_path):
    # issue 20: sizes of one bucket share a kernel and the grid follows each call. N is innermost:
    # the general bucket runs a scalar loop, multiples of 16 run 16-byte vectors (two compiles).
    options = kiln.Options(cache_dir=str(tmp_path / "dyn"))
    prog = kiln.loads("op scale {\n  dims dyn N = 1000\n  in x: f32[N]\n  in z: f32[N]\n"
                      "  out y = x * 2.0 - z\n}\n", name="dyn", options=options)
    for n in (1000, 7, 1, 123457, 2048, 16, 65536):
        x, z = randn(n), randn(n)
        y = torch.full((n,), float("nan"), device="cuda")
        prog.scale(x, z, out=y)
        assert torch.equal(y, x * 2.0 - z), n
    assert kiln.stats(options)["compiles"] == 2


# ---------------------------------------------------------------- every op of specs/ from Python
ODD = (7, 33, 127, 65)
SCALARS = {"f32": 0.75, "f64": 0.75, "f16": 0.75, "bf16": 0.75, "i32": 3, "i64": 3, "u64": 12345, "bool": True}
# runtime/host_tensor.h's element-wise tolerances; integers and bools exact
TOLERANCE = {torch.float32: 1e-4, torch.float64: 1e-9, torch.float16: 1e-2, torch.bfloat16: 1e-2}


def random_input(dtype, shape):
    """As the reference's random inputs: floats in [0, 1), integers in [-8, 8), bools 50/50."""
    if dtype in ("f32", "f64", "f16", "bf16"):
        return torch.rand(shape, dtype=torch.float64, device="cuda").to(kiln.torch.torch_dtype(dtype))
    if dtype == "bool":
        return torch.rand(shape, device="cuda") < 0.5
    return torch.randint(-8, 8, shape, device="cuda", dtype=kiln.torch.torch_dtype(dtype))


def small_specialization(op):
    """The op at odd sizes under each dim's default (7, 33, 127, 65 in turn), else at 5s, else at
    its defaults: the first set its constraints accept. The defaults come from the plan's header,
    "plan NAME [B=4096 N=4096] for ARCH"."""
    header = op.specialize().plan.split("\n", 1)[0]
    defaults = [kv.split("=") for kv in header[header.index("[") + 1:header.index("]")].split() if "=" in kv]
    for pick in (lambda i, d: min(d, ODD[i % 4]), lambda i, d: min(d, 5), lambda i, d: d):
        dims = {name: pick(i, int(value)) for i, (name, value) in enumerate(defaults) if name in op.dims}
        try:
            return op.specialize(**dims), dims
        except kiln.ShapeError:
            continue
    raise AssertionError(f"{op.name}: no shape set fits")


@pytest.mark.parametrize("spec", sorted(p.name for p in SPECS.glob("*.kiln")))
def test_every_spec_op_matches_the_float64_reference(spec, tmp_path):
    """Each op of specs/ called from Python on torch tensors (outputs allocated, then out= poisoned
    with NaN) against Op.reference on the same inputs copied to the host."""
    options = kiln.Options(cache_dir=str(tmp_path / "cache"))
    prog = kiln.load(SPECS / spec, options)
    uncovered = []
    for name in prog.ops:
        op = prog[name]
        try:   # a documented gap (README, "What does not work yet") is listed, not failed
            ex, dims = small_specialization(op)
            ex.kernels   # plans (an UnsupportedError for a shape no template covers) and compiles
        except kiln.UnsupportedError as e:
            uncovered.append(f"{name}: {e}")
            continue
        inputs = [random_input(a["dtype"], a["shape"]) if a["is_tensor"] else SCALARS[a["dtype"]]
                  for a in ex.arguments if not a["is_output"]]
        outputs = [a for a in ex.arguments if a["is_output"]]
        try:
            if any(a["is_tensor"] for a in ex.arguments if not a["is_output"]):
                got = op(*inputs)
            else:   # nothing to allocate like: out=
                got = tuple(torch.empty(a["shape"], dtype=kiln.torch.torch_dtype(a["dtype"]), device="cuda")
                            for a in outputs)
                op(*inputs, out=got)
        except kiln.UnsupportedError as e:
            uncovered.append(f"{name}: {e}")
            continue
        got = got if isinstance(got, tuple) else (got,)
        poisoned = tuple(torch.full_like(g, float("nan")) if g.is_floating_point() else torch.full_like(g, -1)
                         for g in got)
        op(*inputs, out=poisoned)
        host_inputs = [x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs]
        expected = op.reference(*host_inputs, out=tuple(torch.empty_like(g, device="cpu") for g in got))
        torch.cuda.synchronize()
        for out_name, g, p, e in zip(op.outputs, got, poisoned, expected):
            where = f"{spec} {name} {dims} output {out_name}"
            e = torch.as_tensor(e)
            assert g.dtype == e.dtype and tuple(g.shape) == tuple(e.shape), where
            tol = TOLERANCE.get(g.dtype, 0)
            if g.dtype == torch.float32 and "precision=Tf32" in ex.plan:
                tol = 1e-2   # a contraction in tf32 (the spec's precision=): 10 mantissa bits
            if any(isinstance(x, torch.Tensor) and x.dtype in (torch.float16, torch.bfloat16) for x in inputs):
                # A wider output of 16-bit values (f32 of an f16 matmul) holds their rounding: the
                # GPU's f32 sum and the reference's exact one can round one 16-bit ulp apart
                # (runtime/op_check.cpp's tolerance_for).
                tol = max(tol, TOLERANCE[torch.float16])
            e = e.double()
            for what, value in (("allocated", g), ("out=", p)):
                torch.testing.assert_close(value.cpu().double(), e, rtol=tol, atol=tol, equal_nan=True,
                                           msg=lambda m: f"{where} ({what}): {m}")
    if uncovered:
        print(f"{spec}: not covered by a template yet: {uncovered}")


# ---------------------------------------------------------------- JAX
def test_jax_arrays_in_and_out(prog):
    import os

    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")   # beside PyTorch in one process
    jax = pytest.importorskip("jax", reason="JAX is not installed")
    jnp = jax.numpy
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX has no GPU backend here")
    a = jax.random.normal(jax.random.PRNGKey(0), (100, 30), dtype=jnp.float32)
    b = jax.random.normal(jax.random.PRNGKey(1), (30,), dtype=jnp.float32)
    y = prog.relu_add(a, b)   # inputs computed by JAX asynchronously; the output allocated for JAX
    assert isinstance(y, jax.Array) and y.shape == (100, 30) and y.dtype == jnp.float32
    assert float(jnp.abs(y - jnp.maximum(a + b, 0)).max()) <= 1e-6
    z = prog.relu_add(y * 2, b)   # a kiln output feeds JAX, which feeds kiln again
    assert float(jnp.abs(z - jnp.maximum(2 * y + b, 0)).max()) <= 1e-6


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs (tensors on another device than the current)")
def test_tensors_on_another_device(prog):
    """kiln launches on the current device, or on device=: tensors elsewhere are refused before
    anything runs; a call under `torch.cuda.device(1)`, or with device=1, runs on device 1 and
    leaves the caller's current device as it was."""
    a1, b1 = randn(4, 8).to("cuda:1"), randn(8).to("cuda:1")
    assert torch.cuda.current_device() == 0
    with pytest.raises(kiln.ArgumentError, match="'a' is on cuda:1 but PyTorch's current device is cuda:0"):
        prog.relu_add(a1, b1)
    with pytest.raises(kiln.ArgumentError, match="'b' is on cuda:1 and the first tensor argument on cuda:0"):
        prog.relu_add(randn(4, 8), b1)
    y0 = torch.empty(4, 8, device="cuda:0")
    with pytest.raises(kiln.ArgumentError, match="'y' is on cuda:0 and the first tensor argument on cuda:1"):
        with torch.cuda.device(1):
            prog.relu_add(a1, b1, out=y0)
    with pytest.raises(kiln.ArgumentError, match="'a' is on cuda:1 but the call names device=0"):
        prog.relu_add(a1, b1, device=0)
    with pytest.raises(kiln.ArgumentError, match="device= must be a CUDA device index"):
        prog.relu_add(a1, b1, device="cuda:1")
    with torch.cuda.device(1):
        y = prog.relu_add(a1, b1)
        torch.cuda.synchronize()
    assert y.device.index == 1 and torch.equal(y, torch.relu(a1 + b1))
    y.fill_(float("nan"))
    prog.relu_add(a1, b1, out=y, device=torch.device("cuda:1"))   # on device 1's current stream
    torch.cuda.synchronize(1)
    assert torch.equal(y, torch.relu(a1 + b1))
    z = prog.relu_add(a1, b1, device=1)
    torch.cuda.synchronize(1)
    assert z.device.index == 1 and torch.equal(z, y)
    assert torch.cuda.current_device() == 0   # the caller's device is as it was


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_two_devices_concurrently_one_compile(tmp_path):
    """Threads launching the same op on two devices at once: one compile (same-model devices share
    the kernel), loaded into each device's context, every result right."""
    import threading

    kiln.reset()
    options = kiln.Options(cache_dir=str(tmp_path))
    p = kiln.load(SPECS / "elementwise.kiln", options)
    before = kiln.stats(options)
    inputs = {d: (randn(1000, 333).to(f"cuda:{d}"), randn(333).to(f"cuda:{d}")) for d in (0, 1)}
    outputs, errors = {}, []

    def work(d):
        try:
            torch.cuda.set_device(d)   # this thread's current device
            a, b = inputs[d]
            for _ in range(20):
                outputs[d] = p.relu_add(a, b)
            torch.cuda.synchronize(d)
        except Exception as e:   # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(d,)) for d in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for d in (0, 1):
        a, b = inputs[d]
        assert outputs[d].device.index == d and torch.equal(outputs[d], torch.relu(a + b))
    after = kiln.stats(options)
    assert after["compiles"] - before["compiles"] == 1   # one kernel, one NVRTC run for both devices


def test_two_streams_one_device(prog):
    """One process, two streams of one device, launches interleaved on both: each result right."""
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    data = [(randn(2048, 257), randn(257)) for _ in streams]
    outs = [torch.empty(2048, 257, device="cuda") for _ in streams]
    for s, (a, b) in zip(streams, data):   # the inputs are made on the default stream
        s.wait_stream(torch.cuda.current_stream())
    for _ in range(10):
        for s, (a, b), y in zip(streams, data, outs):
            with torch.cuda.stream(s):   # a * 2 and relu_add (on the current stream) both on s
                prog.relu_add(a * 2, b, out=y)
    torch.cuda.synchronize()
    for (a, b), y in zip(data, outs):
        assert torch.equal(y, torch.relu(a * 2 + b))


_TWO_STEPS = "op two_steps {\n  dims R, C\n  in x: f32[R, C]\n  let s = cumsum(x, axis=1)\n  out y = sum(s, axis=1)\n}\n"


class _Counting:
    """A scratch allocator that counts its calls and hands them to another one."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def allocate(self, nbytes, stream):
        self.calls.append(("allocate", nbytes, stream))
        return self.inner.allocate(nbytes, stream)

    def deallocate(self, ptr, nbytes, stream):
        self.calls.append(("deallocate", nbytes, stream))
        self.inner.deallocate(ptr, nbytes, stream)


def test_scratch_from_pytorchs_caching_allocator(tmp_path):
    """Options(scratch=kiln.torch.caching_allocator()): the cumsum's intermediate is a block of
    PyTorch's cache on the call's stream; the result is exact."""
    counting = _Counting(kiln.torch.caching_allocator())
    options = kiln.Options(cache_dir=str(tmp_path / "cache"), scratch=counting)
    op = kiln.loads(_TWO_STEPS, name="scratch.kiln", options=options).two_steps
    x = (torch.arange(300 * 1000, device="cuda").reshape(300, 1000) % 3).float()
    want = x.double().cumsum(1).sum(1)
    before = torch.cuda.memory_stats()["allocation.all.allocated"]
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = op(x)
    s.synchronize()
    assert torch.equal(y.double(), want)
    kinds = [c[0] for c in counting.calls]
    assert kinds == ["allocate", "deallocate"]
    assert counting.calls[0][1] >= 300 * 1000 * 4 and counting.calls[0][2] == s.cuda_stream
    assert counting.calls[1][1:] == counting.calls[0][1:]
    # y and the scratch block both came from PyTorch's allocator.
    assert torch.cuda.memory_stats()["allocation.all.allocated"] >= before + 2


def test_a_scratch_allocator_that_fails_raises_and_launches_nothing(tmp_path):
    class Broken:
        def allocate(self, nbytes, stream):
            raise MemoryError("the arena is full")

        def deallocate(self, ptr, nbytes, stream):
            raise AssertionError("nothing was allocated")

    class NotAnAddress(Broken):
        def allocate(self, nbytes, stream):
            return "here"

    x = torch.ones(64, 100, device="cuda")
    for allocator, error, match in [(Broken(), MemoryError, "the arena is full"),
                                    (NotAnAddress(), kiln.ArgumentError, "returned 'here', not a device address")]:
        options = kiln.Options(cache_dir=str(tmp_path / "cache"), scratch=allocator)
        op = kiln.loads(_TWO_STEPS, name="scratch.kiln", options=options).two_steps
        y = torch.full((64,), float("nan"), device="cuda")
        with pytest.raises(error, match=match):
            op(x, out=y)
        torch.cuda.synchronize()
        assert torch.isnan(y).all()
