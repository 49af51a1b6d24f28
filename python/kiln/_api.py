"""The Python API: Options, load/loads, Program, Op, Executable (over kiln._kiln)."""

from __future__ import annotations

import dataclasses
import os
import threading
from typing import Any, Optional, Union

from . import _kiln, _tensors
from ._tensors import (CODES, arguments, device_index, empty, finish, host_arguments, host_empty, stream_handle,
                       torch_current_stream, torch_empty, torch_fast, torch_template)
from .errors import ArgumentError


@dataclasses.dataclass(frozen=True)
class Options:
    """Runtime options (include/kiln/kiln.h's kiln::Options). None means kiln's default:
    cache_dir $KILN_CACHE_DIR, else ~/.cache/kiln; arch the current GPU's, else $KILN_ARCH, else
    sm_90. precision: "fp32" (fp32-accurate, the default), "ieee", "tf32" or "3xtf32". shapes:
    which dims stay run-time values, "declared" (the spec's `dyn` marks), "generic" (also every dim
    that sizes only elementwise kernels, the rows of reductions, scans and row norms, the batch
    of a conv or the planes of a pool: one compile per bucket of sizes) or "specialized" (every
    dim baked in); None: $KILN_SHAPES, else "generic". tuning: measured GEMM configs, "off",
    "stored" (what `kiln tune` stored for this op, shape and device) or "on-first-call" (tune on a
    miss, then store); None: $KILN_TUNING, else "stored". scratch: where a call's scratch
    (intermediates, workspaces) comes from: None, kiln's own stream-ordered pool per device; else
    an object with allocate(nbytes, stream) -> device address and deallocate(ptr, nbytes, stream),
    stream the CUstream as an int, with stream-ordered reuse (kiln.torch.caching_allocator()
    gives PyTorch's; docs/api.md, "Scratch memory")."""

    cache_dir: Optional[str] = None
    disk_cache: bool = True
    arch: Optional[str] = None
    precision: str = "fp32"
    template_dir: Optional[str] = None
    use_environment: bool = True
    shapes: Optional[str] = None
    tuning: Optional[str] = None
    scratch: Optional[Any] = None


_runtimes = {}
_runtimes_lock = threading.Lock()


def _runtime(options):
    """One runtime (memory cache, disk cache, loaded modules) per distinct Options."""
    options = options or Options()
    if not isinstance(options, Options):
        raise ArgumentError(f"options must be a kiln.Options, not {type(options).__name__}")
    with _runtimes_lock:
        rt = _runtimes.get(options)
        if rt is None:
            rt = _kiln.Runtime(options.cache_dir or "", options.disk_cache, options.arch or "", options.precision,
                               options.template_dir or "", options.use_environment, options.shapes or "",
                               options.tuning or "", options.scratch)
            _runtimes[options] = rt
        return rt


def reset() -> None:
    """Drops every runtime kiln holds (memory caches, loaded modules): the next load starts a new
    one, which finds compiled kernels in the disk cache. Programs loaded before keep theirs."""
    with _runtimes_lock:
        _runtimes.clear()


def stats(options: Optional[Options] = None) -> dict[str, int]:
    """The counters of the runtime for `options`: memory_hits, disk_hits, compiles, launches."""
    return dict(_runtime(options).stats())


def arch(options: Optional[Options] = None) -> str:
    """The arch the runtime for `options` plans for: Options.arch, else $KILN_ARCH, else the
    device current when that runtime was made ("sm_90a" on an H100), else "sm_90". What a pack
    for this process must be built for (`kiln build --arch`)."""
    return _runtime(options).arch()


def preload(pack: Union[str, os.PathLike], options: Optional[Options] = None) -> None:
    """Loads a .kilnpack (written by `kiln build -o FILE.kilnpack`) into the runtime for `options`:
    its cubins serve that runtime's ops before the disk cache and NVRTC. ArgumentError naming the
    file for a missing or damaged pack."""
    _runtime(options).preload(str(pack))


def load(path: Union[str, os.PathLike], options: Optional[Options] = None) -> Program:
    """The ops of a spec file."""
    return Program(_runtime(options).load_file(str(path)))


def loads(text: str, name: str = "inline", options: Optional[Options] = None) -> Program:
    """The ops of a spec given as text; `name` stands for its file in messages and sources."""
    return Program(_runtime(options).load_string(text, name))


