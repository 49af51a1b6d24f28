// Probe: where a tile's time goes in the warp-specialized look-back scan (f32 cumsum,
// 256 data threads x 8 vectors, 3 stages, 1 walker, 2 blocks an SM), timed with %globaltimer.
// Per tile: claim -> aggregate published (copy + reduce), aggregate -> walk start (walker busy
// with earlier tiles), walk start -> prefix published (the walk; its rounds and spins), and the
// data warps' wait at the stage's prefix barrier. The same kernel as kiln's template except the
// stamps (written by thread 0 / walker lane 0 to a per-tile record).
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "kiln/config/scan.h"
#include "kiln/scan.cuh"

#define CUDA_OK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); std::exit(2); } } while (0)

struct Rec { unsigned long long claim, agg, walk0, walk1, arrive, pass; unsigned rounds, spins; };

__device__ __forceinline__ unsigned long long now_ns() { unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ void bsync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void barrive(int id, int n) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory"); }
using Op = kiln::SumOp<float>;
using C = float;

// kiln::detail::lookback with counters.
__device__ C lookback_counted(const kiln::detail::TileStatus<C>& status, long long id, long long t, unsigned& rounds, unsigned& spins) {
  constexpr int kDepth = kiln::launch::kScanLookbackDepth;
  const int lane = threadIdx.x & 31;
  const long long first = id - t;
  C exclusive = 0.f;
  rounds = 0; spins = 0;
  for (long long j = id - 1;; j -= 32 * kDepth) {
    ++rounds;
    unsigned flag[kDepth]; C v[kDepth];
#pragma unroll
    for (int i = 0; i < kDepth; ++i) {
      const long long k = j - lane - 32 * i;
      v[i] = 0.f;
      flag[i] = k >= first ? status.read(k, v[i]) : unsigned(kiln::detail::kTilePrefix);
    }
#pragma unroll
    for (int i = 0; i < kDepth; ++i)
      while (flag[i] == kiln::detail::kTileEmpty) { flag[i] = status.read(j - lane - 32 * i, v[i]); ++spins; }
    int stop = 32 * kDepth;
#pragma unroll
    for (int i = kDepth - 1; i >= 0; --i) {
      const unsigned p = __ballot_sync(0xffffffffu, flag[i] == kiln::detail::kTilePrefix);
      if (p) stop = 32 * i + __ffs(p) - 1;
    }
    C mine = 0.f;
#pragma unroll
    for (int i = 0; i < kDepth; ++i) if (32 * i + lane <= stop) mine += v[i];
    exclusive = kiln::warp_reduce<Op>(mine) + exclusive;
    if (stop < 32 * kDepth) {
      unsigned s = spins;
      for (int d = 16; d; d >>= 1) s = max(s, __shfl_xor_sync(0xffffffffu, s, d));
      spins = s;
      return exclusive;
    }
  }
}

constexpr int kThreads = 256, K = 8, V = 4, kStages = 3, kTile = kThreads * K * V;
__global__ void __launch_bounds__(kThreads + 32, 2) probe(const float* __restrict__ in, float* __restrict__ out, void* ws, int rows, int len, Rec* rec) {
  constexpr int kAll = kThreads + 32, kBarData = 1, kBarAgg = 2, kBarPrefix = 2 + kStages;
  C* stages = reinterpret_cast<C*>(kiln::dynamic_smem());
  __shared__ long long tile_id[kStages];
  __shared__ C tile_total[kStages], tile_prefix[kStages], totals[kThreads / 32], warp_prefix[kStages][kThreads / 32];
  __shared__ unsigned claim;
  const long long tiles_per_row = (len + kTile - 1) / kTile, tiles = (long long)rows * tiles_per_row;
  const kiln::detail::TileStatus<C> status = kiln::detail::TileStatus<C>::at(ws, tiles);
  unsigned* counter = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(ws) + kiln::launch::scan_lookback_status_bytes(tiles, 4));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  struct Id { __device__ float operator()(float x, int) const { return x; } };
  if (warp == kThreads / 32) {
    for (long long k = 0;; ++k) {
      const int s = int(k % kStages);
      bsync(kBarAgg + s, kAll);
      const long long id = tile_id[s];
      if (id < 0) return;
      const unsigned long long w0 = now_ns();
      const long long t = id % tiles_per_row;
      C ex = 0.f; unsigned rounds = 0, spins = 0;
      if (t > 0) { ex = lookback_counted(status, id, t, rounds, spins); if (lane == 0) status.publish(id, kiln::detail::kTilePrefix, ex + tile_total[s]); }
      if (lane == 0) { tile_prefix[s] = ex; rec[id].walk0 = w0; rec[id].walk1 = now_ns(); rec[id].rounds = rounds; rec[id].spins = spins; }
      barrive(kBarPrefix + s, kAll);
    }
  }
  bool held[kStages] = {}; bool done = false;
  auto step = [&](auto tag) {
    constexpr int S = decltype(tag)::value;
    C* stage = stages + S * kTile;
    if (held[S]) {
      const unsigned long long a = now_ns();
      bsync(kBarPrefix + S, kAll);
      const long long id = tile_id[S];
      if (threadIdx.x == 0) { rec[id].arrive = a; rec[id].pass = now_ns(); }
      const int row = int(id / tiles_per_row); const int tile0 = int(id - (long long)row * tiles_per_row) * kTile;
      kiln::detail::lookback_store_tile<kThreads, K, V, true, false, false, Op>(out + (long long)row * len, len, row * len, tile0, stage, warp_prefix[S][warp], tile_prefix[S], Id{});
      held[S] = false;
    }
    if (done) return;
    if (threadIdx.x == 0) claim = atomicAdd(counter, 1u);
    bsync(kBarData, kThreads);
    const long long id = claim;
    if (id >= tiles) { done = true; if (threadIdx.x == 0) tile_id[S] = -1; barrive(kBarAgg + S, kAll); return; }
    if (threadIdx.x == 0) rec[id].claim = now_ns();
    const int row = int(id / tiles_per_row); const long long t = id - (long long)row * tiles_per_row; const int tile0 = int(t) * kTile;
    const C total = kiln::detail::lookback_stage_tile<kThreads, K, V, true, false, Op>(in + (long long)row * len, len, row * len, tile0, stage, &warp_prefix[S][warp], totals, Id{}, kiln::detail::DataSync<kThreads>{});
    if (threadIdx.x == 0) {
      status.publish(id, t == 0 ? kiln::detail::kTilePrefix : kiln::detail::kTileAggregate, total);
      rec[id].agg = now_ns(); tile_id[S] = id; tile_total[S] = total;
    }
    barrive(kBarAgg + S, kAll);
    held[S] = true;
  };
  for (;;) {
    kiln::detail::for_each_stage<0, kStages>(step);
    bool any = false;
    for (int s = 0; s < kStages; ++s) any |= held[s];
    if (done && !any) return;
  }
}

