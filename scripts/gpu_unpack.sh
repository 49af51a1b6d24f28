#!/usr/bin/env bash
# On the GPU machine, first thing: unpacks .gpu.tar.xz (scripts/gpu_build.sh's .gpu/ in one xz
# tarball, ~8 MB against ~50 MB unpacked) into .gpu/ where it was carried. The tracked tree takes
# most of the carry's 64 MiB (bench/results/), so the tarball is what to carry. Without one it does
# nothing (.gpu/ carried as is). tar's xz where there is one, else Python's tarfile (lzma).
# Exits 1 when the tarball does not unpack.
cd "$(dirname "$0")/.." || exit 1
[ -f .gpu.tar.xz ] || exit 0
if command -v xz >/dev/null 2>&1; then
  tar xJf .gpu.tar.xz
else
  python3 -c 'import tarfile; tarfile.open(".gpu.tar.xz").extractall(filter="tar")'
fi || { echo "gpu_unpack: .gpu.tar.xz does not unpack" >&2; exit 1; }