class Program:
    """A loaded spec: its ops are attributes (prog.relu_add) and items (prog["relu_add"])."""

    def __init__(self, impl):
        self._impl = impl
        self._ops = {}

    @property
    def ops(self) -> list[str]:
        return list(self._impl.op_names())

    @property
    def file(self) -> str:
        return self._impl.file()

    @property
    def warnings(self) -> list[str]:
        return list(self._impl.warnings())

    def __getitem__(self, name: str) -> Op:
        op = self._ops.get(name)
        if op is None:
            op = self._ops[name] = Op(self._impl.op(name))
            op._program_file = self.file
        return op

    def __getattr__(self, name: str) -> Op:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.ops))

    def __repr__(self):
        return f"<kiln.Program {self.file}: {', '.join(self.ops)}>"


def _decls(text):
    """[(name, type)] of "a: f32[M, K], s: f32" (commas inside brackets do not split)."""
    decls, depth, start = [], 0, 0
    for i, ch in enumerate(text + ","):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            part = text[start:i].strip()
            if part:
                name, _, typ = part.partition(":")
                decls.append((name.strip(), typ.strip()))
            start = i + 1
    return decls


def split_signature(signature: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The inputs and outputs of "op(a: f32[M, K], s: f32) -> y: f32[M]" (or "-> (y: ..., z: ...)"),
    each a list of (name, type)."""
    head, _, tail = signature.partition(") -> ")
    tail = tail.strip()
    if tail.startswith("(") and tail.endswith(")"):
        tail = tail[1:-1]
    return _decls(head[head.index("(") + 1:]), _decls(tail)


class Op:
    """One op of a program. Call it with its inputs (tensors and scalars, in signature order);
    consts are keyword arguments. Returns the outputs (a tuple when there are several)."""

    def __init__(self, impl):
        self._impl = impl
        inputs, outputs = split_signature(impl.signature())
        self._inputs = [name for name, _ in inputs]
        self._outputs = [name for name, _ in outputs]
        self._program_file = ""   # the spec it came from (Program sets it; kiln.torch names operators by it)
        self._with = {}
        self._specs = {}   # (op variant, input dtype codes and shapes) -> the outputs' (dtype, shape, name)
        self._templates = {}   # the same keys -> the outputs' (torch_template, dtype code, shape): the fast path's

    @property
    def name(self) -> str:
        return self._impl.name()

    @property
    def signature(self) -> str:
        return self._impl.signature()

    @property
    def inputs(self) -> list[str]:
        """The input names, in call order."""
        return list(self._inputs)

    @property
    def outputs(self) -> list[str]:
        """The output names, in the order a call returns them."""
        return list(self._outputs)

    @property
    def dims(self) -> list[str]:
        return list(self._impl.dim_names())

    @property
    def consts(self) -> list[str]:
        return list(self._impl.const_names())

    def _op(self, consts, precision=None):
        key = (tuple(sorted(consts.items())), precision)
        impl = self._with.get(key)
        if impl is None:
            impl = self._impl.with_consts(dict(consts)) if consts else self._impl
            if precision is not None:
                impl = impl.with_precision(precision)
            self._with[key] = impl
        return impl

    def _check_count(self, values):
        if len(values) != len(self._inputs):
            raise ArgumentError(f"{self.name}: got {len(values)} inputs, expected {len(self._inputs)} ({self.signature})")

    def _inputs_of(self, values, items, want=None):
        """Appends the inputs' arguments to `items`; returns the first tensor (see _tensors.arguments)."""
        self._check_count(values)
        return arguments(self._inputs, values, items, None, want)

    def shape_rules(self, **consts: Union[bool, int, float]) -> dict[str, Any]:
        """How the op's shapes follow from its dims, these consts applied (include/kiln/kiln.h,
        ShapeRules): {"arguments": [{"name", "is_tensor", "is_output", "dtype", "shape"}], "defaults":
        {dim: value}, "equal": [(lhs, rhs, message)]}, each extent an expression as a list of
        (kind, value, dim, lhs, rhs) nodes, operands first ("const", "dim", "add", "sub", "mul",
        "floordiv", "min"). What kiln.torch evaluates over torch.compile's symbolic sizes
        (kiln.torch.symbolic_outputs); output_specs takes concrete inputs."""
        return self._op(consts).shape_rules()

    def output_specs(self, *inputs: Any, **consts: Union[bool, int, float]) -> list[dict[str, Any]]:
        """What a call with these inputs returns: [{"name", "dtype", "shape"}], one per output."""
        items = []
        self._inputs_of(inputs, items)
        return [{"name": a["name"], "dtype": a["dtype"], "shape": a["shape"]}
                for a in self._op(consts).arguments_for(items) if a["is_output"]]

    @staticmethod
    def _key(op, items):
        """The op variant and the tensors' dtype codes and shapes of a call's items."""
        key = [id(op)]
        for item in items:
            if type(item) is tuple:
                key += item[1:]
        return tuple(key)

    def _outputs_for(self, op, items):
        """The outputs' (dtype, shape, name) for a call, cached by the op variant and the inputs'
        dtype codes and shapes (an output's shape depends on no scalar's value)."""
        key = self._key(op, items)
        specs = self._specs.get(key)
        if specs is None:
            specs = [(a["dtype"], a["shape"], a["name"]) for a in op.arguments_for(items) if a["is_output"]]
            if len(self._specs) < 1024:
                self._specs[key] = specs
        return specs

    def _fast_outputs(self, op, items):
        """The fast path's new outputs (torch_template), their arguments appended to `items`: the
        output, or a tuple of them. None when the inputs hold no tensor to allocate like."""
        key = self._key(op, items)
        templates = self._templates.get(key)
        if templates is None:
            if len(key) == 1:
                return None
            templates = [(torch_template(dtype, shape), CODES[dtype], shape) for dtype, shape, _ in self._outputs_for(op, items)]
            if len(self._templates) < 1024:
                self._templates[key] = templates
        outs = []
        for template, code, shape in templates:
            o = torch_empty(template)
            items.append((o.data_ptr(), code, shape))
            outs.append(o)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def __call__(self, *inputs: Any, out: Any = None, stream: Any = None, precision: Optional[str] = None,
                 device: Any = None, **consts: Union[bool, int, float]) -> Any:
        op = self._impl if not consts and precision is None else self._op(consts, precision)
        if _tensors.ONE_DEVICE and stream is None and device is None and len(inputs) == len(self._inputs):
            # [Note: the Python fast path]
            # A call on contiguous CUDA torch tensors (and numbers) where PyTorch sees one device:
            # no device checks (every tensor is on the one device), outputs allocated from cached
            # templates, PyTorch's current stream. The extension reads the tensors itself
            # (call_torch); an allocating call whose templates are not made yet makes them here,
            # and anything the extension does not take (another framework, a strided or
            # grad-requiring tensor, several devices, stream= or device=) goes the general way
            # below, which checks, converts or refuses it. launch_overhead.py times both.
            done = op.call_torch(id(op), inputs, out, self._templates, torch_current_stream(), len(self._outputs))
            if done is not None:
                return done
            items = []
            if out is None and torch_fast(inputs, items):
                outs = self._fast_outputs(op, items)
                if outs is not None:
                    op.call(torch_current_stream(), items)
                    return outs
        items = []
        want = None if device is None else device_index(device)
        first = self._inputs_of(inputs, items, want)
        if out is None:
            if first is None:
                raise ArgumentError(f"{self.name}: no tensor input to allocate the outputs like: pass out=")
            outs = [empty(first, dtype, shape, name) for dtype, shape, name in self._outputs_for(op, items)]
            arguments(self._outputs, outs, items, first)
            op.call(stream_handle(stream, first), items, -1 if want is None else want)
            outs = finish(first, outs)
            return outs[0] if len(outs) == 1 else tuple(outs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if len(outs) != len(self._outputs):
            raise ArgumentError(f"{self.name}: out= has {len(outs)} tensors, expected {len(self._outputs)} ({self.signature})")
        first = arguments(self._outputs, outs, items, first, want)
        op.call(stream_handle(stream, first), items, -1 if want is None else want)
        return out

    def reference(self, *inputs: Any, out: Any = None, **consts: Union[bool, int, float]) -> Any:
        """The float64 CPU reference of a call (docs/semantics.md; what kiln's GPU tests compare
        with), on host arrays: CPU PyTorch tensors or NumPy arrays. Returns the outputs in their
        dtypes, allocated like the first input (NumPy arrays for an op without tensor inputs), a
        tuple when there are several; or writes them into `out=` (contiguous host arrays, whose
        shapes bind dims as a call's outputs do). No GPU is used."""
        op = self._op(consts)
        self._check_count(inputs)
        items = []
        first = host_arguments(self._inputs, inputs, items, len(self._inputs))
        if out is None:
            outs = [host_empty(first, a["dtype"], a["shape"], a["name"])
                    for a in op.arguments_for(items) if a["is_output"]]
        else:
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            if len(outs) != len(self._outputs):
                raise ArgumentError(f"{self.name}: out= has {len(outs)} arrays, expected {len(self._outputs)}")
        host_arguments(self._outputs, outs, items, 0)
        op.reference(items)
        if out is not None:
            return out
        return outs[0] if len(outs) == 1 else tuple(outs)

    def specialize(self, precision: Optional[str] = None, **values: Union[bool, int, float]) -> Executable:
        """The op at concrete dims (and consts): an Executable with its plan, source, PTX and kernels."""
        const_names = set(self.consts)
        consts = {k: v for k, v in values.items() if k in const_names}
        dims = {k: v for k, v in values.items() if k not in const_names}
        impl = self._impl if precision is None else self._impl.with_precision(precision)
        return Executable(impl.specialize(dims, consts))

    def tune(self, precision: Optional[str] = None, budget_s: float = 120.0, iters: int = 50, store: bool = True,
             **values: Union[bool, int, float]) -> dict[str, Any]:
        """Times every legal config of the op's tunable GEMMs at these dims (and consts) on the
        current GPU, each checked before it is timed, and stores the fastest in the cache
        directory, where calls with Options(tuning="stored") (the default) find it; `kiln tune`
        from Python (docs/api.md, "Tuning"). Returns every candidate's median per product."""
        const_names = set(self.consts)
        consts = {k: v for k, v in values.items() if k in const_names}
        dims = {k: v for k, v in values.items() if k not in const_names}
        impl = self._impl if precision is None else self._impl.with_precision(precision)
        return impl.tune(dims, consts, budget_s, iters, store)

    def __repr__(self):
        return f"<kiln.Op {self.signature}>"


class Executable:
    """An op specialized at concrete dims: what kiln generates for it, compiled on demand."""

    def __init__(self, impl):
        self._impl = impl
        self._names = [a["name"] for a in impl.arguments()]

    @property
    def plan(self) -> str:
        return self._impl.plan_text()

    @property
    def source(self) -> str:
        return self._impl.source()

    @property
    def ptx(self) -> str:
        return self._impl.ptx()

    @property
    def sass(self) -> str:
        return self._impl.sass()

    @property
    def kernels(self) -> list[dict[str, Any]]:
        return list(self._impl.kernels())

    @property
    def arguments(self) -> list[dict[str, Any]]:
        return list(self._impl.arguments())

    @property
    def signature(self) -> str:
        return self._impl.signature()

    def __call__(self, *args: Any, stream: Any = None, device: Any = None) -> None:
        """Launches on every argument, inputs then outputs (shapes as specialized), on the current
        device or `device` (Op.__call__)."""
        if len(args) != len(self._names):
            raise ArgumentError(f"got {len(args)} arguments, expected {len(self._names)} ({self.signature})")
        items = []
        if _tensors.ONE_DEVICE and stream is None and device is None:   # [Note: the Python fast path]
            if torch_fast(args, items):
                self._impl.launch(torch_current_stream(), items)
                return
            items = []
        want = None if device is None else device_index(device)
        first = arguments(self._names, args, items, None, want)
        self._impl.launch(stream_handle(stream, first), items, -1 if want is None else want)

    def reference(self, *args: Any) -> None:
        """The float64 CPU reference (Op.reference) into the given host outputs: every argument,
        inputs then outputs, a CPU PyTorch tensor or a NumPy array of the specialized shape."""
        if len(args) != len(self._names):
            raise ArgumentError(f"got {len(args)} arguments, expected {len(self._names)} ({self.signature})")
        items = []
        host_arguments(self._names, args, items, len(self._names) - sum(a["is_output"] for a in self.arguments))
        self._impl.reference(items)

    def __repr__(self):
        return f"<kiln.Executable {self.signature}>"
