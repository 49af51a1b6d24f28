#!/usr/bin/env bash
# Session 62, call 4: the GPU suite's parts not run since session 57 that fit the call: the host_app
# example (JIT, then its embedded pack with NVRTC unloadable), the offline .kilnpack with NVRTC
# unloadable, and compile/launch latency.
cd "$(dirname "$0")/../../.."
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
export KILN_CACHE_DIR=$(mktemp -d)
KILN_SUITE_PARTS="pack latency" timeout 420 bash scripts/gpu_suite.sh > $OUT/parts.txt 2>&1
echo "pack+latency rc=$?"; sed -n '/================ summary/,$p' $OUT/parts.txt
grep -E "^(compile|first|cached|launch|---)" $OUT/parts.txt | head -40
.gpu/bin/host_app examples/host_app/app.kiln > $OUT/host_app.txt 2>&1; echo "host_app rc=$?"; tail -4 $OUT/host_app.txt
KILN_NVRTC_LIB=/nonexistent KILN_CACHE_DIR="$(mktemp -d)" .gpu/bin/host_app examples/host_app/app.kiln > $OUT/host_app_embedded.txt 2>&1
echo "host_app embedded rc=$?"; tail -4 $OUT/host_app_embedded.txt
