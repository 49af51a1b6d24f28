"""KernelBench level 1 and level 2 against kiln, through the Python package.

    python3 bench/kernelbench.py --kernelbench PATH [--level 1,2] [--only 1/19,2/11] [--no-compile]
                                 [--precision fp32|tf32] [--cache-dir DIR] [--resume JSON] [--budget-s S]
                                 [--out DIR]
    python3 bench/kernelbench.py --kernelbench PATH --map-only       # no GPU: binds every problem

PATH is a KernelBench checkout (ScalingIntelligence/KernelBench; its `KernelBench/level1/*.py`, or a
folder holding `level1/` and `level2/` directly). No KernelBench code is in kiln: the runner imports
each problem's module from PATH.

For each problem with a spec in specs/kernelbench/level<L>/<same name>.kiln (one op named `m`):
1. Builds `Model(*get_init_inputs())` and `get_inputs()` on the GPU under a fixed seed (KernelBench's
   own inputs: kiln's [0, 1) check inputs saturate some problems, e.g. level 2's 94).
2. Maps the Model's values onto the spec's inputs (`map_inputs`): the forward's arguments in order,
   then the Model's parameters in `named_parameters()` order, each viewed to the spec's declared shape
   (a bias [K] is the spec's [K, 1, 1]); a scalar parameter or Python number is a run-time scalar; a
   `seed: u64` input is the runner's dropout seed. A mismatch in count, size or dtype is reported and
   the problem counts as not expressible.
3. Runs kiln and the Model (eager) on the same values and compares with torch.allclose at KernelBench's
   v0.1 fp32 tolerance (atol = rtol = 1e-2: `correct`) and at its current one (1e-4: `correct_1e4`).
   Dropout draws kiln's documented Philox stream, not PyTorch's: for the Model's run the runner swaps
   `torch.nn.functional.dropout` for one that applies kiln's mask (drawn by a one-line kiln op with the
   same seed; the stream itself is held to a NumPy Philox by bench.py's dropout row).
4. Times kiln (outputs preallocated), eager and torch.compile (default mode) in the same process:
   medians of triton.testing.do_bench after warm-up. Precision `fp32` (the default) is fp32 on every
   side: kiln's fp32-accurate (3xTF32) products against PyTorch with TF32 off for cuBLAS and cuDNN;
   `tf32` allows TF32 on every side.

Writes kernelbench-<stamp>.json (rows: problem, precision, kiln_ms, eager_ms, compile_ms, correct, and
more), a markdown table, a chart, and prints the summary line: expressible, correct, fast_1 against
eager and torch.compile, geometric-mean speedups. --budget-s stops between problems when the time is
spent (the JSON is saved after every row); --resume JSON carries its rows over and skips them.
"""

import argparse
import contextlib
import datetime
import importlib.util
import json
import math
import os
import re
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as bench_py  # noqa: E402  (bench.py: timing, TF32 switch, kiln import)

ROOT = bench_py.ROOT
SPECS = os.path.join(ROOT, "specs", "kernelbench")
TOL_V01, TOL_NOW = 1e-2, 1e-4   # KernelBench fp32: v0/v0.1 atol = rtol = 1e-2; current 1e-4
DROPOUT_SEED = 0x5EED
torch = None
kiln = None


class MappingError(Exception):
    """The Model's values do not fit the spec's inputs (count, size or dtype)."""


# ---------------------------------------------------------------- problems
def problem_files(kb_root, levels, only):
    """[(level, number, name, spec path, module path or None)] for the specs of `levels`, in number
    order; `only` holds "L/N" or "N" strings (N alone: that number at every level)."""
    found = []
    for level in levels:
        folder = os.path.join(SPECS, f"level{level}")
        for f in os.listdir(folder):
            m = re.match(r"(\d+)_(.*)\.kiln$", f)
            if not m:
                continue
            number = int(m.group(1))
            if only and f"{level}/{number}" not in only and str(number) not in only:
                continue
            candidates = [os.path.join(kb_root, sub, f"level{level}", f"{number}_{m.group(2)}.py")
                          for sub in ("KernelBench", "")]
            module = next((path for path in candidates if os.path.isfile(path)), None)
            found.append((level, number, m.group(2), os.path.join(folder, f), module))
    return sorted(found)


