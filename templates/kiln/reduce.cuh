// kiln/reduce.cuh — reductions over one contiguous axis (reduce_inner_*) or one
// strided axis (reduce_outer), plus the second pass for split reductions.
//
// Contract (all are __device__ functions; the generated `extern "C" __global__`
// entry calls exactly one of them with constexpr shapes):
//
//   Op      a combiner from kiln/reduce_ops.cuh (SumOp<float>, ArgMaxOp<float, long long>, ...)
//   T       raw input element type (float, double, __half, __nv_bfloat16, int, ...)
//   Out     output element type
//   I       index type: int when every tensor has < 2^31 elements, else long long
//   Pro     prologue functor:  __device__ typename Op::Value operator()(T x, I flat) const
//           x is the raw element, flat its flat index in `in` (for dropout-like
//           prologues and for reading further inputs of the same shape).
//   Epi     epilogue functor:  __device__ Out operator()(typename Op::Result r, I out_index) const
//
//   reduce_inner_warp<kThreads, kUnroll, Op>(in, out, rows, len, pro, epi)
//     in viewed as [rows, len] row-major; out[row] for each row. One warp per row.
//     block = kThreads (multiple of 32); grid.x = any >= 1, ideally ceil(rows / (kThreads/32))
//     (rows beyond the grid are grid-strided). No shared memory.
//   reduce_inner_block<kThreads, kUnroll, Op>(in, out, partials, rows, len, splits, chunk, pro, epi)
//     One block per (row, split): block = kThreads; grid.x = any >= 1 (ideally min(rows, 2^31-1)),
//     grid.y = splits; split s reduces [s*chunk, min(len, (s+1)*chunk)). splits == 1: writes out,
//     partials unused (may be null). splits > 1: writes partials[s*rows + row] (Op::Acc) and the
//     planner launches reduce_finish(partials, out, rows, splits, len) as a second kernel.
//     Static shared memory only (kThreads/32 Accs).
//   reduce_outer<kThreads, kUnroll, kVec, Op>(in, out, partials, outer, red, inner, splits, chunk, pro, epi)
//     in viewed as [outer, red, inner] row-major, reduces red; out[o*inner + c].
//     Each thread owns kVec consecutive columns (kVec = 16/sizeof(T) needs inner % kVec == 0,
//     else kVec = 1). tiles = ceil(inner / (kThreads*kVec)); grid.x = outer*tiles, grid.y = splits;
//     split s reduces r in [s*chunk, min(red, (s+1)*chunk)). splits > 1 writes
//     partials[s*outer*inner + o*inner + c] and needs reduce_finish(partials, out, outer*inner, splits, red).
//   reduce_outer_rows<kThreads, kCols, kUnroll, Op>(in, out, partials, outer, red, inner, splits, chunk, pro, epi)
//     Same view and outputs as reduce_outer, for 4-byte columns (any inner). A block owns a tile of
//     kThreads*kCols columns (thread t: columns tile0 + t + k*kThreads) and sweeps the rows of its
//     split in order (see [Note: why a block sweeps whole rows]). tiles = ceil(inner/(kThreads*kCols));
//     grid.x = outer*tiles, grid.y = splits; splits > 1 writes partials like reduce_outer.
//   reduce_outer_rows_v4<kThreads, kUnroll, Op>(in, out, partials, outer, red, inner, splits, chunk, pro, epi)
//     Same view, outputs, grid and partials as reduce_outer_rows with kCols = 4, for 4-byte T: thread t
//     owns the 4 consecutive columns tile0 + 4t .. + 3 and reads them with 16-byte ALIGNED loads plus
//     lane shuffles whatever inner % 4 (see [Note: aligned vectors over misaligned rows]).
//     tiles = ceil(inner/(4*kThreads)); kThreads a multiple of 32.
//   reduce_finish<kThreads, kLanes, Op>(partials, out, n_out, splits, count, epi)
//     grid.x = any >= 1 (ideally ceil(n_out/(kThreads/kLanes))), block = kThreads. Combines the
//     splits of each output in a fixed order (kLanes == 1: split order; else each of kLanes lanes
//     every kLanes-th split in order, then the lanes in order): deterministic (no atomics), run
//     to run identical for a given split count.
//   The planner's config (ReduceConfig, ReduceFinishConfig, ReduceChainConfig) and the host-side
//   rules that pick the variant and the numbers are in kiln/config/reduce.h.
//
// Preconditions: `in` is aligned to sizeof(T). Vector (16-byte) loads are used where the
// address allows and a scalar path covers the rest, so any alignment is correct; reduce_outer's
// kVec > 1 additionally needs `in` 16-byte aligned at run time, else it takes its scalar path.
// `in` must not be written during the kernel (loads use the read-only path).
//
// [Note: why these are fast]
// A reduction reads every input byte once and writes almost nothing, so it runs at memory
// speed when (1) each warp-wide load instruction covers whole 32-byte sectors, (2) enough
// bytes are in flight per SM to cover DRAM latency (~20-30 KB on H100), and (3) the
// arithmetic per byte stays small. reduce_inner gives a warp a row: each lane loads 16 bytes
// per instruction (512 contiguous bytes per warp) and kUnroll such loads are issued before any
// is consumed (kUnroll*16 bytes in flight per lane, 64 KB per SM at full occupancy). Rows that
// do not start 16-byte aligned (len 4095 floats) begin with a scalar head of at most 3 floats
// (one per lane, so one instruction) and end with a scalar tail, so the body is always 16-byte
// vectors whatever the row's alignment. Combining across lanes uses xor shuffles; no shared
// memory and no block barriers in the warp variant. reduce_outer puts consecutive threads on
// consecutive columns of the contiguous `inner` axis, so for each step of the reduced axis a
// warp reads 32 (or 32*kVec) contiguous elements; when inner is not a multiple of 4 (4095) a
// 16-byte load is impossible (column c of row r+1 moves by one element against alignment),
// so the thread does kUnroll independent 4-byte loads down its column instead: coalesced
// across the warp, kUnroll deep in flight (reduce_outer_rows_v4 instead reads aligned 16-byte
// vectors of the misaligned rows and realigns them with lane shuffles: the planner's choice for
// 4-byte elements on aligned bases). When outer*inner columns cannot fill the GPU the
// reduced axis is split over blockIdx.y and a tiny second kernel combines the partial states
// in a fixed order (deterministic; one extra launch of a few microseconds).
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/reduce.h"
#include "kiln/reduce_ops.cuh"

