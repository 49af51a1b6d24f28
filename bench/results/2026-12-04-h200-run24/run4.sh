# Session 50, call 4: the rest of kiln_test_gpu's cases, then the Python suite on the GPU.
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KILN_CACHE_DIR=$(mktemp -d)
T=.gpu/bin/kiln_test_gpu
start=$(date +%s)
timeout 330 $T -tce="gpu: every covered spec matches*,gpu: memory-bound specs on odd sizes*,gpu: every covered spec's wgmma path*,gpu: matmul and conv specs with f16*" > $OUT/rest.txt 2>&1
echo "rest rc=$? wall=$(( $(date +%s) - start ))s"
grep -E "ERROR|test cases:|assertions:" $OUT/rest.txt | tail -6
start=$(date +%s)
PYTHONPATH=.gpu/python timeout 200 python3 -m pytest -q python/tests > $OUT/pytest.txt 2>&1
echo "pytest rc=$? wall=$(( $(date +%s) - start ))s"
tail -4 $OUT/pytest.txt
