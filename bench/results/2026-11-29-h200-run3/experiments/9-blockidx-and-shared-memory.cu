// Experiment only: look-back variants with blockIdx tile ids; register tiles vs cp.async smem tiles.
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include "kiln/scan.cuh"
struct Pass { __device__ float operator()(float x, int) const { return x; } };
using namespace kiln; using namespace kiln::detail;
using Op = SumOp<float>;
// (A) registers, id = blockIdx
template <int kThreads, int K, int kMin>
__global__ void __launch_bounds__(kThreads, kMin) regs(const float* in, float* out, void* ws, int len) {
  constexpr int V = 4, kTile = kThreads * K * V;
  const TileStatus<float> status = TileStatus<float>::at(ws, 0);
  __shared__ float totals[kThreads / 32]; __shared__ float tile_prefix;
  const long long id = blockIdx.x; const long long tpr = len / kTile;
  const long long row = id / tpr, t = id - row * tpr; const int flat_row = int(row * len), tile0 = int(t * kTile);
  float raw[K][V];
  scan_load_tile<kThreads, K, V, false>(raw, in + flat_row, len, tile0);
  float c[K][V], prefix[K], total;
  scan_convert_tile<Op, kThreads, K, V, false>(c, raw, len, tile0, flat_row, Pass{});
  scan_tile_prefixes<Op, kThreads, K, V>(c, prefix, total, totals);
  if (threadIdx.x < 32) {
    float ex = 0;
    if (t == 0) { if (threadIdx.x == 0) status.publish(id, kTilePrefix, total); }
    else { if (threadIdx.x == 0) status.publish(id, kTileAggregate, total); ex = lookback<Op, float>(status, id, t);
           if (threadIdx.x == 0) status.publish(id, kTilePrefix, ex + total); }
    if (threadIdx.x == 0) tile_prefix = ex;
  }
  __syncthreads();
  scan_store_tile<Op, kThreads, K, V, false, false>(out + flat_row, c, prefix, tile_prefix, len, tile0, flat_row, Pass{});
}
__device__ __forceinline__ unsigned sa(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
// (B) cp.async into shared memory, slice by slice in registers
template <int kThreads, int K, int kMin>
__global__ void __launch_bounds__(kThreads, kMin) staged(const float* in, float* out, void* ws, int len) {
  constexpr int V = 4, kTile = kThreads * K * V, kWarps = kThreads / 32;
  const TileStatus<float> status = TileStatus<float>::at(ws, 0);
  __shared__ alignas(16) float tile[kTile];
  __shared__ float totals[kWarps]; __shared__ float tile_prefix;
  const long long id = blockIdx.x; const long long tpr = len / kTile;
  const long long row = id / tpr, t = id - row * tpr; const float* src = in + row * len + t * kTile; float* dst = out + row * len + t * kTile;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int q0 = warp * (32 * K * V) + k * (32 * V) + lane * V;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa(tile + q0)), "l"(src + q0));
  }
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_group 0;\n" ::);
  float prefix[K]; float warp_run = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int q0 = warp * (32 * K * V) + k * (32 * V) + lane * V;
    const float4 v = *reinterpret_cast<const float4*>(tile + q0);
    float s = v.x + v.y + v.z + v.w;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) { const float o = __shfl_up_sync(~0u, s, d); if (lane >= d) s += o; }
    float ex = __shfl_up_sync(~0u, s, 1); if (lane == 0) ex = 0;
    prefix[k] = warp_run + ex; warp_run += __shfl_sync(~0u, s, 31);
  }
  if (lane == 0) totals[warp] = warp_run;
  __syncthreads();
  float w = lane < kWarps ? totals[lane] : 0.f;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) { const float o = __shfl_up_sync(~0u, w, d); if (lane >= d) w += o; }
  float wex = __shfl_up_sync(~0u, w, 1); if (lane == 0) wex = 0;
  const float warp_prefix = __shfl_sync(~0u, wex, warp); const float total = __shfl_sync(~0u, w, kWarps - 1);
  if (threadIdx.x < 32) {
    float ex = 0;
    if (t == 0) { if (threadIdx.x == 0) status.publish(id, kTilePrefix, total); }
    else { if (threadIdx.x == 0) status.publish(id, kTileAggregate, total); ex = lookback<Op, float>(status, id, t);
           if (threadIdx.x == 0) status.publish(id, kTilePrefix, ex + total); }
    if (threadIdx.x == 0) tile_prefix = ex;
  }
  __syncthreads();
  const float base = tile_prefix + warp_prefix;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int q0 = warp * (32 * K * V) + k * (32 * V) + lane * V;
    float4 v = *reinterpret_cast<const float4*>(tile + q0);
    float run = base + prefix[k];
    run += v.x; v.x = run; run += v.y; v.y = run; run += v.z; v.z = run; run += v.w; v.w = run;
    __stcs(reinterpret_cast<float4*>(dst + q0), v);
  }
}
float med(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
template <class F> float timeit(F f) { cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b); std::vector<float> ts;
  for (int i = 0; i < 25; ++i) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (i >= 5) ts.push_back(ms); }
  return med(ts); }
int main() {
  const int rows = 4, len = 1 << 26; const size_t n = size_t(rows) * len;
  std::vector<float> h(n); for (size_t i = 0; i < n; ++i) h[i] = float((i * 2654435761u >> 8) & 1023) / 1024.f;
  float *in, *out, *cp; void* ws;
  cudaMalloc(&in, n * 4); cudaMalloc(&out, n * 4); cudaMalloc(&cp, n * 4); cudaMalloc(&ws, 64 << 20);
  cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice);
  const float copy = timeit([&] { cudaMemcpyAsync(cp, in, n * 4, cudaMemcpyDeviceToDevice); });
  std::vector<float> y(n);
  auto check = [&](const char* name, float ms) {
    cudaMemcpy(y.data(), out, n * 4, cudaMemcpyDeviceToHost); long long bad = 0;
    for (int r = 0; r < rows; ++r) { double run = 0; for (int i = 0; i < len; ++i) { size_t k = size_t(r) * len + i; run += h[k]; if (std::fabs(y[k] - run) > 1e-4 * (1 + run)) bad++; } }
    printf("%-28s %8.4f ms  %5.1f%% of copy  %s (%lld bad)\n", name, ms, 100 * copy / ms, cudaGetErrorString(cudaGetLastError()), bad);
  };
#define RUN(NAME, KERNEL, T, K) { const unsigned tiles = unsigned(n / (T * K * 4)); const size_t wsb = size_t(tiles) * 8; \
    auto f = [&] { cudaMemsetAsync(ws, 0, wsb); KERNEL<<<tiles, T>>>(in, out, ws, len); }; cudaMemset(out, 0xff, n * 4); f(); cudaDeviceSynchronize(); \
    float ms = timeit(f); check(NAME, ms); }
  printf("copy %.4f ms\n", copy);
  RUN("regs 256x8 min3", (regs<256, 8, 3>), 256, 8);
  RUN("regs 256x8 min1", (regs<256, 8, 1>), 256, 8);
  RUN("regs 256x4 min5", (regs<256, 4, 5>), 256, 4);
  RUN("staged 256x8 min6", (staged<256, 8, 6>), 256, 8);
  RUN("staged 256x8 min4", (staged<256, 8, 4>), 256, 8);
  RUN("staged 256x4 min8", (staged<256, 4, 8>), 256, 4);
  RUN("staged 128x8 min12", (staged<128, 8, 12>), 128, 8);
  RUN("staged 512x4 min3", (staged<512, 4, 3>), 512, 4);
  return 0;
}