namespace kiln {
namespace detail {

// Elements of T in one 16-byte vector.
template <class T> inline constexpr int kVecOf = launch::vec_elems(int(sizeof(T)));

// Folds the contiguous segment p[0, n) into `acc`, cooperatively: the calling
// thread has `rank` in a group of `group` threads that all call with the same
// arguments (each folds a disjoint subset). `index0` is p[0]'s index along the
// reduced axis, `flat0` its flat index in the input.
// Layout: a scalar head up to the first 16-byte boundary (< V elements, lane k
// takes element k), then 16-byte vectors strided by the group (kUnroll issued
// before use), then a scalar tail (< V elements).
template <class Op, int kUnroll, class T, class I, class Pro>
__device__ __forceinline__ typename Op::Acc fold_segment(typename Op::Acc acc, const T* __restrict__ p, I n,
                                                         I index0, I flat0, int rank, int group, const Pro& pro) {
  constexpr int V = kVecOf<T>;
  const unsigned misalign = unsigned(reinterpret_cast<unsigned long long>(p) & 15u);
  I head = I(((16u - misalign) & 15u) / unsigned(sizeof(T)));
  if (head > n) head = n;
  if (I(rank) < head) acc = Op::accumulate(acc, pro(ldg(p + rank), flat0 + rank), index0 + rank);

  const T* body = p + head;
  const I nvec = (n - head) / V;
  I v = rank;
  for (; v + I(kUnroll - 1) * group < nvec; v += I(kUnroll) * group) {
    uint4 raw[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) raw[u] = ldg16(body + (v + I(u) * group) * V);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const Vec<T, V> e = bit_cast_dev<Vec<T, V>>(raw[u]);
      const I i0 = head + (v + I(u) * group) * V;
#pragma unroll
      for (int j = 0; j < V; ++j) acc = Op::accumulate(acc, pro(e.v[j], flat0 + i0 + j), index0 + i0 + j);
    }
  }
  for (; v < nvec; v += group) {
    const Vec<T, V> e = bit_cast_dev<Vec<T, V>>(ldg16(body + v * V));
    const I i0 = head + v * V;
#pragma unroll
    for (int j = 0; j < V; ++j) acc = Op::accumulate(acc, pro(e.v[j], flat0 + i0 + j), index0 + i0 + j);
  }

