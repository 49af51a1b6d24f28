"""kiln ops as PyTorch custom operators, which torch.compile and torch.export keep in the graph.

    import kiln, kiln.torch
    prog = kiln.load("specs/elementwise.kiln")
    ops = kiln.torch.library(prog)                        # every op: torch.ops.kiln.relu_add, ...
    y = torch.compile(lambda a, b: ops.relu_add(a, b) * 2, fullgraph=True)(a, b)
    scaled = kiln.torch.library_op(prog.axpby, alpha=3.0)   # one op, its consts fixed

Each op becomes one operator, defined with torch.library: a schema from the op's signature
(tensors, scalars; one or several outputs), a CUDA implementation that calls kiln on PyTorch's
current stream, and a fake (meta) implementation that computes the outputs' shapes and dtypes
from the inputs' with kiln's own shape binding, so tracing needs no GPU. The operators are
functional: they allocate their outputs and mutate no argument. Consts are fixed when the
operator is made (a distinct operator per set of consts). There is no autograd formula: calling
one on tensors that require grad raises in backward.

Under torch.compile's dynamic shapes (dynamic=True, mark_dynamic) the fake implementation sees
symbolic sizes: it then evaluates the op's shape rules (Op.shape_rules: each extent as an
expression of the op's dims) over them, so one graph serves every size, and the sizes' relations
(a dim named twice, a conv's output size) become torch._check assertions of the graph. The
operator's CUDA implementation runs with concrete sizes, where kiln's generic shapes (the
default) share one executable per bucket of sizes.
"""

from __future__ import annotations

import hashlib
import operator
import re
import types
from typing import Any, Optional

import torch

from ._api import Op, Program, split_signature
from ._tensors import CODES, torch_dtype
from .errors import ArgumentError, ShapeError

_SCALARS = {"f32": "float", "f64": "float", "f16": "float", "bf16": "float", "i32": "int", "i64": "int",
            "u64": "int", "bool": "bool"}
_FAKE_ADDRESS = 1 << 20   # what the fake implementation passes as a data pointer: only shapes are read

_libraries = {}   # namespace -> torch.library.Library
_made = {}        # "namespace::name" -> (op, consts, operator)
_NAME = re.compile(r"[A-Za-z_][0-9A-Za-z_]*")


_OPERATIONS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": operator.floordiv,
               "min": torch.sym_min}


def _evaluate(expr, dims, where):
    """A shape expression of Op.shape_rules (a list of (kind, value, dim, lhs, rhs) nodes, operands
    first) at `dims`, whose values may be torch.SymInt: one loop over the nodes."""
    values = []
    for kind, value, dim, lhs, rhs in expr:
        if kind == "const":
            values.append(value)
        elif kind == "dim":
            if dim not in dims:
                raise ShapeError(f"{where}: dim {dim} has no value (no tensor input has it as an extent, and it has no "
                                 "default)")
            values.append(dims[dim])
        else:
            values.append(_OPERATIONS[kind](values[lhs], values[rhs]))
    return values[-1]


def _require(condition, message):
    """A relation of sizes: checked now where it is a bool, else (a torch.SymBool) asserted in the
    graph by torch._check."""
    if isinstance(condition, bool):
        if not condition:
            raise ShapeError(message)
    else:
        torch._check(condition, lambda: message)


