// kiln/scan.cuh — scans along contiguous rows: cumsum, cumprod, cummax, cummin;
// inclusive or exclusive; forward or reverse.
//
// Contract (__device__ functions; the generated extern "C" __global__ entry calls one):
//   Op    SumOp<C>, ProdOp<C>, MinOp<C> or MaxOp<C> from kiln/reduce_ops.cuh (Acc == Value == C):
//         identity(), combine(a, b) (associative, commutative). MinOp/MaxOp propagate NaN, so
//         cummin/cummax outputs are NaN from the first NaN on, as PyTorch.
//   T     raw input element type; Out output element type; I index type (int or long long).
//   Pro   __device__ C   operator()(T x, I flat) const     applied to every loaded element
//   Epi   __device__ Out operator()(C y, I flat) const     applied to every result before the store
//         (flat = row * len + position: the element's flat index, same for input and output)
//   kExclusive: out[i] = op(x[0..i-1]), out[0] = identity. kReverse: the scan runs from the
//   row's end (out[i] = op(x[i..len-1]); exclusive: out[len-1] = identity).
//   kVecs: 16-byte vectors per thread per tile; tile = kThreads * kVecs * (16/sizeof(T)) elements.
//   kAligned: every row is 16-byte vectorizable (ScanConfig::aligned: len a multiple of the
//         vector, in and out 16-byte aligned); only the vector path is compiled. Otherwise each
//         row (block per row) or the rows (look-back) are checked at run time and an element-wise
//         path serves the others.
//
//   scan_rows_block<kThreads, kVecs, kExclusive, kReverse, kAligned, Op>(in, out, rows, len, pro, epi)
//     One block per row, grid.x = min(rows, 2^31-1) (rows beyond are grid-strided), block =
//     kThreads. Carries the row's running prefix across tiles; loads the next tile while scanning
//     the current one. Static shared memory only.
//   scan_rows_lookback<kThreads, kVecs, kStages, kExclusive, kReverse, kAligned, Op>(in, out, workspace, rows, len,
//                                                                                   pro, epi)
//     For few, long rows: a persistent grid (any grid.x >= 1) whose blocks claim tiles in order,
//     block = kThreads data threads + one walker warp. `workspace` has
//     launch::scan_lookback_workspace_bytes(rows, len, tile, sizeof(C)) bytes, 16-byte aligned,
//     and MUST be zeroed before every launch (the statuses and the tile counter). Dynamic shared
//     memory: kStages tiles of converted values (kThreads * kVecs * (16/sizeof(T)) of C each; the
//     planner's tile makes one launch::kScanLookbackStageBytes). Uses named barrier 1 (the data
//     warps) and 2 * kStages mbarriers ([Note: the warp-specialized look-back] in config/scan.h).
//   Config and geometry rules: kiln/config/scan.h (ScanConfig, scan_use_lookback, scan_rows_*_geometry).
//
//   Strided axis (in viewed as [outer, len, inner] row-major, inner > 1, scan along len):
//   scan_strided_totals<kThreads, kUnroll, kReverse, Op>(in, totals, outer, len, inner, chunk, pro)
//     Phase 1 of a chunked scan: grid.x = outer * ceil(inner / kThreads), grid.y = chunks,
//     block = kThreads. totals[(s * outer + o) * inner + c] = combination of chunk s (logical
//     positions [s*chunk, min(len, (s+1)*chunk)), counted from the scan's start) of column (o, c).
//   scan_strided<kThreads, kUnroll, kExclusive, kReverse, Op>(in, out, totals, outer, len, inner, chunk, pro, epi)
//     Same grid. Each thread scans its column's chunk s sequentially, starting from the
//     combination of totals of chunks 0..s-1 taken in chunk order (totals == nullptr: one chunk,
//     grid.y == 1, start from the identity). Deterministic: no atomics, fixed orders.
//   Geometry rules (kiln/config/scan.h): launch::scan_strided_threads / scan_strided_chunks /
//   scan_strided_geometry.
//
// Preconditions: in/out aligned to their element size; in and out do not overlap. 16-byte loads
// and streaming 16-byte stores are used for a row when len % (16/sizeof(T)) == 0, the row of `in`
// is 16-byte aligned and the row of `out` is aligned to its vector of results, up to 16 bytes
// (kVecStoreAlign); otherwise that row takes the scalar path (same tile size, coalesced 4-byte
// accesses).
//
// Precision: f32 cumsum accumulates in f32 in a tree: within a tile each thread sums a few
// elements, warps and the block combine by shuffles (depth ~log2(tile)), and the row prefix adds
// one tile total per tile. The error of out[i] is bounded by about (log2(tile) + tiles_before_i)
// * eps * sum|x[0..i]| (for 32768-long rows of uniform data: ~ (12 + 8) * 6e-8 relative to the
// row magnitude, far under 1e-4), versus i * eps for a plain sequential sum.
//
// [Note: why this is fast]
// A scan reads and writes every element once; at copy speed the only question is keeping
// enough bytes in flight while the block is busy with the serial part (the carry across
// tiles). Each warp owns a contiguous span of the tile, loaded as 16-byte vectors with lane
// varying fastest (512 contiguous bytes per warp instruction), and the block issues the loads
// of tile t+1 before it scans tile t, so a block always has a tile's worth of loads pending.
// The in-tile scan needs one barrier per tile (warp totals go through double-buffered shared
// memory). Stores are st.global.cs (evict-first): the output is not re-read and should not
// push the input out of L2. For few long rows a block per row would leave SMs idle, so the
// row is cut into tiles that chain their prefixes with a decoupled look-back: a tile publishes
// its aggregate at once, then walks back over its predecessors 128 at a time with one warp,
// stopping at the closest inclusive prefix, so the serial dependency costs a few L2 round trips
// instead of a pass over the row. The walk has a warp of its own while the block's other warps
// copy the next tiles into shared stages ([Note: the warp-specialized look-back] in
// config/scan.h).
//
// [Note: the strided-axis scan]
// Along a non-last axis the elements of one scan line are `inner` apart, but neighbouring
// lines are neighbours in memory: so a thread owns a line (a column (o, c)) and walks down it
// carrying its running value, and a warp's 32 threads read 32 consecutive elements per step
// (coalesced 128-byte lines for f32). Each thread issues kUnroll independent loads before it
// combines any, so a warp keeps kUnroll lines of loads in flight. When outer * inner columns
// are too few to fill the GPU, `len` is cut into chunks over blockIdx.y: a first kernel
// (scan_strided_totals) writes each chunk's total, and the scan kernel starts each chunk from
// the combination of the totals before it (read in chunk order: deterministic; the second and
// third phases of the textbook three-phase scan are fused, since there are at most a few
// hundred totals per column). The chunked form reads the input twice; it is only chosen
// when a single pass would leave most SMs idle and the tensor is too small for the strided
// look-back (scan_strided_lookback, [Note: the strided look-back] in config/scan.h), which
// reads it once. f32 cumsum accumulates sequentially within a
// chunk: the error of out[i] is about min(i, chunk) * eps * sum|x| in the worst case.
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/scan.h"
#include "kiln/reduce_ops.cuh"

