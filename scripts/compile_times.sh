#!/usr/bin/env bash
# Cold NVRTC compile time of every op of the given specs (default: specs/*.kiln), one op at a
# time into an empty cache (`kiln build -j 1`), on this machine (no GPU needed). Prints a line
# per op, slowest first: NVRTC ms per kernel, the op's NVRTC ms and kernels, its templates.
# The design's targets (DESIGN.md, "Compile latency"): elementwise, reduce and scan <= 100 ms,
# GEMM and conv <= 400 ms a kernel. Timings move with the machine (2-3x between dev machines of
# different sessions): compare rows of one run, and quote the machine's time for an empty kernel.
# Usage: bash scripts/compile_times.sh [--arch sm_90a] [SPEC.kiln ...]
set -euo pipefail
cd "$(dirname "$0")/.."
arch=sm_90a
if [[ "${1:-}" == "--arch" ]]; then arch=$2; shift 2; fi
kiln=${KILN:-build/bin/kiln}
[[ -x $kiln ]] || { echo "compile_times.sh: no $kiln (build the kiln target, or set KILN)" >&2; exit 2; }
specs=("$@")
[[ ${#specs[@]} -gt 0 ]] || specs=(specs/*.kiln)
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
rows=()
for f in "${specs[@]}"; do
  for op in $(grep -oE "^op [A-Za-z0-9_]+" "$f" | cut -d' ' -f2); do
    rm -rf "$cache"/*
    if ! out=$("$kiln" build "$f" --op "$op" --arch "$arch" -o "$cache" -j 1 2>&1); then
      echo "compile_times.sh: $f $op failed:" >&2
      echo "$out" >&2
      exit 1
    fi
    line=$(echo "$out" | tail -1)
    kernels=$(echo "$line" | grep -oE "[0-9]+ kernels" | cut -d' ' -f1)
    ms=$(echo "$line" | grep -oE "\([0-9]+ ms of NVRTC" | tr -d '(' | cut -d' ' -f1)
    [[ -n "$kernels" && "$kernels" -gt 0 && -n "$ms" ]] || continue
    templates=$("$kiln" gen "$f" --op "$op" --arch "$arch" 2>/dev/null |
                grep -oE "^  [0-9]+ kiln_[A-Za-z0-9_]+: [a-z_0-9]+" | awk '{print $3}' | sort -u | paste -sd, -)
    rows+=("$((ms / kernels)) $ms $kernels $(basename "$f" .kiln) $op $templates")
  done
done
echo "# ms/kernel  ms  kernels  spec  op  templates ($arch)"
printf '%s\n' "${rows[@]}" | sort -k1,1 -n -r