def symbolic_outputs(rules, name, values):
    """The outputs' (shape, dtype name) of op `name` from its shape rules (Op.shape_rules) and the
    inputs `values` (tensors, whose sizes may be symbolic, and scalars), bound as kiln binds
    concrete shapes: a tensor extent that is a plain dim gives that dim (every other place naming
    it must agree), a dim no input gives takes its default, every other extent and every `equal`
    relation must hold, and each output extent must be at least 1."""
    dims, later = {}, []
    inputs = [a for a in rules["arguments"] if not a["is_output"]]
    for a, v in zip(inputs, values):
        if not a["is_tensor"]:
            continue
        if v.dim() != len(a["shape"]):
            raise ShapeError(f"{name}: '{a['name']}' must have rank {len(a['shape'])} but has shape {tuple(v.shape)}")
        if v.dtype != torch_dtype(a["dtype"]):
            raise ArgumentError(f"{name}: '{a['name']}' has dtype {v.dtype}, expected {torch_dtype(a['dtype'])}")
        for axis, (expr, size) in enumerate(zip(a["shape"], v.shape)):
            where = f"{a['name']}.shape[{axis}]"
            if len(expr) == 1 and expr[0][0] == "dim":
                dim = expr[0][2]
                if dim in dims:
                    _require(dims[dim][0] == size, f"{name}: dim {dim} is {dims[dim][0]} from {dims[dim][1]} but {size} "
                                                   f"from {where}")
                else:
                    dims[dim] = (size, where)
            else:
                later.append((expr, size, where))
    dims = {dim: value for dim, (value, _) in dims.items()}
    for dim, value in rules["defaults"].items():
        dims.setdefault(dim, value)
    for expr, size, where in later:
        _require(_evaluate(expr, dims, name) == size, f"{name}: {where} is {size}, which its declared extent does not give")
    for lhs, rhs, message in rules["equal"]:
        _require(_evaluate(lhs, dims, name) == _evaluate(rhs, dims, name), f"{name}: {message}")
    outputs = []
    for a in rules["arguments"]:
        if a["is_output"]:
            shape = [_evaluate(expr, dims, name) for expr in a["shape"]]
            for axis, extent in enumerate(shape):
                _require(extent >= 1, f"{name}: output '{a['name']}' would have extent {extent} in dim {axis}")
            outputs.append((shape, a["dtype"]))
    return outputs


def _symbolic(values):
    """Whether some tensor among `values` has a symbolic size (torch.compile's dynamic shapes)."""
    return any(isinstance(v, torch.Tensor) and not all(type(s) is int for s in v.shape) for v in values)


def _lib(namespace):
    lib = _libraries.get(namespace)
    if lib is None:
        lib = _libraries[namespace] = torch.library.Library(namespace, "FRAGMENT")
    return lib


def _input_kinds(op):
    """(name, dtype, is_tensor) of each input: "a: f32[M]" is a tensor, "s: f32" a scalar."""
    return [(name, typ.split("[")[0], "[" in typ) for name, typ in split_signature(op.signature)[0]]


def _operator_name(op, consts):
    base = re.sub(r"[^0-9A-Za-z_]", "_", f"{_program_stem(op)}_{op.name}")
    if not consts:
        return base
    digest = hashlib.sha1(repr(sorted(consts.items())).encode()).hexdigest()[:10]
    return f"{base}_{digest}"


def _program_stem(op):
    file = op._program_file or "spec"
    return file.rsplit("/", 1)[-1].split(".")[0]


def library(program: Program, namespace: str = "kiln") -> types.SimpleNamespace:
    """Every op of `program` as torch.ops.<namespace>.<op name>, with the consts' defaults.
    Returns the operators as attributes (ops.relu_add). A name already defined in the namespace by
    another kiln op is an ArgumentError: load a second program into its own namespace."""
    if not isinstance(program, Program):
        raise ArgumentError(f"library takes a kiln.Program (kiln.load(...)), not {type(program).__name__}")
    return types.SimpleNamespace(**{name: library_op(program[name], name=name, namespace=namespace)
                                    for name in program.ops})


