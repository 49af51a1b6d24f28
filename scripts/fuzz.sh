#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for its share of ${FUZZ_SECONDS:-60}
# seconds (fuzz/CMakeLists.txt lists them). Exits non-zero on any finding (crash, sanitizer
# report, leak, timeout, out-of-memory) of any target.
#
# Seeds: the shipped specs (whole and one op at a time) and the specs the test suite holds
# (fuzz/corpus/spec, extracted by fuzz/extract_spec_seeds.py) for the spec and codegen
# targets; valid, truncated and corrupted packs and cache entries (fuzz/corpus/pack, cache)
# for the readers. Each run's corpus grows under $FUZZ_BUILD/fuzz-corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${FUZZ_BUILD:-build-fuzz}
SECONDS_TO_RUN=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-2}
TARGETS=(kiln_fuzz_spec kiln_fuzz_codegen kiln_fuzz_pack kiln_fuzz_cache_entry)
# Shares of the budget, in percent: code generation has the most code to cover.
declare -A SHARE=([kiln_fuzz_spec]=30 [kiln_fuzz_codegen]=40 [kiln_fuzz_pack]=15 [kiln_fuzz_cache_entry]=15)

# -O1 -g1, as the sanitizer builds (scripts/sanitize.sh): fast to build, line tables for reports.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g1" \
  -DCMAKE_CXX_COMPILER=clang++ -DKILN_FUZZ=ON -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_TOOLS=OFF >/dev/null
cmake --build "$BUILD" --target "${TARGETS[@]}" -j "$JOBS"

corpus="$BUILD/fuzz-corpus"
artifacts="$BUILD/fuzz-artifacts"
rm -rf "$artifacts"   # findings of this run only
mkdir -p "$artifacts"
for t in "${TARGETS[@]}"; do mkdir -p "$corpus/$t"; done
spec_seeds="$corpus/kiln_fuzz_spec"
cp specs/*.kiln fuzz/corpus/spec/*.kiln "$spec_seeds/"
# Also seed each op on its own, so mutations start from small inputs.
for spec in specs/*.kiln; do
  awk -v dir="$spec_seeds" -v base="$(basename "$spec" .kiln)" \
    '/^op /{n++} n>0{print > (dir "/" base "_op" n ".kiln")}' "$spec"
done
# Codegen inputs start with 9 header bytes (fuzz/fuzz_codegen.cpp): arch and defaults, dim seeds.
for spec in "$spec_seeds"/*.kiln; do
  name=$(basename "$spec" .kiln)
  { printf '\000\003\005\007\013\015\021\002\001'; cat "$spec"; } > "$corpus/kiln_fuzz_codegen/${name}_small.in"
  { printf '\006\001\001\001\001\001\001\001\001'; cat "$spec"; } > "$corpus/kiln_fuzz_codegen/${name}_defaults.in"
done
cp fuzz/corpus/pack/* "$corpus/kiln_fuzz_pack/"
cp fuzz/corpus/cache/* "$corpus/kiln_fuzz_cache_entry/"

status=0
for t in "${TARGETS[@]}"; do
  secs=$(( SECONDS_TO_RUN * ${SHARE[$t]} / 100 ))
  (( secs >= 1 )) || secs=1
  echo "fuzzing $t for ${secs}s (corpus $corpus/$t)"
  # -timeout: one input taking over 10 s is a hang; -rss_limit_mb bounds memory.
  "$BUILD/bin/$t" "$corpus/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -artifact_prefix="$artifacts/$t-" -print_final_stats=1 || status=$?
done
if compgen -G "$artifacts/*" >/dev/null; then
  echo "fuzz findings in $artifacts:" >&2
  ls -l "$artifacts" >&2
  exit 1
fi
exit $status
