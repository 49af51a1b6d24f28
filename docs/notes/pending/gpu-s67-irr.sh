#!/usr/bin/env bash
# For session 67: the bf16 GEMM at 6007x3336x4800 ran at 469 TFLOP/s in session 66 (4096^3: 772),
# with or without the unaligned operands' pre-passes, and `kiln tune` found no faster tile among
# the four it reached. Time the same product with M, N and K rounded to whole tiles (irr-shapes.kiln),
# each op alone, three rounds, to see which extent costs; then Nsight Compute's memory and
# pipe-utilization sections on the slowest and on 4096x4096x4800. Carry .gpu/bin/kiln.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
ops=$(grep -oE '^op [a-z0-9_x]+' docs/notes/pending/irr-shapes.kiln | cut -d' ' -f2)
for round in 1 2 3; do for op in $ops; do
  echo "round $round $(KILN_CACHE_DIR=/tmp/c-irr timeout 60 .gpu/bin/kiln run docs/notes/pending/irr-shapes.kiln --op $op --iters 50 2>&1 | grep -E 'median|FAIL|error' | tr '\n' ' ')"
done; done | tee $logs/irr_shapes.txt
# cuBLAS (torch.matmul, bf16) on the same shapes, in the same call: medians of 50 after 10 warm-ups.
python3 - $ops <<'PY' 2>&1 | tee $logs/irr_cublas.txt
import sys, torch
for op in sys.argv[1:]:
    m, n, k = (int(v) for v in op.split("_")[1].split("x"))
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16); b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    times = []
    for i in range(60):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); torch.matmul(a, b); e.record(); torch.cuda.synchronize()
        if i >= 10: times.append(s.elapsed_time(e))
    t = sorted(times)[len(times) // 2]
    print(f"cublas {op} median {t:.4f} ms {2 * m * n * k / t / 1e9:.1f} TFLOP/s")
PY
for op in mm_6007x3336x4800 mm_4096x4096x4800; do
  KILN_CACHE_DIR=/tmp/c-irr timeout 120 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats \
    -k regex:gemm_tma --launch-count 1 .gpu/bin/kiln run docs/notes/pending/irr-shapes.kiln --op $op --iters 1 > $logs/ncu_$op.txt 2>&1
  echo "ncu $op rc=$?"; grep -E "Duration|Throughput|Hit Rate|Compute \(SM\)|Issued" $logs/ncu_$op.txt | head -14
done
