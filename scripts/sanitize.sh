#!/usr/bin/env bash
# `make sanitize`: kiln's CPU tests under sanitizers.
#   build-asan  AddressSanitizer + UndefinedBehaviorSanitizer: every cpu-labelled test
#               except the consumer builds (they configure a separate project) and the
#               standalone harnesses' nvcc compiles (no kiln code runs in them).
#   build-tsan  ThreadSanitizer: the single-flight thread tests and the disk-cache tests
#               (8 processes sharing one directory, each process's store/load path),
#               built as their own small suite (kiln_test_threads, tests/CMakeLists.txt).
# Any sanitizer report fails the test that caused it, and so this script: UBSan is
# built with -fno-sanitize-recover, and ASan/TSan halt on the first error.
# Both builds use -O1 -g1: fast enough to run, line tables for the reports, and only
# the targets the tests need (no capi library, no fuzzer, no GPU suite, no CLI for TSan).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${SANITIZE_JOBS:-$(nproc)}
SUPP="$PWD/scripts/sanitizers"
ASAN_BUILD=${ASAN_BUILD:-build-asan}
TSAN_BUILD=${TSAN_BUILD:-build-tsan}

stage_start=$SECONDS
stage_done() { echo "sanitize: $1 took $((SECONDS - stage_start)) s"; stage_start=$SECONDS; }

configure() {   # DIR SANITIZERS
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g1" -DKILN_SANITIZE="$2" >/dev/null
}

# Options reach child processes too (tests re-run themselves and the kiln binary).
# intercept_tls_get_addr=0: LeakSanitizer then scans static TLS but not the dynamic TLS blocks it
# learns of through __tls_get_addr. GCC 12's LeakSanitizer on glibc 2.36 (Debian 12) computes
# bogus ranges for the blocks libnvrtc allocates, and its tracer then segfaults at exit
# ("Tracer caught signal 11: addr=0xed8", the CI run of 2026-11-25 on
# tests/runtime/test_cache_runtime.cpp's NVRTC child) in any process that loaded NVRTC, on some
# machines and not others. Leaks reachable only from dynamic TLS would be reported, not hidden.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:check_initialization_order=1:intercept_tls_get_addr=0"
export LSAN_OPTIONS="suppressions=$SUPP/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$SUPP/tsan.supp:print_suppressions=0"

echo "sanitize: AddressSanitizer + UndefinedBehaviorSanitizer ($ASAN_BUILD)"
configure "$ASAN_BUILD" address,undefined
cmake --build "$ASAN_BUILD" -j "$JOBS" --target kiln_test_generator kiln_test_runtime kiln_test_reference kiln_test_tools
stage_done "ASan+UBSan build"
# Not the consumer builds (a separate project) nor the harness tests (nvcc compiling the standalone
# .cu files of bench/standalone: no kiln code runs, so nothing for a sanitizer to see; 160 s of
# CPU under CI's sanitize stage, and the main test run has them).
# The NVRTC compile sweeps (every generated unit of a family, every spec op, every TMA candidate)
# run in `make test`; here they would spend their time inside NVRTC, which is not instrumented
# (about 1000 of the 1300 s these tests took under ASan, CI of 2026-12-05). kiln's side of a
# compile (the request, the cache, the locks, the cubin) stays covered here by the runtime's
# compile tests, the CLI's cold-cache and lock tests and the template compile test.
NVRTC_SWEEPS='every unit compiles with NVRTC|every generated (contraction )?unit compiles|every spec op compiles'
NVRTC_SWEEPS+='|every candidate of four products compiles|template units compile for sm_|every fused unit compiles'
(cd "$ASAN_BUILD" && ctest --output-on-failure -j "$JOBS" -L cpu -E "^(consumer|harness)/|$NVRTC_SWEEPS")
stage_done "ASan+UBSan tests"

echo "sanitize: ThreadSanitizer ($TSAN_BUILD)"
configure "$TSAN_BUILD" thread
cmake --build "$TSAN_BUILD" -j "$JOBS" --target kiln_test_threads
stage_done "TSan build"
# setarch -R: TSan's shadow memory layout predates the wider mmap randomization of
# recent kernels, which makes it abort at start ("unexpected memory mapping").
(cd "$TSAN_BUILD" && setarch "$(uname -m)" -R ctest --output-on-failure -j "$JOBS" -R '^threads/')
stage_done "TSan tests"
echo "sanitize: no sanitizer reports"