  const I tail0 = head + nvec * V;   // n - tail0 < V
  if (I(rank) < n - tail0) {
    const I i = tail0 + rank;
    acc = Op::accumulate(acc, pro(ldg(p + i), flat0 + i), index0 + i);
  }
  return acc;
}

}  // namespace detail

// ---------------------------------------------------------------- reduce_inner, warp per row
template <int kThreads, int kUnroll, class Op, class T, class Out, class I, class Pro, class Epi>
__device__ __forceinline__ void reduce_inner_warp(const T* __restrict__ in, Out* __restrict__ out, I rows, I len,
                                                  Pro pro, Epi epi) {
  static_assert(kThreads % 32 == 0, "block size must be a multiple of 32");
  constexpr int kWarps = kThreads / 32;
  const int lane = threadIdx.x & 31;
  const I first = I(blockIdx.x) * kWarps + I(threadIdx.x >> 5);
  const I stride = I(gridDim.x) * kWarps;
  for (I row = first; row < rows; row = stride_next(row, stride, rows)) {
    const I flat0 = row * len;
    typename Op::Acc a = detail::fold_segment<Op, kUnroll>(Op::identity(), in + flat0, len, I(0), flat0, lane, 32, pro);
    a = warp_reduce<Op>(a);
    if (lane == 0) out[row] = epi(Op::finalize(a, len), row);
  }
}

// ---------------------------------------------------------------- reduce_inner, block per row (or per row chunk)
template <int kThreads, int kUnroll, class Op, class T, class Out, class I, class Pro, class Epi>
__device__ __forceinline__ void reduce_inner_block(const T* __restrict__ in, Out* __restrict__ out,
                                                   typename Op::Acc* __restrict__ partials, I rows, I len,
                                                   I splits, I chunk, Pro pro, Epi epi) {
  const I split = I(blockIdx.y);
  const I begin = split * chunk;
  const I end = begin + chunk < len ? begin + chunk : len;
  for (I row = I(blockIdx.x); row < rows; row = stride_next(row, I(gridDim.x), rows)) {   // uniform per block: barriers are safe
    const I flat0 = row * len + begin;
    typename Op::Acc a = Op::identity();
    if (begin < end) a = detail::fold_segment<Op, kUnroll>(a, in + flat0, end - begin, begin, flat0, int(threadIdx.x), kThreads, pro);
    a = block_reduce<Op, kThreads>(a);
    if (threadIdx.x == 0) {
      if (splits == 1) out[row] = epi(Op::finalize(a, len), row);
      else partials[split * rows + row] = a;
    }
  }
}

// ---------------------------------------------------------------- reduce_outer
namespace detail {
// Output j of a strided reduction after split `split` of the reduced axis: the final value
// (epilogue applied) when the axis is not split, else the partial state reduce_finish combines.
template <class Op, class Out, class I, class Epi>
__device__ __forceinline__ void store_outer_result(Out* __restrict__ out, typename Op::Acc* __restrict__ partials,
                                                   const typename Op::Acc& acc, I j, I split, I splits, I n_out, I red,
                                                   Epi epi) {
  if (splits == 1) out[j] = epi(Op::finalize(acc, red), j);
  else partials[split * n_out + j] = acc;
}
}  // namespace detail

