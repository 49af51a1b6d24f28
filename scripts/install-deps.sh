#!/usr/bin/env bash
# Installs what kiln needs to build and test on a fresh Debian 12 (bookworm) machine that has
# the CUDA 13 toolkit under /usr/local/cuda. Every Debian package whose headers or libraries the
# build uses is named here: .ci/run checks that with ../shared/tools/check-deps.sh.
# Skips apt entirely when everything is already present, so repeated `make` calls stay fast.
# Needs root (or sudo) only when something is missing; then it says so and exits 1.
set -euo pipefail
packages=(
  g++ cmake ninja-build make       # toolchain
  libfmt-dev                       # formatting (generator, runtime, CLI)
  doctest-dev                      # the test framework
  libcli11-dev                     # the CLI's argument parser
  libxxhash-dev                    # cache keys
  nlohmann-json3-dev               # the disk cache's metadata files
  clang libclang-rt-14-dev         # libFuzzer and the sanitizers' runtimes
  python3 file                     # scripts; check-deps.sh reads ELF files with `file`
  xz-utils                         # scripts/gpu_build.sh packs .gpu/ into .gpu.tar.xz for the GPU machine
  python3-dev python3-venv         # the Python extension (headers) and its build environment
  libquadmath0                     # PyTorch's wheel (KILN_TEST_TORCH=1) loads a libgfortran that needs it
)
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in "${packages[@]}"; do
  have_pkg "$p" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo)
  else
    echo "install-deps: these Debian packages are missing and installing them needs root:" >&2
    echo "  sudo apt-get install ${need[*]}" >&2
    echo "install-deps: run that (or run this command as root), then try again" >&2
    exit 1
  fi
  echo "install-deps: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/nvrtc.h" ] || [ ! -f "$cuda/include/cuda.h" ]; then
  echo "install-deps: the CUDA toolkit (headers and NVRTC) is required; expected it under $cuda" >&2
  echo "install-deps: install CUDA 13.0 there, or set CUDA_HOME to where it is" >&2
  exit 1
fi
