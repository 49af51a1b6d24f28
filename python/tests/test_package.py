"""The kiln package without a GPU: loading, specializing, generated code, errors, argument checks."""

import pytest

import kiln
from conftest import SPECS, FakeCuda, FakeHost, import_torch

RELU_ADD = """
op relu_add {
  dims B = 4, N = 8
  in  a: f32[B, N]
  in  b: f32[N]
  out y = relu(a + b)
}
op scale {
  const alpha: f32 = 2.0
  dims N = 16
  in  x: f32[N]
  out y = alpha * x
  out z = x
}
"""


def test_load_file_lists_ops_and_signatures(options):
    prog = kiln.load(SPECS / "elementwise.kiln", options)
    assert "relu_add" in prog.ops and "axpby" in prog.ops
    assert prog.relu_add.signature == "relu_add(a: f32[B, N], b: f32[N]) -> y: f32[B, N]"
    assert prog["relu_add"] is prog.relu_add
    assert prog.relu_add.dims == ["B", "N"]
    assert prog.axpby.consts == ["alpha", "beta"]
    assert "relu_add" in dir(prog)


def test_specialize_gives_plan_source_ptx_and_kernels(options):
    ex = kiln.loads(RELU_ADD, name="inline", options=options).relu_add.specialize(B=64, N=32)
    # The default shapes are generic: B and N are run-time values, each planned by its bucket.
    assert ex.plan.startswith("plan relu_add [B=64 (dyn, multiple of 16) N=32 (dyn, multiple of 16)] for sm_90a")
    assert 'extern "C" __global__' in ex.source and "// spec: inline:" in ex.source
    assert ".entry kiln_relu_add_k0_elementwise" in ex.ptx
    (k,) = ex.kernels
    assert k["name"] == "kiln_relu_add_k0_elementwise" and k["template"] == "elementwise"
    assert k["registers"] != 0 and k["spill_bytes"] <= 0   # (-1: not reported where the cubin came from)
    assert [(a["name"], a["is_output"], a["shape"]) for a in ex.arguments] == [
        ("a", False, (64, 32)), ("b", False, (32,)), ("y", True, (64, 32))]


def test_consts_are_keyword_arguments(options):
    op = kiln.loads(RELU_ADD, options=options).scale
    assert "2.0" in op.specialize().source or "2.0f" in op.specialize().source
    assert "0.5" in op.specialize(alpha=0.5).source
    with pytest.raises(kiln.ArgumentError, match="no const named 'alpah'"):
        op.output_specs(FakeCuda((16,)), alpah=1.0)


def test_output_specs_bind_dims_from_the_inputs(options):
    prog = kiln.loads(RELU_ADD, options=options)
    assert prog.relu_add.output_specs(FakeCuda((5, 7)), FakeCuda((7,))) == [{"name": "y", "dtype": "f32", "shape": (5, 7)}]
    assert [s["name"] for s in prog.scale.output_specs(FakeCuda((3,)))] == ["y", "z"]


def test_spec_errors_carry_their_location(options):
    with pytest.raises(kiln.SpecError) as err:
        kiln.loads("op x {\n  in a: f32[N]\n  out y = a +\n}\n", name="broken.kiln", options=options)
    assert (err.value.file, err.value.line, err.value.column, err.value.col) == ("broken.kiln", 4, 1, 1)
    assert "expected an expression" in str(err.value) and "\n}\n^" in str(err.value)   # the line, a caret
    assert isinstance(err.value, ValueError)


def test_a_missing_spec_file_names_it(options, tmp_path):
    # As in the C++ API and the CLI (exit code 1): a wrong path is the caller's input.
    with pytest.raises(kiln.ArgumentError, match="cannot read spec file .*missing.kiln.*no such file"):
        kiln.load(tmp_path / "missing.kiln", options)


def test_unknown_op_dim_and_precision(options):
    prog = kiln.loads(RELU_ADD, options=options)
    with pytest.raises(kiln.ArgumentError, match="no op named 'relu'"):
        prog.relu
    with pytest.raises(kiln.ArgumentError, match="no dim named 'M'"):
        prog.relu_add.specialize(M=3)
    with pytest.raises(kiln.ArgumentError, match="precision 'fp16'"):
        prog.relu_add.specialize(precision="fp16")
    with pytest.raises(AttributeError):
        prog._private