def import_problem(path, level, number):
    spec = importlib.util.spec_from_file_location(f"kernelbench_l{level}_{number}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(mod, name):
            raise MappingError(f"{os.path.basename(path)} has no {name}")
    return mod


def build_problem(mod, device, seed):
    """The Model (training mode, as KernelBench runs it), its parameters in the order its __init__
    assigned them, and its forward inputs, made on `device`."""
    torch.manual_seed(seed)
    order = {}
    setattr_of_module = torch.nn.Module.__setattr__

    def recording_setattr(module, name, value):
        if isinstance(value, (torch.nn.Parameter, torch.nn.Module)):
            order.setdefault(id(module), []).append(name)
        setattr_of_module(module, name, value)

    torch.nn.Module.__setattr__ = recording_setattr
    try:
        with torch.device(device):
            model = mod.Model(*mod.get_init_inputs())
    finally:
        torch.nn.Module.__setattr__ = setattr_of_module
    with torch.device(device):
        torch.manual_seed(seed)
        inputs = mod.get_inputs()
    model = model.to(device)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
    return model, assigned_parameters(model, order), inputs


def assigned_parameters(model, order):
    """[(qualified name, parameter)] in the order the modules' __init__s assigned them (a Module's
    parameters() lists its own before its children's, whatever the order they were written in)."""
    found, seen = [], set()

    def walk(module, prefix):
        names = [n for n in dict.fromkeys(order.get(id(module), []))
                 if n in module._parameters or n in module._modules]
        names += [n for n in list(module._parameters) + list(module._modules) if n not in names]
        for n in names:
            p = module._parameters.get(n)
            if p is not None and id(p) not in seen:
                seen.add(id(p))
                found.append((prefix + n, p))
            child = module._modules.get(n)
            if child is not None:
                walk(child, prefix + n + ".")

    walk(model, "")
    return found


# ---------------------------------------------------------------- mapping
TORCH_DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16", "i64": "int64",
                "i32": "int32", "i8": "int8", "u8": "uint8", "bool": "bool"}


# Parameters a Model declares but its forward never reads (the spec has no input for them).
UNUSED_PARAMETERS = {
    (2, 26): {"bias"},   # ConvTranspose3d_Add_HardSwish: self.bias is not used by forward
}


def map_inputs(op, key, parameters, inputs):
    """The values of the spec's inputs, in its order, from the forward's inputs then the Model's
    parameters (see the module docstring). Raises MappingError naming the first misfit."""
    ex = op.specialize()
    declared = [a for a in ex.arguments if not a["is_output"]]
    unused = UNUSED_PARAMETERS.get(key, set())
    pool = [(f"input {i}", v) for i, v in enumerate(inputs)] + [(n, p) for n, p in parameters if n not in unused]
    wanted = [a for a in declared if not is_seed(a)]
    if len(wanted) != len(pool):
        raise MappingError(f"the spec takes {len(wanted)} values ({', '.join(a['name'] for a in wanted)}), the "
                           f"Model gives {len(pool)} ({', '.join(n for n, _ in pool)})")
    values, source = [], iter(pool)
    for a in declared:
        if is_seed(a):
            values.append(DROPOUT_SEED)
            continue
        what, v = next(source)
        values.append(fit(a, what, v))
    return values


def is_seed(arg):
    """A spec's dropout seed (`in seed: u64`): the runner's, not the Model's."""
    return arg["name"] == "seed" and arg["dtype"] == "u64" and not arg["is_tensor"]