template <int kThreads, int kUnroll, int kVec, class Op, class T, class Out, class I, class Pro, class Epi>
__device__ __forceinline__ void reduce_outer(const T* __restrict__ in, Out* __restrict__ out,
                                             typename Op::Acc* __restrict__ partials, I outer, I red, I inner,
                                             I splits, I chunk, Pro pro, Epi epi) {
  static_assert(kVec == 1 || kVec == detail::kVecOf<T>, "kVec is 1 or one 16-byte vector");
  using Acc = typename Op::Acc;
  const I tile_cols = I(kThreads) * kVec;
  const I tiles = (inner + tile_cols - 1) / tile_cols;
  const I o = I(blockIdx.x) / tiles;
  const I c0 = (I(blockIdx.x) - o * tiles) * tile_cols + I(threadIdx.x) * kVec;
  if (c0 >= inner) return;   // no barriers below
  const I split = I(blockIdx.y);
  const I r_begin = split * chunk;
  const I r_end = r_begin + chunk < red ? r_begin + chunk : red;

  Acc acc[kVec];
#pragma unroll
  for (int j = 0; j < kVec; ++j) acc[j] = Op::identity();

  const I flat_base = (o * red + r_begin) * inner + c0;   // flat index of (o, r_begin, c0)
  const T* p = in + flat_base;
  I r = r_begin;
  bool vector_done = false;
  if constexpr (kVec > 1) {
   if (is_aligned(in, 16)) {
    // inner % kVec == 0 and c0 % kVec == 0: every (o, r, c0) vector is 16-byte aligned.
    for (; r + kUnroll <= r_end; r += kUnroll, p += I(kUnroll) * inner) {
      uint4 raw[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) raw[u] = ldg16(p + I(u) * inner);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const Vec<T, kVec> e = bit_cast_dev<Vec<T, kVec>>(raw[u]);
        const I f = flat_base + (r - r_begin + u) * inner;
#pragma unroll
        for (int j = 0; j < kVec; ++j) acc[j] = Op::accumulate(acc[j], pro(e.v[j], f + j), r + u);
      }
    }
    for (; r < r_end; ++r, p += inner) {
      const Vec<T, kVec> e = bit_cast_dev<Vec<T, kVec>>(ldg16(p));
      const I f = flat_base + (r - r_begin) * inner;
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc[j] = Op::accumulate(acc[j], pro(e.v[j], f + j), r);
    }
    vector_done = true;
   }
  }
  if (!vector_done) {
    // Scalar: per step each thread loads its kVec columns; a warp's loads for one
    // column offset j are 32 elements kVec apart (kVec == 1: contiguous).
    for (; r + kUnroll <= r_end; r += kUnroll, p += I(kUnroll) * inner) {
      T raw[kUnroll][kVec];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int j = 0; j < kVec; ++j) raw[u][j] = ldg(p + I(u) * inner + j);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const I f = flat_base + (r - r_begin + u) * inner;
#pragma unroll
        for (int j = 0; j < kVec; ++j) acc[j] = Op::accumulate(acc[j], pro(raw[u][j], f + j), r + u);
      }
    }
    for (; r < r_end; ++r, p += inner) {
      const I f = flat_base + (r - r_begin) * inner;
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc[j] = Op::accumulate(acc[j], pro(ldg(p + j), f + j), r);
    }
  }

  const I o_base = o * inner + c0;
#pragma unroll
  for (int j = 0; j < kVec; ++j)
    detail::store_outer_result<Op>(out, partials, acc[j], o_base + j, split, splits, outer * inner, red, epi);
}

