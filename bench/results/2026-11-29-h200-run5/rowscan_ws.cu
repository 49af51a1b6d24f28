// Prototype: a persistent, warp-specialized decoupled look-back row scan (f32 cumsum).
// Data warps claim tiles in order (a global counter), copy each into one of kStages shared
// stages, reduce it and publish its aggregate, then hand it to a walker warp; the walker walks
// back and publishes the inclusive prefix while the data warps already copy the next tile. A
// tile's aggregate never waits on a walk (a tile is claimed only after its stage is free), so
// walks never chain.
// Compared in the same run with the kiln template (scan_rows_lookback at the planner's tile),
// CUB's DeviceScan::InclusiveSum on one row, and a device copy.
#include <cuda_runtime.h>
#include <cub/cub.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "kiln/config/scan.h"
#include "kiln/scan.cuh"

#define CUDA_OK(call)                                                                          \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

struct Pass {
  template <class I> __device__ float operator()(float x, I) const { return x; }
};
using Sum = kiln::SumOp<float>;

__device__ __forceinline__ void bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void bar_arrive(int id, int n) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory");
}

template <int kData, int kVecs, int kStages, int kWalkers, int kMinBlocks>
__global__ void __launch_bounds__(kData + 32 * kWalkers, kMinBlocks)
    ws_scan(const float* __restrict__ in, float* __restrict__ out, void* ws, int rows, long long len) {
  using C = float;
  constexpr int V = 4, K = kVecs;
  constexpr int kTile = kData * K * V;
  constexpr int kAll = kData + 32;   // one walker warp and the data warps meet at a stage
  static_assert(kStages % kWalkers == 0, "a stage has one walker");
  constexpr int kBarData = 1, kBarAgg = 2, kBarPrefix = 2 + kStages;
  extern __shared__ __align__(16) unsigned char smem[];
  C* stages = reinterpret_cast<C*>(smem);
  __shared__ long long tile_id[kStages];
  __shared__ C tile_total[kStages], tile_prefix[kStages];
  __shared__ C totals[kData / 32];
  __shared__ long long claim;

  const long long tiles_per_row = (len + kTile - 1) / kTile;
  const long long tiles = (long long)rows * tiles_per_row;
  const kiln::detail::TileStatus<C> status = kiln::detail::TileStatus<C>::at(ws, tiles);
  unsigned long long* counter =
      reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(ws) +
                                            kiln::launch::scan_lookback_workspace_bytes(rows, len, kTile, 4));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  if (warp >= kData / 32) {   // the walkers: walker w takes the tiles k = w (mod kWalkers)
    for (long long k = warp - kData / 32;; k += kWalkers) {
      const int s = int(k % kStages);
      bar_sync(kBarAgg + s, kAll);
      const long long id = tile_id[s];
      if (id < 0) return;
      const long long t = id % tiles_per_row;
      C excl = Sum::identity();
      if (t > 0) {
        excl = kiln::detail::lookback<Sum, C>(status, id, t);
        if (lane == 0) status.publish(id, kiln::detail::kTilePrefix, Sum::combine(excl, tile_total[s]));
      }
      if (lane == 0) tile_prefix[s] = excl;
      __syncwarp();
      bar_arrive(kBarPrefix + s, kAll);
    }
  }

  // The data warps.
  bool held[kStages] = {};
  long long held_id[kStages] = {};
  C prefix[kStages][K];
  bool done = false;
  int posted = 0;   // end marks posted (one for each walker)
  auto chunk = [&](int s, int k) { return stages + (long long)s * kTile + ((warp * K + k) * 32 + lane) * V; };
  auto first = [&](long long tile0, int k) { return tile0 + (long long)warp * (32 * K * V) + k * (32 * V) + lane * V; };
  auto step = [&](auto S_) {
    constexpr int S = decltype(S_)::value;
    if (held[S]) {
      bar_sync(kBarPrefix + S, kAll);
      const long long id = held_id[S];
      const long long row = id / tiles_per_row, t = id - row * tiles_per_row;
      const long long tile0 = t * kTile;
      auto slice = [&](int k, C (&x)[V]) {
#pragma unroll
        for (int j = 0; j < V; ++j) x[j] = chunk(S, k)[j];
      };
      kiln::detail::scan_store_slices<Sum, kData, K, V, false, false, true>(out + row * len, slice, prefix[S],
                                                                          tile_prefix[S], len, tile0, row * len,
                                                                          Pass{});
      held[S] = false;
    }
    if (done) {
      if (posted < kWalkers) {
        if (tid == 0) tile_id[S] = -1;
        bar_arrive(kBarAgg + S, kAll);
        ++posted;
      }
      return;
    }
    if (tid == 0) claim = (long long)atomicAdd(counter, 1ull);
    bar_sync(kBarData, kData);
    const long long id = claim;
    if (id >= tiles) {
      done = true;
      if (tid == 0) tile_id[S] = -1;
      bar_arrive(kBarAgg + S, kAll);
      ++posted;
      return;
    }
    const long long row = id / tiles_per_row, t = id - row * tiles_per_row;
    const long long tile0 = t * kTile;
    const float* row_in = in + row * len;
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (first(tile0, k) < len) kiln::cp_async16(chunk(S, k), row_in + first(tile0, k));
    kiln::cp_async_commit();
    kiln::cp_async_wait<0>();
    C st[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      C c[V];
      if (first(tile0, k) < len) {
#pragma unroll
        for (int j = 0; j < V; ++j) c[j] = chunk(S, k)[j];
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) c[j] = 0.f;
      }
      st[k] = kiln::detail::scan_slice_total<Sum, V>(c);
    }
    // The block's slice prefixes (scan_slice_prefixes with the data warps' barrier).
    constexpr int kWarps = kData / 32;
    C warp_run = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      C sv = st[k];
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const C o = __shfl_up_sync(0xffffffffu, sv, d);
        if (lane >= d) sv = o + sv;
      }
      C ex = __shfl_up_sync(0xffffffffu, sv, 1);
      if (lane == 0) ex = 0.f;
      prefix[S][k] = warp_run + ex;
      warp_run = warp_run + __shfl_sync(0xffffffffu, sv, 31);
    }
    if (lane == 0) totals[warp] = warp_run;
    bar_sync(kBarData, kData);
    C w = lane < kWarps ? totals[lane] : 0.f;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const C o = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w = o + w;
    }
    C wex = __shfl_up_sync(0xffffffffu, w, 1);
    if (lane == 0) wex = 0.f;
    const C warp_prefix = __shfl_sync(0xffffffffu, wex, warp);
    const C total = __shfl_sync(0xffffffffu, w, kWarps - 1);