namespace kiln {
namespace detail {

// Tile layout: logical position (within the tile) of slice k, element j of a thread:
//   q = warp * (32*K*V) + k * (32*V) + lane * V + j
// With V = 16/sizeof(T) a slice is one 16-byte vector per lane (512 contiguous bytes per warp).
// Logical positions map to physical ones as p = q (forward) or p = len - 1 - q (reverse); in
// reverse a vector is loaded from [len - q0 - V, len - q0) and its elements taken back to front.
template <int kThreads, int K, int V, bool kReverse, class T, class I>
__device__ __forceinline__ void scan_load_tile(T (&x)[K][V], const T* __restrict__ row, I len, I tile0) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const I q0 = tile0 + I(warp) * (32 * K * V) + I(k) * (32 * V) + I(lane) * V;
    if (q0 < len) {   // V > 1: len % V == 0, so the whole vector is in the row
      if constexpr (V > 1) {
        const Vec<T, V> e = bit_cast_dev<Vec<T, V>>(ldg16(row + (kReverse ? len - q0 - V : q0)));
#pragma unroll
        for (int j = 0; j < V; ++j) x[k][j] = e.v[kReverse ? V - 1 - j : j];
      } else {
        x[k][0] = ldg(row + (kReverse ? len - 1 - q0 : q0));
      }
    }
  }
}

// The barrier of a whole block, and that of a warp-specialized block's data warps (named barrier 1
// over their kThreads threads: the walker warp of scan_rows_lookback is not among them).
struct BlockSync {
  __device__ __forceinline__ void operator()() const { __syncthreads(); }
};
template <int kThreads>
struct DataSync {
  enum : int { kId = 1 };
  __device__ __forceinline__ void operator()() const { named_barrier_sync(kId, kThreads); }
};

// The warp's part of scan_slice_prefixes: in_warp[k] is slice k's exclusive prefix among the
// warp's slices (slice k of every lane, then slice k + 1), warp_run the warp's combination.
template <class Op, int K, class C>
__device__ __forceinline__ void scan_warp_slices(const C (&t)[K], C (&in_warp)[K], C& warp_run) {
  const int lane = threadIdx.x & 31;
  warp_run = Op::identity();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    // In-order inclusive warp scan (Hillis-Steele).
    C s = t[k];
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const C o = shfl_up_any(s, d);
      if (lane >= d) s = Op::combine(o, s);
    }
    C excl = shfl_up_any(s, 1);
    if (lane == 0) excl = Op::identity();
    in_warp[k] = Op::combine(warp_run, excl);
    warp_run = Op::combine(warp_run, shfl_any(s, 31));
  }
}

// The block's part: the combination of the warps before this one (warp_prefix) and of them all
// (total), from each warp's warp_run. One `sync`; `totals` holds a value a warp.
template <class Op, int kThreads, class C, class Sync>
__device__ __forceinline__ void scan_block_warps(C warp_run, C* totals, const Sync& sync, C& warp_prefix, C& total) {
  constexpr int kWarps = kThreads / 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) totals[warp] = warp_run;
  sync();
  C w = lane < kWarps ? totals[lane] : Op::identity();
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const C o = shfl_up_any(w, d);
    if (lane >= d) w = Op::combine(o, w);
  }
  C wexcl = shfl_up_any(w, 1);
  if (lane == 0) wexcl = Op::identity();
  warp_prefix = shfl_any(wexcl, warp);
  total = shfl_any(w, kWarps - 1);
}

// Scans one tile from its slices' combinations: t[k] is the calling lane's slice k (its V
// elements combined in order). Returns through `prefix[k]` each slice's exclusive prefix within
// the tile and `total` the tile's combination. One `sync` (the block's barrier by default);
// `totals` is this tile's half of a double buffer.
template <class Op, int kThreads, int K, class C, class Sync = BlockSync>
__device__ __forceinline__ void scan_slice_prefixes(const C (&t)[K], C (&prefix)[K], C& total, C* totals,
                                                    const Sync& sync = Sync{}) {
  C warp_run, warp_prefix;
  scan_warp_slices<Op, K>(t, prefix, warp_run);
  scan_block_warps<Op, kThreads>(warp_run, totals, sync, warp_prefix, total);
#pragma unroll
  for (int k = 0; k < K; ++k) prefix[k] = Op::combine(warp_prefix, prefix[k]);
}

// A lane's slice of V values combined in order.
template <class Op, int V, class C>
__device__ __forceinline__ C scan_slice_total(const C (&c)[V]) {
  C t = c[0];
#pragma unroll
  for (int j = 1; j < V; ++j) t = Op::combine(t, c[j]);
  return t;
}

// Scans one tile that is already in registers (c: converted values, identity outside the row);
// scan_slice_prefixes's results.
template <class Op, int kThreads, int K, int V, class C>
__device__ __forceinline__ void scan_tile_prefixes(const C (&c)[K][V], C (&prefix)[K], C& total, C* totals) {
  C t[K];
#pragma unroll
  for (int k = 0; k < K; ++k) t[k] = scan_slice_total<Op, V>(c[k]);
  scan_slice_prefixes<Op, kThreads, K>(t, prefix, total, totals);
}

// Converts a raw tile with the prologue (identity outside the row).
template <class Op, int kThreads, int K, int V, bool kReverse, class T, class I, class Pro>
__device__ __forceinline__ void scan_convert_tile(typename Op::Value (&c)[K][V], const T (&x)[K][V], I len, I tile0,
                                                  I flat_row, const Pro& pro) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const I q0 = tile0 + I(warp) * (32 * K * V) + I(k) * (32 * V) + I(lane) * V;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const I q = q0 + j;
      c[k][j] = q < len ? pro(x[k][j], flat_row + (kReverse ? len - 1 - q : q)) : Op::identity();
    }
  }
}

