#!/usr/bin/env bash
# Session 44, call 1: the GPU tests at HEAD (2c9e86e: concat offsets per launch, the review's
# pool config helpers) in parallel parts, pack and host_app; then KernelBench L2 13 generic
# against specialized under Nsight Compute (launch stats, occupancy, memory) to find the 1.37x.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.gpu/python
P=$OUT/parts; mkdir -p $P
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
T=.gpu/bin/kiln_test_gpu
run() { local name=$1; shift; ( start=$(date +%s); "$@" > $P/$name.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/$name.txt ) & }
export KILN_CACHE_DIR=$(mktemp -d)
KILN_GPU_SPECS=activations,elementwise,indices,promotion,stream_widths,views run specs_ew $T -tc="gpu: every covered spec matches*"
KILN_GPU_SPECS=cumsum_exclusive,min_reduce,norms,reductions,scans,pooling run specs_red $T -tc="gpu: every covered spec matches*"
KILN_GPU_SPECS=gemm,matmul,matmul_small_k,linear_dropout_softmax,attention run specs_mm $T -tc="gpu: every covered spec matches*"
KILN_GPU_SPECS=conv,conv2d_3x3,conv_nd run specs_conv $T -tc="gpu: every covered spec matches*"
run odd $T -tc="gpu: memory-bound specs on odd sizes*"
run wgmma_half $T -tc="gpu: every covered spec's wgmma path*,gpu: matmul and conv specs with f16*"
wait
run rest $T -tce="gpu: every covered spec matches*,gpu: memory-bound specs on odd sizes*,gpu: every covered spec's wgmma path*,gpu: matmul and conv specs with f16*"
wait
grep -E "(dyn pooled axes|dyn sum extents) .*(WRONG|compiles)" $P/rest.txt | head -20
KILN_SUITE_PARTS="pack" timeout 150 bash scripts/gpu_suite.sh > $P/pack.txt 2>&1
( .gpu/bin/host_app examples/host_app/app.kiln && KILN_NVRTC_LIB=/nonexistent KILN_CACHE_DIR="$(mktemp -d)" .gpu/bin/host_app examples/host_app/app.kiln; echo "rc=$?" ) > $P/host_app.txt 2>&1
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|assertions:|gpu-check summary" $f | tail -4; echo "checks ok: $(grep -c '^gpu-check .* ok ' $f) failed: $(grep -c '^gpu-check .* FAIL' $f)"; done
tail -3 $P/pack.txt; tail -3 $P/host_app.txt
for m in generic specialized; do
  KILN_SHAPES=$m timeout 100 ncu --target-processes all --kernel-name regex:'^kiln_m_k0_conv' --launch-count 1 \
    --section LaunchStats --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    python3 bench/kernelbench.py --kernelbench .gpu/kb --kiln .gpu/python --only 2/13 --no-compile --out /tmp/kb13-$m \
    > $P/ncu13-$m.txt 2>&1; echo "ncu $m rc=$?"
  grep -E "Duration|Registers|Shared Memory|Block Size|Grid Size|Occupancy|Throughput|Hit Rate|Waves" $P/ncu13-$m.txt | head -30
done
tar czf $OUT/parts.tar.gz -C $OUT parts && rm -rf $P
