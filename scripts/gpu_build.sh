#!/usr/bin/env bash
# Builds, on this machine, what the GPU machine runs (it has no package registries):
# a Release build of the CLI, the GPU test suite and the C interface, stripped, plus
# the standalone template harnesses, all into .gpu/ (ignored by git), and the same in one xz tarball,
# .gpu.tar.xz, which is what to pass as `carry` (the GPU scripts unpack it: scripts/gpu_unpack.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The Python package for the GPU machine's Python (3.12; it has no compiler headers for kiln's
# dependencies, so the extension is built here): a 3.12 interpreter with its headers, from
# KILN_GPU_PYTHON or python3.12 on PATH or pyenv, and a venv beside the build with nanobind.
gpu_python=${KILN_GPU_PYTHON:-}
if [ -z "$gpu_python" ]; then
  for candidate in $(ls -d "$HOME"/.pyenv/versions/3.12*/bin/python3.12 2>/dev/null) $(command -v python3.12 || true); do
    "$candidate" -c 'import sys' 2>/dev/null && { gpu_python=$candidate; break; }
  done
fi
python_args=()
if [ -n "$gpu_python" ]; then
  [ -x build-gpu/pyenv/bin/python ] || { "$gpu_python" -m venv build-gpu/pyenv && build-gpu/pyenv/bin/python -m pip install -q nanobind; }
  python_args=(-DKILN_PYTHON=ON -DPython_EXECUTABLE="$PWD/build-gpu/pyenv/bin/python")
else
  echo "gpu_build: no Python 3.12 here (set KILN_GPU_PYTHON): .gpu/python is not built" >&2
fi
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release "${python_args[@]}" >/dev/null
cmake --build build-gpu -j "$(nproc)" --target kiln_cli kiln_test_gpu kiln_capi $([ -n "$gpu_python" ] && echo kiln_python)
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
cp build-gpu/bin/kiln build-gpu/bin/kiln_test_gpu .gpu/bin/
cp build-gpu/lib/libkiln_capi.so .gpu/lib/
strip .gpu/bin/* .gpu/lib/*
if [ -n "$gpu_python" ]; then   # PYTHONPATH=.gpu/python on the GPU machine
  mkdir -p .gpu/python && cp -r build-gpu/python/kiln .gpu/python/ && strip .gpu/python/kiln/*.so
fi
# The example host application, against an installed kiln (links libcuda's stub here).
cmake --install build-gpu --prefix build-gpu/prefix >/dev/null
cmake -S examples/host_app -B build-gpu/host_app -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PWD/build-gpu/prefix" >/dev/null
cmake --build build-gpu/host_app >/dev/null && cp build-gpu/host_app/host_app .gpu/bin/ && strip .gpu/bin/host_app
# A pack of every spec op at --small shapes for sm_90a (what an H100 runs), built here without a GPU: the
# suite runs it on the GPU with NVRTC made unloadable (deployment without NVRTC).
mkdir -p .gpu/packs
build-gpu/bin/kiln build specs/*.kiln --small --arch sm_90a --skip-unsupported -o .gpu/packs/specs-small-sm_90a.kilnpack
bash scripts/build_harnesses.sh .gpu/bin || echo "gpu_build: not every harness built (above)" >&2
du -sh .gpu
XZ_OPT=-T0 tar cJf .gpu.tar.xz .gpu && du -sh .gpu.tar.xz