def library_op(op: Op, name: Optional[str] = None, namespace: str = "kiln", **consts: Any) -> Any:
    """`op` (a kiln.Op) as torch.ops.<namespace>.<name>: callable on CUDA tensors, traceable by
    torch.compile and torch.export. `consts` fix the op's consts for this operator. `name`
    defaults to <spec file stem>_<op>[_<digest of the consts>]; asking again for an operator of
    the same op returns it, and a name taken by another op is an ArgumentError."""
    if not isinstance(op, Op):
        raise ArgumentError(f"library_op takes a kiln.Op (prog.<name>), not {type(op).__name__}")
    unknown = set(consts) - set(op.consts)
    if unknown:
        raise ArgumentError(f"op {op.name} has no const named {sorted(unknown)} (its consts: {op.consts or 'none'})")
    name = name or _operator_name(op, consts)
    for what, value in (("an operator name", name), ("a namespace", namespace)):
        if not _NAME.fullmatch(value):
            raise ArgumentError(f"'{value}' is not {what} (letters, digits and _)")
    qualified = f"{namespace}::{name}"
    made = _made.get(qualified)
    if made is not None:
        if made[0] is not op or made[1] != consts:
            raise ArgumentError(f"torch.ops.{namespace}.{name} is already defined by another kiln op or consts; "
                                "pass name= (or namespace=)")
        return made[2]
    kinds = _input_kinds(op)
    outputs = split_signature(op.signature)[1]
    args = ", ".join(f"{'Tensor' if is_tensor else _SCALARS[dtype]} {arg}" for arg, dtype, is_tensor in kinds)
    returns = "Tensor" if len(outputs) == 1 else "(" + ", ".join("Tensor" for _ in outputs) + ")"
    lib = _lib(namespace)
    lib.define(f"{name}({args}) -> {returns}")
    variant = op._op(dict(consts))

    def fake_inputs(values):
        items = []
        for (arg, dtype, is_tensor), v in zip(kinds, values):
            items.append((_FAKE_ADDRESS, CODES[dtype], tuple(v.shape)) if is_tensor else v)
        return items

    rules = []   # the variant's shape rules, read on the first symbolic trace

    def specs(values):
        """The outputs' (shape, dtype name): kiln's binder on concrete sizes, the shape rules on
        symbolic ones."""
        if _symbolic(values):
            if not rules:
                rules.append(variant.shape_rules())
            return symbolic_outputs(rules[0], op.name, values)
        return [(a["shape"], a["dtype"]) for a in variant.arguments_for(fake_inputs(values)) if a["is_output"]]

    def allocate(values, device):
        # The outputs on the first tensor input's device (an op without one: the current CUDA device).
        device = next((v.device for v, (_, _, t) in zip(values, kinds) if t), device)
        outs = [torch.empty(shape, dtype=torch_dtype(dtype), device=device) for shape, dtype in specs(values)]
        return outs

    def cuda_impl(*values):
        outs = allocate(values, "cuda")
        result = op(*values, out=tuple(outs), **consts)
        return result[0] if len(outs) == 1 else tuple(result)

    def fake_impl(*values):
        outs = allocate(values, "cuda")   # under fake mode: fake tensors
        return outs[0] if len(outs) == 1 else tuple(outs)

    lib.impl(name, cuda_impl, "CUDA")
    torch.library.register_fake(qualified, fake_impl, lib=lib)
    operator = getattr(getattr(torch.ops, namespace), name)
    _made[qualified] = (op, dict(consts), operator)
    return operator


class _CachingAllocator:
    """kiln.Options(scratch=...) through PyTorch's CUDA caching allocator: a call's scratch
    (intermediates, workspaces) is a block of PyTorch's cache on the call's stream, reused in that
    stream's order, counted by torch.cuda.memory_stats, and freed by torch.cuda.empty_cache like
    PyTorch's own."""

    def allocate(self, nbytes: int, stream: int) -> int:
        return torch.cuda.caching_allocator_alloc(nbytes, torch.cuda.current_device(), stream)

    def deallocate(self, ptr: int, nbytes: int, stream: int) -> None:
        torch.cuda.caching_allocator_delete(ptr)

    def __repr__(self) -> str:
        return "kiln.torch.caching_allocator()"


_CACHING_ALLOCATOR = _CachingAllocator()


def caching_allocator() -> Any:
    """The scratch allocator for kiln.Options(scratch=kiln.torch.caching_allocator()): PyTorch's
    CUDA caching allocator instead of kiln's own pool (docs/python.md, "Scratch memory"). One
    object, so equal Options share one runtime."""
    return _CACHING_ALLOCATOR
