#!/usr/bin/env python3
"""Random specs at realistic sizes through the planner and emitter (and NVRTC with --compile).

Usage: python3 scripts/spec_sweep.py --kiln build/bin/kiln [--seed S] [--count N]
                                     [--families conv,matmul,pool,reduce,dyn] [--compile] [--keep DIR]

The fuzzers (fuzz/) draw dims of 1..17, which never reach the routes that need size: the TMA
engine (2^30 flops, 8 or 16 channels), K slices, 3-d im2col maps, stride phases, strided scans
over long axes. This draws, per family, `count` valid ops at the sizes those routes take:
- conv: conv1d/2d/3d and conv_transpose1d/2d/3d with stride, padding, dilation, output_padding,
  groups 1/2/4, 3-130 channels, f32/bf16/f16, bias and relu epilogues;
- matmul: M, N, K from 1 to 8192 (K to 262144), every layout, batched and with a shared B, a
  vector operand, two batch dims of which b holds some, written as matmul or '@', f32 in the
  target's precision, tf32 or ieee, bf16, f16, bias / relu / softmax epilogues;
- pool: max and avg in 1-3 d, stride, padding, dilation, ceil_mode, count_include_pad,
  divisor_override, with and without a batch axis;
- reduce: reductions, arg-reductions, scans, softmax, logsumexp and norms written as compositions,
  ranks 1-4, any axes, keepdims, extents 1..65537;
- dyn: ops of every family with `dyn` dims anywhere (values given with -D), attention written out
  (fused on sm_90a in f16 and bf16) among them.
Each op is planned and emitted by `kiln gen` for sm_90a (fp32 and tf32) and sm_80. Every op of
the first four families is valid, so any failure is a finding; a dyn op may be refused, but only
with exit 1 and a located error (`spec.kiln:LINE:COL: ...`): an internal error (exit 5), a crash
or an unlocated refusal is a finding. With --compile, `kiln build` then compiles every kernel of
the valid families through NVRTC for sm_90a (the templates static_assert the planner's geometry),
and every dyn op that planned for sm_90a at its values.
Exit status: 0 when nothing was found, 1 otherwise (each finding printed with its op's text; the
specs are kept then, or always with --keep), 2 for bad arguments. ctest runs a small sweep
(`sweep/random_specs`); run a large one by hand (`--count 300 --compile`: about 20 minutes on 2 cores).
"""
import argparse
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

TARGETS = (("sm_90a", "fp32"), ("sm_90a", "tf32"), ("sm_80", "fp32"))


def lst(v):
    return str(v[0]) if len(set(v)) == 1 else "[" + ", ".join(map(str, v)) + "]"


def spatial_names(d):
    return ["D", "H", "W"][3 - d:] if d > 1 else ["L"]


def spatial_sizes(rng, d, low):
    """Extents of d spatial axes: up to 40 each in 3-d, 300 in 2-d, 40000 in 1-d; `low` is the
    least (3-d, 2-d, 1-d)."""
    if d == 3:
        return [rng.randint(low[0], 40) for _ in range(d)]
    if d == 2:
        return [rng.randint(low[1], 300) for _ in range(d)]
    return [rng.randint(low[2], 40000)]