// ---------------------------------------------------------------- reduce_outer, whole-row sweep
// [Note: why a block sweeps whole rows]
// reduce_outer gives a block a 256-column strip of every row. When inner is not a multiple of
// 8 floats the strips do not start on 32-byte sector boundaries, so the sector at each strip
// edge is fetched by two blocks at different times (DRAM traffic ~20% above the useful bytes
// on an H100 at inner = 4095). Here a block owns a column tile of kThreads*kCols columns
// (thread t: tile0 + t + k*kThreads, k < kCols, each in a register) and walks the rows of its
// split in order, so when the tile spans the whole of inner the block's traffic is one
// contiguous range of memory and only split boundaries share a sector. Each row step issues
// kCols*kUnroll independent coalesced loads per thread before any is consumed. The reduced axis
// is split over blockIdx.y for grid fill (reduce_finish combines the splits in order).
template <int kThreads, int kCols, int kUnroll, class Op, class T, class Out, class I, class Pro, class Epi>
__device__ __forceinline__ void reduce_outer_rows(const T* __restrict__ in, Out* __restrict__ out,
                                                  typename Op::Acc* __restrict__ partials, I outer, I red, I inner,
                                                  I splits, I chunk, Pro pro, Epi epi) {
  static_assert(kCols >= 1 && kUnroll >= 1, "at least one column and one row per step");
  using Acc = typename Op::Acc;
  const I tile_cols = I(kThreads) * kCols;
  const I tiles = (inner + tile_cols - 1) / tile_cols;
  const I o = I(blockIdx.x) / tiles;
  const I c0 = (I(blockIdx.x) - o * tiles) * tile_cols + I(threadIdx.x);   // column of k = 0
  // Columns owned: c0 + k*kThreads for k < owned (the last tile may be partial).
  const I left = inner - c0;
  const int owned = left <= 0 ? 0 : (left >= I(kCols - 1) * kThreads + 1 ? kCols : int((left + kThreads - 1) / kThreads));
  const I split = I(blockIdx.y);
  const I r_begin = split * chunk;
  const I r_end = r_begin + chunk < red ? r_begin + chunk : red;

  Acc acc[kCols];
#pragma unroll
  for (int k = 0; k < kCols; ++k) acc[k] = Op::identity();

  const I flat_base = (o * red + r_begin) * inner + c0;   // flat index of (o, r_begin, c0)
  const T* p = in + flat_base;
  I r = r_begin;
  for (; r + kUnroll <= r_end; r += kUnroll, p += I(kUnroll) * inner) {
    T raw[kUnroll][kCols];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int k = 0; k < kCols; ++k)
        if (k < owned) raw[u][k] = ldg(p + I(u) * inner + k * kThreads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const I f = flat_base + (r - r_begin + u) * inner;
#pragma unroll
      for (int k = 0; k < kCols; ++k)
        if (k < owned) acc[k] = Op::accumulate(acc[k], pro(raw[u][k], f + k * kThreads), r + u);
    }
  }
  for (; r < r_end; ++r, p += inner) {
    const I f = flat_base + (r - r_begin) * inner;
#pragma unroll
    for (int k = 0; k < kCols; ++k)
      if (k < owned) acc[k] = Op::accumulate(acc[k], pro(ldg(p + k * kThreads), f + k * kThreads), r);
  }

  const I o_base = o * inner + c0;
#pragma unroll
  for (int k = 0; k < kCols; ++k) {
    if (k >= owned) break;
    detail::store_outer_result<Op>(out, partials, acc[k], o_base + k * kThreads, split, splits, outer * inner, red,
                                   epi);
  }
}