def test_arguments_are_checked_by_name(options):
    op = kiln.loads(RELU_ADD, options=options).relu_add
    with pytest.raises(kiln.ShapeError, match="dim N is 7 from a.shape\\[1\\] but 6 from b.shape\\[0\\]"):
        op.output_specs(FakeCuda((5, 7)), FakeCuda((6,)))
    with pytest.raises(kiln.ArgumentError, match="'a' has dtype i32, expected f32"):
        op.output_specs(FakeCuda((5, 7), "<i4"), FakeCuda((7,)))
    with pytest.raises(kiln.ShapeError, match="'b' has rank 2, expected 1"):
        op.output_specs(FakeCuda((5, 7)), FakeCuda((1, 7)))
    with pytest.raises(kiln.ArgumentError, match="argument 'a' is a host \\(CPU\\) array"):
        op(FakeHost((5, 7)), FakeCuda((7,)))
    with pytest.raises(kiln.ArgumentError, match="argument 'b' is a str, not a tensor"):
        op(FakeCuda((5, 7)), "b")
    with pytest.raises(kiln.ArgumentError, match="got 1 inputs, expected 2"):
        op(FakeCuda((5, 7)))
    with pytest.raises(kiln.ArgumentError, match="argument 'a' is not contiguous"):
        op(FakeCuda((5, 7), strides=(4, 20)), FakeCuda((7,)))
    with pytest.raises(kiln.ArgumentError, match="pass out="):
        op(FakeCuda((5, 7)), FakeCuda((7,)))   # a framework kiln does not allocate for


def test_options_pick_the_runtime(tmp_path):
    a = kiln.Options(arch="sm_80", cache_dir=str(tmp_path), use_environment=False)
    assert "for sm_80" in kiln.loads(RELU_ADD, options=a).relu_add.specialize().plan
    with pytest.raises(kiln.ArgumentError):
        kiln.loads(RELU_ADD, options={"arch": "sm_80"})


def test_shapes_option_makes_elementwise_dims_generic(tmp_path):
    for generic in (kiln.Options(arch="sm_90", cache_dir=str(tmp_path), use_environment=False, shapes="generic"),
                    kiln.Options(arch="sm_90", cache_dir=str(tmp_path), use_environment=False)):   # the default
        ex = kiln.loads(RELU_ADD, options=generic).relu_add.specialize(B=100, N=64)
        assert "kiln::DynDim dim_B, kiln::DynDim dim_N" in ex.source
        assert "B=100 (dyn, general) N=64 (dyn, multiple of 16)" in ex.plan
    declared = kiln.Options(arch="sm_90", cache_dir=str(tmp_path), use_environment=False, shapes="declared")
    assert "dim_" not in kiln.loads(RELU_ADD, options=declared).relu_add.specialize().source
    with pytest.raises(kiln.ArgumentError, match="not one of declared, generic, specialized"):
        kiln.loads(RELU_ADD, options=kiln.Options(cache_dir=str(tmp_path), shapes="dynamic"))


def test_errors_form_one_hierarchy():
    assert issubclass(kiln.ShapeError, kiln.ArgumentError)
    for cls in (kiln.SpecError, kiln.ArgumentError, kiln.ShapeError, kiln.CompileError, kiln.CudaError, kiln.IoError,
                kiln.UnsupportedError, kiln.InternalError):
        assert issubclass(cls, kiln.Error)
    assert issubclass(kiln.ArgumentError, ValueError) and issubclass(kiln.SpecError, ValueError)
    assert issubclass(kiln.UnsupportedError, NotImplementedError) and issubclass(kiln.IoError, OSError)


def test_diagnostics_go_to_the_kiln_logger(options):
    import logging

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    keep = Keep()
    kiln.logger.addHandler(keep)
    try:
        kiln.set_log_level("info")
        kiln.loads(RELU_ADD, name="logged.kiln", options=options).relu_add.specialize(B=3, N=5).kernels
    finally:
        kiln.set_log_level("warning")
        kiln.logger.removeHandler(keep)
    infos = [r.getMessage() for r in records if r.levelno == logging.INFO]
    assert any("relu_add" in m for m in infos), infos
    with pytest.raises(kiln.ArgumentError, match="log level 'loud'"):
        kiln.set_log_level("loud")


