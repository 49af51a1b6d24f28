// Instrumented copy of scan_tile_lookback (experiment only): per-tile globaltimer stamps.
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include "kiln/scan.cuh"
struct Pass { __device__ float operator()(float x, int) const { return x; } };
__device__ __forceinline__ unsigned long long now() { unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }
template <int kThreads, int K, int kMin>
__global__ void __launch_bounds__(kThreads, kMin) instr(const float* in, float* out, void* ws, int rows, int len, unsigned long long* stamps) {
  using namespace kiln; using namespace kiln::detail;
  using Op = SumOp<float>; using C = float; constexpr int V = 4;
  constexpr int kTile = kThreads * K * V;
  const long long tpr = (len + kTile - 1) / kTile; const long long tiles = (long long)rows * tpr;
  const TileStatus<C> status = TileStatus<C>::at(ws, tiles);
  unsigned* counter = (unsigned*)ws;
  __shared__ C totals[kThreads / 32]; __shared__ C tile_prefix; __shared__ unsigned tile_id;
  unsigned long long t0 = now();
  long long guess = blockIdx.x;
  float raw[K][V];
  { long long row = guess / tpr; scan_load_tile<kThreads, K, V, false>(raw, in + row * len, len, int(guess - row * tpr) * kTile); }
  if (threadIdx.x == 0) tile_id = atomicAdd(counter, 1u);
  __syncthreads();
  unsigned long long ta = now();
  long long id = tile_id;
  if (id != guess) { long long row = id / tpr; scan_load_tile<kThreads, K, V, false>(raw, in + row * len, len, int(id - row * tpr) * kTile); }
  long long row = id / tpr, t = id - row * tpr; int flat_row = int(row * len), tile0 = int(t * kTile);
  C c[K][V], prefix[K], total;
  scan_convert_tile<Op, kThreads, K, V, false>(c, raw, len, tile0, flat_row, Pass{});
  scan_tile_prefixes<Op, kThreads, K, V>(c, prefix, total, totals);
  unsigned long long t1 = now(), t2 = 0;
  if (threadIdx.x < 32) {
    C exclusive = 0;
    if (t == 0) { if (threadIdx.x == 0) status.publish(id, kTilePrefix, total); }
    else {
      if (threadIdx.x == 0) status.publish(id, kTileAggregate, total);
      exclusive = lookback<Op, C>(status, id, t);
      if (threadIdx.x == 0) status.publish(id, kTilePrefix, exclusive + total);
    }
    t2 = now();
    if (threadIdx.x == 0) tile_prefix = exclusive;
  }
  __syncthreads();
  scan_store_tile<Op, kThreads, K, V, false, false>(out + flat_row, c, prefix, tile_prefix, len, tile0, flat_row, Pass{});
  if (threadIdx.x == 0) { unsigned long long t3 = now(); unsigned long long* s = stamps + 6 * id; s[0] = t0; s[1] = ta; s[2] = t1; s[3] = t2; s[4] = t3; s[5] = guess; }
}
int main() {
  const int rows = 4, len = 1 << 26; const size_t n = size_t(rows) * len;
  float *in, *out; void* ws; unsigned long long* st;
  cudaMalloc(&in, n * 4); cudaMalloc(&out, n * 4); cudaMemset(in, 0, n * 4);
  constexpr int T = 256, K = 8; constexpr int kTile = T * K * 4; const long long tiles = n / kTile;
  const size_t wsb = kiln::launch::scan_lookback_workspace_bytes(rows, len, kTile, 4);
  cudaMalloc(&ws, wsb); cudaMalloc(&st, tiles * 6 * 8);
  for (int it = 0; it < 5; ++it) { cudaMemset(ws, 0, wsb); instr<T, K, 3><<<tiles, T>>>(in, out, ws, rows, len, st); }
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  cudaMemset(ws, 0, wsb); cudaEventRecord(a); instr<T, K, 3><<<tiles, T>>>(in, out, ws, rows, len, st); cudaEventRecord(b); cudaEventSynchronize(b);
  float ms; cudaEventElapsedTime(&ms, a, b); printf("err %s, %.4f ms\n", cudaGetErrorString(cudaGetLastError()), ms);
  std::vector<unsigned long long> h(tiles * 6); cudaMemcpy(h.data(), st, h.size() * 8, cudaMemcpyDeviceToHost);
  unsigned long long base = ~0ull; for (long long i = 0; i < tiles; ++i) base = std::min(base, h[6 * i]);
  auto pct = [](std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v[size_t(p * (v.size() - 1))]; };
  std::vector<double> atom, load, walk, store, life, mism;
  long long wrong = 0;
  for (long long i = tiles / 10; i < tiles * 9 / 10; ++i) { auto* s = &h[6 * i];
    atom.push_back((s[1] - s[0]) / 1e3); load.push_back((s[2] - s[1]) / 1e3); walk.push_back((s[3] - s[2]) / 1e3); store.push_back((s[4] - s[3]) / 1e3); life.push_back((s[4] - s[0]) / 1e3); wrong += (long long)s[5] != i; }
  printf("us           p10    p50    p90    p99\n");
  auto row = [&](const char* nm, std::vector<double>& v) { printf("%-10s %6.2f %6.2f %6.2f %6.2f\n", nm, pct(v, .1), pct(v, .5), pct(v, .9), pct(v, .99)); };
  row("atomic", atom); row("load+scan", load); row("walk", walk); row("store", store); row("life", life);
  printf("tiles whose id != blockIdx: %lld of %lld\n", wrong, tiles * 8 / 10);
  // Prefix frontier lag: for tile i, how many tiles had published aggregate but not yet prefix... approximate: the gap between walk end order
  return 0;
}
