#!/usr/bin/env bash
# Session 63, call 7: the look-back scan's stage handshake through mbarriers (was bar.arrive /
# bar.sync) against session 62's binary (.gpu/bin/kiln_before): time and --check at the long-row
# shapes, every scan spec's checks, racecheck over the scan specs at the long shapes. Call 8 ran it
# again with the walker polling (gpu-s63-call8.sh: SCAN_CASES and SANITIZER_TOOLS narrowed).
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for round in 1 2; do for K in kiln_before kiln; do
  IFS=';' read -ra cases <<< "${SCAN_CASES:---op cumsum_long_rows;--op cumsum_long_rows -D B=4 -D N=67108864;--op cumsum_long_rows -D B=1 -D N=33554432;--op cummax_rows -D B=4 -D N=1000003;--op cumsum_reverse -D B=2 -D N=4194304}"
  for args in "${cases[@]}"; do
    # shellcheck disable=SC2086
    echo "$K round $round $args: $(KILN_CACHE_DIR=/tmp/c-$K .gpu/bin/$K run specs/scans.kiln $args --check --iters 50 2>&1 | grep -E 'median|ok|FAIL|error' | tr -s ' ' | tr '\n' ' ')"
  done
done; done | tee $OUT/ab.txt
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=scans,cumsum_exclusive timeout 150 .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*,gpu: memory-bound specs on odd sizes*" > $OUT/specs.txt 2>&1
echo "scan specs rc=$? ok=$(grep -c '^gpu-check .* ok ' $OUT/specs.txt) failed=$(grep -c '^gpu-check .* FAIL' $OUT/specs.txt)"
KILN_CACHE_DIR=$(mktemp -d) KILN_SUITE_PARTS=sanitize SANITIZER_TOOLS="${SANITIZER_TOOLS:-racecheck memcheck}" SANITIZER_SHAPES=long \
  SANITIZER_SPECS=scans,cumsum_exclusive SANITIZER_TIMEOUT=170 bash scripts/gpu_suite.sh > $OUT/sanitize.txt 2>&1
sed -n '/================ summary/,$p' $OUT/sanitize.txt
