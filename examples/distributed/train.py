"""A data-parallel training step with kiln ops inside a torch.distributed job.

    torchrun --nproc-per-node=N examples/distributed/train.py [--backend nccl|gloo] [--pack FILE]

Each rank trains the same MLP block on its shard of a global batch: PyTorch does the linear
layers, kiln the fused bias + GELU (mlp.kiln: the forward and, for autograd, its backward),
DistributedDataParallel all-reduces the gradients (NCCL across GPUs, or gloo, e.g. two ranks on
one GPU). Every rank runs on cuda:(LOCAL_RANK % device count).

What it shows and checks:
- The ranks share one kiln cache directory (--cache-dir, made fresh when absent): across the
  ranks each kernel is compiled once (one rank compiles, the others wait for its entry and read
  it: docs/api.md, "Processes sharing a cache"). The per-rank counters are gathered and printed.
- With --pack FILE: rank 0 builds the pack once with the `kiln` command (--kiln-cli), the
  others wait at a barrier, and every rank preloads it: no rank compiles.
- With --check: rank 0 also trains the same model in one process on the whole global batch,
  with PyTorch's own GELU, and compares the parameters after the last step (the all-reduced
  run must match it to float32 rounding). Exit status 1 when they differ or a kiln kernel ran
  on the wrong device.
- The step time: per rank, the median over --steps of the kiln model and of the same model
  with PyTorch's bias + GELU, both under DDP, with CUDA events.
--out BASE writes the figures (rank 0): BASE.json (with `rows` in the benchmark row schema:
problem, precision, kiln_ms, eager_ms, compile_ms, correct), BASE.md and, where matplotlib is
installed, BASE.png.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import kiln

HERE = Path(__file__).resolve().parent


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    p.add_argument("--batch", type=int, default=8192, help="global batch (split evenly over the ranks)")
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--cache-dir", default=None, help="the kiln cache the ranks share (default: ./kiln-cache-distributed)")
    p.add_argument("--pack", default=None, help="a .kilnpack to preload; built by rank 0 when missing")
    p.add_argument("--kiln-cli", default=None, help="the kiln command that builds --pack (default: `kiln` on PATH)")
    p.add_argument("--check", action="store_true", help="compare with a single-process run (rank 0)")
    p.add_argument("--out", default=None, help="BASE of BASE.json, .md, .png with the figures (rank 0)")
    return p.parse_args()


class BiasGelu(torch.autograd.Function):
    """gelu(h + b) with kiln's forward and backward ops (mlp.kiln)."""

    ops = None   # the loaded program, set by main()

    @staticmethod
    def forward(ctx, h, b):
        ctx.save_for_backward(h, b)
        return BiasGelu.ops.bias_gelu(h, b)

    @staticmethod
    def backward(ctx, dy):
        h, b = ctx.saved_tensors
        dh, db = BiasGelu.ops.bias_gelu_backward(h, b, dy.contiguous())
        return dh, db


class Block(torch.nn.Module):
    """x -> linear(dim -> hidden, no bias) -> gelu(. + b1) -> linear(hidden -> dim)."""

    def __init__(self, dim, hidden, use_kiln):
        super().__init__()
        self.up = torch.nn.Linear(dim, hidden, bias=False)
        self.b1 = torch.nn.Parameter(torch.zeros(hidden))
        self.down = torch.nn.Linear(hidden, dim)
        self.use_kiln = use_kiln

    def forward(self, x):
        h = self.up(x)
        a = BiasGelu.apply(h, self.b1) if self.use_kiln else F.gelu(h + self.b1)
        return self.down(a)


def make_model(args, device, use_kiln):
    torch.manual_seed(0)   # every rank, and the single-process reference, start from the same weights
    model = Block(args.dim, args.hidden, use_kiln)
    with torch.no_grad():
        model.b1.uniform_(-0.5, 0.5)
    return model.to(device)


def shards(args, device, rank, world, steps):
    """This rank's shard of each step's global batch (the same global batches on every rank, made
    on the CPU from the step's seed), moved to the device before any step is timed."""
    shard = args.batch // world
    out = []
    for step in range(steps):
        g = torch.Generator().manual_seed(1000 + step)
        x = torch.randn(args.batch, args.dim, generator=g)[rank * shard:(rank + 1) * shard]
        out.append((x.to(device), (torch.tanh(x.roll(1, dims=1)) * 0.5).to(device)))
    return out


def train(model, data):
    """SGD over the steps' shards; returns each step's device time (ms) and the last loss. The
    steps are enqueued back to back (no host sync between them), each between two events."""
    opt = torch.optim.SGD(model.parameters(), lr=ARGS.lr, momentum=0.9)
    events = []
    for x, target in data:
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), target)
        loss.backward()   # DDP all-reduces (averages) the gradients here
        opt.step()
        stop.record()
        events.append((start, stop))
    torch.cuda.synchronize()
    return [a.elapsed_time(b) for a, b in events], float(loss)


