#!/usr/bin/env bash
# On a GPU machine with two GPUs (after scripts/gpu_build.sh here, carrying .gpu.tar.xz): the several-device
# GPU tests, then examples/distributed/train.py under torchrun: NCCL with 1 and 2 ranks (cold, then
# warm cache), 2 ranks preloading a pack, gloo with 2 ranks on one GPU and 4 ranks on two. Writes
# the figures under $OUT/r (JSON and logs).
bash "$(dirname "$0")/gpu_unpack.sh" || exit 1
set -o pipefail; fail=0; R=$OUT/r; mkdir -p $R; export PYTHONPATH=$PWD/.gpu/python; nvidia-smi -L | tee $R/gpus.txt
.gpu/bin/kiln_test_gpu -tc="*device*,*stream*" 2>&1 | tail -12 | tee $R/devices.txt || fail=1
python3 -m pytest -q python/tests/test_gpu.py -k "device or stream" 2>&1 | tail -4 | tee $R/pytest.txt || fail=1
T="python3 -m torch.distributed.run --nproc-per-node"
E=examples/distributed/train.py
note() { echo "$1 rc=$2"; [ "$2" = 0 ] || fail=1; }   # a run that failed makes the script fail
for n in 1 2; do rm -rf /tmp/c$n; KILN_LOG=info $T=$n $E --cache-dir /tmp/c$n --check --out $R/nccl$n > $R/nccl$n.txt 2>&1; note "nccl $n" $?; grep -E "^\||compiles over|check|loaded|another process" $R/nccl$n.txt; done
$T=2 $E --cache-dir /tmp/c2 --out $R/nccl2warm > $R/nccl2warm.txt 2>&1; note "warm" $?; grep -E "^\||over all" $R/nccl2warm.txt
rm -rf /tmp/cp; $T=2 $E --cache-dir /tmp/cp --pack /tmp/mlp.kilnpack --kiln-cli .gpu/bin/kiln --out $R/pack2 > $R/pack2.txt 2>&1; note "pack" $?; grep -E "^\||over all|rank" $R/pack2.txt
rm -rf /tmp/cg; CUDA_VISIBLE_DEVICES=0 $T=2 $E --backend gloo --cache-dir /tmp/cg --check --out $R/gloo2 > $R/gloo2.txt 2>&1; note "gloo2" $?; grep -E "^\||over all|check" $R/gloo2.txt
rm -rf /tmp/c4; $T=4 $E --backend gloo --cache-dir /tmp/c4 --check --out $R/gloo4 > $R/gloo4.txt 2>&1; note "gloo4" $?; grep -E "^\||over all|check" $R/gloo4.txt
tar -C $OUT -czf $OUT/distributed.tgz r && find $R -type f ! -name '*.tgz' -delete
exit $fail
