"""A host-app scenario for shape-generic kernels (issue 20): 300 calls of a softmax and a layer norm
over [M, 4096] with M drawn from 1..4096, through kiln.Options(shapes="generic") (the batch M is a
dyn dim: one compile per bucket and size class) and shapes="specialized" (one compile per M).

Usage (on the GPU machine): python3 bench/dyn_scenario.py [--calls 300] [--specialized-calls 40] [--out DIR]

Reports, per op and mode: NVRTC compiles (kiln.stats) and the wall time of the calls, compiles
included (fresh cache directories, so nothing comes from disk). The specialized mode compiles for
every new M, so it runs only the first --specialized-calls draws (said so in the output). Then the
steady state at fixed M: generic, specialized and PyTorch, medians of triton.testing.do_bench, each
kiln output checked against PyTorch's first (NaN-poisoned before the call).
"""
import argparse
import datetime
import json
import os
import random
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = 4096
STEADY_M = [1, 17, 100, 263, 1000, 2048, 3000, 4096]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--specialized-calls", type=int, default=40)
    ap.add_argument("--kiln", default="", help="the folder holding the kiln package (default: .gpu/python)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--chart", default="", help="only draw the chart of this result JSON (beside it, .png)")
    args = ap.parse_args()
    if args.chart:
        with open(args.chart) as f:
            chart(json.load(f), os.path.splitext(args.chart)[0] + ".png")
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpu_setup import gpu_modules
    torch, F, do_bench, kiln = gpu_modules("dyn_scenario.py", args.kiln)

    spec = os.path.join(ROOT, "specs", "norms.kiln")
    modes = {m: kiln.Options(cache_dir=tempfile.mkdtemp(prefix=f"kiln-scenario-{m}-"), shapes=m)
             for m in ("generic", "specialized")}
    eager = {"softmax": lambda x, *_: torch.softmax(x, dim=-1),
             "layernorm": lambda x, g, b: F.layer_norm(x, (N,), g, b, 1e-5)}
    rng = random.Random(20)
    draws = [rng.randint(1, 4096) for _ in range(args.calls)]
    gamma = torch.rand(N, device="cuda") + 0.5
    beta = torch.rand(N, device="cuda") - 0.5
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "kiln": kiln.__version__,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "calls": args.calls, "specialized_calls": args.specialized_calls, "scenario": [], "steady": []}
    failures = 0
    for name in ("softmax", "layernorm"):
        for mode, options in modes.items():
            op = kiln.load(spec, options)[name]
            calls = draws if mode == "generic" else draws[:args.specialized_calls]
            before = kiln.stats(options)["compiles"]
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for m in calls:
                x = torch.randn(m, N, device="cuda")
                op(x, gamma, beta) if name == "layernorm" else op(x)
            torch.cuda.synchronize()
            row = {"op": name, "mode": mode, "calls": len(calls), "distinct_m": len(set(calls)),
                   "compiles": kiln.stats(options)["compiles"] - before, "wall_s": time.perf_counter() - t0}
            res["scenario"].append(row)
            print(json.dumps(row), flush=True)
        ops = {mode: kiln.load(spec, options)[name] for mode, options in modes.items()}
        for m in STEADY_M:
            x = torch.randn(m, N, device="cuda")
            inputs = (x, gamma, beta) if name == "layernorm" else (x,)
            want = eager[name](x, gamma, beta)
            row = {"problem": f"{name} {m}x{N}", "precision": "fp32-accurate", "compile_ms": None, "correct": True}
            outs = {}
            for mode, op in ops.items():
                o = torch.full_like(want, float("nan"))
                op(*inputs, out=o)
                torch.cuda.synchronize()
                ok = bool(torch.allclose(o, want, rtol=1e-4, atol=1e-4))
                row["correct"] = row["correct"] and ok
                outs[mode] = o
            if not row["correct"]:
                failures += 1
                res["steady"].append(row)
                print(json.dumps(row), flush=True)
                continue
            fns = {"specialized": lambda: ops["specialized"](*inputs, out=outs["specialized"]),
                   "generic": lambda: ops["generic"](*inputs, out=outs["generic"]),
                   "eager": lambda: eager[name](x, gamma, beta)}
            rounds = {k: [] for k in fns}
            for _ in range(3):
                for k, fn in fns.items():
                    rounds[k].append(do_bench(fn, warmup=25, rep=100, return_mode="median"))
            med = {k: sorted(v)[1] for k, v in rounds.items()}
            row.update(kiln_ms=med["generic"], specialized_ms=med["specialized"], eager_ms=med["eager"],
                       generic_over_specialized=med["generic"] / med["specialized"],
                       speedup_vs_eager=med["eager"] / med["generic"], rounds=rounds)
            res["steady"].append(row)
            print(json.dumps(row), flush=True)
    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    base = os.path.join(args.out, f"dyn-scenario-{stamp}")
    with open(base + ".json", "w") as f:
        json.dump(res, f, indent=1)
    table = markdown(res)
    with open(base + ".md", "w") as f:
        f.write(table)
    chart(res, base + ".png")
    print("\n" + table)
    sys.exit(1 if failures else 0)


def chart(res, path):
    """NVRTC compiles per mode, and generic/specialized at each steady M (a PNG; skipped without
    matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    sc = res["scenario"]
    left.bar([f"{r['op']}\n{r['mode']}\n({r['calls']} calls)" for r in sc], [r["compiles"] for r in sc])
    left.set_ylabel("NVRTC compiles")
    left.set_title("calls with M from 1..4096")
    for name in sorted({r["problem"].split()[0] for r in res["steady"]}):
        rows = [r for r in res["steady"] if r["problem"].startswith(name + " ") and r.get("generic_over_specialized")]
        right.plot([int(r["problem"].split()[1].split("x")[0]) for r in rows],
                   [r["generic_over_specialized"] for r in rows], marker="o", label=name)
    right.axhline(1.0, color="black", linewidth=0.8)
    right.axhline(1.1, color="red", linewidth=0.8, linestyle="--")
    right.set_xscale("log")
    right.set_xlabel("M (rows of 4096)")
    right.set_ylabel("generic / specialized time")
    right.legend()
    fig.suptitle(f"{res['gpu']}, {res['date']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def markdown(res):
    lines = [f"{res['gpu']}, torch {res['torch']}, kiln {res['kiln']}, {res['date']}", "",
             f"Calls with M drawn from 1..4096 (specialized: the first {res['specialized_calls']} draws only)", "",
             "| op | mode | calls | distinct M | NVRTC compiles | wall s (compiles included) |", "|---|---|---|---|---|---|"]
    for r in res["scenario"]:
        lines.append(f"| {r['op']} | {r['mode']} | {r['calls']} | {r['distinct_m']} | {r['compiles']} | {r['wall_s']:.2f} |")
    lines += ["", "Steady state, medians of 3 rounds of do_bench", "",
              "| problem | specialized ms | generic ms | generic/specialized | eager ms | eager/generic | correct |",
              "|---|---|---|---|---|---|---|"]
    for r in res["steady"]:
        f = lambda k: "—" if r.get(k) is None else f"{r[k]:.4f}"  # noqa: E731
        lines.append(f"| {r['problem']} | {f('specialized_ms')} | {f('kiln_ms')} | {f('generic_over_specialized')} | "
                     f"{f('eager_ms')} | {f('speedup_vs_eager')} | {r['correct']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
