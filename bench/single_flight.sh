#!/bin/bash
# Compile counts of N processes sharing one cold cache directory (issue 23; docs/api.md,
# "Processes sharing a cache"): N concurrent `kiln build SPEC` into one fresh directory, for N =
# 1, 2, 4, 8, with the compile locks (default) and with KILN_CACHE_LOCK_TIMEOUT_S=0 (every lock
# judged stale at once: each process compiles every kernel, as before the locks). NVRTC runs are
# the sum of what each `kiln build` reports as compiled. Needs no GPU.
#
#   bash bench/single_flight.sh [KILN_BINARY] [SPEC] [ARCH]
set -euo pipefail
kiln=${1:-build/bin/kiln}
spec=${2:-specs/views.kiln}
arch=${3:-sm_90a}
run() {   # N [ENV=VALUE]: prints "runs seconds"
  local n=$1 env=${2:-KILN_LOG=warning} d start end
  d=$(mktemp -d)
  start=$(date +%s.%N)
  for i in $(seq "$n"); do env "$env" "$kiln" build "$spec" --arch "$arch" -j1 -o "$d/cache" > "$d/out.$i" 2>&1 & done
  wait
  end=$(date +%s.%N)
  local runs
  runs=$(cat "$d"/out.* | grep -o "[0-9]* compiled" | awk '{s += $1} END {print s}')
  rm -rf "$d"
  echo "$runs $(echo "$end - $start" | bc)"
}
echo "| processes | NVRTC runs, with locks | wall s | NVRTC runs, each compiles | wall s |"
echo "|---|---|---|---|---|"
for n in 1 2 4 8; do
  read -r a ta < <(run "$n")
  read -r b tb < <(run "$n" KILN_CACHE_LOCK_TIMEOUT_S=0)
  printf "| %d | %s | %.2f | %s | %.2f |\n" "$n" "$a" "$ta" "$b" "$tb"
done