#pragma unroll
    for (int k = 0; k < K; ++k) prefix[S][k] = warp_prefix + prefix[S][k];
    if (tid == 0) {
      status.publish(id, t == 0 ? kiln::detail::kTilePrefix : kiln::detail::kTileAggregate, total);
      tile_id[S] = id;
      tile_total[S] = total;
    }
    bar_arrive(kBarAgg + S, kAll);
    held[S] = true;
    held_id[S] = id;
  };
  for (;;) {
    [&]<int... S>(std::integer_sequence<int, S...>) {
      (step(std::integral_constant<int, S>{}), ...);
    }(std::make_integer_sequence<int, kStages>{});
    bool any = false;
#pragma unroll
    for (int s = 0; s < kStages; ++s) any |= held[s];
    if (done && !any && posted == kWalkers) break;
  }
}

template <int kData, int kVecs, int kStages, int kWalkers, int kMinBlocks>
__global__ void __launch_bounds__(kData + 32 * kWalkers, kMinBlocks)
    ws4_scan(const float* __restrict__ in, float* __restrict__ out, void* ws, int rows, long long len) {
  using C = float;
  constexpr int V = 4, K = kVecs;
  constexpr int kTile = kData * K * V;
  constexpr int kAll = kData + 32;   // one walker warp and the data warps meet at a stage
  static_assert(kStages % kWalkers == 0, "a stage has one walker");
  constexpr int kBarData = 1, kBarAgg = 2, kBarPrefix = 2 + kStages;
  extern __shared__ __align__(16) unsigned char smem[];
  C* stages = reinterpret_cast<C*>(smem);
  __shared__ long long tile_id[kStages];
  __shared__ C tile_total[kStages], tile_prefix[kStages];
  __shared__ C totals[kData / 32];
  __shared__ long long claim;

  const long long tiles_per_row = (len + kTile - 1) / kTile;
  const long long tiles = (long long)rows * tiles_per_row;
  const kiln::detail::TileStatus<C> status = kiln::detail::TileStatus<C>::at(ws, tiles);
  unsigned long long* counter =
      reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(ws) +
                                            kiln::launch::scan_lookback_workspace_bytes(rows, len, kTile, 4));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  if (warp >= kData / 32) {   // the walkers: walker w takes the tiles k = w (mod kWalkers)
    for (long long k = warp - kData / 32;; k += kWalkers) {
      const int s = int(k % kStages);
      bar_sync(kBarAgg + s, kAll);
      const long long id = tile_id[s];
      if (id < 0) return;
      const long long t = id % tiles_per_row;
      C excl = Sum::identity();
      if (t > 0) {
        excl = kiln::detail::lookback<Sum, C>(status, id, t);
        if (lane == 0) status.publish(id, kiln::detail::kTilePrefix, Sum::combine(excl, tile_total[s]));
      }
      if (lane == 0) tile_prefix[s] = excl;
      __syncwarp();
      bar_arrive(kBarPrefix + s, kAll);
    }
  }

  // The data warps.
  bool held[kStages] = {};
  long long held_id[kStages] = {};
  C prefix[kStages][K];
  bool done = false;
  int posted = 0;   // end marks posted (one for each walker)
  auto chunk = [&](int s, int k) { return stages + (long long)s * kTile + ((warp * K + k) * 32 + lane) * V; };
  auto first = [&](long long tile0, int k) { return tile0 + (long long)warp * (32 * K * V) + k * (32 * V) + lane * V; };
  auto step = [&](auto S_) {
    constexpr int S = decltype(S_)::value;
    unsigned long long claimed = 0;
    if (held[S]) {
      bar_sync(kBarPrefix + S, kAll);
      if (tid == 0 && !done) claimed = atomicAdd(counter, 1ull);   // in flight during the stores
      const long long id = held_id[S];
      const long long row = id / tiles_per_row, t = id - row * tiles_per_row;
      const long long tile0 = t * kTile;
      auto slice = [&](int k, C (&x)[V]) {
#pragma unroll
        for (int j = 0; j < V; ++j) x[j] = chunk(S, k)[j];
      };
      kiln::detail::scan_store_slices<Sum, kData, K, V, false, false, true>(out + row * len, slice, prefix[S],
                                                                          tile_prefix[S], len, tile0, row * len,
                                                                          Pass{});
      held[S] = false;
    } else if (tid == 0 && !done) {
      claimed = atomicAdd(counter, 1ull);
    }
    if (done) {
      if (posted < kWalkers) {
        if (tid == 0) tile_id[S] = -1;
        bar_arrive(kBarAgg + S, kAll);
        ++posted;
      }
      return;
    }
    if (tid == 0) claim = (long long)claimed;
    bar_sync(kBarData, kData);
    const long long id = claim;
    if (id >= tiles) {
      done = true;
      if (tid == 0) tile_id[S] = -1;
      bar_arrive(kBarAgg + S, kAll);
      ++posted;
      return;
    }
    const long long row = id / tiles_per_row, t = id - row * tiles_per_row;
    const long long tile0 = t * kTile;
    const float* row_in = in + row * len;
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (first(tile0, k) < len) kiln::cp_async16(chunk(S, k), row_in + first(tile0, k));
    kiln::cp_async_commit();
    kiln::cp_async_wait<0>();
    C st[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      C c[V];
      if (first(tile0, k) < len) {
#pragma unroll
        for (int j = 0; j < V; ++j) c[j] = chunk(S, k)[j];
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) c[j] = 0.f;
      }
      st[k] = kiln::detail::scan_slice_total<Sum, V>(c);
    }
    // The block's slice prefixes (scan_slice_prefixes with the data warps' barrier).
    constexpr int kWarps = kData / 32;
    C warp_run = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      C sv = st[k];
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const C o = __shfl_up_sync(0xffffffffu, sv, d);
        if (lane >= d) sv = o + sv;
      }
      C ex = __shfl_up_sync(0xffffffffu, sv, 1);
      if (lane == 0) ex = 0.f;
      prefix[S][k] = warp_run + ex;
      warp_run = warp_run + __shfl_sync(0xffffffffu, sv, 31);
    }
    if (lane == 0) totals[warp] = warp_run;
    bar_sync(kBarData, kData);
    C w = lane < kWarps ? totals[lane] : 0.f;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const C o = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w = o + w;
    }
    C wex = __shfl_up_sync(0xffffffffu, w, 1);
    if (lane == 0) wex = 0.f;
    const C warp_prefix = __shfl_sync(0xffffffffu, wex, warp);
    const C total = __shfl_sync(0xffffffffu, w, kWarps - 1);