// Writes a scanned tile: element results are op(tile_prefix, prefix[k], c[k][0..j]) (inclusive)
// or the same without c[k][j] (exclusive). `slice(k, c)` gives the lane's converted slice k.
// kVector: the slices are whole 16-byte vectors (streaming vector stores), whose V adjacent
// outputs go through the store functor's lanes form where it has one ([Note: flat lanes] in
// common.cuh: a dropout after the scan draws once for four); else element stores of the slice's
// elements inside the row.
template <class Op, int kThreads, int K, int V, bool kExclusive, bool kReverse, bool kVector = true, class C, class Out,
          class I, class Slice, class Epi>
__device__ __forceinline__ void scan_store_slices(Out* __restrict__ row_out, const Slice& slice, const C (&prefix)[K],
                                                  C tile_prefix, I len, I tile0, I flat_row, const Epi& epi) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const I q0 = tile0 + I(warp) * (32 * K * V) + I(k) * (32 * V) + I(lane) * V;
    if (q0 >= len) continue;
    C c[V];
    slice(k, c);
    C run = Op::combine(tile_prefix, prefix[k]);
    Vec<Out, V> o;
    constexpr bool kLanes = kVector && HasFlatLanes<Epi>::value;
    C r[V];   // (kLanes) the results in the row's order, from the vector's first element
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const I q = q0 + j;
      const I p = kReverse ? len - 1 - q : q;
      C y;
      if constexpr (kExclusive) {
        y = run;
        run = Op::combine(run, c[j]);
      } else {
        run = Op::combine(run, c[j]);
        y = run;
      }
      if constexpr (kLanes) {
        r[kReverse ? V - 1 - j : j] = y;
      } else if constexpr (kVector) {
        o.v[kReverse ? V - 1 - j : j] = epi(y, flat_row + p);
      } else if (q < len) {
        row_out[p] = epi(y, flat_row + p);
      }
    }
    if constexpr (kVector) {
      const I p0 = kReverse ? len - q0 - V : q0;   // a multiple of V, as flat_row is (len % V == 0)
      if constexpr (kLanes) store_lanes(epi, r, flat_row + p0, o.v);
      store_cs<Out, V>(row_out + p0, o);
    }
  }
}
template <class Op, int kThreads, int K, int V, bool kExclusive, bool kReverse, class C, class Out, class I, class Epi>
__device__ __forceinline__ void scan_store_tile(Out* __restrict__ row_out, const C (&c)[K][V], const C (&prefix)[K],
                                                C tile_prefix, I len, I tile0, I flat_row, const Epi& epi) {
  auto slice = [&](int k, C (&x)[V]) {
#pragma unroll
    for (int j = 0; j < V; ++j) x[j] = c[k][j];
  };
  scan_store_slices<Op, kThreads, K, V, kExclusive, kReverse>(row_out, slice, prefix, tile_prefix, len, tile0, flat_row,
                                                              epi);
}

// One row, block-wide, tiles in order with the carry in registers. `tile_count` counts the
// tiles this block has scanned (over all its rows): its parity picks the half of the
// double-buffered warp totals, so consecutive tiles never share a half, even across rows.
template <int kThreads, int K, int V, bool kExclusive, bool kReverse, class Op, class T, class Out, class I, class Pro,
          class Epi>
__device__ __forceinline__ void scan_row_block(const T* __restrict__ row_in, Out* __restrict__ row_out, I len,
                                               I flat_row, unsigned& tile_count, const Pro& pro, const Epi& epi) {
  using C = typename Op::Value;
  constexpr int kWarps = kThreads / 32;
  constexpr I kTile = I(kThreads) * K * V;
  __shared__ C totals[2][kWarps];
  const I tiles = (len + kTile - 1) / kTile;
  T raw[K][V], next[K][V];
  scan_load_tile<kThreads, K, V, kReverse>(raw, row_in, len, I(0));
  C carry = Op::identity();
  for (I t = 0; t < tiles; ++t) {
    const I tile0 = t * kTile;
    // Issue the next tile's loads before this tile's (latency-bound) scan.
    if (t + 1 < tiles) scan_load_tile<kThreads, K, V, kReverse>(next, row_in, len, tile0 + kTile);
    C c[K][V], prefix[K], total;
    scan_convert_tile<Op, kThreads, K, V, kReverse>(c, raw, len, tile0, flat_row, pro);
    scan_tile_prefixes<Op, kThreads, K, V>(c, prefix, total, totals[tile_count & 1u]);
    ++tile_count;
    scan_store_tile<Op, kThreads, K, V, kExclusive, kReverse>(row_out, c, prefix, carry, len, tile0, flat_row, epi);
    carry = Op::combine(carry, total);
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int j = 0; j < V; ++j) raw[k][j] = next[k][j];
  }
}

template <class Out, int V>
__device__ __forceinline__ bool scan_row_vectorizable(const void* row_in, const void* row_out, long long len) {
  return V > 1 && len % V == 0 && is_aligned(row_in, 16) && is_aligned(row_out, kVecStoreAlign<Out, V>);
}

// ---- look-back tile status ([Note: look-back tile status] in config/scan.h)
// (Without __CUDA_ARCH__ — the CPU emulation test compiling these templates as host C++ with
// one OS thread — plain accesses are enough.)
__device__ __forceinline__ void store_release_gpu(unsigned* p, unsigned v) {
#ifdef __CUDA_ARCH__
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
#else
  *p = v;
#endif
}
__device__ __forceinline__ unsigned load_acquire_gpu(const unsigned* p) {
#ifdef __CUDA_ARCH__
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
#else
  return *p;
#endif
}
__device__ __forceinline__ void store_relaxed_gpu(unsigned long long* p, unsigned long long v) {
#ifdef __CUDA_ARCH__
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
  *p = v;
#endif
}
__device__ __forceinline__ unsigned long long load_relaxed_gpu(const unsigned long long* p) {
#ifdef __CUDA_ARCH__
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
#else
  return *p;
#endif
}
enum : unsigned { kTileEmpty = 0, kTileAggregate = 1, kTilePrefix = 2 };