def build_pack(args, pack, arch):
    cli = args.kiln_cli or shutil.which("kiln")
    if cli is None:
        raise SystemExit("train.py: --pack needs the kiln command (pass --kiln-cli PATH)")
    shard = args.batch // dist.get_world_size()
    cmd = [cli, "build", str(HERE / "mlp.kiln"), "-D", f"B={shard}", "-D", f"N={args.hidden}", "--arch", arch,
           "-o", str(pack)]
    print("rank 0:", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def write_results(base, result, table):
    """BASE.json (the figures, with rows in the benchmark schema), BASE.md, BASE.png."""
    label = f"distributed_mlp_step/{result['backend']}/{result['world_size']}ranks"
    result["rows"] = [{"problem": f"{label}/rank{r['rank']}", "precision": "fp32", "kiln_ms": r["kiln_step_ms"],
                       "eager_ms": r["torch_step_ms"], "compile_ms": None, "correct": result.get("check_ok")}
                      for r in result["ranks"]]
    Path(base + ".json").write_text(json.dumps(result, indent=1) + "\n")
    Path(base + ".md").write_text("\n".join(table) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    ranks = result["ranks"]
    fig, ax = plt.subplots(figsize=(1.5 + 1.2 * len(ranks), 3.5))
    xs = range(len(ranks))
    ax.bar([x - 0.2 for x in xs], [r["kiln_step_ms"] for r in ranks], 0.4, label="kiln bias+GELU")
    ax.bar([x + 0.2 for x in xs], [r["torch_step_ms"] for r in ranks], 0.4, label="PyTorch bias+GELU")
    ax.set_xticks(list(xs), [f"rank {r['rank']}\n{r['device']}" for r in ranks], fontsize=8)
    ax.set_ylabel("median step ms")
    ax.set_title(f"{label}, {ranks[0]['gpu']}", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(base + ".png", dpi=120)


ARGS = None


def main():
    global ARGS
    args = ARGS = parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if args.batch % world:
        raise SystemExit(f"train.py: --batch {args.batch} does not split evenly over {world} ranks")
    device = torch.device("cuda", local_rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group(args.backend, device_id=device if args.backend == "nccl" else None)

    cache = Path(args.cache_dir or "kiln-cache-distributed").resolve()
    options = kiln.Options(cache_dir=str(cache))
    if args.pack:
        pack = Path(args.pack).resolve()
        if rank == 0 and not pack.exists():
            build_pack(args, pack, kiln.arch(options))   # this device's arch (the ranks' devices are one model)
        dist.barrier()
        kiln.preload(pack, options)
    BiasGelu.ops = kiln.load(HERE / "mlp.kiln", options)

    data = shards(args, device, rank, world, args.steps)
    # The kiln model: the first step compiles (or reads) its kernels; the counters say how.
    t0 = time.perf_counter()
    model = DistributedDataParallel(make_model(args, device, use_kiln=True), device_ids=[device.index])
    train(model, data[:1])
    first_step_s = time.perf_counter() - t0
    counts = kiln.stats(options)
    if args.pack and counts["compiles"]:
        print(f"rank {rank}: warning: {counts['compiles']} kernels compiled although {args.pack} was preloaded: it "
              f"lacks them for {kiln.arch(options)} at these sizes", flush=True)

    # Timed: the kiln model, then the same model with PyTorch's bias + GELU, from the same start.
    dist.barrier()
    kiln_model = DistributedDataParallel(make_model(args, device, use_kiln=True), device_ids=[device.index])
    kiln_times, kiln_loss = train(kiln_model, data)
    dist.barrier()
    torch_model = DistributedDataParallel(make_model(args, device, use_kiln=False), device_ids=[device.index])
    torch_times, torch_loss = train(torch_model, data)
    warm = slice(min(5, args.steps - 1), None)   # the first steps warm the allocator and the communicator
    mine = {"rank": rank, "device": str(device), "gpu": torch.cuda.get_device_name(device), "first_step_s": first_step_s,
            "kiln_step_ms": statistics.median(kiln_times[warm]), "torch_step_ms": statistics.median(torch_times[warm]),
            "kiln_loss": kiln_loss, "torch_loss": torch_loss, **{f"kiln_{k}": v for k, v in counts.items()}}
    everyone = [None] * world
    dist.all_gather_object(everyone, mine)

    status = 0
    if rank == 0:
        result = {"world_size": world, "backend": args.backend, "batch": args.batch, "dim": args.dim,
                  "hidden": args.hidden, "steps": args.steps, "pack": bool(args.pack), "ranks": everyone,
                  "compiles_all_ranks": sum(r["kiln_compiles"] for r in everyone)}
        table = [f"{world} ranks ({args.backend}), global batch {args.batch}, {args.dim}->{args.hidden}->{args.dim}, "
                 f"{args.steps} steps, {everyone[0]['gpu']}", "",
                 "| rank | device | NVRTC compiles | disk/pack hits | first step s | kiln step ms | PyTorch step ms | ratio |",
                 "|---|---|---|---|---|---|---|---|"]
        for r in everyone:
            table.append(f"| {r['rank']} | {r['device']} | {r['kiln_compiles']} | {r['kiln_disk_hits']} | "
                         f"{r['first_step_s']:.2f} | {r['kiln_step_ms']:.3f} | {r['torch_step_ms']:.3f} | "
                         f"{r['torch_step_ms'] / r['kiln_step_ms']:.2f}x |")
        table.append(f"\nNVRTC compiles over all ranks: {result['compiles_all_ranks']}")
        print("\n".join(table))
        if args.check:
            # One process, the whole global batch, PyTorch's GELU: the parameters after the same
            # number of steps must match the all-reduced kiln run's.
            single = make_model(args, device, use_kiln=False)
            train(single, shards(args, device, 0, 1, args.steps))
            worst = 0.0
            for (name, p), q in zip(single.named_parameters(), kiln_model.module.parameters()):
                err = float((p - q).abs().max() / p.abs().max().clamp_min(1e-30))
                worst = max(worst, err)
                print(f"check {name}: max |single - distributed| / max |single| = {err:.2e}")
            result["check_max_rel"] = worst
            result["check_ok"] = worst <= 1e-4
            print("check:", "ok" if result["check_ok"] else "MISMATCH", f"(tolerance 1e-4)")
            status = 0 if result["check_ok"] else 1
        if args.out:
            write_results(args.out, result, table)
    dist.barrier()
    dist.destroy_process_group()
    return status


if __name__ == "__main__":
    sys.exit(main())
