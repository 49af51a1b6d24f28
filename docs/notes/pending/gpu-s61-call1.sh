#!/usr/bin/env bash
# Session 61, call 1: (1) the drawn epilogue (Philox blocks of four column groups drawn together,
# their rolled rounds interleaved): the wgmma-path test with its new linear_relu_dropout cases,
# each also through the portable sm_90 plan (KILN_WGMMA_COMPARE), and the every-spec check of the
# specs with dropouts and the 32-byte stores (stream_widths, now with the streaming pieces);
# (2) linear_relu_dropout's time: kiln_s59 (unrolled rounds), kiln_s60 (rolled, one block after
# another) and kiln (drawn together), alternately; (3) the GPU suite's tests of test_dyn_gpu.cpp.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
echo "== 1"
KILN_WGMMA_COMPARE=1 KILN_CACHE_DIR=$(mktemp -d) timeout 150 .gpu/bin/kiln_test_gpu \
  -tc="gpu: every covered spec's wgmma path*" > $OUT/wgmma_path.txt 2>&1
echo "wgmma path rc=$?"; grep -E "linear_relu_dropout|FAIL|WRONG|ERROR" $OUT/wgmma_path.txt | head -12; tail -3 $OUT/wgmma_path.txt
KILN_GPU_SPECS=matmul,linear_dropout_softmax,stream_widths,elementwise KILN_CACHE_DIR=$(mktemp -d) timeout 120 \
  .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*" > $OUT/specs.txt 2>&1
echo "specs rc=$?"; tail -3 $OUT/specs.txt; grep -c " ok " $OUT/specs.txt; grep -E "WRONG|FAIL|ERROR" $OUT/specs.txt | head
echo "== 2"
for bin in kiln_s59 kiln_s60 kiln kiln_s59 kiln_s60 kiln; do
  KILN_CACHE_DIR=$(mktemp -d) timeout 40 .gpu/bin/$bin bench specs/matmul.kiln --op linear_relu_dropout --iters 100 > $OUT/b.txt 2>&1
  echo "linear_relu_dropout $bin $(grep -E 'device time' $OUT/b.txt)"
done | tee $OUT/philox_drawn.txt
echo "== 3"
KILN_SUITE_PARTS=tests KILN_SUITE_TESTS="-sf=*test_dyn_gpu.cpp" timeout 330 bash scripts/gpu_suite.sh > $OUT/suite_dyn.txt 2>&1
echo "suite dyn rc=$?"; sed -n '/================ summary/,$p' $OUT/suite_dyn.txt