#pragma unroll
    for (int k = 0; k < K; ++k) prefix[S][k] = warp_prefix + prefix[S][k];
    if (tid == 0) {
      status.publish(id, t == 0 ? kiln::detail::kTilePrefix : kiln::detail::kTileAggregate, total);
      tile_id[S] = id;
      tile_total[S] = total;
    }
    bar_arrive(kBarAgg + S, kAll);
    held[S] = true;
    held_id[S] = id;
  };
  for (;;) {
    [&]<int... S>(std::integer_sequence<int, S...>) {
      (step(std::integral_constant<int, S>{}), ...);
    }(std::make_integer_sequence<int, kStages>{});
    bool any = false;
#pragma unroll
    for (int s = 0; s < kStages; ++s) any |= held[s];
    if (done && !any && posted == kWalkers) break;
  }
}

template <int kData, int kVecs, int kStages, int kWalkers, int kMinBlocks>
__global__ void __launch_bounds__(kData + 32 * kWalkers, kMinBlocks)
    ws3_scan(const float* __restrict__ in, float* __restrict__ out, void* ws, int rows, long long len) {
  using C = float;
  constexpr int V = 4, K = kVecs;
  constexpr int kTile = kData * K * V;
  constexpr int kAll = kData + 32;   // one walker warp and the data warps meet at a stage
  static_assert(kStages % kWalkers == 0, "a stage has one walker");
  constexpr int kBarData = 1, kBarAgg = 2, kBarPrefix = 2 + kStages;
  extern __shared__ __align__(16) unsigned char smem[];
  C* stages = reinterpret_cast<C*>(smem);
  __shared__ long long tile_id[kStages];
  __shared__ C tile_total[kStages], tile_prefix[kStages];
  __shared__ C totals[kData / 32];
  __shared__ long long claim;

  const long long tiles_per_row = (len + kTile - 1) / kTile;
  const long long tiles = (long long)rows * tiles_per_row;
  const kiln::detail::TileStatus<C> status = kiln::detail::TileStatus<C>::at(ws, tiles);
  unsigned long long* counter =
      reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(ws) +
                                            kiln::launch::scan_lookback_workspace_bytes(rows, len, kTile, 4));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  if (warp >= kData / 32) {   // the walkers: walker w takes the tiles k = w (mod kWalkers)
    for (long long k = warp - kData / 32;; k += kWalkers) {
      const int s = int(k % kStages);
      bar_sync(kBarAgg + s, kAll);
      const long long id = tile_id[s];
      if (id < 0) return;
      const long long t = id % tiles_per_row;
      C excl = Sum::identity();
      if (t > 0) {
        excl = kiln::detail::lookback<Sum, C>(status, id, t);
        if (lane == 0) status.publish(id, kiln::detail::kTilePrefix, Sum::combine(excl, tile_total[s]));
      }
      if (lane == 0) tile_prefix[s] = excl;
      __syncwarp();
      bar_arrive(kBarPrefix + s, kAll);
    }
  }

  // The data warps.
  bool held[kStages] = {};
  long long held_id[kStages] = {};
  C prefix[kStages][K];
  bool done = false;
  unsigned long long next_claim = tid == 0 ? atomicAdd(counter, 1ull) : 0;
  int posted = 0;   // end marks posted (one for each walker)
  auto chunk = [&](int s, int k) { return stages + (long long)s * kTile + ((warp * K + k) * 32 + lane) * V; };
  auto first = [&](long long tile0, int k) { return tile0 + (long long)warp * (32 * K * V) + k * (32 * V) + lane * V; };
  auto step = [&](auto S_) {
    constexpr int S = decltype(S_)::value;
    if (held[S]) {
      bar_sync(kBarPrefix + S, kAll);
      const long long id = held_id[S];
      const long long row = id / tiles_per_row, t = id - row * tiles_per_row;
      const long long tile0 = t * kTile;
      auto slice = [&](int k, C (&x)[V]) {
#pragma unroll
        for (int j = 0; j < V; ++j) x[j] = chunk(S, k)[j];
      };
      kiln::detail::scan_store_slices<Sum, kData, K, V, false, false, true>(out + row * len, slice, prefix[S],
                                                                          tile_prefix[S], len, tile0, row * len,
                                                                          Pass{});
      held[S] = false;
    }
    if (done) {
      if (posted < kWalkers) {
        if (tid == 0) tile_id[S] = -1;
        bar_arrive(kBarAgg + S, kAll);
        ++posted;
      }
      return;
    }
    // The claim for this tile was issued a step before (its round trip overlaps that step's copies).
    if (tid == 0) {
      claim = (long long)next_claim;
      next_claim = atomicAdd(counter, 1ull);
    }
    bar_sync(kBarData, kData);
    const long long id = claim;
    if (id >= tiles) {
      done = true;
      if (tid == 0) tile_id[S] = -1;
      bar_arrive(kBarAgg + S, kAll);
      ++posted;
      return;
    }
    const long long row = id / tiles_per_row, t = id - row * tiles_per_row;
    const long long tile0 = t * kTile;
    const float* row_in = in + row * len;
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (first(tile0, k) < len) kiln::cp_async16(chunk(S, k), row_in + first(tile0, k));
    kiln::cp_async_commit();
    kiln::cp_async_wait<0>();
    C st[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      C c[V];
      if (first(tile0, k) < len) {
#pragma unroll
        for (int j = 0; j < V; ++j) c[j] = chunk(S, k)[j];
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) c[j] = 0.f;
      }
      st[k] = kiln::detail::scan_slice_total<Sum, V>(c);
    }
    // The block's slice prefixes (scan_slice_prefixes with the data warps' barrier).
    constexpr int kWarps = kData / 32;
    C warp_run = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      C sv = st[k];
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const C o = __shfl_up_sync(0xffffffffu, sv, d);
        if (lane >= d) sv = o + sv;
      }
      C ex = __shfl_up_sync(0xffffffffu, sv, 1);
      if (lane == 0) ex = 0.f;
      prefix[S][k] = warp_run + ex;
      warp_run = warp_run + __shfl_sync(0xffffffffu, sv, 31);
    }
    if (lane == 0) totals[warp] = warp_run;
    bar_sync(kBarData, kData);
    C w = lane < kWarps ? totals[lane] : 0.f;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const C o = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w = o + w;
    }
    C wex = __shfl_up_sync(0xffffffffu, w, 1);
    if (lane == 0) wex = 0.f;
    const C warp_prefix = __shfl_sync(0xffffffffu, wex, warp);
    const C total = __shfl_sync(0xffffffffu, w, kWarps - 1);
