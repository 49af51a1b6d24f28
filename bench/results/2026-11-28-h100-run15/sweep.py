import sys, torch, torch.nn.functional as F
import kiln
from torch.nn.attention import sdpa_kernel, SDPBackend
from triton.testing import do_bench
prog = kiln.load(sys.argv[1] if len(sys.argv) > 1 else ".gpu/att_sweep.kiln")
def t(fn): return do_bench(fn, warmup=50, rep=400, return_mode="median")
cases = [("plain", 8, 4096, T) for T in (1024, 4096, 8192)]
cases += [("causal", 32 * 4096 // S, S, S) for S in (1024, 2048, 4096, 8192)]
cases += [("plain", 32, 4096, 4096)]
peer = len(sys.argv) < 3
print("op BH S T kiln_ms cudnn_ms ratio tiles_per_unit us_per_unit")
for op, B, S, T in cases:
    q = torch.randn(B, 32, S, 128, device="cuda", dtype=torch.float16)
    k, v = (torch.randn(B, 32, T, 128, device="cuda", dtype=torch.float16) for _ in range(2))
    o = torch.empty_like(q)
    f = prog[op]
    f(q, k, v, out=o)
    ms = t(lambda: f(q, k, v, out=o))
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=op == "causal")
        cd = t(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=op == "causal")) if peer else float("nan")
    err = (o.float() - ref.float()).abs().max().item()
    units = B * 32 * (S // 128)
    tiles = (S // 128 + 1) / 2 if op == "causal" else T / 128
    print(f"{op} {B*32} {S} {T} {ms:.3f} {cd:.3f} {cd/ms:.3f} {tiles:.1f} {ms*1e3*132/units:.2f} err={err:.1e}", flush=True)
