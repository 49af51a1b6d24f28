#!/usr/bin/env bash
# Builds the binaries a pending patch's device script carries as .gpu/bin/kiln_new and
# .gpu/bin/kiln_test_gpu_new (e.g. gpu-s68-call1.sh with conv1d-direct.patch): applies the patch to
# the working tree, builds kiln and kiln_test_gpu in build-gpu (the same Release build
# scripts/gpu_build.sh makes; run that first, unpatched, for .gpu.tar.xz), copies them stripped,
# and reverts the patch, new golden files included. Usage: build-new.sh PATCH
set -euo pipefail
cd "$(dirname "$0")/../../.."
patch=$1
[ -z "$(git status --porcelain -- generator templates tests specs runtime)" ] || { echo "build-new: the tree has changes" >&2; exit 1; }
git apply "$patch"
trap 'git apply -R "$patch"' EXIT
cmake --build build-gpu -j "$(nproc)" --target kiln_cli kiln_test_gpu
mkdir -p .gpu/bin
cp build-gpu/bin/kiln .gpu/bin/kiln_new
cp build-gpu/bin/kiln_test_gpu .gpu/bin/kiln_test_gpu_new
strip .gpu/bin/kiln_new .gpu/bin/kiln_test_gpu_new
echo "build-new: .gpu/bin/kiln_new and kiln_test_gpu_new built with $patch (rebuild build-gpu afterwards for HEAD's)"