// The tiles' published values, laid out in the workspace as launch::scan_lookback_workspace_bytes
// sizes it. Packed (values of at most 4 bytes): one 8-byte word a tile, the value's bits above
// the flag, written and read whole, so a walk reads each tile once. Wide: a 4-byte flag a tile,
// then the aggregates and the inclusive prefixes; the value is stored before the flag is
// released and read after it is acquired.
template <class C, bool kPacked = launch::scan_lookback_packed(int(sizeof(C)))>
struct TileStatus {
  unsigned long long* words;
  __device__ static TileStatus at(void* ws, unsigned long long) {
    return TileStatus{static_cast<unsigned long long*>(ws)};
  }
  __device__ __forceinline__ void publish(long long k, unsigned flag, C v) const {
    unsigned bits = 0;
    memcpy(&bits, &v, sizeof(C));
    store_relaxed_gpu(words + k, (static_cast<unsigned long long>(bits) << 32) | flag);
  }
  // The tile's flag; v its value once the flag is not kTileEmpty.
  __device__ __forceinline__ unsigned read(long long k, C& v) const {
    const unsigned long long w = load_relaxed_gpu(words + k);
    const unsigned bits = static_cast<unsigned>(w >> 32);
    memcpy(&v, &bits, sizeof(C));
    return static_cast<unsigned>(w);
  }
};
template <class C>
struct TileStatus<C, false> {
  unsigned* flags;
  C* aggregates;
  C* prefixes;
  __device__ static TileStatus at(void* ws, unsigned long long tiles) {
    unsigned char* base = static_cast<unsigned char*>(ws);
    const unsigned long long flag_bytes = launch::scan_lookback_flag_bytes((long long)tiles);
    const unsigned long long value_bytes = launch::scan_lookback_value_bytes((long long)tiles, int(sizeof(C)));
    return TileStatus{reinterpret_cast<unsigned*>(base), reinterpret_cast<C*>(base + flag_bytes),
                      reinterpret_cast<C*>(base + flag_bytes + value_bytes)};
  }
  __device__ __forceinline__ void publish(long long k, unsigned flag, C v) const {
    __stcg((flag == kTilePrefix ? prefixes : aggregates) + k, v);
    store_release_gpu(flags + k, flag);
  }
  __device__ __forceinline__ unsigned read(long long k, C& v) const {
    const unsigned flag = load_acquire_gpu(flags + k);
    if (flag != kTileEmpty) v = __ldcg((flag == kTilePrefix ? prefixes : aggregates) + k);
    return flag;
  }
};

// Warp 0 of tile `id` (the t-th tile of its row, t >= 1): the combination of every earlier
// tile of the row. A round inspects the 32 * kScanLookbackDepth tiles before the last one
// inspected, lane l the tiles j - l - 32 * i (every load of a round in flight at once, each
// spun on until its tile has published); the closest tile with an inclusive prefix ends the walk,
// and the aggregates of the tiles after it are combined in. Returns the same value in every lane.
template <class Op, class C>
__device__ __forceinline__ C lookback(const TileStatus<C>& status, long long id, long long t) {
  constexpr int kDepth = launch::kScanLookbackDepth;
  const int lane = threadIdx.x & 31;
  const long long first = id - t;   // the row's first tile always ends with a prefix
  C exclusive = Op::identity();
  for (long long j = id - 1;; j -= 32 * kDepth) {
    unsigned flag[kDepth];
    C v[kDepth];
#pragma unroll
    for (int i = 0; i < kDepth; ++i) {
      const long long k = j - lane - 32 * i;
      v[i] = Op::identity();
      flag[i] = k >= first ? status.read(k, v[i]) : unsigned(kTilePrefix);   // before the row: the identity
    }
#pragma unroll
    for (int i = 0; i < kDepth; ++i)
      while (flag[i] == kTileEmpty) flag[i] = status.read(j - lane - 32 * i, v[i]);
    // The closest prefix: the first of the round's tiles, in the order i * 32 + lane, that has one.
    int stop = 32 * kDepth;
#pragma unroll
    for (int i = kDepth - 1; i >= 0; --i) {
      const unsigned prefix_lanes = __ballot_sync(0xffffffffu, flag[i] == kTilePrefix);
      if (prefix_lanes) stop = 32 * i + __ffs(prefix_lanes) - 1;
    }
    C mine = Op::identity();
#pragma unroll
    for (int i = 0; i < kDepth; ++i)
      if (32 * i + lane <= stop) mine = Op::combine(mine, v[i]);   // older than the closest prefix: inside it
    exclusive = Op::combine(warp_reduce<Op>(mine), exclusive);
    if (stop < 32 * kDepth) return exclusive;
  }
}

}  // namespace detail

// ---------------------------------------------------------------- block per row
template <int kThreads, int kVecs, bool kExclusive, bool kReverse, bool kAligned, class Op, class T, class Out, class I,
          class Pro, class Epi>
__device__ __forceinline__ void scan_rows_block(const T* __restrict__ in, Out* __restrict__ out, I rows, I len, Pro pro,
                                                Epi epi) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block size must be a multiple of 32, <= 1024");
  constexpr int V = 16 / int(sizeof(T));
  unsigned tile_count = 0;   // the vector and scalar paths have separate buffers; sharing the count is still safe
  for (I row = I(blockIdx.x); row < rows; row = stride_next(row, I(gridDim.x), rows)) {   // uniform per block
    const I flat_row = row * len;
    if (kAligned || detail::scan_row_vectorizable<Out, V>(in + flat_row, out + flat_row, len))
      detail::scan_row_block<kThreads, kVecs, V, kExclusive, kReverse, Op>(in + flat_row, out + flat_row, len, flat_row,
                                                                          tile_count, pro, epi);
    else if constexpr (!kAligned)
      detail::scan_row_block<kThreads, kVecs * V, 1, kExclusive, kReverse, Op>(in + flat_row, out + flat_row, len,
                                                                              flat_row, tile_count, pro, epi);
  }
}