def test_reference_on_host_arrays(options):
    """The float64 reference from Python, on NumPy arrays (no GPU): dims bind from the arrays."""
    import numpy

    prog = kiln.loads(RELU_ADD, options=options)
    a = numpy.array([[1, -2, 3], [-4, 5, -6]], dtype=numpy.float32)
    b = numpy.full(3, 0.5, dtype=numpy.float32)
    y = prog.relu_add.reference(a, b)
    assert y.dtype == numpy.float32 and y.shape == (2, 3)
    assert y.tolist() == [[1.5, 0, 3.5], [0, 5.5, 0]]
    y2, z2 = prog.scale.reference(numpy.arange(5, dtype=numpy.float32), alpha=3.0)
    assert y2.tolist() == [0, 3, 6, 9, 12] and z2.tolist() == [0, 1, 2, 3, 4]
    ex = prog.relu_add.specialize(B=2, N=3)
    out = numpy.zeros((2, 3), dtype=numpy.float32)
    ex.reference(a, b, out)
    assert out.tolist() == y.tolist()
    with pytest.raises(kiln.ShapeError, match="dim N is 2 from a.shape\\[1\\] but 3 from b.shape\\[0\\]"):
        ex.reference(a.T.copy(), b, numpy.zeros((3, 2), dtype=numpy.float32))
    with pytest.raises(kiln.ArgumentError, match="'b' has dtype f64, expected f32"):
        prog.relu_add.reference(a, b.astype(numpy.float64))
    with pytest.raises(kiln.ArgumentError, match="argument 'a' is a FakeCuda, not a host array"):
        prog.relu_add.reference(FakeCuda((2, 3)), b)


def test_the_extension_ships_typed_stubs():
    import pathlib

    stub = pathlib.Path(kiln._kiln.__file__).with_name("_kiln.pyi")
    text = stub.read_text()
    assert "class Op:" in text and "def call(self, stream: int, arguments: list, device: int = -1) -> None" in text
    assert kiln._kiln.DTYPE_CODES["f32"] == 0 and sorted(kiln._kiln.DTYPE_CODES) == sorted(
        ["f32", "f16", "bf16", "f64", "i32", "i64", "u64", "bool"])


def test_out_must_match_the_outputs(options):
    op = kiln.loads(RELU_ADD, options=options).relu_add
    with pytest.raises(kiln.ArgumentError, match="out= has 2 tensors, expected 1"):
        op(FakeCuda((5, 7)), FakeCuda((7,)), out=(FakeCuda((5, 7)), FakeCuda((5, 7))))


def test_reference_of_an_op_without_tensor_inputs(options):
    import numpy

    op = kiln.loads("op cols {\n  dims B = 3, N = 4\n  out y = iota(B, N, axis=1)\n}\n", options=options).cols
    assert op.reference().tolist() == [[0, 1, 2, 3]] * 3             # the default dims, NumPy arrays
    y = numpy.full((2, 5), -1, dtype=numpy.int64)
    assert op.reference(out=y) is y and y.tolist() == [[0, 1, 2, 3, 4]] * 2   # dims bound from out=
    with pytest.raises(kiln.ArgumentError, match="must be a contiguous host array"):
        op.reference(out=numpy.zeros((5, 2), dtype=numpy.int64).T)


def test_bad_tensors_are_refused_before_a_launch(options):
    """Each is an error from the argument checks, before kiln touches a GPU (none is here)."""
    op = kiln.loads(RELU_ADD, options=options).relu_add
    a, b = FakeCuda((5, 7)), FakeCuda((7,))
    with pytest.raises(kiln.ArgumentError, match="output 'y' overlaps input 'a' in memory"):
        op(a, b, out=a)
    with pytest.raises(kiln.ShapeError, match="'a' has extent 0 in dim 0"):
        op(FakeCuda((0, 7)), b, out=FakeCuda((0, 7)))


NHWC_F16 = """
op conv_nhwc_f16 {
  dims N = 2, H = 8, W = 8, C = 16, K = 16
  in  x: f16[N, H, W, C]
  in  w: f16[K, C, 3, 3]
  out y = conv2d(x, w, padding=[1, 1], layout="NHWC")
}
"""


