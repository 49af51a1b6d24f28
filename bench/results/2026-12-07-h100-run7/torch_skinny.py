# Session 74: torch.matmul (cuBLAS, TF32 off) on the skinny products of gemv.kiln, medians of
# triton.testing.do_bench, for the kiln tune times beside them.
import torch, triton
torch.backends.cuda.matmul.allow_tf32 = False
shapes = {"gemv_wide": (4096, 1, 262144), "gemv_long4": (64, 4, 262144), "linear_m4": (4, 16384, 8192),
          "linear_m16": (16, 4096, 4096), "vec_mat": (1, 8192, 8192), "tall_n2": (65536, 2, 1024),
          "mid_n8": (8192, 8, 8192), "mid_n4": (8192, 4, 8192), "mid_n16": (8192, 16, 8192)}
for name, (m, n, k) in shapes.items():
    if name.startswith("linear"):
        x = torch.randn(m, k, device="cuda"); w = torch.randn(n, k, device="cuda")
        f = lambda: x @ w.t()
    else:
        a = torch.randn(m, k, device="cuda"); b = torch.randn(k, n, device="cuda")
        f = lambda: a @ b
    ms = triton.testing.do_bench(f, warmup=25, rep=200, return_mode="median")
    print(f"{name} {m}x{n}x{k}: torch.matmul {ms:.4f} ms")