// ---------------------------------------------------------------- reduce_outer, whole-row sweep, 16-byte loads
// [Note: aligned vectors over misaligned rows]
// reduce_outer_rows' 4-byte loads stay ~25% under copy speed on an H100 (3.5-3.9 ms against
// 2.84 ms at [128, 4096, 4095]) whatever the block shape, while reduce_inner_warp on the same
// bytes (16-byte loads) runs at copy speed. Here thread t of a block owns 4 consecutive columns
// tile0 + 4t .. tile0 + 4t + 3 of every row of its split (a tile is 4*kThreads columns; with
// 1024 threads one tile covers a row of <= 4096). For a row whose tile starts at flat index R,
// s = R % 4 is the same for every thread of the block (tile0 is a multiple of 4), so the
// thread loads the ALIGNED vector A at R + 4t - s and takes the next aligned vector B (at
// R + 4t - s + 4) from lane + 1 with four down-shuffles; lane 31 loads its own B. Its four
// elements R + 4t .. R + 4t + 3 are A[s..3] followed by B[0..s-1]: a warp-uniform switch on s.
// Why no foreign value is ever used: the selected elements are exactly the flat indices
// R + 4t + j, j < 4, i.e. columns tile0 + 4t + j of this row; A[0..s-1] (flat R + 4t - s ..
// R + 4t - 1: the previous thread's columns, or for t = 0 the end of the previous row or tile)
// and B[s..3] (the next thread's columns, or the next row) are loaded but only ever discarded.
// Columns >= inner (a partial last tile, or inner not filling 4*kThreads) are skipped, so
// their values (the next row's first columns) are never folded either. Loads never leave
// the tensor: R - s >= 0 because R >= 0 and R - s is R rounded down to a multiple of 4; a
// vector is loaded only when it holds a column of this row (start < row end), and a vector that
// would pass the tensor's last element (only possible in the last row) is read element-wise.
// kUnroll rows of vectors are issued before any shuffle, so kUnroll*16 bytes a thread are in
// flight. When `in` is not 16-byte aligned at run time every thread reads its 4 columns with
// scalar loads (correct, slower; the planner only picks this variant for aligned bases).
namespace detail {
// The aligned vector at flat index a (a % 4 == 0), or element-wise up to the tensor end n.
template <class T, class I>
__device__ __forceinline__ Vec<T, 4> load_vec4_bounded(const T* __restrict__ in, I a, I n) {
  if (a + 4 <= n) return bit_cast_dev<Vec<T, 4>>(ldg16(in + a));
  Vec<T, 4> v;
#pragma unroll
  for (int j = 0; j < 4; ++j) v.v[j] = a + j < n ? ldg(in + a + j) : T(0);   // never selected when >= n
  return v;
}

// kRows consecutive rows r .. r + kRows - 1 of reduce_outer_rows_v4's sweep, folded into acc: every
// row's vectors are issued before any shuffle. kRows is a compile-time count, so the main loop
// over whole groups of kUnroll rows has no per-row bound test whether or not the split's row
// count is known at compile time (a run-time chunk, [Note: splits per launch], cost the generic
// kernel 11.7% more instructions through those tests: bench/results/2026-12-02-h200-run18/).
template <int kRows, bool kBounded, class Op, class T, class I, class Pro>
__device__ __forceinline__ void outer_rows_v4_step(const T* __restrict__ in, typename Op::Acc (&acc)[4], I r, I row0,
                                                   I inner, I tile_len, I c4, int lane, int owned, I n,
                                                   bool vectors, Pro pro) {
  using V4 = Vec<T, 4>;
  V4 a[kRows] = {}, b[kRows] = {};   // a vector past the row end stays 0 and is never selected
  int s[kRows] = {};
#pragma unroll
  for (int u = 0; u < kRows; ++u) {
    const I R = row0 + I(u) * inner;   // flat index of this row's column tile0
    s[u] = int(R & 3);
    if (!vectors) {
#pragma unroll
      for (int j = 0; j < 4; ++j) a[u].v[j] = j < owned ? ldg(in + R + c4 + j) : T(0);
      continue;
    }
    const I row_end = R + tile_len;
    const I av = R - s[u] + c4;                       // aligned; holds column c4 - s[u] + 0..3
    if constexpr (kBounded) {
      if (av < row_end) a[u] = load_vec4_bounded(in, av, n);
      if (lane == 31 && s[u] != 0 && av + 4 < row_end) b[u] = load_vec4_bounded(in, av + 4, n);
    } else {   // the caller knows every vector of these rows ends inside the tensor
      if (av < row_end) a[u] = bit_cast_dev<V4>(ldg16(in + av));
      if (lane == 31 && s[u] != 0 && av + 4 < row_end) b[u] = bit_cast_dev<V4>(ldg16(in + av + 4));
    }
  }
#pragma unroll
  for (int u = 0; u < kRows; ++u) {
    V4 e = a[u];
    if (vectors && s[u] != 0) {                        // s[u] is block-uniform: the warp shuffles together
      V4 next;
#pragma unroll
      for (int j = 0; j < 4; ++j) next.v[j] = __shfl_down_sync(0xffffffffu, a[u].v[j], 1);
      if (lane == 31) next = b[u];
      switch (s[u]) {
        case 1: e = V4{{a[u].v[1], a[u].v[2], a[u].v[3], next.v[0]}}; break;
        case 2: e = V4{{a[u].v[2], a[u].v[3], next.v[0], next.v[1]}}; break;
        default: e = V4{{a[u].v[3], next.v[0], next.v[1], next.v[2]}}; break;
      }
    }
    const I f = row0 + I(u) * inner + c4;   // flat index of column tile0 + c4
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (j < owned) acc[j] = Op::accumulate(acc[j], pro(e.v[j], f + j), r + u);
  }
}
}  // namespace detail