#pragma unroll
    for (int k = 0; k < K; ++k) prefix[S][k] = warp_prefix + prefix[S][k];
    if (tid == 0) {
      status.publish(id, t == 0 ? kiln::detail::kTilePrefix : kiln::detail::kTileAggregate, total);
      tile_id[S] = id;
      tile_total[S] = total;
    }
    bar_arrive(kBarAgg + S, kAll);
    held[S] = true;
    held_id[S] = id;
  };
  for (;;) {
    [&]<int... S>(std::integer_sequence<int, S...>) {
      (step(std::integral_constant<int, S>{}), ...);
    }(std::make_integer_sequence<int, kStages>{});
    bool any = false;
#pragma unroll
    for (int s = 0; s < kStages; ++s) any |= held[s];
    if (done && !any && posted == kWalkers) break;
  }
}

template <int kData, int kVecs, int kStages, int kWalkers, int kMinBlocks>
__global__ void __launch_bounds__(kData + 32 * kWalkers, kMinBlocks)
    ws2_scan(const float* __restrict__ in, float* __restrict__ out, void* ws, int rows, long long len) {
  using C = float;
  constexpr int V = 4, K = kVecs;
  constexpr int kTile = kData * K * V;
  constexpr int kAll = kData + 32;   // one walker warp and the data warps meet at a stage
  static_assert(kStages % kWalkers == 0, "a stage has one walker");
  constexpr int kBarData = 1, kBarAgg = 2, kBarPrefix = 2 + kStages;
  extern __shared__ __align__(16) unsigned char smem[];
  C* stages = reinterpret_cast<C*>(smem);
  __shared__ long long tile_id[kStages];
  __shared__ C tile_total[kStages], tile_prefix[kStages];
  __shared__ C totals[kData / 32];
  __shared__ long long claim;

  const long long tiles_per_row = (len + kTile - 1) / kTile;
  const long long tiles = (long long)rows * tiles_per_row;
  const kiln::detail::TileStatus<C> status = kiln::detail::TileStatus<C>::at(ws, tiles);
  unsigned long long* counter =
      reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(ws) +
                                            kiln::launch::scan_lookback_workspace_bytes(rows, len, kTile, 4));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  if (warp >= kData / 32) {   // the walkers: walker w takes the tiles k = w (mod kWalkers)
    for (long long k = warp - kData / 32;; k += kWalkers) {
      const int s = int(k % kStages);
      bar_sync(kBarAgg + s, kAll);
      const long long id = tile_id[s];
      if (id < 0) return;
      const long long t = id % tiles_per_row;
      C excl = Sum::identity();
      if (t > 0) {
        excl = kiln::detail::lookback<Sum, C>(status, id, t);
        if (lane == 0) status.publish(id, kiln::detail::kTilePrefix, Sum::combine(excl, tile_total[s]));
      }
      if (lane == 0) tile_prefix[s] = excl;
      __syncwarp();
      bar_arrive(kBarPrefix + s, kAll);
    }
  }

  // The data warps.
  bool held[kStages] = {};
  long long held_id[kStages] = {};
  C prefix[kStages][K];
  bool done = false;
  int posted = 0;   // end marks posted (one for each walker)
  auto chunk = [&](int s, int k) { return stages + (long long)s * kTile + ((warp * K + k) * 32 + lane) * V; };
  auto first = [&](long long tile0, int k) { return tile0 + (long long)warp * (32 * K * V) + k * (32 * V) + lane * V; };
  bool loading[kStages] = {};
  long long load_id[kStages] = {};
  auto reduce = [&](auto P_) {
    constexpr int S = decltype(P_)::value;
    const long long id = load_id[S];
    const long long row = id / tiles_per_row, t = id - row * tiles_per_row;
    const long long tile0 = t * kTile;
    C st[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      C c[V];
      if (first(tile0, k) < len) {
#pragma unroll
        for (int j = 0; j < V; ++j) c[j] = chunk(S, k)[j];
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) c[j] = 0.f;
      }
      st[k] = kiln::detail::scan_slice_total<Sum, V>(c);
    }
    constexpr int kWarps = kData / 32;
    C warp_run = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      C sv = st[k];
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const C o = __shfl_up_sync(0xffffffffu, sv, d);
        if (lane >= d) sv = o + sv;
      }
      C ex = __shfl_up_sync(0xffffffffu, sv, 1);
      if (lane == 0) ex = 0.f;
      prefix[S][k] = warp_run + ex;
      warp_run = warp_run + __shfl_sync(0xffffffffu, sv, 31);
    }
    if (lane == 0) totals[warp] = warp_run;
    bar_sync(kBarData, kData);
    C w = lane < kWarps ? totals[lane] : 0.f;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const C o = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w = o + w;
    }
    C wex = __shfl_up_sync(0xffffffffu, w, 1);
    if (lane == 0) wex = 0.f;
    const C warp_prefix = __shfl_sync(0xffffffffu, wex, warp);
    const C total = __shfl_sync(0xffffffffu, w, kWarps - 1);
