# One call of each of issue 22's memory-bound ops that miss their target, for Nsight Compute.
import sys, importlib.util, torch, kiln
spec = importlib.util.spec_from_file_location("bench", "bench/bench.py"); b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
open("/tmp/mem.kiln", "w").write(b.MEMORY_BENCH_SPEC)
prog = kiln.load("/tmp/mem.kiln")
x3 = torch.rand(512, 512, 1024, device="cuda")
prog.sum_axis0(x3); prog.argmax_axis2(x3)
x4 = torch.randn(16, 64, 256, 256, device="cuda")
g, bb = torch.rand(64, device="cuda"), torch.rand(64, device="cuda")
prog.rmsnorm_c(x4); prog.batchnorm_train(x4, g, bb)
prog.cumsum_32768x32768_axis0(torch.rand(32768, 32768, device="cuda"))
prog.cumsum_4x67108864_axis1(torch.rand(4, 1 << 26, device="cuda"))
torch.cuda.synchronize()
