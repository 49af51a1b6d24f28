#!/usr/bin/env bash
# Runs on the GPU machine, in one call: the GPU test suite, a .kilnpack with NVRTC
# unloadable, compute-sanitizer memcheck/racecheck, the standalone template harnesses,
# compile/launch latency and the PyTorch side-by-side benchmarks; prints a short
# summary last. Expects .gpu/ from scripts/gpu_build.sh.
# Usage: bash scripts/gpu_suite.sh [bench.py options: --quick, --only NAMES, ...]
# KILN_SUITE_PARTS picks parts (default: "tests pack sanitize harness latency bench"),
# e.g. to split the run over two calls of a time-limited machine. The test suite alone took more
# than 570 s on an H100 (2026-12-05): KILN_SUITE_TESTS passes doctest filters to it, e.g.
# "-sf=*test_dyn_gpu.cpp" for one call and "-sfe=*test_dyn_gpu.cpp" for the next. Its spec checks
# (`-sf=*test_specs_gpu.cpp`) alone passed 600 s on 2026-12-07: split them by spec too, with
# KILN_GPU_SPECS (a comma-separated list of specs/ stems, tests/gpu/gpu_test_util.h).
# Logs go to a work folder, under $OUT when it is set (line-buffered, so that a call cut off by its
# time limit still returns what ran); $OUT also receives suite-logs.tar.gz and the benchmark's
# JSON, markdown and PNG. Exits 1 when a summary line says FAIL, TIMEOUT or NOT RUN.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bash scripts/gpu_unpack.sh || exit 1
export KILN_SOURCE_DIR=$PWD
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
parts=" ${KILN_SUITE_PARTS:-tests pack sanitize harness latency bench} "
want() { [[ "$parts" == *" $1 "* ]]; }
if [ -n "${OUT:-}" ]; then out="$OUT/suite"; mkdir -p "$out"; else out=$(mktemp -d /tmp/kiln-suite.XXXX); fi
finish() {
  echo
  echo "================ summary"
  printf '%s\n' "${summary[@]}"
  [ -f "$out/bench.log" ] && sed -n '/^| problem/,$p' "$out/bench.log"
  if [ -n "${OUT:-}" ]; then
    tar czf "$OUT/suite-logs.tar.gz" -C "$out" . 2>/dev/null
    cp "$out"/*.json "$out"/*.md "$out"/*.png "$OUT/" 2>/dev/null || true
  fi
  # A part that failed, timed out or could not run makes the suite fail.
  if printf '%s\n' "${summary[@]}" | grep -qE 'FAIL|TIMEOUT|NOT RUN'; then exit 1; fi
}
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
summary=()

if want tests; then
echo "=== GPU test suite"
# shellcheck disable=SC2086  # (KILN_SUITE_TESTS: doctest options, split at spaces)
if stdbuf -oL -eL .gpu/bin/kiln_test_gpu ${KILN_SUITE_TESTS:-} 2>&1 | tee "$out/gpu_tests.log"; then
  summary+=("gpu tests${KILN_SUITE_TESTS:+ ($KILN_SUITE_TESTS)}: PASS"); else summary+=("gpu tests: FAIL"); fi
checks=$(grep -c '^gpu-check .* ok ' "$out/gpu_tests.log" || true)
fails=$(grep -c '^gpu-check .* FAIL' "$out/gpu_tests.log" || true)
summary+=("  reference checks: $checks ok, $fails failed")
grep -E '^gpu-check (summary|templates|host time)|^huge|^scratch OOM' "$out/gpu_tests.log"
fi

if want tests; then
echo "=== examples/host_app"
if [ -x .gpu/bin/host_app ] && .gpu/bin/host_app examples/host_app/app.kiln 2>&1 | tee "$out/host_app.log"; then
  summary+=("host_app example: PASS"); else summary+=("host_app example: FAIL"); fi
# Its kernels compiled into it (kiln_add_pack EMBED): no NVRTC, an empty cache.
if [ -x .gpu/bin/host_app ] && KILN_NVRTC_LIB=/nonexistent KILN_CACHE_DIR="$(mktemp -d)" \
    .gpu/bin/host_app examples/host_app/app.kiln 2>&1 | tee "$out/host_app_embedded.log"; then
  summary+=("host_app, embedded pack, NVRTC unloadable: PASS"); else summary+=("host_app, embedded pack, NVRTC unloadable: FAIL"); fi
fi

if want pack; then
echo "=== .kilnpack built offline, run with NVRTC unloadable"
pack=.gpu/packs/specs-small-sm_90a.kilnpack
pack_ok=1
pack_cache=$(mktemp -d)   # an empty cache: every kernel must come from the pack
for spec in specs/*.kiln; do
  KILN_NVRTC_LIB=/nonexistent/libnvrtc.so KILN_CACHE_DIR=$pack_cache .gpu/bin/kiln run "$spec" --small --check \
    --iters 1 --pack "$pack" >>"$out/pack.log" 2>&1 || { pack_ok=0; echo "FAILED: $spec" >>"$out/pack.log"; }
done
# A shape the pack lacks: a clear error naming the op, its shape and the arch.
if KILN_NVRTC_LIB=/nonexistent/libnvrtc.so KILN_CACHE_DIR=$pack_cache .gpu/bin/kiln run specs/elementwise.kiln \
     --op relu_add -D B=77 -D N=77 --pack "$pack" >"$out/pack_missing.log" 2>&1; then pack_ok=0; fi
grep -q "is in no preloaded pack or cache and NVRTC cannot be loaded" "$out/pack_missing.log" || pack_ok=0
cat "$out/pack_missing.log" >>"$out/pack.log"
pack_ops=$(grep -c ' ok ' "$out/pack.log" || true)
pack_bad=$(grep -c 'FAIL' "$out/pack.log" || true)
tail -3 "$out/pack.log"
[ "$pack_ok" = 1 ] && [ "$pack_bad" = 0 ] && summary+=("pack without NVRTC: PASS ($pack_ops outputs ok, missing shape reported)") \
  || summary+=("pack without NVRTC: FAIL (see pack.log)")
fi

if want sanitize; then
echo "=== compute-sanitizer memcheck and racecheck, every covered spec at small awkward shapes"
# racecheck takes ~4 s a check: every spec's ~420 checks do not fit one call of the GPU machine.
# SANITIZER_TOOLS, SANITIZER_SPECS (KILN_GPU_SPECS stems) and SANITIZER_SHAPES split it over calls;
# a timeout is reported as such, never as clean. The wgmma-path case (its own list of ops, not
# the specs' stems) runs only where no SANITIZER_SPECS narrows the run.
cases="gpu: every covered spec matches*"
[ -n "${SANITIZER_SPECS:-}" ] || cases="$cases,gpu: every covered spec's wgmma path*"
for tool in ${SANITIZER_TOOLS:-memcheck racecheck}; do
  shapes=${SANITIZER_SHAPES:-ones,odd,long}   # "long" reaches the split paths (split-K, split reductions)
  if KILN_GPU_SPECS=${SANITIZER_SPECS:-${KILN_GPU_SPECS:-}} KILN_GPU_SHAPES=$shapes timeout ${SANITIZER_TIMEOUT:-400} \
       compute-sanitizer --tool "$tool" --error-exitcode 86 \
       .gpu/bin/kiln_test_gpu -tc="$cases" >"$out/sanitizer_$tool.log" 2>&1; then
    summary+=("compute-sanitizer $tool${SANITIZER_SPECS:+ ($SANITIZER_SPECS)}: CLEAN ($(grep -c '^gpu-check .* ok ' "$out/sanitizer_$tool.log") checks; $(grep -E '(ERROR|RACECHECK) SUMMARY' "$out/sanitizer_$tool.log" | tail -1 | sed 's/^=* *//'))")
  else
    rc=$?
    summary+=("compute-sanitizer $tool: $([ "$rc" = 124 ] && echo "TIMEOUT after $(grep -c '^gpu-check .* ok ' "$out/sanitizer_$tool.log") checks" || echo "FAIL (exit $rc)") (see sanitizer_$tool.log)")
  fi
  grep -E "ERROR SUMMARY|templates run|Invalid|Race|Hazard" "$out/sanitizer_$tool.log" | head -8
done
fi

if want harness; then
# Harness binaries not carried (.gpu/bin/*_check absent): built here first, into the work folder.
harness_dir=.gpu/bin
if ! compgen -G ".gpu/bin/*_check" >/dev/null; then
  harness_dir=$out/harness
  echo "=== building the standalone harnesses here (not carried)"
  bash scripts/build_harnesses.sh "$harness_dir" 2>&1 | tail -5 || summary+=("harness build: FAIL (see above)")
fi
ran=0
for h in "$harness_dir"/*_check; do
  [ -x "$h" ] || continue
  ran=$((ran + 1))
  echo "=== $(basename "$h")"
  if timeout 240 "$h" 2>&1 | tee "$out/$(basename "$h").log"; then summary+=("$(basename "$h"): PASS"); else summary+=("$(basename "$h"): FAIL"); fi
done
[ "$ran" -gt 0 ] || summary+=("harness: NOT RUN (no harness binaries, none built)")
fi

if want latency; then
echo "=== compile and launch latency (kiln bench, C++ side)"
while read -r spec op defs; do
  [ -n "$spec" ] || continue
  echo "--- $op $defs"
  # shellcheck disable=SC2086
  timeout 120 .gpu/bin/kiln bench "$spec" --op "$op" $defs 2>&1 | tee -a "$out/latency.log" || true
done <<'OPS'
specs/elementwise.kiln relu_add
specs/reductions.kiln sum_rows
specs/cumsum_exclusive.kiln cumsum_exclusive -D B=1024 -D N=4096
specs/min_reduce.kiln min_reduce -D B=8 -D M=512 -D N=4095
specs/matmul_small_k.kiln matmul_small_k -D M=2048 -D N=2048
specs/conv2d_3x3.kiln conv2d_3x3 -D N=1 -D H=64 -D W=128
OPS

fi

if want bench; then
echo "=== benchmarks (kiln vs PyTorch, same process)"
if PYTHONUNBUFFERED=1 timeout "${BENCH_TIMEOUT:-450}" python3 bench/bench.py --out "$out" "$@" 2>&1 | tee "$out/bench.log"; then
  summary+=("bench: PASS")
else
  rc=$?
  summary+=("bench: $([ "$rc" = 124 ] && echo TIMEOUT || echo "FAIL (exit $rc)") (see bench.log)")
fi
fi
