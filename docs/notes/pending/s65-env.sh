# Sourced by session 65's pending device scripts (gpu-s65-*.sh), from the repository root: the
# toolkit on PATH, the embedded templates, a log folder packed into one tarball on exit ($OUT
# returns at most 8 files), the GPU's name and clocks.
bash scripts/gpu_unpack.sh || exit 1
export KILN_SOURCE_DIR=$PWD PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
unset KILN_TEMPLATE_PATH
logs=$(mktemp -d)
trap 'tar czf "$OUT/logs.tar.gz" -C "$logs" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$logs/gpu.txt"