#pragma unroll
    for (int k = 0; k < K; ++k) prefix[S][k] = warp_prefix + prefix[S][k];
    if (tid == 0) {
      status.publish(id, t == 0 ? kiln::detail::kTilePrefix : kiln::detail::kTileAggregate, total);
      tile_id[S] = id;
      tile_total[S] = total;
    }
    bar_arrive(kBarAgg + S, kAll);
    held[S] = true;
    held_id[S] = id;
    loading[S] = false;
  };
  auto step = [&](auto S_) {
    constexpr int S = decltype(S_)::value;
    constexpr int P = (S + kStages - 1) % kStages;
    if (held[S]) {
      bar_sync(kBarPrefix + S, kAll);
      const long long id = held_id[S];
      const long long row = id / tiles_per_row, t = id - row * tiles_per_row;
      const long long tile0 = t * kTile;
      auto slice = [&](int k, C (&x)[V]) {
#pragma unroll
        for (int j = 0; j < V; ++j) x[j] = chunk(S, k)[j];
      };
      kiln::detail::scan_store_slices<Sum, kData, K, V, false, false, true>(out + row * len, slice, prefix[S],
                                                                          tile_prefix[S], len, tile0, row * len,
                                                                          Pass{});
      held[S] = false;
    }
    bool issued = false;
    if (done && posted < kWalkers) {
      if (tid == 0) tile_id[S] = -1;
      bar_arrive(kBarAgg + S, kAll);
      ++posted;
    } else if (!done) {
      if (tid == 0) claim = (long long)atomicAdd(counter, 1ull);
      bar_sync(kBarData, kData);
      const long long id = claim;
      if (id >= tiles) {
        done = true;
        if (tid == 0) tile_id[S] = -1;
        bar_arrive(kBarAgg + S, kAll);
        ++posted;
      } else {
        const long long row = id / tiles_per_row, t = id - row * tiles_per_row;
        const long long tile0 = t * kTile;
        const float* row_in = in + row * len;
#pragma unroll
        for (int k = 0; k < K; ++k)
          if (first(tile0, k) < len) kiln::cp_async16(chunk(S, k), row_in + first(tile0, k));
        kiln::cp_async_commit();
        issued = true;
        loading[S] = true;
        load_id[S] = id;
      }
    }
    if (loading[P]) {
      if (issued) kiln::cp_async_wait<1>(); else kiln::cp_async_wait<0>();
      reduce(std::integral_constant<int, P>{});
    }
  };
  for (;;) {
    [&]<int... S>(std::integer_sequence<int, S...>) {
      (step(std::integral_constant<int, S>{}), ...);
    }(std::make_integer_sequence<int, kStages>{});
    bool any = false;
#pragma unroll
    for (int s = 0; s < kStages; ++s) any |= held[s] || loading[s];
    if (done && !any && posted == kWalkers) break;
  }
}