static double pct(std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[size_t(p * (v.size() - 1))]; }

int main() {
  int sms; CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  struct Shape { int rows; int len; } shapes[] = {{4, 67108864}, {2, 4194304}};
  for (auto sh : shapes) {
    const size_t n = size_t(sh.rows) * sh.len;
    std::vector<float> x(n); std::mt19937 g(3); std::uniform_real_distribution<float> u(0.f, 1.f); for (auto& v : x) v = u(g);
    float *din, *dout; void* ws; Rec* rec;
    const long long tiles = (long long)sh.rows * ((sh.len + kTile - 1) / kTile);
    const size_t wsb = kiln::launch::scan_lookback_workspace_bytes(sh.rows, sh.len, kTile, 4);
    CUDA_OK(cudaMalloc(&din, n * 4)); CUDA_OK(cudaMalloc(&dout, n * 4)); CUDA_OK(cudaMalloc(&ws, wsb)); CUDA_OK(cudaMalloc(&rec, tiles * sizeof(Rec)));
    CUDA_OK(cudaMemcpy(din, x.data(), n * 4, cudaMemcpyHostToDevice));
    const int smem = kStages * kTile * 4;
    CUDA_OK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const int grid = int(std::min<long long>(tiles, 2LL * sms));
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    float ms = 0;
    for (int it = 0; it < 6; ++it) {   // the last launch's records and time
      CUDA_OK(cudaMemset(ws, 0, wsb)); CUDA_OK(cudaMemset(rec, 0, tiles * sizeof(Rec)));
      cudaEventRecord(a); probe<<<grid, kThreads + 32, smem>>>(din, dout, ws, sh.rows, sh.len, rec); cudaEventRecord(b);
      CUDA_OK(cudaEventSynchronize(b)); CUDA_OK(cudaGetLastError()); cudaEventElapsedTime(&ms, a, b);
    }
    std::vector<Rec> r(tiles); CUDA_OK(cudaMemcpy(r.data(), rec, tiles * sizeof(Rec), cudaMemcpyDeviceToHost));
    std::vector<float> y(n); CUDA_OK(cudaMemcpy(y.data(), dout, n * 4, cudaMemcpyDeviceToHost));
    long long bad = 0; for (int row = 0; row < sh.rows; ++row) { double run = 0; for (int i = 0; i < sh.len; ++i) { const size_t p = size_t(row) * sh.len + i; run += x[p]; if (!(std::abs(y[p] - run) <= 1e-4 * (1 + run))) ++bad; } }
    std::vector<double> load, queue, walk, wait, period, rounds, spins;
    unsigned long long t0 = ~0ull, t1 = 0;
    for (auto& q : r) { t0 = std::min(t0, q.claim); t1 = std::max(t1, q.pass); }
    for (long long i = 0; i < tiles; ++i) {
      const Rec& q = r[i];
      load.push_back((q.agg - q.claim) * 1e-3);
      if (q.walk0) { queue.push_back((double(q.walk0) - double(q.agg)) * 1e-3); walk.push_back((q.walk1 - q.walk0) * 1e-3); rounds.push_back(q.rounds); spins.push_back(q.spins); }
      if (q.pass) wait.push_back((double(q.pass) - double(q.arrive)) * 1e-3);
    }
    std::printf("rows %d x %d: %lld tiles, grid %d, kernel %.4f ms (stamped), %s\n", sh.rows, sh.len, tiles, grid, ms, bad ? "MISMATCH" : "ok");
    auto line = [](const char* what, const std::vector<double>& v, const char* unit) {
      std::printf("  %-44s p10 %8.2f  p50 %8.2f  p90 %8.2f  p99 %8.2f %s\n", what, pct(v, .1), pct(v, .5), pct(v, .9), pct(v, .99), unit); };
    line("claim -> aggregate published (copy, reduce)", load, "us");
    line("aggregate -> walk starts (walker busy)", queue, "us");
    line("walk (start -> prefix published)", walk, "us");
    line("walk rounds (128 statuses a round)", rounds, "");
    line("spins on empty statuses (max over lanes)", spins, "");
    line("data warps wait at the stage's prefix", wait, "us");
    CUDA_OK(cudaFree(din)); CUDA_OK(cudaFree(dout)); CUDA_OK(cudaFree(ws)); CUDA_OK(cudaFree(rec));
    if (bad) return 1;
  }
  return 0;
}