// ---------------------------------------------------------------- decoupled look-back, few long rows
namespace detail {
// [Note: the warp-specialized look-back] in config/scan.h. A stage holds one tile of converted
// values: lane slice k (its V elements) has a chunk of V values of C. kVector (16-byte
// vectorizable rows): the slice's 16 raw bytes are copied (cp.async) to the chunk's start and
// converted there in place, so each thread converts only bytes it copied and reads back only
// what it wrote. Otherwise elements of 4 or 8 bytes are copied one by one the same way, and
// narrower ones loaded one by one and converted on the way in. Every data thread touches only
// its own chunks, so a stage is reused with no barrier.
template <int kThreads, int K, int V>
struct LookbackSlices {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  template <class C>
  __device__ __forceinline__ C* chunk(C* stage, int k) const {
    return stage + ((warp * K + k) * 32 + lane) * V;
  }
  template <class I>
  __device__ __forceinline__ I first(I tile0, int k) const {
    return tile0 + I(warp) * (32 * K * V) + I(k) * (32 * V) + I(lane) * V;
  }
};

// The first half of a look-back tile: copies the tile at tile0 of the row into `stage`, converts
// it there, and returns the tile's combination; the calling warp's lane 0 writes the combination
// of the warps before it to *warp_prefix (the store recomputes the rest of each slice's prefix
// from the stage, in the same order, so no register holds a prefix while the tile waits). One
// `sync` (the data warps' barrier) for the warp totals.
template <int kThreads, int K, int V, bool kVector, bool kReverse, class Op, class T, class I, class Pro, class Sync>
__device__ __forceinline__ typename Op::Value lookback_stage_tile(const T* __restrict__ row_in, I len, I flat_row,
                                                                  I tile0, typename Op::Value* stage,
                                                                  typename Op::Value* warp_prefix,
                                                                  typename Op::Value* totals, const Pro& pro,
                                                                  const Sync& sync) {
  using C = typename Op::Value;
  static_assert(sizeof(C) % sizeof(T) == 0, "a converted slice is at least as wide as its raw bytes");
  const LookbackSlices<kThreads, K, V> sl;
  auto at = [&](I q) { return kReverse ? len - 1 - q : q; };   // logical position -> the row's element
  // Elements of 4 or 8 bytes are copied element by element (cp.async), into the chunk's start as
  // a vector would be; narrower ones are loaded into registers slice by slice below.
  constexpr bool kElementCopies = !kVector && (sizeof(T) == 4 || sizeof(T) == 8);
  if constexpr (kVector) {
#pragma unroll
    for (int k = 0; k < K; ++k)   // len % V == 0: a vector is wholly in the row or wholly past it
      if (sl.first(tile0, k) < len)
        cp_async16(sl.chunk(stage, k), row_in + (kReverse ? len - sl.first(tile0, k) - V : sl.first(tile0, k)));
  } else if constexpr (kElementCopies) {
    // Four slices at a time: unrolled over the whole tile, ptxas kept every copy's address live at
    // once and spilled; one at a time ran 10% slower (bench/results/2026-11-29-h200-run6/).
#pragma unroll 4
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int j = 0; j < V; ++j) {
        T* dst = reinterpret_cast<T*>(sl.chunk(stage, k)) + j;
        if (sl.first(tile0, k) + j < len) cp_async<int(sizeof(T))>(dst, row_in + at(sl.first(tile0, k) + j));
      }
  }
  cp_async_commit();
  cp_async_wait<0>();
  C slice_total[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    C* chunk = sl.chunk(stage, k);
    const I q0 = sl.first(tile0, k);
    C c[V];
    if constexpr (kVector) {
      if (q0 < len) {
        const Vec<T, V> raw = *reinterpret_cast<const Vec<T, V>*>(chunk);
#pragma unroll
        for (int j = 0; j < V; ++j) c[j] = pro(raw.v[kReverse ? V - 1 - j : j], flat_row + at(q0 + j));
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) c[j] = Op::identity();
      }
    } else if constexpr (kElementCopies) {
      const T* raw = reinterpret_cast<const T*>(chunk);
#pragma unroll
      for (int j = 0; j < V; ++j) c[j] = q0 + j < len ? pro(raw[j], flat_row + at(q0 + j)) : Op::identity();
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) c[j] = q0 + j < len ? pro(ldg(row_in + at(q0 + j)), flat_row + at(q0 + j)) : Op::identity();
    }
#pragma unroll
    for (int j = 0; j < V; ++j) chunk[j] = c[j];
    slice_total[k] = scan_slice_total<Op, V>(c);
  }
  C in_warp[K], warp_run, before, total;
  scan_warp_slices<Op, K>(slice_total, in_warp, warp_run);
  scan_block_warps<Op, kThreads>(warp_run, totals, sync, before, total);
  if (sl.lane == 0) *warp_prefix = before;
  return total;
}

// The second half: writes the staged tile, each element combined after tile_prefix (the
// combination of the row's earlier tiles) and its slice's prefix within the tile: warp_prefix
// (lookback_stage_tile's) and the warp's part, recomputed from the staged values.
template <int kThreads, int K, int V, bool kVector, bool kExclusive, bool kReverse, class Op, class Out, class I,
          class Epi>
__device__ __forceinline__ void lookback_store_tile(Out* __restrict__ row_out, I len, I flat_row, I tile0,
                                                    const typename Op::Value* stage, typename Op::Value warp_prefix,
                                                    typename Op::Value tile_prefix, const Epi& epi) {
  using C = typename Op::Value;
  const LookbackSlices<kThreads, K, V> sl;
  C slice_total[K], prefix[K], warp_run;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    C c[V];
    const C* chunk = sl.chunk(stage, k);
#pragma unroll
    for (int j = 0; j < V; ++j) c[j] = chunk[j];
    slice_total[k] = scan_slice_total<Op, V>(c);
  }
  scan_warp_slices<Op, K>(slice_total, prefix, warp_run);
#pragma unroll
  for (int k = 0; k < K; ++k) prefix[k] = Op::combine(warp_prefix, prefix[k]);
  auto slice = [&](int k, C (&x)[V]) {
    const C* chunk = sl.chunk(stage, k);
#pragma unroll
    for (int j = 0; j < V; ++j) x[j] = chunk[j];
  };
  scan_store_slices<Op, kThreads, K, V, kExclusive, kReverse, kVector>(row_out, slice, prefix, tile_prefix, len, tile0,
                                                                       flat_row, epi);
}

// Calls f(IntTag<S>) for S = 0 .. N-1 in order (the stage index a compile-time constant, so a
// stage's registers stay registers).
template <int S>
struct IntTag {
  static constexpr int value = S;
};
template <int S, int N, class F>
__device__ __forceinline__ void for_each_stage(F& f) {
  if constexpr (S < N) {
    f(IntTag<S>{});
    for_each_stage<S + 1, N>(f);
  }
}

