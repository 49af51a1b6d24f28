"""One matmul through kiln (the package) and through torch.matmul (cuBLAS), a few launches each,
for a profiler: run it under Nsight Compute with no kernel filter and every launch is either
kiln's kernel or cuBLAS's (the inputs are made before the first profiled launch and the output
check runs after the last).

Usage (GPU machine): ncu ... python3 bench/peer_profile.py M N K DTYPE [--launches N] [--kiln DIR]
DTYPE: bf16, f16 or tf32 (f32 operands, TF32 on both sides).
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("m", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("k", type=int)
    ap.add_argument("dtype", choices=("bf16", "f16", "tf32"))
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--kiln", default=os.path.join(ROOT, ".gpu", "python"))
    args = ap.parse_args()
    sys.path.insert(0, args.kiln)
    import torch
    import kiln

    elem = {"bf16": "bf16", "f16": "f16", "tf32": "f32"}[args.dtype]
    tdtype = {"bf16": torch.bfloat16, "f16": torch.float16, "tf32": torch.float32}[args.dtype]
    prec = ', precision="tf32"' if args.dtype == "tf32" else ""
    prog = kiln.loads(f"op mm {{\n  dims M = 8, N = 8, K = 8\n  in a: {elem}[M, K]\n  in b: {elem}[K, N]\n"
                      f"  out c = matmul(a, b{prec})\n}}\n", name="peer_profile")
    torch.backends.cuda.matmul.allow_tf32 = args.dtype == "tf32"
    a = torch.rand(args.m, args.k, device="cuda").sub_(0.5).to(tdtype)
    b = torch.rand(args.k, args.n, device="cuda").sub_(0.5).to(tdtype)
    c = torch.empty(args.m, args.n, device="cuda", dtype=tdtype)
    prog.mm.specialize(M=args.m, N=args.n, K=args.k)   # compile outside the profiled launches
    torch.cuda.synchronize()
    for _ in range(args.launches):
        prog.mm(a, b, out=c)
    for _ in range(args.launches):
        ref = torch.matmul(a, b)
    torch.cuda.synchronize()
    err = (c.float() - ref.float()).norm() / ref.float().norm()
    print(f"kiln vs cuBLAS relative difference {float(err):.2e}")
    return 0 if float(err) < 2e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
