#!/usr/bin/env bash
# Builds the libFuzzer target for the spec front end with clang and runs it for
# ${FUZZ_SECONDS:-60} seconds, seeded from specs/*.kiln. Exits non-zero on any
# finding (crash, sanitizer report, leak, timeout, out-of-memory).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${FUZZ_BUILD:-build-fuzz}
SECONDS_TO_RUN=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-2}

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DKILN_FUZZ=ON -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_TOOLS=OFF >/dev/null
cmake --build "$BUILD" --target kiln_fuzz_spec -j "$JOBS"

corpus="$BUILD/fuzz-corpus"
artifacts="$BUILD/fuzz-artifacts"
mkdir -p "$corpus" "$artifacts"
cp specs/*.kiln "$corpus/"
# Also seed each op on its own, so mutations start from small inputs.
for spec in specs/*.kiln; do
  awk -v dir="$corpus" -v base="$(basename "$spec" .kiln)" \
    '/^op /{n++} n>0{print > (dir "/" base "_op" n ".kiln")}' "$spec"
done

echo "fuzzing the spec front end for ${SECONDS_TO_RUN}s (corpus $corpus)"
# -timeout: one input taking over 10 s is a hang; -rss_limit_mb bounds memory.
"$BUILD/bin/kiln_fuzz_spec" "$corpus" -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 -artifact_prefix="$artifacts/" -print_final_stats=1
status=$?
if compgen -G "$artifacts/*" >/dev/null; then
  echo "fuzz findings in $artifacts:" >&2
  ls -l "$artifacts" >&2
  exit 1
fi
exit $status
