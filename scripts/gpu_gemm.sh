#!/usr/bin/env bash
# The GEMM engine on the GPU machine, in one call (expects .gpu/ from scripts/gpu_build.sh):
#   1. every op of specs/gemm.kiln checked against the float64 reference (NaN-poisoned outputs),
#      at its default dims and at shapes that pick each tile configuration of the TMA engine
#      (64x128, 128x128, 128x256) with ragged M, N and K, tf32 through the transposing pre-pass,
#      and rows that are not a multiple of 16 bytes through the padding pre-pass (OperandPrep);
#      the tf32 linear layer of specs/matmul.kiln;
#   2. conv2d on the TMA engine (TmaConv, TmaConvNhwc: OperandPrep copies, TMA im2col) in tf32 and 3xTF32, at
#      shapes that pick each of its tile sizes, with padding, strides, dilation, ragged channels
#      and pixels, small images whose tiles span several output rows and images, and an epilogue;
#   3. sizes: every dtype and layout (bf16 a·b, a·bᵀ, aᵀ·b, f16 aᵀ·bᵀ, tf32 a·b, a·bᵀ, 3xTF32 and
#      ieee f32) at M, N, K drawn from 1, 7, 33, 127, 1000 and 4097, one "size OP MxNxK ok|FAIL"
#      line each (the correctness table of issue 18);
#   every part logs into the one gemm_checks.log (the device tool brings back at most 8 files);
#   4. the GEMM sweep of bench/bench.py (kiln beside cuBLAS, torch.compile and a Triton matmul).
# Usage: bash scripts/gpu_gemm.sh [checks] [conv] [sizes] [sweep] [bench.py options...]   (default: all)
# $OUT (when set) receives gemm_checks.log and the sweep's JSON, markdown and PNG.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/gpu_unpack.sh || exit 1
export KILN_SOURCE_DIR=$PWD
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
out=${OUT:-$(mktemp -d /tmp/kiln-gemm.XXXX)}
parts=""
while [ $# -gt 0 ] && { [ "$1" = checks ] || [ "$1" = conv ] || [ "$1" = sizes ] || [ "$1" = sweep ]; }; do
  parts="$parts $1"; shift
done
[ -z "$parts" ] && parts=" checks conv sizes sweep"
failed=0

check() {   # kiln run ARGS --check, counted
  echo "--- kiln run $*" | tee -a "$out/gemm_checks.log"
  if ! timeout 300 .gpu/bin/kiln run "$@" --check 2>&1 | tee -a "$out/gemm_checks.log"; then
    failed=$((failed + 1))
    echo "FAILED: kiln run $*" | tee -a "$out/gemm_checks.log"
  fi
}

if [[ "$parts" == *checks* ]]; then
  check specs/gemm.kiln
  for op in mm_bf16 mm_bf16_nt mm_bf16_tn mm_f16_tt mm_tf32_nt mm_tf32; do
    check specs/gemm.kiln --op "$op" -D M=4096 -D N=4096 -D K=200     # 128x256 tiles, K not a multiple of 64
    check specs/gemm.kiln --op "$op" -D M=2047 -D N=4096 -D K=136     # 128x128 tiles, ragged M
    check specs/gemm.kiln --op "$op" -D M=1 -D N=8 -D K=8             # one row, one k tile mostly zeros
  done
  # split-K on the engine: (slice, tile) units, the reduce applies the epilogue; K not a multiple
  # of the slices, ragged tiles, batched with the tf32 pre-passes, a fused bias + gelu
  check specs/gemm.kiln --op mm_bf16 -D M=256 -D N=520 -D K=24008
  check specs/gemm.kiln --op mm_f16_tt -D M=136 -D N=64 -D K=20000
  check specs/gemm.kiln --op mm_tf32_nt -D M=256 -D N=264 -D K=9000
  check specs/gemm.kiln --op mm_tf32_tn_batched -D B=2 -D M=100 -D N=264 -D K=8200
  check specs/gemm.kiln --op linear_bf16_gelu -D B=64 -D IN=30000 -D OUT=1000
  check specs/linear_dropout_softmax.kiln --precision tf32 -D B=33 -D IN=5000 -D OUT=1000
  # skinny products (Gemv): vector and element loads, split K, the column sweep, M or N of 1..16
  check specs/gemm.kiln --op gemv_f32 -D M=4096 -D K=65536
  check specs/gemm.kiln --op gemv_f32 -D M=3 -D K=100001
  check specs/gemm.kiln --op linear_bf16_skinny -D B=16 -D IN=4096 -D OUT=5000
  check specs/gemm.kiln --op linear_bf16_skinny -D B=1 -D IN=1001 -D OUT=7
  check specs/gemm.kiln --op mm_skinny_tn_batched -D B=3 -D M=4096 -D N=16 -D K=2000
  # 3xTF32 on the engine (fp32 accuracy): the splitting pre-passes, every layout, batched, padded K
  check specs/matmul.kiln --op matmul_square --precision fp32 -D M=2047 -D N=1100 -D K=1000
  check specs/matmul.kiln --op matmul_square --precision fp32 -D M=1100 -D N=2047 -D K=999
  check specs/matmul.kiln --op matmul_transposed --precision fp32 -D M=1500 -D N=1500 -D K=700
  check specs/matmul.kiln --op matmul_batched --precision fp32 -D B=2 -D M=1024 -D N=1100 -D K=700
  check specs/matmul.kiln --op linear_bias --precision fp32 -D B=1100 -D IN=900 -D OUT=2000
  check specs/gemm.kiln --op mm_f16_batched -D B=3 -D M=1000 -D N=264 -D K=520
  check specs/gemm.kiln --op mm_tf32_tn_batched -D B=2 -D M=2048 -D N=4096 -D K=200
  check specs/gemm.kiln --op linear_bf16_gelu -D B=4096 -D IN=136 -D OUT=4096
  check specs/matmul.kiln --op gemm_bias_relu -D B=1000 -D IN=1000 -D OUT=1000
  # rows that are not a multiple of 16 bytes: OperandPrep copies (k contiguous) or transposes the
  # operand into a k-major workspace with rows padded to 16 bytes, and the engine maps that
  check specs/gemm.kiln --op mm_bf16 -D M=1001 -D N=1003 -D K=1999            # both padded, then split-K
  check specs/gemm.kiln --op mm_f16_tt -D M=1003 -D N=2000 -D K=777            # A transposed, B copied
  check specs/gemm.kiln --op mm_bf16_tn -D M=1001 -D N=1024 -D K=1000          # A transposed, B in place
  check specs/gemm.kiln --op mm_tf32 -D M=1000 -D N=1001 -D K=999              # tf32 k-strided B, K % 4 != 0
  check specs/gemm.kiln --op mm_tf32_nt -D M=1000 -D N=1000 -D K=999           # both copied
  check specs/gemm.kiln --op mm_tf32_tn_batched -D B=3 -D M=1000 -D N=520 -D K=999   # batched transposes
  check specs/gemm.kiln --op mm_f16_batched -D B=3 -D M=1000 -D N=264 -D K=1001      # batched copy, B broadcast
  check specs/gemm.kiln --op mm_bf16 -D M=300 -D N=520 -D K=20001              # padded A, split-K
  check specs/gemm.kiln --op linear_bf16_gelu -D B=1000 -D IN=1001 -D OUT=1000 # padded, bias + gelu epilogue
  # tf32 with an m-major operand through registers: a·b as Cᵀ = Bᵀ·Aᵀ (16-byte rows) with ragged
  # tiles, one row, a bias + relu over a batch, split-K; aᵀ·bᵀ and batched aᵀ·b with A as stored
  check specs/gemm.kiln --op mm_tf32 -D M=4096 -D N=4096 -D K=200
  check specs/gemm.kiln --op mm_tf32 -D M=2047 -D N=4096 -D K=136
  check specs/gemm.kiln --op mm_tf32 -D M=1 -D N=8 -D K=8
  check specs/gemm.kiln --op mm_tf32_bias_batched
  check specs/gemm.kiln --op mm_tf32_bias_batched -D B=3 -D M=1001 -D N=1004 -D K=1000
  check specs/gemm.kiln --op mm_tf32_bias_batched -D B=1 -D M=256 -D N=264 -D K=9000
  check specs/gemm.kiln --op mm_tf32_tt
  check specs/gemm.kiln --op mm_tf32_tt -D M=4096 -D N=4096 -D K=200
  check specs/gemm.kiln --op mm_tf32_tn_batched -D B=2 -D M=1000 -D N=520 -D K=999
  echo "gemm checks: $failed failed" | tee -a "$out/gemm_checks.log"
fi

if [[ "$parts" == *conv* ]]; then
  # Each shape is planned on the TMA engine (over 2^30 flops) and small enough for the float64
  # reference (under 4e9 multiply-adds).
  for precision in tf32 fp32; do
    check specs/conv2d_3x3.kiln --precision $precision -D N=1 -D H=130 -D W=250                  # 128x256 (tf32) tiles
    check specs/conv.kiln --op conv2d_asym_bias_relu --precision $precision                      # every parameter asymmetric
    check specs/conv.kiln --op conv2d_stride2_pad1 --precision $precision -D N=4                 # stride 2, padding 1
    check specs/conv2d_3x3.kiln --precision $precision -D N=16 -D C=512 -D H=10 -D W=10 -D K=256 # 8x8 images: 64-pixel tiles
    check specs/conv2d_3x3.kiln --precision $precision -D N=2 -D C=30 -D H=100 -D W=201 -D K=200 # C, K, Ho*Wo ragged
    # NHWC (rows = output pixels across images, columns = out channels; tf32 reads x in place
    # where its channel rows are 16-byte multiples): the spec's shape, a tiny ragged one, K > 128
    check specs/conv.kiln --op conv2d_nhwc_bias_relu --precision $precision
    check specs/conv.kiln --op conv2d_nhwc_bias_relu --precision $precision -D N=1 -D H=5 -D W=7 -D C=3 -D K=5
    check specs/conv.kiln --op conv2d_nhwc_bias_relu --precision $precision -D N=2 -D H=30 -D W=31 -D C=40 -D K=200
  done
  echo "conv checks: $failed failed (with the checks before them)" | tee -a "$out/gemm_checks.log"
fi

if [[ "$parts" == *sizes* ]]; then
  shapes="1x4097x127 7x1000x4097 33x127x1000 127x33x4097 1000x7x33 4097x1x1000 4097x4097x7 1000x1000x1 127x4097x33 33x33x33"
  ops="gemm.kiln:mm_bf16 gemm.kiln:mm_bf16_nt gemm.kiln:mm_bf16_tn gemm.kiln:mm_f16_tt gemm.kiln:mm_tf32 gemm.kiln:mm_tf32_nt
       matmul.kiln:matmul_square:fp32 matmul.kiln:matmul_square:ieee"
  for entry in $ops; do
    IFS=: read -r file op precision <<<"$entry"
    for shape in $shapes; do
      IFS=x read -r m n k <<<"$shape"
      args=(specs/$file --op "$op" -D M="$m" -D N="$n" -D K="$k")
      [ -n "$precision" ] && args+=(--precision "$precision")
      if timeout 120 .gpu/bin/kiln run "${args[@]}" --check >>"$out/gemm_checks.log" 2>&1; then r=ok; else r=FAIL; failed=$((failed + 1)); fi
      echo "size $op${precision:+ ($precision)} ${m}x${n}x${k} $r" | tee -a "$out/gemm_checks.log"
    done
  done
  # tf32 operands read in place through registers need 16-byte rows: sizes with N and K (and M
  # for the m-major A of aᵀ·bᵀ) multiples of 4 beside ragged ones
  for op in mm_tf32 mm_tf32_tt; do
    for shape in 4x4x4 1x1000x1000 7x4096x1000 33x1000x4096 127x4x1000 1000x1000x1000 4097x1000x4 1000x4096x128; do
      IFS=x read -r m n k <<<"$shape"
      if timeout 120 .gpu/bin/kiln run specs/gemm.kiln --op "$op" -D M="$m" -D N="$n" -D K="$k" --check >>"$out/gemm_checks.log" 2>&1; then r=ok; else r=FAIL; failed=$((failed + 1)); fi
      echo "size $op ${m}x${n}x${k} $r" | tee -a "$out/gemm_checks.log"
    done
  done
  echo "size checks: $failed failed (with the checks before them)" | tee -a "$out/gemm_checks.log"
fi

if [[ "$parts" == *sweep* ]]; then
  timeout 420 python3 bench/bench.py --only gemm --out "$out" "$@" 2>&1 |
    tee "$out/gemm_sweep.log" | tail -60
fi
[ "$failed" -eq 0 ]