// [Note: the warp-specialized look-back] in config/scan.h: warps 0 .. kThreads/32 - 1 move the
// data, warp kThreads/32 walks.
// [Note: the look-back handshake]
// A stage passes between the data warps and the walker through two mbarriers of one arrival
// each: thread 0 writes the stage's tile_id and tile_total and arrives on handed[s]; the walker
// polls there (test_wait: a walk starts as soon as its tile is handed over), its lane 0 reads the
// slots, walks, writes tile_prefix and arrives on walked[s]; the data warps wait there (try_wait)
// before they store the tile and, a round later, refill the stage. An mbarrier's arrive releases
// and its wait acquires, so the handshake is ordered by the letter of PTX's memory model, and
// compute-sanitizer racecheck orders accesses through it: until 2026-12-06 the handshake was
// named barriers (bar.arrive on one side, bar.sync on the other), and racecheck (2025.3.1, H100)
// reported the walker's reads of the slots against thread 0's writes as hazards, as it did for
// that pattern alone in a probe (docs/probes/racecheck_probe.cu: eight producer warps, or one that
// first meets on its own partial barrier) and not for the same ring through mbarriers.
// The cost, on an H100 (2026-12-06, median of 50, against the named barriers in the same run):
// cumsum along 4 x 2^26 f32 0.846 ms against 0.815 (+3.8%), 1 x 2^25 0.122 against 0.118 (+3.6%),
// 2 x 2^22 0.045 against 0.044; with the walker waiting by try_wait too, 2 x 2^22 took +7%.
// `vector`: the rows are 16-byte vectorizable (every row or none: len % V == 0 and aligned bases
// align every row); only the copies and stores branch on it. kAligned: they are at every launch
// (the element-wise copies and stores are not compiled).
template <int kThreads, int K, int V, int kStages, bool kExclusive, bool kReverse, bool kAligned, class Op, class T,
          class Out, class I, class Pro, class Epi>
__device__ __forceinline__ void scan_rows_lookback_ws(const T* __restrict__ in, Out* __restrict__ out,
                                                      const TileStatus<typename Op::Value>& status,
                                                      unsigned* __restrict__ counter, I len, long long tiles_per_row,
                                                      long long tiles, bool vector, const Pro& pro, const Epi& epi) {
  using C = typename Op::Value;
  constexpr I kTile = I(kThreads) * K * V;
  using Data = DataSync<kThreads>;      // the data warps' own barrier
  C* stages = reinterpret_cast<C*>(dynamic_smem());   // kStages tiles of converted values
  __shared__ long long tile_id[kStages];   // the stage's tile, -1: no more tiles
  __shared__ C tile_total[kStages], tile_prefix[kStages];
  __shared__ C totals[kThreads / 32];
  __shared__ C warp_prefix[kStages][kThreads / 32];   // a stage's tile: the combination of the warps before each
  __shared__ unsigned claim;
  // [Note: the look-back handshake] mbarriers of one arrival each: handed[s], thread 0's once
  // stage s's tile_id and tile_total are written; walked[s], the walker's lane 0's once its
  // tile_prefix is. Use u of a stage is phase u of both.
  __shared__ unsigned long long handed[kStages], walked[kStages];   // 8-byte aligned, as mbarriers must be
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (threadIdx.x == 0)
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&handed[s], 1);
      mbar_init(&walked[s], 1);
    }
  __syncthreads();

  if (warp == kThreads / 32) {   // the walker: the stages' tiles in claim order
    for (long long k = 0;; ++k) {
      const int s = int(k % kStages);
      mbar_wait</*kPoll=*/true>(&handed[s], u32(k / kStages) & 1u);   // a tile's walk starts at once
      // Lane 0 alone reads the stage's slots (and hands the tile to its warp): the thread that
      // read them is the one whose arrive on walked[s] lets thread 0 write them again.
      long long id = 0;
      C total = Op::identity();
      if (lane == 0) {
        id = tile_id[s];
        total = tile_total[s];
      }
      id = __shfl_sync(0xffffffffu, id, 0);
      if (id < 0) return;
      const long long t = id % tiles_per_row;
      C exclusive = Op::identity();
      if (t > 0) {
        exclusive = lookback<Op, C>(status, id, t);
        if (lane == 0) status.publish(id, kTilePrefix, Op::combine(exclusive, total));
      }
      if (lane == 0) {
        tile_prefix[s] = exclusive;
        mbar_arrive(&walked[s]);
      }
    }
  }

  bool held[kStages] = {};   // the stage holds a published tile (its id in tile_id) not yet stored
  u32 uses[kStages] = {};    // tiles handed over from the stage so far
  bool done = false;
  auto step = [&](auto tag) {
    constexpr int S = decltype(tag)::value;
    C* stage = stages + S * kTile;
    if (held[S]) {   // the walker has this tile's prefix once its arrive completes the use's phase
      mbar_wait(&walked[S], (uses[S] - 1) & 1u);
      const long long id = tile_id[S];   // written by this block's thread 0 before its arrive
      const I row = I(id / tiles_per_row);
      const I tile0 = I(id - (long long)row * tiles_per_row) * kTile;
      const C before = warp_prefix[S][warp];
      if (kAligned || vector)
        lookback_store_tile<kThreads, K, V, true, kExclusive, kReverse, Op>(out + row * len, len, row * len, tile0,
                                                                           stage, before, tile_prefix[S], epi);
      else if constexpr (!kAligned)
        lookback_store_tile<kThreads, K, V, false, kExclusive, kReverse, Op>(out + row * len, len, row * len, tile0,
                                                                            stage, before, tile_prefix[S], epi);
      held[S] = false;
    }
    if (done) return;
    if (threadIdx.x == 0) claim = atomicAdd(counter, 1u);
    Data{}();
    const long long id = claim;
    if (id >= tiles) {   // the walker stops at this stage
      done = true;
      if (threadIdx.x == 0) {
        tile_id[S] = -1;
        mbar_arrive(&handed[S]);
      }
      return;
    }
    const I row = I(id / tiles_per_row);
    const long long t = id - (long long)row * tiles_per_row;
    const I tile0 = I(t) * kTile;
    auto stage_tile = [&](auto whole) {   // IntTag<1>: whole vectors
      return lookback_stage_tile<kThreads, K, V, decltype(whole)::value != 0, kReverse, Op>(
          in + row * len, len, row * len, tile0, stage, &warp_prefix[S][warp], totals, pro, Data{});
    };
    C total;
    if (kAligned || vector)
      total = stage_tile(IntTag<1>{});
    else if constexpr (!kAligned)
      total = stage_tile(IntTag<0>{});
    if (threadIdx.x == 0) {
      // A row's first tile publishes its prefix at once; the others their aggregate, so that no
      // successor waits on this tile's walk.
      status.publish(id, t == 0 ? kTilePrefix : kTileAggregate, total);
      tile_id[S] = id;
      tile_total[S] = total;
      mbar_arrive(&handed[S]);
    }
    ++uses[S];
    held[S] = true;
  };
  for (;;) {
    for_each_stage<0, kStages>(step);
    bool any = false;
#pragma unroll
    for (int s = 0; s < kStages; ++s) any |= held[s];
    if (done && !any) return;
  }
}
}  // namespace detail