template <int kThreads, int kUnroll, class Op, class T, class Out, class I, class Pro, class Epi>
__device__ __forceinline__ void reduce_outer_rows_v4(const T* __restrict__ in, Out* __restrict__ out,
                                                     typename Op::Acc* __restrict__ partials, I outer, I red, I inner,
                                                     I splits, I chunk, Pro pro, Epi epi) {
  static_assert(sizeof(T) == 4, "4 elements of 4 bytes in one 16-byte vector");
  static_assert(kThreads % 32 == 0 && kUnroll >= 1, "whole warps (shuffles), at least one row per step");
  using Acc = typename Op::Acc;
  const I tile_cols = I(kThreads) * 4;
  const I tiles = (inner + tile_cols - 1) / tile_cols;
  const I o = I(blockIdx.x) / tiles;
  const I tile0 = (I(blockIdx.x) - o * tiles) * tile_cols;
  const I tile_len = inner - tile0 < tile_cols ? inner - tile0 : tile_cols;   // columns of this tile
  const int lane = int(threadIdx.x) & 31;
  const I c4 = I(threadIdx.x) * 4;                       // first column, relative to tile0
  const int owned = c4 >= tile_len ? 0 : (tile_len - c4 >= 4 ? 4 : int(tile_len - c4));
  const I split = I(blockIdx.y);
  const I r_begin = split * chunk;
  const I r_end = r_begin + chunk < red ? r_begin + chunk : red;
  const I n = outer * red * inner;
  const bool vectors = is_aligned(in, 16);              // uniform: every thread takes the same path

  Acc acc[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) acc[j] = Op::identity();

  // No early return: every lane of a warp must reach the shuffles. Whole groups of kUnroll rows
  // first, then the split's last rows one at a time.
  // row0: the flat index of row r's column tile0, stepped along with r (no multiply a row).
  I r = r_begin;
  I row0 = (o * red + r_begin) * inner + tile0;
  const I whole_end = r_end > r_begin ? r_begin + (r_end - r_begin) / I(kUnroll) * I(kUnroll) : r_begin;
  // A step whose last row's vectors (at most tile_cols + 4 past its row0, the neighbour vector
  // included) end inside the tensor reads without bound tests: every step but those over the last
  // output's last rows. row0 grows with r, so those steps come last.
  const I unbounded_row0 = n - (I(kUnroll - 1) * inner + tile_cols + 4);   // a step at row0 <= this
  for (; r < whole_end && row0 <= unbounded_row0; r += kUnroll, row0 += I(kUnroll) * inner)
    detail::outer_rows_v4_step<kUnroll, false, Op>(in, acc, r, row0, inner, tile_len, c4, lane, owned, n, vectors, pro);
  for (; r < whole_end; r += kUnroll, row0 += I(kUnroll) * inner)
    detail::outer_rows_v4_step<kUnroll, true, Op>(in, acc, r, row0, inner, tile_len, c4, lane, owned, n, vectors, pro);
  for (; r < r_end; ++r, row0 += inner)
    detail::outer_rows_v4_step<1, true, Op>(in, acc, r, row0, inner, tile_len, c4, lane, owned, n, vectors, pro);

  const I o_base = o * inner + tile0 + c4;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if (j >= owned) break;
    detail::store_outer_result<Op>(out, partials, acc[j], o_base + j, split, splits, outer * inner, red, epi);
  }
}