def fit(arg, what, v):
    """One Model value as the spec input `arg` wants it, or MappingError."""
    name, dtype = arg["name"], arg["dtype"]
    if not arg["is_tensor"]:
        if isinstance(v, torch.Tensor):
            if v.numel() != 1:
                raise MappingError(f"spec scalar {name} gets {what} of shape {list(v.shape)}")
            v = 0.0 if v.is_meta else v.item()   # --map-only binds shapes, not values
        if not isinstance(v, (int, float, bool)):
            raise MappingError(f"spec scalar {name} gets {what}, a {type(v).__name__}")
        return v
    if not isinstance(v, torch.Tensor):
        raise MappingError(f"spec tensor {name} gets {what}, a {type(v).__name__}")
    want = TORCH_DTYPES.get(dtype)
    if want is None or str(v.dtype) != f"torch.{want}":
        raise MappingError(f"spec tensor {name}: {dtype}, gets {what}: {v.dtype}")
    shape = tuple(arg["shape"])
    if tuple(v.shape) != shape:
        squeeze = lambda s: tuple(d for d in s if d != 1)  # noqa: E731
        if squeeze(v.shape) != squeeze(shape):
            raise MappingError(f"spec tensor {name}{list(shape)} gets {what}{list(v.shape)}")
        v = v.detach().reshape(shape)
    return v.detach()


# ---------------------------------------------------------------- dropout with kiln's stream
DROPOUT_SPEC = """op mask {
  const p: f32 = 0.5
  dims N = 1
  in x: f32[N]
  in seed: u64
  out y = dropout(x, p=p, seed=seed)
}
"""


