#!/usr/bin/env bash
# Session 62, call 7: the unit-slot handshake of the fused attention kernel (lane 0 reads the slot
# and arrives), after racecheck reported 2x55248 hazards between the consumers' slot reads and the
# producer's next write (call 6): racecheck of the attention specs, their float64 checks at every
# shape set, then bench.py's attention rows.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
export KILN_CACHE_DIR=$(mktemp -d)
KILN_GPU_SPECS=attention KILN_GPU_SHAPES=${RC_SHAPES:-ones,odd,long} timeout ${RC_TIMEOUT:-170} compute-sanitizer --tool racecheck --error-exitcode 86 \
  .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec*" > $OUT/racecheck_attention.txt 2>&1
echo "racecheck rc=$? checks=$(grep -c '^gpu-check .* ok ' $OUT/racecheck_attention.txt)"
grep -E "RACECHECK SUMMARY|Race reported|test cases" $OUT/racecheck_attention.txt | head -5
KILN_GPU_SPECS=attention timeout 80 .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec*" > $OUT/attention_checks.txt 2>&1
echo "checks rc=$? ok=$(grep -c '^gpu-check .* ok ' $OUT/attention_checks.txt) failed=$(grep -c '^gpu-check .* FAIL' $OUT/attention_checks.txt)"
PYTHONPATH=$PWD/.gpu/python timeout 100 python3 bench/bench.py --only attention --no-compile --out $OUT > $OUT/bench_attention.txt 2>&1
echo "bench rc=$?"; grep -E "^\| attention" $OUT/bench_attention.txt