template <int kThreads, int kVecs, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    kiln_scan(const float* __restrict__ in, float* __restrict__ out, void* ws, int rows, long long len) {
  kiln::scan_rows_lookback<kThreads, kVecs, false, false, Sum>(in, out, ws, rows, int(len), Pass{}, Pass{});
}

static long long check(const std::vector<float>& x, const std::vector<float>& y, int rows, long long len) {
  long long bad = 0;
  for (int r = 0; r < rows; ++r) {
    double run = 0, mag = 0;
    for (long long i = 0; i < len; ++i) {
      const long long p = r * len + i;
      run += x[p];
      mag += std::fabs(x[p]);
      if (!(std::fabs(y[p] - run) <= 1e-4 * (1 + mag))) {
        if (bad < 5) std::printf("  mismatch row %d at %lld: %g vs %g\n", r, i, y[p], run);
        ++bad;
      }
    }
  }
  return bad;
}

template <class F>
static float median_ms(F&& f) {
  cudaEvent_t a, b;
  CUDA_OK(cudaEventCreate(&a));
  CUDA_OK(cudaEventCreate(&b));
  for (int i = 0; i < 10; ++i) f();
  std::vector<float> ms;
  for (int i = 0; i < 50; ++i) {
    CUDA_OK(cudaEventRecord(a));
    f();
    CUDA_OK(cudaEventRecord(b));
    CUDA_OK(cudaEventSynchronize(b));
    float m;
    CUDA_OK(cudaEventElapsedTime(&m, a, b));
    ms.push_back(m);
  }
  CUDA_OK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

static int sms;
static long long failures;

template <int kData, int kVecs, int kStages, int kWalkers, int kMinBlocks>
static void run_ws(const char* name, const float* din, float* dout, void* ws, size_t ws_bytes, int rows, long long len,
                   const std::vector<float>& x, float copy_ms) {
  auto kern = ws_scan<kData, kVecs, kStages, kWalkers, kMinBlocks>;
  const int smem = kStages * kData * kVecs * 16;
  CUDA_OK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, kData + 32 * kWalkers, smem));
  const int grid = per_sm * sms;
  auto launch = [&] {
    CUDA_OK(cudaMemsetAsync(ws, 0, ws_bytes));
    kern<<<grid, kData + 32 * kWalkers, smem>>>(din, dout, ws, rows, len);
  };
  const size_t n = size_t(rows) * len;
  CUDA_OK(cudaMemset(dout, 0xFF, n * 4));
  launch();
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> y(n);
  CUDA_OK(cudaMemcpy(y.data(), dout, n * 4, cudaMemcpyDeviceToHost));
  const long long bad = check(x, y, rows, len);
  failures += bad;
  const float ms = median_ms(launch);
  std::printf("%-22s ws %3dx%d x%d stages, %dw, %d/SM (grid %5d)   %8.4f ms %7.1f GB/s %4.0f%% of copy %s\n", name, kData,
              kVecs, kStages, kWalkers, per_sm, grid, ms, 2.0 * n * 4 / ms / 1e6, 100.0 * copy_ms / ms, bad ? "MISMATCH" : "ok");
}