def test_unsupported_and_compile_errors_carry_their_details(options, tmp_path):
    # A valid spec that no template covers yet: UnsupportedError, a NotImplementedError.
    with pytest.raises(kiln.UnsupportedError, match="no kernel template") as err:
        kiln.loads(NHWC_F16, options=options).conv_nhwc_f16.specialize().source
    assert isinstance(err.value, NotImplementedError)
    # A template that does not compile (a template directory overrides the built-in one): NVRTC's
    # log and the unit's source come with the CompileError.
    broken = tmp_path / "templates" / "kiln"
    broken.mkdir(parents=True)
    (broken / "elementwise.cuh").write_text('#error "broken on purpose"\n')
    overridden = kiln.Options(arch="sm_90a", cache_dir=str(tmp_path / "cache2"), use_environment=False,
                              template_dir=str(tmp_path / "templates"))
    with pytest.raises(kiln.CompileError) as err:
        kiln.loads(RELU_ADD, options=overridden).relu_add.specialize(B=3, N=5).ptx
    assert "broken on purpose" in err.value.log and 'extern "C" __global__' in err.value.source


def test_cuda_errors_carry_the_call_and_the_code(options):
    """Without a GPU driver, a launch is a CudaError naming the failure (where a driver exists the
    launch would run: this test is for machines without one, as CI's)."""
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")   # what kiln's runtime loads
        pytest.skip("a CUDA driver is installed here: a launch on fake pointers would run")
    except OSError:
        pass
    op = kiln.loads(RELU_ADD, options=options).relu_add
    with pytest.raises(kiln.CudaError) as err:
        op(FakeCuda((4, 8)), FakeCuda((8,)), out=FakeCuda((4, 8)))
    assert "cannot load the CUDA driver" in str(err.value)
    assert (err.value.call, err.value.code_name, err.value.code) == ("dlopen", "CUDA_ERROR_NO_DEVICE", 100)


def test_device_count_and_device_argument_without_a_gpu(options):
    """device_count() is 0 without a driver; a bad device= is refused before anything runs."""
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
        pytest.skip("a CUDA driver is installed here")
    except OSError:
        pass
    assert kiln.device_count() == 0
    op = kiln.loads(RELU_ADD, options=options).relu_add
    for bad in ("cuda:1", -1, True, 1.0):
        with pytest.raises(kiln.ArgumentError, match="device= must be a CUDA device index"):
            op(FakeCuda((4, 8)), FakeCuda((8,)), out=FakeCuda((4, 8)), device=bad)
    with pytest.raises(kiln.CudaError, match="cannot load the CUDA driver"):   # a valid index reaches the driver
        op(FakeCuda((4, 8)), FakeCuda((8,)), out=FakeCuda((4, 8)), device=1)


def test_arch_is_the_runtime_target(options, tmp_path):
    assert kiln.arch(options) == "sm_90a"
    assert kiln.arch(kiln.Options(arch="sm_80", cache_dir=str(tmp_path), use_environment=False)) == "sm_80"


def test_preload_of_a_missing_or_damaged_pack_names_it(options, tmp_path):
    with pytest.raises(kiln.ArgumentError, match="nothing.kilnpack: cannot read the pack"):
        kiln.preload(tmp_path / "nothing.kilnpack", options)
    damaged = tmp_path / "damaged.kilnpack"
    damaged.write_bytes(b"not a pack at all")
    with pytest.raises(kiln.ArgumentError, match="not a kiln pack"):
        kiln.preload(damaged, options)


def test_options_scratch_needs_allocate_and_deallocate():
    """kiln.Options(scratch=...) takes an allocator object (docs/api.md, "Scratch memory"); anything
    else is an ArgumentError when the runtime is made. Equal Options share one runtime."""
    import_torch("kiln.torch.caching_allocator needs PyTorch")
    import kiln.torch

    text = "op a {\n  dims N = 4\n  in x: f32[N]\n  out y = x + 1.0\n}\n"
    with pytest.raises(kiln.ArgumentError, match="Options.scratch must have allocate"):
        kiln.loads(text, name="a.kiln", options=kiln.Options(disk_cache=False, scratch=object()))
    a = kiln.Options(disk_cache=False, scratch=kiln.torch.caching_allocator())
    b = kiln.Options(disk_cache=False, scratch=kiln.torch.caching_allocator())
    assert a == b and hash(a) == hash(b)
    assert kiln.loads(text, name="a.kiln", options=a).a is not None