def conv_op(rng, name):
    while True:
        d = rng.choice((1, 2, 2, 3, 3))
        tr = rng.random() < 0.5
        g = rng.choice((1, 1, 1, 1, 2, 4))
        c = rng.choice((3, 8, 12, 16, 20, 32, 36, 48, 64, 70, 130))
        k = rng.choice((1, 5, 8, 16, 24, 32, 40, 48, 64, 70, 130))
        if c % g or k % g:
            continue
        ks = [rng.randint(1, 7 if d < 3 else 5) for _ in range(d)]
        st = [rng.choice((1, 1, 2, 3)) for _ in range(d)] if rng.random() < 0.6 else [rng.choice((1, 2))] * d
        dl = [rng.choice((1, 1, 2, 3)) for _ in range(d)]
        # PyTorch: a transposed conv's padding at most dilation * (kernel - 1), output_padding
        # below stride or dilation.
        pd = [min(rng.randint(0, 3), l * (kk - 1)) if tr else rng.randint(0, 3) for kk, l in zip(ks, dl)]
        op = [rng.randint(0, max(s, l) - 1) if tr and rng.random() < 0.3 else 0 for s, l in zip(st, dl)]
        n = rng.choice((1, 2, 3, 4, 8, 16))
        sp = spatial_sizes(rng, d, (4, 5, 10))
        out = [(x - 1) * s - 2 * p + l * (kk - 1) + o + 1 if tr else (x + 2 * p - l * (kk - 1) - 1) // s + 1
               for x, kk, s, p, l, o in zip(sp, ks, st, pd, dl, op)]
        if min(out) < 1 or n * c * math.prod(sp) > 6e7 or n * k * math.prod(out) > 6e7:
            continue
        break
    dt = rng.choice(("f32", "f32", "f32", "f32", "bf16", "f16"))
    names = spatial_names(d)
    w = ([c, k // g] if tr else [k, c // g]) + ks
    kw = [f"stride={lst(st)}" if any(s != 1 for s in st) else "", f"padding={lst(pd)}" if any(pd) else "",
          f"output_padding={lst(op)}" if any(op) else "", f"dilation={lst(dl)}" if any(x != 1 for x in dl) else "",
          f"groups={g}" if g > 1 else ""]
    call = f"{'conv_transpose' if tr else 'conv'}{d}d(x, w{''.join(', ' + a for a in kw if a)})"
    lines = [f"  dims N = {n}, " + ", ".join(f"{a} = {b}" for a, b in zip(names, sp)),
             f"  in  x: {dt}[N, {c}, {', '.join(names)}]", f"  in  w: {dt}[{', '.join(map(str, w))}]"]
    epi = rng.choice((0, 1, 2))
    if epi:
        lines.append(f"  in  b: {dt}[{k}{', 1' * d}]")
        call = f"{call} + b" if epi == 1 else f"relu({call} + b)"
    return op_text(name, lines + [f"  out y = {call}"]), {}


def matmul_op(rng, name):
    def dim():
        return rng.choice((1, 3, 7, 16, 33, 64, 100, 128, 255, 256, 500, 512, 1000, 1024, 2048, 3331, 4096, 4799,
                           6007, 8192))
    # The forms torch.matmul takes: batched or not (b shared by the batch or not), a vector operand
    # (rank 1), and two batch dims [B, H] with b holding some of them ([H], [B, 1] or [1, H]).
    form = rng.choice(("plain", "plain", "plain", "plain", "vector_a", "vector_b", "heads"))
    while True:
        m, n = dim(), dim()
        k = rng.choice((dim(), dim(), 16384, 65536, 131072, 262144))
        b = rng.choice((0, 0, 0, 2, 4, 32))
        h = rng.choice((2, 3, 8)) if form == "heads" else 1
        b = max(b, 2) if form == "heads" else b
        if max(b, 1) * h * (m * k + k * n + m * n) <= 3e8:
            break
    dt = rng.choice(("f32", "f32", "f32", "bf16", "f16"))
    ta, tb = rng.random() < 0.3, rng.random() < 0.4
    shared = b and rng.random() < 0.5
    bd = "B, " if b else ""
    prec = rng.choice(("", "", ', precision="tf32"', ', precision="ieee"')) if dt == "f32" else ""
    a_shape = f"{bd}{'K, M' if ta else 'M, K'}"
    b_shape = f"{'' if shared else bd}{'N, K' if tb else 'K, N'}"
    if form == "vector_a":
        ta, a_shape = False, "K"
    elif form == "vector_b":
        tb, b_shape = False, "K"
    elif form == "heads":
        a_shape = f"B, H, {'K, M' if ta else 'M, K'}"
        b_shape = rng.choice(("H, ", "B, 1, ", "1, H, ")) + ("N, K" if tb else "K, N")
    a_op, b_op = "transpose(a)" if ta else "a", "transpose(b)" if tb else "b"
    # Spelled as matmul, or as '@' where no keyword is given (the same graph).
    mm = f"{a_op} @ {b_op}" if not prec and rng.random() < 0.3 else f"matmul({a_op}, {b_op}{prec})"
    lines = [f"  dims M = {m}, N = {n}, K = {k}" + (f", B = {b}" if b else "") + (f", H = {h}" if form == "heads" else ""),
             f"  in  a: {dt}[{a_shape}]",
             f"  in  b: {dt}[{b_shape}]"]
    epi = rng.choice((0, 0, 1, 2, 3)) if form != "vector_b" else 0   # (a column's product has no N)
    if epi in (1, 2):
        lines.append(f"  in  bias: {dt}[N]")
        mm = f"{mm} + bias" if epi == 1 else f"relu({mm} + bias)"
    elif epi == 3 and dt == "f32":
        mm = f"softmax({mm}, axis=-1)"
    return op_text(name, lines + [f"  out c = {mm}"]), {}


def pool_op(rng, name):
    while True:
        d = rng.choice((1, 2, 3))
        mx = rng.random() < 0.5
        ks = [rng.randint(1, 7 if d < 3 else 4) for _ in range(d)]
        st = [rng.randint(1, 4) for _ in range(d)] if rng.random() < 0.8 else None
        pd = [rng.randint(0, kk // 2) for kk in ks]
        dl = [rng.choice((1, 1, 2, 3)) for _ in range(d)] if mx else [1] * d
        ceil = rng.random() < 0.3
        sp = spatial_sizes(rng, d, (1, 1, 1))
        ok = True
        for x, kk, p, l, s in zip(sp, ks, pd, dl, st or ks):
            span = x + 2 * p - (l * (kk - 1) + 1)
            if span < 0:
                ok = False
                break
            out = min(math.ceil(span / s), (x + p - 1) // s) + 1 if ceil else span // s + 1
            ok = ok and out >= 1
        if ok:
            break
    n, c = rng.choice((1, 2, 8, 16)), rng.choice((1, 3, 8, 16, 64))
    batch = rng.random() < 0.85
    dt = rng.choice(("f32", "f32", "f32", "f16", "bf16"))
    names = spatial_names(d)
    kw = [f"stride={lst(st)}" if st else "", f"padding={lst(pd)}" if any(pd) else "",
          f"dilation={lst(dl)}" if mx and any(x != 1 for x in dl) else "", "ceil_mode=true" if ceil else ""]
    if not mx:
        kw.append("count_include_pad=false" if rng.random() < 0.3 else "")
        kw.append(f"divisor_override={rng.randint(1, 9)}" if rng.random() < 0.1 else "")
    call = f"{'max' if mx else 'avg'}_pool{d}d(x, {lst(ks)}{''.join(', ' + a for a in kw if a)})"
    call = rng.choice((call, f"relu({call})", f"{call} * 2.0 + 1.0"))
    dims = ([f"N = {n}"] if batch else []) + [f"{a} = {b}" for a, b in zip(names, sp)]
    shape = (["N"] if batch else []) + [str(c)] + names
    return op_text(name, [f"  dims {', '.join(dims)}", f"  in  x: {dt}[{', '.join(shape)}]", f"  out y = {call}"]), {}


def reduce_op(rng, name):
    while True:
        r = rng.randint(1, 4)
        shape = [rng.choice((1, 2, 3, 7, 16, 31, 64, 100, 127, 512, 1000, 4095, 4096, 65537)) for _ in range(r)]
        if math.prod(shape) <= 2e8:
            break
    names = ["A", "B", "C", "D"][:r]
    axes = sorted(rng.sample(range(r), rng.randint(1, r)))
    ax = "[" + ", ".join(map(str, axes)) + "]"
    if len(axes) == 1:
        ax = rng.choice((str(axes[0]), str(axes[0] - r), ax))
    kd = ", keepdims=true" if rng.random() < 0.4 else ""
    dt = rng.choice(("f32", "f32", "f16", "bf16"))
    x = rng.choice(("x", "x * 2.0", "abs(x) + 1.0", "exp(x)"))
    a1 = axes[0]
    kind = rng.choice(("red", "red", "arg", "scan", "norm", "soft", "lse"))
    if kind == "red":
        out = f"{rng.choice(('sum', 'mean', 'max', 'min', 'prod'))}({x}, axis={ax}{kd})"
    elif kind == "lse":
        out = f"logsumexp({x}, axis={ax}{kd})"
    elif kind == "arg":
        out = f"{rng.choice(('argmax', 'argmin'))}({x}, axis={a1})"
    elif kind == "scan":
        extra = (", exclusive=true" if rng.random() < 0.3 else "") + (", reverse=true" if rng.random() < 0.3 else "")
        out = f"{rng.choice(('cumsum', 'cumprod', 'cummax', 'cummin'))}({x}, axis={a1}{extra})"
    elif kind == "soft":
        out = f"{rng.choice(('softmax', 'log_softmax'))}({x}, axis={a1})"
    elif rng.random() < 0.5:
        mu = f"mean(x, axis={ax}, keepdims=true)"
        out = f"(x - {mu}) * rsqrt(mean((x - {mu}) * (x - {mu}), axis={ax}, keepdims=true) + 1e-5)"
    else:
        out = f"x * rsqrt(mean(x * x, axis={ax}, keepdims=true) + 1e-6)"
    dims = ", ".join(f"{a} = {b}" for a, b in zip(names, shape))
    return op_text(name, [f"  dims {dims}", f"  in  x: {dt}[{', '.join(names)}]", f"  out y = {out}"]), {}


def dyn_op(rng, name):
    kind = rng.choice(("mm", "mmb", "conv", "pool", "red", "ew", "norm", "att"))
    if kind == "att":   # attention written out: fused on sm_90a in 16 bits, dyn dims anywhere
        names = ["B", "H", "S", "T", "D"]
        vals = {"B": rng.choice((1, 2, 5)), "H": rng.choice((1, 4)), "S": rng.choice((1, 7, 128, 300)),
                "T": rng.choice((1, 64, 129, 500)), "D": rng.choice((64, 128, 256))}
        dt = rng.choice(("f16", "bf16", "f32"))
        kv = "T" if rng.random() < 0.5 else "S"   # self-attention: one dim for queries and keys
        if kv == "S":   # (a dyn dim must be an extent of some argument: T is not declared)
            names.remove("T")
        # k and v per batch and head, or shared by all (a matmul takes all batch dims or none)
        qs, ks = f"[B, H, S, D]", f"[{rng.choice(('B, H, ', ''))}{kv}, D]"
        if rng.random() < 0.3:   # heads in the middle, read through permuted views
            qs = "[B, S, H, D]"
        q = "permute(q, [0, 2, 1, 3])" if qs == "[B, S, H, D]" else "q"
        scores = f"matmul({q}, transpose(k)) * {rng.choice(('0.125', '0.0625'))}"
        if kv == "S" and rng.random() < 0.4:
            fill = "-1e9" if dt == "f16" else "-3.4e38"   # the dtype's -inf as a finite literal
            scores = f"where(iota(S, S, axis=1) <= iota(S, S, axis=0), {scores}, {fill})"
        out = f"matmul(softmax({scores}, axis=-1), v)"
        body = [f"  in  q: {dt}{qs}", f"  in  k: {dt}{ks}", f"  in  v: {dt}{ks}",
                f"  out o = {rng.choice((out, f'relu({out})'))}"]
    elif kind in ("mm", "mmb"):
        names = ["M", "N", "K"] + (["B"] if kind == "mmb" else [])
        vals = {d: rng.choice((1, 7, 64, 100, 512, 1000, 4096)) for d in names}
        ta, tb = rng.random() < 0.3, rng.random() < 0.3
        bd = "B, " if kind == "mmb" else ""
        dt = rng.choice(("f32", "bf16"))
        mm = f"matmul({'transpose(a)' if ta else 'a'}, {'transpose(b)' if tb else 'b'})"
        body = [f"  in  a: {dt}[{bd}{'K, M' if ta else 'M, K'}]",
                f"  in  b: {dt}[{bd if rng.random() < 0.5 else ''}{'N, K' if tb else 'K, N'}]",
                f"  out c = {rng.choice((mm, f'relu({mm})'))}"]
    elif kind in ("conv", "pool"):
        names = ["N", "H", "W"]
        vals = {"N": rng.choice((1, 4, 16)), "H": rng.choice((9, 32, 100)), "W": rng.choice((9, 33, 128))}
        if kind == "conv":   # dyn N, H, W: a batch or spatial extents (forward 2-d convs take both)
            c, k = rng.choice((3, 16, 32)), rng.choice((8, 16, 64))
            dt = rng.choice(("f32", "f32", "f16", "bf16"))
            form = rng.choice(("pad", "stride", "transposed", "grouped", "depthwise"))
            g = c if form == "depthwise" else 1 if form != "grouped" or c % 4 or k % 4 else 4
            if form == "depthwise":
                k = c
            fn = {"pad": "conv2d(x, w, padding=1)", "stride": "conv2d(x, w, stride=2)",
                  "transposed": "conv_transpose2d(x, w, stride=2, padding=1)",
                  "grouped": f"conv2d(x, w, padding=2, dilation=2, groups={g})",
                  "depthwise": f"conv2d(x, w, stride=[1, 2], padding=1, groups={g})"}[form]
            w = [c, k] if form == "transposed" else [k, c // g]
            body = [f"  in  x: {dt}[N, {c}, H, W]", f"  in  w: {dt}[{w[0]}, {w[1]}, 3, 3]"]
            if rng.random() < 0.4 and form != "transposed":   # a per-channel bias and relu in the epilogue
                body += [f"  in  b: {dt}[{k}, 1, 1]", f"  out y = relu({fn} + b)"]
            else:
                body += [f"  out y = {fn}"]
        else:
            body = ["  in  x: f32[N, 8, H, W]",
                    f"  out y = {rng.choice(('max_pool2d(x, 3, stride=2, padding=1)', 'avg_pool2d(x, 2, ceil_mode=true)'))}"]
    else:
        names = ["R", "S", "T"]
        vals = {d: rng.choice((1, 3, 33, 512, 4096)) for d in names}
        ax = rng.choice(("0", "1", "2", "-1", "[0, 2]", "[1, 2]"))
        red = rng.choice(("sum", "mean", "max") + (("argmax",) if ax.lstrip("-").isdigit() else ()))
        out = {"red": f"{red}(x, axis={ax})", "ew": "relu(x * 2.0) + x",
               "norm": f"x * rsqrt(mean(x * x, axis={ax}, keepdims=true) + 1e-6)"}[kind]
        if kind == "red" and rng.random() < 0.3:
            out = f"cumsum(x, axis={rng.choice(('0', '1', '2'))})"
        body = ["  in  x: f32[R, S, T]", f"  out y = {out}"]
    dyn = [d for d in names if rng.random() < 0.4]
    decl = ", ".join(f"dyn {d}" if d in dyn else f"{d} = {vals[d]}" for d in names)
    return op_text(name, [f"  dims {decl}"] + body), {d: vals[d] for d in dyn}


def op_text(name, lines):
    return "\n".join([f"op {name} {{"] + lines + ["}"])


def error_line(stderr):
    """The error kiln exited with: the last line that is not part of a warning (a warning is its
    located line, the source line and a caret)."""
    lines = [l for l in stderr.strip().splitlines() if l.strip()]
    while len(lines) >= 3 and lines[-1].strip() == "^" and ": warning: " in lines[-3]:
        lines = lines[:-3]
    return lines[-1] if lines else ""


FAMILIES = {"conv": conv_op, "matmul": matmul_op, "pool": pool_op, "reduce": reduce_op, "dyn": dyn_op}
LOCATED = re.compile(r"\S*\.kiln:\d+:\d+: ")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kiln", required=True, help="the kiln CLI")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=40, help="ops per family")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--compile", action="store_true", help="also compile the valid families' kernels for sm_90a")
    ap.add_argument("--keep", default="", help="write the specs here (default: a temporary folder)")
    args = ap.parse_args()
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown or args.count < 1:
        ap.error(f"unknown families {unknown}" if unknown else "--count must be at least 1")
    if not os.access(args.kiln, os.X_OK):
        ap.error(f"--kiln {args.kiln}: not an executable")
    out = args.keep or tempfile.mkdtemp(prefix="kiln-sweep-")
    os.makedirs(out, exist_ok=True)
    findings, planned, refused = [], 0, 0
    for family in families:
        rng = random.Random(f"{args.seed}/{family}")
        ops = [FAMILIES[family](rng, f"{family}{i}") for i in range(args.count)]
        spec = os.path.join(out, f"{family}.kiln")
        with open(spec, "w") as f:
            f.write("\n\n".join(text for text, _ in ops) + "\n")
        dyn_planned = []   # (op, its -D arguments): the dyn ops that plan for sm_90a
        for i, (text, defs) in enumerate(ops):
            d_args = [a for name, v in sorted(defs.items()) for a in ("-D", f"{name}={v}")]
            for arch, precision in TARGETS:
                cmd = [args.kiln, "gen", spec, "--op", f"{family}{i}", "--arch", arch, "--precision", precision] + d_args
                r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if r.returncode == 0:
                    planned += 1
                    if family == "dyn" and (arch, precision) == TARGETS[0]:
                        dyn_planned.append((f"{family}{i}", d_args))
                elif family == "dyn" and r.returncode == 1 and LOCATED.match(error_line(r.stderr)):
                    refused += 1
                else:
                    findings.append(f"{family}{i} {arch} {precision}: exit {r.returncode}: "
                                    f"{r.stderr.strip()[:400]}\n{text}")
        if args.compile and family == "dyn":   # each planned op at its values, into one cache
            failed = 0
            for op, d_args in dyn_planned:
                cmd = [args.kiln, "build", spec, "--op", op, "--arch", "sm_90a", "-o",
                       os.path.join(out, "dyn-cache")] + d_args
                r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if r.returncode != 0:
                    failed += 1
                    findings.append(f"{op}: kiln build for sm_90a: exit {r.returncode}\n{r.stdout[-2000:]}")
            print(f"spec_sweep: dyn: kiln build for sm_90a of {len(dyn_planned)} planned ops: {failed} failed")
        elif args.compile:
            cmd = [args.kiln, "build", spec, "--arch", "sm_90a", "-o", os.path.join(out, f"{family}-cache")]
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            last = r.stdout.strip().splitlines()[-1:] or [""]
            print(f"spec_sweep: {family}: kiln build for sm_90a: exit {r.returncode}: {last[0]}")
            if r.returncode != 0:
                findings.append(f"{family}: kiln build for sm_90a: exit {r.returncode}\n{r.stdout[-2000:]}")
    for f in findings:
        print(f"spec_sweep: finding: {f}\n")
    if not args.keep and not findings:
        shutil.rmtree(out)
        out = "removed"

    print(f"spec_sweep: seed {args.seed}, {args.count} ops each of {', '.join(families)} ({out}): "
          f"{planned} plans, {refused} dyn refusals with a located reason, {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
