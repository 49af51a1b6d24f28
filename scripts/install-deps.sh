#!/usr/bin/env bash
# Installs what kiln needs to build and test on a fresh Debian machine (run as root).
# Skips apt entirely when everything is already present, so repeated `make` calls stay fast.
set -euo pipefail
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in g++ cmake ninja-build make libfmt-dev doctest-dev libcli11-dev libxxhash-dev clang libclang-rt-14-dev python3; do
  have_pkg "$p" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ] && [ ! -f /usr/local/cuda/include/nvrtc.h ]; then
  echo "install-deps: the CUDA toolkit (headers and NVRTC) is required; expected it under /usr/local/cuda" >&2
  exit 1
fi
