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
--out FILE writes the figures as JSON (rank 0).
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
    p.add_argument("--out", default=None, help="JSON with the figures (rank 0)")
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


def batch(args, step, device):
    """The global batch of `step` (the same on every rank, made on the CPU): inputs and targets."""
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(args.batch, args.dim, generator=g)
    target = torch.tanh(x.roll(1, dims=1)) * 0.5
    return x.to(device), target.to(device)


def train(model, args, device, rank, world, steps, time_steps=False):
    """SGD on this rank's shard of each step's batch; returns the step times (ms) if timed."""
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    shard = args.batch // world
    times = []
    for step in range(steps):
        x, target = batch(args, step, device)
        x, target = x[rank * shard:(rank + 1) * shard], target[rank * shard:(rank + 1) * shard]
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), target)
        loss.backward()   # DDP all-reduces (averages) the gradients here
        opt.step()
        stop.record()
        if time_steps:
            stop.synchronize()
            times.append(start.elapsed_time(stop))
    torch.cuda.synchronize(device)
    return times, float(loss)


def build_pack(args, pack):
    cli = args.kiln_cli or shutil.which("kiln")
    if cli is None:
        raise SystemExit("train.py: --pack needs the kiln command (pass --kiln-cli PATH)")
    shard = args.batch // dist.get_world_size()
    cmd = [cli, "build", str(HERE / "mlp.kiln"), "-D", f"B={shard}", "-D", f"N={args.hidden}", "-o", str(pack)]
    print("rank 0:", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def main():
    args = parse_args()
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
            build_pack(args, pack)
        dist.barrier()
        kiln.preload(pack, options)
    BiasGelu.ops = kiln.load(HERE / "mlp.kiln", options)

    # The kiln model: the first step compiles (or reads) its kernels; the counters say how.
    t0 = time.perf_counter()
    model = DistributedDataParallel(make_model(args, device, use_kiln=True), device_ids=[device.index])
    _, first_loss = train(model, args, device, rank, world, 1)
    first_step_s = time.perf_counter() - t0
    counts = kiln.stats(options)
    dist.barrier()

    # Timed: the kiln model, then the same model with PyTorch's bias + GELU, from the same start.
    kiln_model = DistributedDataParallel(make_model(args, device, use_kiln=True), device_ids=[device.index])
    kiln_times, kiln_loss = train(kiln_model, args, device, rank, world, args.steps, time_steps=True)
    torch_model = DistributedDataParallel(make_model(args, device, use_kiln=False), device_ids=[device.index])
    torch_times, torch_loss = train(torch_model, args, device, rank, world, args.steps, time_steps=True)
    warm = slice(min(5, args.steps - 1), None)   # the first steps warm the allocator and NCCL
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
        print(f"{world} ranks ({args.backend}), global batch {args.batch}, {args.dim}->{args.hidden}->{args.dim}, "
              f"{args.steps} steps")
        print("| rank | device | NVRTC compiles | disk/pack hits | first step s | kiln step ms | PyTorch step ms | ratio |")
        print("|---|---|---|---|---|---|---|---|")
        for r in everyone:
            print(f"| {r['rank']} | {r['device']} | {r['kiln_compiles']} | {r['kiln_disk_hits']} | {r['first_step_s']:.2f} | "
                  f"{r['kiln_step_ms']:.3f} | {r['torch_step_ms']:.3f} | {r['torch_step_ms'] / r['kiln_step_ms']:.2f}x |")
        print(f"NVRTC compiles over all ranks: {result['compiles_all_ranks']}")
        if args.check:
            # One process, the whole global batch, PyTorch's GELU: the parameters after the same
            # number of steps must match the all-reduced kiln run's.
            single = make_model(args, device, use_kiln=False)
            train(single, args, device, 0, 1, args.steps)
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
            Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    dist.barrier()
    dist.destroy_process_group()
    return status


if __name__ == "__main__":
    sys.exit(main())