// ---------------------------------------------------------------- second pass of split reductions
// Each output's partial states are combined in a fixed order, so the result does not depend on
// the launch's grid. kLanes == 1: a thread per output, in split order. kLanes > 1 (few outputs
// of many states, launch::reduce_finish_lanes): kLanes threads per output, lane l combining
// states l, l + kLanes, ... in order, then the lanes in order; a block holds kThreads / kLanes
// consecutive outputs, so each load of a state is coalesced across them (192 outputs of 2778
// states took one block reading 2.1 MB). A thread loads launch::kFinishBatch states before it
// combines any, so a batch is in flight together, whatever the count (a count known only at launch,
// [Note: splits per launch] in kiln/config/reduce.h, is not unrolled by the compiler).
namespace detail {
// States first, first + step, ... below `splits` of output j, combined into `a` in that order.
template <class Op, class I>
__device__ __forceinline__ typename Op::Acc combine_states(typename Op::Acc a, const typename Op::Acc* __restrict__ partials,
                                                           I j, I n_out, I first, I step, I splits) {
  using Acc = typename Op::Acc;
  I s = first;
  for (; s + (launch::kFinishBatch - 1) * step < splits; s += launch::kFinishBatch * step) {
    Acc v[launch::kFinishBatch];
#pragma unroll
    for (int u = 0; u < launch::kFinishBatch; ++u) v[u] = partials[(s + u * step) * n_out + j];
#pragma unroll
    for (int u = 0; u < launch::kFinishBatch; ++u) a = Op::combine(a, v[u]);
  }
  for (; s < splits; s += step) a = Op::combine(a, partials[s * n_out + j]);
  return a;
}
}  // namespace detail

template <int kThreads, int kLanes, class Op, class Out, class I, class Epi>
__device__ __forceinline__ void reduce_finish(const typename Op::Acc* __restrict__ partials, Out* __restrict__ out,
                                              I n_out, I splits, I count, Epi epi) {
  using Acc = typename Op::Acc;
  static_assert(kLanes >= 1 && kThreads % kLanes == 0, "whole lanes of outputs");
  if constexpr (kLanes == 1) {
    for (I j = I(blockIdx.x) * kThreads + I(threadIdx.x); j < n_out; j += I(gridDim.x) * kThreads)
      out[j] = epi(Op::finalize(detail::combine_states<Op>(partials[j], partials, j, n_out, I(1), I(1), splits), count),
                   j);
  } else {
    constexpr int kOuts = kThreads / kLanes;
    __shared__ Acc lane_state[kLanes][kOuts];
    const int local = int(threadIdx.x) % kOuts, lane = int(threadIdx.x) / kOuts;
    for (I j0 = I(blockIdx.x) * kOuts; j0 < n_out; j0 += I(gridDim.x) * kOuts) {   // uniform per block
      const I j = j0 + local;
      lane_state[lane][local] =
          j < n_out ? detail::combine_states<Op>(Op::identity(), partials, j, n_out, I(lane), I(kLanes), splits)
                    : Op::identity();
      __syncthreads();
      if (lane == 0 && j < n_out) {
        Acc a = lane_state[0][local];
#pragma unroll
        for (int l = 1; l < kLanes; ++l) a = Op::combine(a, lane_state[l][local]);
        out[j] = epi(Op::finalize(a, count), j);
      }
      __syncthreads();
    }
  }
}

}  // namespace kiln
