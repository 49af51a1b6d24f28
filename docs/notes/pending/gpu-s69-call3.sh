#!/usr/bin/env bash
# Session 69, call 3: the tree with conv1d-direct.patch and realign-mn.patch (.gpu.tar.xz built from
# it by scripts/gpu_build.sh; carry .gpu/bin/kiln_head too: HEAD's kiln, 368994c). (1) the spec checks of conv_nd, conv and gemm against float64 and the
# wgmma-path cases; (2) compute-sanitizer memcheck on a direct conv1d and a realigned GEMM; (3) the
# benchmark's 1-d conv rows and irregular GEMM rows beside PyTorch (and Triton), with the realigned
# B shape from irr-shapes.kiln timed by kiln run.
cd "$(dirname "$0")/../../.."
source docs/notes/pending/s65-env.sh
LIMIT=${LIMIT:-560}
room() { [ $((LIMIT - SECONDS)) -gt "$1" ]; }
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=conv_nd,conv,gemm timeout 200 .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec*" --duration=true > $logs/specs.txt 2>&1
echo "[$SECONDS s] spec checks rc=$? ok=$(grep -cE '^gpu-check .* ok ' $logs/specs.txt) failed=$(grep -cE '^gpu-check .* FAIL' $logs/specs.txt)"
grep -E 'FAIL|ERROR|test cases|assertions|^[0-9.]+ s:' $logs/specs.txt | head -10
for round in 1 2; do for K in kiln_head kiln; do
  for op in mm_6007x3336x4800 mm_6007x3392x4800; do
    room 15 && echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K timeout 30 .gpu/bin/$K run docs/notes/pending/irr-shapes.kiln --op $op --iters 50 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
  done
  for op in conv1d_k3 conv_transpose1d_k3; do
    room 25 && echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K timeout 40 .gpu/bin/$K run specs/conv_nd.kiln --op $op --precision tf32 --iters 20 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
  done
done; done
for op in conv1d_padded_dilated_bias; do
  room 60 && { KILN_CACHE_DIR=$(mktemp -d) timeout 50 compute-sanitizer --error-exitcode 86 .gpu/bin/kiln run specs/conv_nd.kiln --op $op --precision tf32 -D N=2 --iters 1 > $logs/san_$op.txt 2>&1
  echo "[$SECONDS s] sanitizer $op rc=$? $(grep -E 'ERROR SUMMARY' $logs/san_$op.txt)"; }
done
room 60 && { KILN_CACHE_DIR=$(mktemp -d) timeout 50 compute-sanitizer --error-exitcode 86 .gpu/bin/kiln run docs/notes/pending/irr-shapes.kiln --op mm_6007x3336x4800 -D M=2100 -D K=512 --iters 1 > $logs/san_realign.txt 2>&1
  echo "[$SECONDS s] sanitizer realigned mm rc=$? $(grep -E 'ERROR SUMMARY' $logs/san_realign.txt)"; }
m=gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum,smsp__inst_executed_op_global_st.sum,dram__bytes_write.sum
for op in mmt_6007x3331x4800 mmt_6007x3336x4800; do   # C's rows 2-byte aligned (scalar stores) against 16
  room 150 || break
  KILN_CACHE_DIR=/tmp/c-kiln timeout 45 ncu --metrics $m --csv -k regex:gemm_tma --launch-count 1 \
    .gpu/bin/kiln run docs/notes/pending/irr-shapes.kiln --op $op --iters 1 > $logs/ncu_$op.csv 2>&1
  echo "[$SECONDS s] ncu $op rc=$?"; grep -E '"(gpu__|lts__|dram__|smsp__)' $logs/ncu_$op.csv | awk -F'","' '{print $(NF-2), $(NF-1), $NF}'
done
left=$((LIMIT - SECONDS - 20))
[ $left -gt 120 ] && KILN_SUITE_PARTS=bench BENCH_TIMEOUT=$left timeout $((left + 15)) bash scripts/gpu_suite.sh \
  --only "KernelBench 67,KernelBench 64,KernelBench 79,6007,1000x1000x1000" 2>&1 | tail -30
