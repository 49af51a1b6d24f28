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
"""

from __future__ import annotations

import hashlib
import re
import types
from typing import Any, Optional

import torch

from ._api import Op, Program, split_signature
from ._tensors import CODES, torch_dtype
from .errors import ArgumentError

_SCALARS = {"f32": "float", "f64": "float", "f16": "float", "bf16": "float", "i32": "int", "i64": "int",
            "u64": "int", "bool": "bool"}
_FAKE_ADDRESS = 1 << 20   # what the fake implementation passes as a data pointer: only shapes are read

_libraries = {}   # namespace -> torch.library.Library
_made = {}        # "namespace::name" -> (op, consts, operator)
_NAME = re.compile(r"[A-Za-z_][0-9A-Za-z_]*")


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

    def specs(values):
        return [a for a in variant.arguments_for(fake_inputs(values)) if a["is_output"]]

    def allocate(values, device):
        # The outputs on the first tensor input's device (an op without one: the current CUDA device).
        device = next((v.device for v, (_, _, t) in zip(values, kinds) if t), device)
        outs = [torch.empty(s["shape"], dtype=torch_dtype(s["dtype"]), device=device) for s in specs(values)]
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