template <int kData, int kVecs, int kStages, int kWalkers, int kMinBlocks>
static void run_ws3(const char* name, const float* din, float* dout, void* ws, size_t ws_bytes, int rows, long long len,
                   const std::vector<float>& x, float copy_ms) {
  auto kern = ws3_scan<kData, kVecs, kStages, kWalkers, kMinBlocks>;
  const int smem = kStages * kData * kVecs * 16;
  CUDA_OK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, kData + 32 * kWalkers, smem));
  const int grid = per_sm * sms;
  auto launch = [&] {
    CUDA_OK(cudaMemsetAsync(ws, 0, ws_bytes));
    kern<<<grid, kData + 32 * kWalkers, smem>>>(din, dout, ws, rows, len);
  };
  const size_t n = size_t(rows) * len;
  CUDA_OK(cudaMemset(dout, 0xFF, n * 4));
  launch();
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> y(n);
  CUDA_OK(cudaMemcpy(y.data(), dout, n * 4, cudaMemcpyDeviceToHost));
  const long long bad = check(x, y, rows, len);
  failures += bad;
  const float ms = median_ms(launch);
  std::printf("%-22s claim-ahead %3dx%d x%d stages, %dw, %d/SM (grid %5d)   %8.4f ms %7.1f GB/s %4.0f%% of copy %s\n", name, kData,
              kVecs, kStages, kWalkers, per_sm, grid, ms, 2.0 * n * 4 / ms / 1e6, 100.0 * copy_ms / ms, bad ? "MISMATCH" : "ok");
}

template <int kData, int kVecs, int kStages, int kWalkers, int kMinBlocks>
static void run_ws4(const char* name, const float* din, float* dout, void* ws, size_t ws_bytes, int rows, long long len,
                   const std::vector<float>& x, float copy_ms) {
  auto kern = ws4_scan<kData, kVecs, kStages, kWalkers, kMinBlocks>;
  const int smem = kStages * kData * kVecs * 16;
  CUDA_OK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, kData + 32 * kWalkers, smem));
  const int grid = per_sm * sms;
  auto launch = [&] {
    CUDA_OK(cudaMemsetAsync(ws, 0, ws_bytes));
    kern<<<grid, kData + 32 * kWalkers, smem>>>(din, dout, ws, rows, len);
  };
  const size_t n = size_t(rows) * len;
  CUDA_OK(cudaMemset(dout, 0xFF, n * 4));
  launch();
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> y(n);
  CUDA_OK(cudaMemcpy(y.data(), dout, n * 4, cudaMemcpyDeviceToHost));
  const long long bad = check(x, y, rows, len);
  failures += bad;
  const float ms = median_ms(launch);
  std::printf("%-22s claim-in-store %3dx%d x%d stages, %dw, %d/SM (grid %5d)   %8.4f ms %7.1f GB/s %4.0f%% of copy %s\n", name, kData,
              kVecs, kStages, kWalkers, per_sm, grid, ms, 2.0 * n * 4 / ms / 1e6, 100.0 * copy_ms / ms, bad ? "MISMATCH" : "ok");
}

template <int kData, int kVecs, int kStages, int kWalkers, int kMinBlocks>
static void run_ws2(const char* name, const float* din, float* dout, void* ws, size_t ws_bytes, int rows, long long len,
                   const std::vector<float>& x, float copy_ms) {
  auto kern = ws2_scan<kData, kVecs, kStages, kWalkers, kMinBlocks>;
  const int smem = kStages * kData * kVecs * 16;
  CUDA_OK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, kData + 32 * kWalkers, smem));
  const int grid = per_sm * sms;
  auto launch = [&] {
    CUDA_OK(cudaMemsetAsync(ws, 0, ws_bytes));
    kern<<<grid, kData + 32 * kWalkers, smem>>>(din, dout, ws, rows, len);
  };
  const size_t n = size_t(rows) * len;
  CUDA_OK(cudaMemset(dout, 0xFF, n * 4));
  launch();
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> y(n);
  CUDA_OK(cudaMemcpy(y.data(), dout, n * 4, cudaMemcpyDeviceToHost));
  const long long bad = check(x, y, rows, len);
  failures += bad;
  const float ms = median_ms(launch);
  std::printf("%-22s ahead %3dx%d x%d stages, %dw, %d/SM (grid %5d)   %8.4f ms %7.1f GB/s %4.0f%% of copy %s\n", name, kData,
              kVecs, kStages, kWalkers, per_sm, grid, ms, 2.0 * n * 4 / ms / 1e6, 100.0 * copy_ms / ms, bad ? "MISMATCH" : "ok");
}

template <int kThreads, int kVecs, int kMinBlocks>
static void run_kiln(const char* name, const float* din, float* dout, void* ws, size_t ws_bytes, int rows,
                     long long len, const std::vector<float>& x, float copy_ms) {
  constexpr int kTile = kThreads * kVecs * 4;
  const long long tiles = rows * ((len + kTile - 1) / kTile);
  auto launch = [&] {
    CUDA_OK(cudaMemsetAsync(ws, 0, ws_bytes));
    kiln_scan<kThreads, kVecs, kMinBlocks><<<unsigned(tiles), kThreads>>>(din, dout, ws, rows, len);
  };
  const size_t n = size_t(rows) * len;
  CUDA_OK(cudaMemset(dout, 0xFF, n * 4));
  launch();
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> y(n);
  CUDA_OK(cudaMemcpy(y.data(), dout, n * 4, cudaMemcpyDeviceToHost));
  const long long bad = check(x, y, rows, len);
  failures += bad;
  const float ms = median_ms(launch);
  std::printf("%-22s kiln %dx%d >=%d/SM (grid %lld)         %8.4f ms %7.1f GB/s %4.0f%% of copy %s\n", name, kThreads,
              kVecs, kMinBlocks, tiles, ms, 2.0 * n * 4 / ms / 1e6, 100.0 * copy_ms / ms, bad ? "MISMATCH" : "ok");
}

