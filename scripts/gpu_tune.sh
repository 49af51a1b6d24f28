#!/usr/bin/env bash
# Runs on the GPU machine: `kiln tune` on GEMM shapes of the benchmark's sweep (bf16 and tf32), with
# --no-store (measurement only). Each prints every candidate's median beside the heuristic's.
# Then a tuned pick's round trip through a pack: tune and store, `kiln build` a .kilnpack with it,
# and `kiln run --check --pack` with NVRTC unloadable and an empty cache (so the tuned kernel can
# only come from the pack).
# Expects .gpu/ from scripts/gpu_build.sh. Logs to $OUT/tune-*.log when OUT is set.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/gpu_unpack.sh || exit 1
export PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-$(mktemp -d /tmp/kiln-tune.XXXX)}
spec=$(mktemp /tmp/kiln-tune-XXXX.kiln)
cat >"$spec" <<'SPEC'
op mm_bf16 {
  dims M = 4096, N = 4096, K = 4096
  in  a: bf16[M, K]
  in  b: bf16[K, N]
  out c = matmul(a, b)
}
op mm_f32 {
  dims M = 4096, N = 4096, K = 4096
  in  a: f32[M, K]
  in  b: f32[K, N]
  out c = matmul(a, b)
}
op long_k {
  dims M = 256, N = 256, K = 16384
  in  a: f32[M, K]
  in  b: f32[K, N]
  out c = relu(matmul(a, b, precision="tf32"))
}
SPEC
status=0
run() {   # name, op, precision, dims...
  local name=$1 op=$2 precision=$3
  shift 3
  echo "=== $name"
  .gpu/bin/kiln tune "$spec" --op "$op" --precision "$precision" --no-store --iters 30 --budget 90 "$@" \
    >"$out/tune-$name.log" 2>&1 || status=1
  sed -n '/^tune /,$p' "$out/tune-$name.log"
}
run bf16-4096 mm_bf16 fp32
run bf16-1000 mm_bf16 fp32 -D M=1000 -D N=1000 -D K=1000
run bf16-6007x3331x4799 mm_bf16 fp32 -D M=6007 -D N=3331 -D K=4799
run bf16-512x512x262144 mm_bf16 fp32 -D M=512 -D N=512 -D K=262144
run tf32-4096 mm_f32 tf32
echo "=== a tuned pick through a pack"
work=$(mktemp -d /tmp/kiln-tune-pack.XXXX)
KILN_CACHE_DIR=$work/store .gpu/bin/kiln tune "$spec" --op long_k --iters 20 >"$out/tune-pack.log" 2>&1 || status=1
KILN_CACHE_DIR=$work/store .gpu/bin/kiln build "$spec" --op long_k --arch sm_90a -o "$work/p.kilnpack" >>"$out/tune-pack.log" 2>&1 || status=1
KILN_CACHE_DIR=$work/store .gpu/bin/kiln gen "$spec" --op long_k | grep -o 'config: [^;]*' >>"$out/tune-pack.log"
KILN_NVRTC_LIB=/nonexistent KILN_CACHE_DIR=$work/empty .gpu/bin/kiln run "$spec" --op long_k --check --iters 5 \
  --pack "$work/p.kilnpack" >>"$out/tune-pack.log" 2>&1 || status=1
grep -E "^tune long_k|best|kiln build|config: |correct|WRONG|error" "$out/tune-pack.log"
# An op with nothing to tune is the user's input (UnsupportedError): exit 1, and a message.
.gpu/bin/kiln tune specs/elementwise.kiln --op relu_add >"$out/tune-elementwise.log" 2>&1
rc=$?
echo "elementwise op: exit $rc (expected 1): $(tail -1 "$out/tune-elementwise.log")"
[ $rc -eq 1 ] || status=1
exit $status
