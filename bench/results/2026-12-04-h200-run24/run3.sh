# Session 50, call 3: kiln_test_gpu whole, in six parallel parts and the rest (run1.sh of 2026-12-02-h100-run1).
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=$OUT/parts; mkdir -p $P
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
T=.gpu/bin/kiln_test_gpu
run() { local name=$1; shift; ( start=$(date +%s); timeout 520 "$@" > $P/$name.txt 2>&1; echo "rc=$? wall=$(( $(date +%s) - start ))s" >> $P/$name.txt ) & }
export KILN_CACHE_DIR=$(mktemp -d)
KILN_GPU_SPECS=activations,elementwise,indices,promotion,stream_widths,views run specs_ew $T -tc="gpu: every covered spec matches*"
KILN_GPU_SPECS=cumsum_exclusive,min_reduce,norms,reductions,scans,pooling run specs_red $T -tc="gpu: every covered spec matches*"
KILN_GPU_SPECS=gemm,matmul,matmul_small_k,linear_dropout_softmax,attention run specs_mm $T -tc="gpu: every covered spec matches*"
KILN_GPU_SPECS=conv,conv2d_3x3,conv_nd run specs_conv $T -tc="gpu: every covered spec matches*"
run odd $T -tc="gpu: memory-bound specs on odd sizes*"
run wgmma_half $T -tc="gpu: every covered spec's wgmma path*,gpu: matmul and conv specs with f16*"
wait
for f in $P/*.txt; do echo "== $f"; grep -E "^rc=|test cases:|assertions:|gpu-check summary" $f | tail -4; echo "checks ok: $(grep -c '^gpu-check .* ok ' $f) failed: $(grep -c '^gpu-check .* FAIL' $f)"; grep -E "ERROR|FAIL" $f | head -5; done
tar czf $OUT/parts.tar.gz -C $P . 