// A persistent grid; block = kThreads data threads + one walker warp; dynamic shared memory of
// kStages tiles (launch::scan_rows_lookback_geometry).
template <int kThreads, int kVecs, int kStages, bool kExclusive, bool kReverse, bool kAligned, class Op, class T,
          class Out, class I, class Pro, class Epi>
__device__ __forceinline__ void scan_rows_lookback(const T* __restrict__ in, Out* __restrict__ out, void* workspace,
                                                   I rows, I len, Pro pro, Epi epi) {
  static_assert(kThreads % 32 == 0 && kThreads + 32 <= 1024, "data threads a multiple of 32, one walker warp");
  using C = typename Op::Value;
  constexpr int V = launch::vec_elems(int(sizeof(T)));
  constexpr I kTile = I(launch::scan_rows_tile(kThreads, kVecs, int(sizeof(T))));   // the planner's tile
  const long long tiles_per_row = (len + kTile - 1) / kTile;
  const long long tiles = (long long)rows * tiles_per_row;
  const detail::TileStatus<C> status = detail::TileStatus<C>::at(workspace, (unsigned long long)tiles);
  unsigned* counter = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(workspace) +
                                                  launch::scan_lookback_status_bytes(tiles, int(sizeof(C))));
  detail::scan_rows_lookback_ws<kThreads, kVecs, V, kStages, kExclusive, kReverse, kAligned, Op>(
      in, out, status, counter, len, tiles_per_row, tiles,
      kAligned || detail::scan_row_vectorizable<Out, V>(in, out, len), pro, epi);
}

// ---------------------------------------------------------------- strided axis, a thread per column
namespace detail {
// One step down a column: the output for v (the running value before it when exclusive, after it
// otherwise); `run` moves past v.
template <class Op, bool kExclusive, class C>
__device__ __forceinline__ C scan_step(C& run, C v) {
  const C before = run;
  run = Op::combine(run, v);
  return kExclusive ? before : run;
}

// Column (o, c) and chunk s of the calling thread; false when the thread has no column.
template <int kThreads, class I>
__device__ __forceinline__ bool scan_strided_column(I inner, I& o, I& c) {
  const I tiles = (inner + kThreads - 1) / kThreads;
  o = I(blockIdx.x) / tiles;
  c = (I(blockIdx.x) - o * tiles) * kThreads + I(threadIdx.x);
  return c < inner;
}
}  // namespace detail

template <int kThreads, int kUnroll, bool kReverse, class Op, class T, class I, class Pro>
__device__ __forceinline__ void scan_strided_totals(const T* __restrict__ in, typename Op::Value* __restrict__ totals,
                                                    I outer, I len, I inner, I chunk, Pro pro) {
  using C = typename Op::Value;
  I o, c;
  if (!detail::scan_strided_column<kThreads>(inner, o, c)) return;   // no barriers in this kernel
  const I s = I(blockIdx.y);
  const I q_begin = s * chunk;
  const I q_end = q_begin + chunk < len ? q_begin + chunk : len;
  const I base = o * len * inner + c;   // flat index of (o, 0, c)
  // The chunk's physical rows, ascending (the order of a commutative fold does not matter).
  const I p_begin = kReverse ? len - q_end : q_begin;
  const I n = q_end - q_begin;
  C acc = Op::identity();
  I i = 0;
  for (; i + kUnroll <= n; i += kUnroll) {
    T raw[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) raw[u] = ldg(in + base + (p_begin + i + u) * inner);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc = Op::combine(acc, pro(raw[u], base + (p_begin + i + u) * inner));
  }
  for (; i < n; ++i) acc = Op::combine(acc, pro(ldg(in + base + (p_begin + i) * inner), base + (p_begin + i) * inner));
  totals[(s * outer + o) * inner + c] = acc;
}

template <int kThreads, int kUnroll, bool kExclusive, bool kReverse, class Op, class T, class Out, class I, class Pro,
          class Epi>
__device__ __forceinline__ void scan_strided(const T* __restrict__ in, Out* __restrict__ out,
                                             const typename Op::Value* __restrict__ totals, I outer, I len, I inner,
                                             I chunk, Pro pro, Epi epi) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block size must be a multiple of 32, <= 1024");
  using C = typename Op::Value;
  I o, c;
  if (!detail::scan_strided_column<kThreads>(inner, o, c)) return;
  const I s = I(blockIdx.y);
  C run = Op::identity();
  if (totals != nullptr)
    for (I k = 0; k < s; ++k) run = Op::combine(run, totals[(k * outer + o) * inner + c]);
  const I q_begin = s * chunk;
  const I q_end = q_begin + chunk < len ? q_begin + chunk : len;
  const I base = o * len * inner + c;
  // Logical position q is physical row q (forward) or len - 1 - q (reverse).
  auto flat_of = [&](I q) { return base + (kReverse ? len - 1 - q : q) * inner; };
  auto step = [&](C v, I flat) { out[flat] = epi(detail::scan_step<Op, kExclusive>(run, v), flat); };
  I q = q_begin;
  for (; q + kUnroll <= q_end; q += kUnroll) {
    T raw[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) raw[u] = ldg(in + flat_of(q + u));   // kUnroll loads in flight
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) step(pro(raw[u], flat_of(q + u)), flat_of(q + u));
  }
  for (; q < q_end; ++q) step(pro(ldg(in + flat_of(q)), flat_of(q)), flat_of(q));
}