@contextlib.contextmanager
def kiln_dropout(options):
    """torch.nn.functional.dropout applying kiln's mask for (DROPOUT_SEED, flat index), as the spec's
    dropout(h, p=p, seed=seed) does (docs/semantics.md), so the Model's run is comparable."""
    mask_op = kiln.loads(DROPOUT_SPEC, name="kernelbench-dropout", options=options).mask
    original = torch.nn.functional.dropout

    def dropout(input, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return input
        ones = torch.ones(input.numel(), device=input.device, dtype=torch.float32)
        scaled_mask = mask_op(ones, DROPOUT_SEED, p=float(p)).reshape(input.shape).to(input.dtype)
        return input.mul_(scaled_mask) if inplace else input * scaled_mask

    torch.nn.functional.dropout = dropout
    try:
        yield
    finally:
        torch.nn.functional.dropout = original


def kernel_times(fn, top=4):
    """[[kernel name, ms per call]] of one call of fn, longest first (CUPTI through torch.profiler:
    it sees kiln's driver-API launches as well as PyTorch's), the `top` longest."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    totals = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            totals[e.name] = totals.get(e.name, 0.0) + e.time_range.elapsed_us() / 1e3
    return [[name[:80], round(ms, 4)] for name, ms in sorted(totals.items(), key=lambda t: -t[1])[:top]]


def is_float(x):
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def uses_dropout(model):
    return any(isinstance(m, torch.nn.modules.dropout._DropoutNd) for m in model.modules())


# ---------------------------------------------------------------- one problem
def compare(got, want):
    """(correct at 1e-2, correct at 1e-4, max abs error, note) of kiln's outputs against the Model's."""
    got = list(got) if isinstance(got, tuple) else [got]
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    if len(got) != len(want):
        return False, False, None, f"{len(got)} outputs, the Model returns {len(want)}"
    ok2 = ok4 = True
    err, notes = 0.0, []
    for g, w in zip(got, want):
        if tuple(g.shape) != tuple(w.shape):
            if g.numel() != w.numel() or [d for d in g.shape if d != 1] != [d for d in w.shape if d != 1]:
                return False, False, None, f"output shape {list(g.shape)}, the Model's {list(w.shape)}"
            notes.append(f"output {list(g.shape)} read as the Model's {list(w.shape)}")
            g = g.reshape(w.shape)
        if not g.is_floating_point() or g.dtype != w.dtype:   # argmax's int64, a float64 Model: as doubles
            g, w = g.double(), w.double()
        if not bool(torch.isfinite(g).all()) and not bool((torch.isfinite(w) | (g == w)).all()):
            notes.append("non-finite outputs")
        err = max(err, float((g - w).abs().nan_to_num(nan=math.inf).max()) if g.numel() else 0.0)
        ok2 &= bool(torch.allclose(g, w, atol=TOL_V01, rtol=TOL_V01, equal_nan=True))
        ok4 &= bool(torch.allclose(g, w, atol=TOL_NOW, rtol=TOL_NOW, equal_nan=True))
    return ok2, ok4, err, "; ".join(notes)


def base_row(entry, args):
    """A problem's row before anything ran: the stable columns, unmeasured."""
    level, number, name = entry[:3]
    return {"problem": f"L{level} {number} {name}", "level": level, "number": number,
            "precision": "fp32-accurate" if args.precision == "fp32" else "tf32",
            "kiln_ms": None, "eager_ms": None, "compile_ms": None, "correct": None, "correct_1e4": None,
            "expressible": False}


def run_problem(entry, args, options):
    level, number, name, spec_path, module_path = entry
    row = base_row(entry, args)
    if module_path is None:
        row["note"] = "no KernelBench module at --kernelbench for this spec"
        return row
    device = "meta" if args.map_only else "cuda"
    mod = import_problem(module_path, level, number)
    model, parameters, inputs = build_problem(mod, device, args.seed)
    op = kiln.load(spec_path, options).m
    try:
        values = map_inputs(op, (level, number), parameters, inputs)
    except MappingError as e:
        row["note"] = f"mapping: {e}"
        return row
    row["expressible"] = True
    row["kernels"] = len(op.specialize().kernels)
    if args.map_only:
        return row
    precision = "fp32" if args.precision == "fp32" else "tf32"
    bench_py.set_tf32(args.precision == "tf32")
    dropout = kiln_dropout(options) if uses_dropout(model) else contextlib.nullcontext()
    with torch.no_grad():
        with dropout:
            want = model(*inputs)
        try:
            t0 = time.perf_counter()
            got = op(*values, precision=precision)
            torch.cuda.synchronize()
            row["first_call_ms"] = (time.perf_counter() - t0) * 1e3
        except kiln.Error as e:
            row["note"] = f"kiln: {str(e).splitlines()[0][:300]}"
            return row
        row["correct"], row["correct_1e4"], row["max_abs_err"], note = compare(got, want)
        if note:
            row["note"] = note
        if row["correct_1e4"] is False:
            # Which of the two fp32 results is off: both against the Model run in float64.
            try:
                with dropout:
                    exact = model.double()(*[x.double() if is_float(x) else x for x in inputs])
                row["kiln_err_f64"] = compare(got, exact)[2]
                row["eager_err_f64"] = compare(want, exact)[2]
                del exact
            except torch.cuda.OutOfMemoryError:
                row["note"] = "the float64 run of the Model did not fit in GPU memory: no kiln_err_f64"
                torch.cuda.empty_cache()
            model.float()
        del want
        outs = got if isinstance(got, tuple) else (got,)
        # The bytes a single pass must move: every tensor input and output once.
        row["min_bytes"] = sum(x.numel() * x.element_size() for x in list(values) + list(outs)
                               if isinstance(x, torch.Tensor))
        if row["correct"]:
            call = lambda: op(*values, out=outs, precision=precision)  # noqa: E731
            row["kiln_ms"] = bench_py.bench(call, False)
            if args.profile:
                row["kiln_kernels"] = kernel_times(call)
        del got, outs
        # Timed with PyTorch's own dropout (kiln's mask was for the comparison only).
        row["eager_ms"] = bench_py.bench(lambda: model(*inputs), False)
        if args.profile:
            row["eager_kernels"] = kernel_times(lambda: model(*inputs))
        if not args.no_compile:
            torch._dynamo.reset()
            compiled = torch.compile(model)
            t0 = time.perf_counter()
            compiled(*inputs)
            torch.cuda.synchronize()
            row["torch_compile_s"] = time.perf_counter() - t0
            row["compile_ms"] = bench_py.bench(lambda: compiled(*inputs), False)
    if row["kiln_ms"]:
        row["kiln_TBps"] = row["min_bytes"] / row["kiln_ms"] / 1e9
        row["speedup_vs_eager"] = row["eager_ms"] / row["kiln_ms"]
        if row["compile_ms"]:
            row["speedup_vs_compile"] = row["compile_ms"] / row["kiln_ms"]
    return row


# ---------------------------------------------------------------- summary, table, chart
def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summary(rows, total):
    expressible = sum(1 for r in rows if r["expressible"])
    correct = sum(1 for r in rows if r.get("correct"))
    correct4 = sum(1 for r in rows if r.get("correct_1e4"))
    fast_e = sum(1 for r in rows if r.get("correct") and (r.get("speedup_vs_eager") or 0) > 1)
    fast_c = sum(1 for r in rows if r.get("correct") and (r.get("speedup_vs_compile") or 0) > 1)
    timed_c = sum(1 for r in rows if r.get("speedup_vs_compile"))
    ge = geomean([r.get("speedup_vs_eager") for r in rows if r.get("correct")])
    gc = geomean([r.get("speedup_vs_compile") for r in rows if r.get("correct")])
    pct = lambda n: f"{100 * n / total:.0f}%" if total else "-"  # noqa: E731
    fmt = lambda g: f"{g:.2f}x" if g else "-"  # noqa: E731
    return (f"{len(rows)} of {total} problems run: expressible {expressible}/{total}, correct {correct}/{total} "
            f"(1e-2), {correct4}/{total} (1e-4); fast_1 vs eager {fast_e}/{total} ({pct(fast_e)}), vs torch.compile "
            f"{fast_c}/{total} ({pct(fast_c)}, {timed_c} timed); geomean speedup vs eager {fmt(ge)}, "
            f"vs torch.compile {fmt(gc)}")


def markdown(res):
    lines = [f"{res['gpu']}, PyTorch {res['torch']}, CUDA {res['cuda']}, kiln {res['kiln']}, {res['date']}, "
             f"precision {res['precision']}.", "", "**" + res["summary"] + "**", "",
             "| problem | correct (1e-2) | 1e-4 | max abs err | kiln ms | eager ms | compile ms | vs eager | "
             "vs compile | kernels | note |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    yes = {True: "yes", False: "NO", None: "—"}
    f = lambda v, p=3: "—" if v is None else f"{v:.{p}f}"  # noqa: E731
    for r in res["rows"]:
        err = "—" if r.get("max_abs_err") is None else f"{r['max_abs_err']:.1e}"
        ratio = lambda k: f"{r[k]:.2f}x" if r.get(k) else "—"  # noqa: E731
        lines.append(f"| {r['problem']} | {yes[r.get('correct')]} | {yes[r.get('correct_1e4')]} | {err} | "
                     f"{f(r.get('kiln_ms'))} | {f(r.get('eager_ms'))} | {f(r.get('compile_ms'))} | "
                     f"{ratio('speedup_vs_eager')} | {ratio('speedup_vs_compile')} | {r.get('kernels', '—')} | "
                     f"{(r.get('note') or '').replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def chart(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:  # noqa: BLE001
        return
    rows = [r for r in res["rows"] if r.get("speedup_vs_eager")]
    if not rows:
        return
    fig, axes = plt.subplots(2, 1, figsize=(max(10, 0.12 * len(rows)), 8))
    for ax, level in zip(axes, (1, 2)):
        rs = [r for r in rows if r["level"] == level]
        xs = range(len(rs))
        ax.bar([x - 0.2 for x in xs], [r["speedup_vs_eager"] for r in rs], 0.4, label="vs eager")
        ax.bar([x + 0.2 for x in xs], [r.get("speedup_vs_compile") or 0 for r in rs], 0.4, label="vs torch.compile")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.set_xticks(list(xs), [str(r["number"]) for r in rs], fontsize=5, rotation=90)
        ax.set_ylabel(f"level {level} speedup")
        ax.legend(fontsize=7)
    axes[0].set_title(f"kiln on KernelBench, {res['gpu']}, {res['date']} ({res['precision']})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernelbench", required=True, help="a KernelBench checkout")
    ap.add_argument("--level", default="1,2")
    ap.add_argument("--only", default="", help="problems: L/N or N, comma separated")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "tf32"])
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--map-only", action="store_true", help="bind every problem (meta tensors, no GPU), no runs")
    ap.add_argument("--cache-dir", default="", help="kiln's cache (e.g. one `kiln build` filled); default: a new one")
    ap.add_argument("--resume", default="", help="a previous run's JSON: keep its rows, skip their problems")
    ap.add_argument("--budget-s", type=float, default=0, help="stop between problems after this many seconds")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--profile", action="store_true", help="per-kernel times of one kiln and one eager call")
    ap.add_argument("--kiln", default="", help="the folder holding the kiln package")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    global torch, kiln
    try:
        import torch as torch_module
    except ImportError as e:
        sys.exit(f"kernelbench.py: {e}: it needs PyTorch")
    torch = torch_module
    if not args.map_only and not torch.cuda.is_available():
        sys.exit("kernelbench.py: PyTorch sees no CUDA GPU; run it on the GPU machine, or pass --map-only")
    kiln = bench_py.import_kiln(args.kiln, "kernelbench.py")
    if not os.path.isdir(args.kernelbench):
        sys.exit(f"kernelbench.py: --kernelbench {args.kernelbench}: no such folder")
    levels = [int(x) for x in args.level.split(",") if x]
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    entries = problem_files(args.kernelbench, levels, only)
    if not entries:
        sys.exit("kernelbench.py: no problem selected")
    res = {"gpu": "meta (no GPU)" if args.map_only else torch.cuda.get_device_name(), "torch": torch.__version__,
           "cuda": torch.version.cuda, "kiln": kiln.__version__, "precision": args.precision,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "rows": []}
    done = set()
    if args.resume:
        with open(args.resume) as f:
            old = json.load(f)
        selected = {(e[0], e[1]) for e in entries}
        # A row is redone when it lacks a column this run measures (torch.compile's, say).
        res["rows"] = [r for r in old["rows"] if (r["level"], r["number"]) in selected
                       and r["expressible"] and (args.no_compile or r.get("compile_ms"))]
        done = {(r["level"], r["number"]) for r in res["rows"]}
    options = kiln.Options(cache_dir=args.cache_dir or tempfile.mkdtemp(prefix="kiln-kernelbench-"))
    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    base = os.path.join(args.out, f"kernelbench-{stamp}")

    def save():
        res["rows"].sort(key=lambda r: (r["level"], r["number"]))
        res["summary"] = (f"--map-only: {sum(1 for r in res['rows'] if r['expressible'])}/{len(entries)} problems bind "
                          "to their specs (nothing was run)" if args.map_only else summary(res["rows"], len(entries)))
        res["kiln_cache"] = kiln.stats(options)
        with open(base + ".json", "w") as f:
            json.dump(res, f, indent=1)
        with open(base + ".md", "w") as f:
            f.write(markdown(res))

    start = time.monotonic()
    failures = 0
    for entry in entries:
        if (entry[0], entry[1]) in done:
            continue
        if args.budget_s and time.monotonic() - start > args.budget_s:
            print(f"kernelbench.py: --budget-s {args.budget_s:.0f} spent; stopping before L{entry[0]} {entry[1]}",
                  flush=True)
            break
        try:
            row = run_problem(entry, args, options)
        except Exception as e:  # noqa: BLE001  (a broken problem is a row, not the end of the run)
            row = base_row(entry, args)
            row["note"] = f"runner error: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
            traceback.print_exc()
        failures += row.get("correct") is False or not row["expressible"]
        res["rows"].append(row)
        print(json.dumps(row), flush=True)
        save()
        if not args.map_only:
            torch.cuda.empty_cache()
    save()
    if not args.map_only:
        chart(res, base + ".png")
    print(f"\n{res['summary']}\nwrote {base}.json, .md" + ("" if args.map_only else ", .png"))
    # Exit status: 0 only when every selected problem ran, mapped and (on the GPU) was correct.
    sys.exit(0 if failures == 0 and len(res["rows"]) == len(entries) else 1)


if __name__ == "__main__":
    main()