int main() {
  cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  sms = prop.multiProcessorCount;
  std::printf("rowscan_ws on %s (%d SMs)\n", prop.name, sms);
  struct Shape {
    const char* name;
    int rows;
    long long len;
  };
  const Shape shapes[] = {{"cumsum 4x67108864", 4, 67108864},
                          {"cumsum 1x268435456", 1, 268435456},
                          {"cumsum 1x33554432", 1, 33554432},
                          {"cumsum 2x4194304", 2, 4194304},
                          {"cumsum 3x1000000", 3, 1000000}};
  for (const Shape& sh : shapes) {
    const size_t n = size_t(sh.rows) * sh.len;
    std::vector<float> x(n);
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    for (auto& v : x) v = u(gen);
    float *din, *dout, *dcopy;
    CUDA_OK(cudaMalloc(&din, n * 4));
    CUDA_OK(cudaMalloc(&dout, n * 4));
    CUDA_OK(cudaMemcpy(din, x.data(), n * 4, cudaMemcpyHostToDevice));
    const size_t ws_bytes = kiln::launch::scan_lookback_workspace_bytes(sh.rows, sh.len, 256 * 2 * 4, 4) + 256;
    void* ws;
    CUDA_OK(cudaMalloc(&ws, ws_bytes));
    dcopy = dout;
    const float copy_ms = median_ms([&] { CUDA_OK(cudaMemcpyAsync(dcopy, din, n * 4, cudaMemcpyDeviceToDevice)); });
    std::printf("%-22s copy %.4f ms (%.1f GB/s)\n", sh.name, copy_ms, 2.0 * n * 4 / copy_ms / 1e6);
    run_kiln<256, 8, 6>(sh.name, din, dout, ws, ws_bytes, sh.rows, sh.len, x, copy_ms);
    run_ws<256, 8, 3, 1, 2>(sh.name, din, dout, ws, ws_bytes, sh.rows, sh.len, x, copy_ms);
    run_ws4<256, 8, 3, 1, 2>(sh.name, din, dout, ws, ws_bytes, sh.rows, sh.len, x, copy_ms);
    run_ws<512, 8, 3, 1, 1>(sh.name, din, dout, ws, ws_bytes, sh.rows, sh.len, x, copy_ms);
    run_ws4<512, 8, 3, 1, 1>(sh.name, din, dout, ws, ws_bytes, sh.rows, sh.len, x, copy_ms);
    run_ws<256, 5, 5, 1, 2>(sh.name, din, dout, ws, ws_bytes, sh.rows, sh.len, x, copy_ms);
    run_ws4<256, 5, 5, 1, 2>(sh.name, din, dout, ws, ws_bytes, sh.rows, sh.len, x, copy_ms);
    run_ws<256, 4, 3, 1, 4>(sh.name, din, dout, ws, ws_bytes, sh.rows, sh.len, x, copy_ms);
    run_ws4<256, 4, 3, 1, 4>(sh.name, din, dout, ws, ws_bytes, sh.rows, sh.len, x, copy_ms);
    run_ws<128, 8, 3, 1, 4>(sh.name, din, dout, ws, ws_bytes, sh.rows, sh.len, x, copy_ms);
    run_ws4<128, 8, 3, 1, 4>(sh.name, din, dout, ws, ws_bytes, sh.rows, sh.len, x, copy_ms);
    if (sh.rows == 1) {
      size_t temp = 0;
      CUDA_OK(cub::DeviceScan::InclusiveSum(nullptr, temp, din, dout, (long long)n));
      void* dtemp;
      CUDA_OK(cudaMalloc(&dtemp, temp));
      auto launch = [&] { CUDA_OK(cub::DeviceScan::InclusiveSum(dtemp, temp, din, dout, (long long)n)); };
      CUDA_OK(cudaMemset(dout, 0xFF, n * 4));
      launch();
      CUDA_OK(cudaDeviceSynchronize());
      std::vector<float> y(n);
      CUDA_OK(cudaMemcpy(y.data(), dout, n * 4, cudaMemcpyDeviceToHost));
      const long long bad = check(x, y, sh.rows, sh.len);
      const float ms = median_ms(launch);
      std::printf("%-22s cub DeviceScan::InclusiveSum                %8.4f ms %7.1f GB/s %4.0f%% of copy %s\n", sh.name,
                  ms, 2.0 * n * 4 / ms / 1e6, 100.0 * copy_ms / ms, bad ? "MISMATCH" : "ok");
      CUDA_OK(cudaFree(dtemp));
    }
    CUDA_OK(cudaFree(din));
    CUDA_OK(cudaFree(dout));
    CUDA_OK(cudaFree(ws));
  }
  std::printf(failures ? "rowscan_ws: MISMATCHES\n" : "rowscan_ws: all ok\n");
  return failures ? 1 : 0;
}