// ---------------------------------------------------------------- strided axis, decoupled look-back
// [Note: the strided look-back] in config/scan.h.
namespace detail {
// The calling thread's column of tile r >= 1, whose status is `slot`, the same column of the tile
// above `step` slots up: the combination of the column's earlier tiles. A round reads the
// kScanLookbackDepth statuses above the last one read (all in flight, each spun on until its tile
// has published); the closest inclusive prefix ends the walk, the aggregates below it are
// combined in.
template <class Op, class C>
__device__ __forceinline__ C column_lookback(const TileStatus<C>& status, long long slot, long long r, long long step) {
  constexpr int kDepth = launch::kScanLookbackDepth;
  C exclusive = Op::identity();
  for (long long d0 = 1;; d0 += kDepth) {
    unsigned flag[kDepth];
    C v[kDepth];
#pragma unroll
    for (int i = 0; i < kDepth; ++i) {   // the column's first tile (d == r) always has a prefix
      v[i] = Op::identity();
      flag[i] = d0 + i <= r ? status.read(slot - (d0 + i) * step, v[i]) : unsigned(kTilePrefix);
    }
#pragma unroll
    for (int i = 0; i < kDepth; ++i)
      while (flag[i] == kTileEmpty) flag[i] = status.read(slot - (d0 + i) * step, v[i]);
#pragma unroll
    for (int i = 0; i < kDepth; ++i) {
      exclusive = Op::combine(v[i], exclusive);   // v[i] is older than everything combined so far
      if (flag[i] == kTilePrefix) return exclusive;
    }
  }
}
}  // namespace detail

// Tile (o, r, ct): logical rows [r * kRows, +kRows) of the axis, columns [ct * kThreads, +kThreads)
// of outer slice o; it is block (o * row_tiles + r) * col_tiles + ct. `workspace` (zeroed) holds
// a status for every column of every tile (launch::scan_strided_lookback_geometry).
template <int kThreads, int kRows, bool kExclusive, bool kReverse, class Op, class T, class Out, class I, class Pro,
          class Epi>
__device__ __forceinline__ void scan_strided_lookback(const T* __restrict__ in, Out* __restrict__ out, void* workspace,
                                                      I outer, I len, I inner, Pro pro, Epi epi) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block size must be a multiple of 32, <= 1024");
  using C = typename Op::Value;
  static_assert(kRows * launch::scan_strided_lookback_row_bytes(kThreads, int(sizeof(T)), int(sizeof(C))) <= 49152,
                "the tile fits in static shared memory (the planner's rows: scan_strided_lookback_rows)");
  constexpr bool kInPlace = sizeof(T) == sizeof(C);   // converted where it was copied
  constexpr long long kRawBytes = (long long)kRows * kThreads * sizeof(T);
  alignas(16) __shared__ unsigned char stage[kRows * launch::scan_strided_lookback_row_bytes(
                                                          kThreads, int(sizeof(T)), int(sizeof(C)))];
  T(*raw)[kThreads] = reinterpret_cast<T(*)[kThreads]>(stage);
  C(*val)[kThreads] = reinterpret_cast<C(*)[kThreads]>(stage + (kInPlace ? 0 : kRawBytes));
  const I col_tiles = (inner + kThreads - 1) / kThreads;
  const I row_tiles = (len + kRows - 1) / kRows;
  const long long id = blockIdx.x;
  const I ct = I(id % col_tiles);
  const I r = I((id / col_tiles) % row_tiles);
  const I o = I(id / ((long long)col_tiles * row_tiles));
  const I c0 = ct * kThreads, q0 = r * kRows;
  const int n = len - q0 < kRows ? int(len - q0) : kRows;                 // rows of this tile
  const int w = inner - c0 < kThreads ? int(inner - c0) : kThreads;       // columns of this tile
  const int tid = threadIdx.x;
  auto flat = [&](int k, I c) { return (o * len + (kReverse ? len - 1 - (q0 + k) : q0 + k)) * inner + c; };
  // The tile into shared memory: 16-byte copies when every row is whole 16-byte vectors; else a
  // thread copies its column, 4- and 8-byte elements with cp.async, narrower ones through registers.
  if (is_aligned(in, 16) && (inner * I(sizeof(T))) % 16 == 0) {
    constexpr int VE = 16 / int(sizeof(T));
    constexpr int kPerRow = kThreads / VE;   // vectors a tile row
    constexpr int kRounds = (kRows * kPerRow + kThreads - 1) / kThreads;
#pragma unroll
    for (int j = 0; j < kRounds; ++j) {
      const int i = j * kThreads + tid, k = i / kPerRow, v = i - k * kPerRow;
      if (i < kRows * kPerRow && k < n && v * VE < w) cp_async16(&raw[k][v * VE], in + flat(k, c0 + v * VE));
    }
  } else if (tid < w) {
#pragma unroll
    for (int k = 0; k < kRows; ++k)
      if (k < n) {
        if constexpr (sizeof(T) == 4 || sizeof(T) == 8) cp_async<int(sizeof(T))>(&raw[k][tid], in + flat(k, c0 + tid));
        else raw[k][tid] = ldg(in + flat(k, c0 + tid));
      }
  }
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  if (tid >= w) return;   // no column: its status is never read (the tiles above have none either)
  // The thread's column: converted in place (or beside), its aggregate folded.
  C aggregate = Op::identity();
#pragma unroll
  for (int k = 0; k < kRows; ++k)
    if (k < n) {
      const C v = pro(raw[k][tid], flat(k, c0 + tid));
      val[k][tid] = v;
      aggregate = Op::combine(aggregate, v);
    }
  // The chain down the column: the aggregate at once, the walk, then the inclusive prefix.
  const detail::TileStatus<C> status = detail::TileStatus<C>::at(workspace, (unsigned long long)gridDim.x * kThreads);
  const long long slot = id * kThreads + tid;
  C run = Op::identity();
  if (r == 0) {
    status.publish(slot, detail::kTilePrefix, aggregate);
  } else {
    status.publish(slot, detail::kTileAggregate, aggregate);
    run = detail::column_lookback<Op>(status, slot, r, (long long)col_tiles * kThreads);
    status.publish(slot, detail::kTilePrefix, Op::combine(run, aggregate));
  }
  // The scan of the column from its exclusive prefix, out of shared memory.
#pragma unroll
  for (int k = 0; k < kRows; ++k)
    if (k < n) {
      const I f = flat(k, c0 + tid);
      out[f] = epi(detail::scan_step<Op, kExclusive>(run, val[k][tid]), f);
    }
}

}  // namespace kiln
