// kiln/rownorm.cuh — softmax and log_softmax along a row, with a fused prologue and epilogue.
// (logsumexp of rows is reduce_inner_* / reduce_outer with LogSumExpOp<C>: the same online state.)
//
// Contract (__device__ functions called by the generated extern "C" __global__ entry):
//   kKind  RowNormKind::kSoftmax (y = exp(x - m) / s) or kLogSoftmax (y = (x - m) - log(s)),
//          m = max of the row, s = sum of exp(x - m), computed online (LogSumExpOp<C>).
//   C      compute type: float (f32/f16/bf16 inputs) or double.
//   T / Out / I  raw input type, output type, index type (int or long long).
//   Pro    __device__ C   operator()(T x, I flat) const   e.g. dropout: keep(seed, flat) ? x*scale : 0.
//          Called once per element per pass over memory (twice on the two-pass path), so it
//          must be a pure function of (x, flat) — dropout keyed by the flat index is.
//   Epi    __device__ Out operator()(C y, I flat) const
//
//   rownorm_rows<kThreads, kGroup, kItems, kKind, C>(in, out, rows, len, pro, epi)
//     in/out viewed as [rows, len] row-major. kGroup = 32 (a warp per row) or kThreads (a block
//     per row). Rows with len <= kGroup*kItems are held in registers: one read, one write.
//     Longer rows take two passes (online max/sum, then re-read and write).
//     block = kThreads; grid.x = ceil(rows / (kThreads/kGroup)), capped at 2^31-1 (grid-strided).
//     kItems must be a multiple of 16/sizeof(T).
//   rownorm_strided<kThreads, kUnroll, kKind, C>(in, out, outer, len, inner, pro, epi)
//     in/out viewed as [outer, len, inner], normalizing along len: one thread per (o, c) column,
//     consecutive threads on consecutive c (coalesced). Two passes (the second mostly from L2
//     for moderate len*inner). grid.x = ceil(outer*inner / kThreads), block = kThreads.
//   Geometry rules: kiln/launch_rules.h (rownorm_*).
//
// NaN anywhere in a row makes the whole row NaN; an all -inf row gives NaN (0/0), as PyTorch.
//
// [Note: why this is fast]
// Softmax is memory-bound: the floor is one read and one write of the tensor. When the row fits
// in the registers of its warp or block it is read once into registers (16-byte loads when the
// row is aligned), reduced once with the online (max, sum) state — a single cooperative reduction
// instead of a max pass then a sum pass — and written with 16-byte streaming stores. Only rows
// too long for registers re-read their input (pass 2), still one combined reduction.
#pragma once

#include "kiln/common.cuh"
#include "kiln/reduce.cuh"
#include "kiln/reduce_ops.cuh"

namespace kiln {

enum class RowNormKind { kSoftmax, kLogSoftmax };

namespace detail {

// The normalized value of x given the row's online state.
template <RowNormKind kKind, class C>
struct RowNormer {
  C max, inv_sum, log_sum;
  __device__ __forceinline__ explicit RowNormer(const LseAcc<C>& a)
      : max(a.max), inv_sum(C(1) / a.sum), log_sum(log_acc(a.sum)) {}
  __device__ __forceinline__ C operator()(C x) const {
    if constexpr (kKind == RowNormKind::kSoftmax) return exp_acc(x - max) * inv_sum;
    else return (x - max) - log_sum;
  }
};

template <class Op, int kThreads, int kGroup>
__device__ __forceinline__ typename Op::Acc group_reduce(typename Op::Acc a) {
  static_assert(kGroup == 32 || kGroup == kThreads, "a group is a warp or the whole block");
  if constexpr (kGroup == 32) return warp_reduce<Op>(a);
  else return block_reduce<Op, kThreads>(a);
}

// A row held in registers: element e = (it*kGroup + rank)*V + j.
template <int kThreads, int kGroup, int kItems, int V, RowNormKind kKind, class C, class T, class Out, class I,
          class Pro, class Epi>
__device__ __forceinline__ void rownorm_row_registers(const T* __restrict__ row_in, Out* __restrict__ row_out, I len,
                                                      I flat_row, int rank, const Pro& pro, const Epi& epi) {
  static_assert(kItems % V == 0, "kItems must be a multiple of the vector width");
  using Op = LogSumExpOp<C>;
  constexpr int kIt = kItems / V;
  C x[kIt][V];
  typename Op::Acc acc = Op::identity();
#pragma unroll
  for (int it = 0; it < kIt; ++it) {
    const I e0 = (I(it) * kGroup + rank) * V;
    if (e0 < len) {   // V > 1 only when len % V == 0: the whole vector is in the row
      T raw[V];
      if constexpr (V > 1) {
        const Vec<T, V> e = bit_cast_dev<Vec<T, V>>(ldg16(row_in + e0));
#pragma unroll
        for (int j = 0; j < V; ++j) raw[j] = e.v[j];
      } else {
        raw[0] = __ldg(row_in + e0);
      }
#pragma unroll
      for (int j = 0; j < V; ++j) {
        x[it][j] = pro(raw[j], flat_row + e0 + j);
        acc = Op::accumulate(acc, x[it][j], 0);
      }
    }
  }
  const RowNormer<kKind, C> norm(group_reduce<Op, kThreads, kGroup>(acc));
#pragma unroll
  for (int it = 0; it < kIt; ++it) {
    const I e0 = (I(it) * kGroup + rank) * V;
    if (e0 < len) {
      Vec<Out, V> o;
#pragma unroll
      for (int j = 0; j < V; ++j) o.v[j] = epi(norm(x[it][j]), flat_row + e0 + j);
      store_cs<Out, V>(row_out + e0, o);
    }
  }
}

// A row too long for registers: pass 1 folds the online state, pass 2 re-reads and writes.
template <int kThreads, int kGroup, RowNormKind kKind, class C, class T, class Out, class I, class Pro, class Epi>
__device__ __forceinline__ void rownorm_row_two_pass(const T* __restrict__ row_in, Out* __restrict__ row_out, I len,
                                                     I flat_row, int rank, const Pro& pro, const Epi& epi) {
  using Op = LogSumExpOp<C>;
  constexpr int V = 16 / int(sizeof(T));
  constexpr int kUnroll = 4;
  typename Op::Acc acc = fold_segment<Op, kUnroll>(Op::identity(), row_in, len, I(0), flat_row, rank, kGroup, pro);
  const RowNormer<kKind, C> norm(group_reduce<Op, kThreads, kGroup>(acc));
  if (len % V == 0 && is_aligned(row_in, 16) && is_aligned(row_out, unsigned(sizeof(Out) * V))) {
    const I nvec = len / V;
    for (I v = rank; v < nvec; v += kGroup) {
      const Vec<T, V> e = bit_cast_dev<Vec<T, V>>(ldg16(row_in + v * V));
      Vec<Out, V> o;
#pragma unroll
      for (int j = 0; j < V; ++j) o.v[j] = epi(norm(pro(e.v[j], flat_row + v * V + j)), flat_row + v * V + j);
      store_cs<Out, V>(row_out + v * V, o);
    }
  } else {
    for (I e = rank; e < len; e += kGroup) {
      Vec<Out, 1> o;
      o.v[0] = epi(norm(pro(__ldg(row_in + e), flat_row + e)), flat_row + e);
      store_cs<Out, 1>(row_out + e, o);
    }
  }
}

}  // namespace detail

template <int kThreads, int kGroup, int kItems, RowNormKind kKind, class C, class T, class Out, class I, class Pro,
          class Epi>
__device__ __forceinline__ void rownorm_rows(const T* __restrict__ in, Out* __restrict__ out, I rows, I len, Pro pro,
                                             Epi epi) {
  static_assert(kThreads % kGroup == 0, "the block holds whole groups");
  constexpr int V = 16 / int(sizeof(T));
  constexpr int kGroupsPerBlock = kThreads / kGroup;
  const int rank = int(threadIdx.x) % kGroup;
  const I first = I(blockIdx.x) * kGroupsPerBlock + I(threadIdx.x) / kGroup;
  const I stride = I(gridDim.x) * kGroupsPerBlock;
  for (I row = first; row < rows; row += stride) {   // uniform per group (per block when kGroup == kThreads)
    const I flat_row = row * len;
    const T* row_in = in + flat_row;
    Out* row_out = out + flat_row;
    if (len <= I(kGroup) * kItems) {
      if (len % V == 0 && is_aligned(row_in, 16) && is_aligned(row_out, unsigned(sizeof(Out) * V)))
        detail::rownorm_row_registers<kThreads, kGroup, kItems, V, kKind, C>(row_in, row_out, len, flat_row, rank, pro, epi);
      else
        detail::rownorm_row_registers<kThreads, kGroup, kItems, 1, kKind, C>(row_in, row_out, len, flat_row, rank, pro, epi);
    } else {
      detail::rownorm_row_two_pass<kThreads, kGroup, kKind, C>(row_in, row_out, len, flat_row, rank, pro, epi);
    }
  }
}

template <int kThreads, int kUnroll, RowNormKind kKind, class C, class T, class Out, class I, class Pro, class Epi>
__device__ __forceinline__ void rownorm_strided(const T* __restrict__ in, Out* __restrict__ out, I outer, I len, I inner,
                                                Pro pro, Epi epi) {
  using Op = LogSumExpOp<C>;
  const I columns = outer * inner;
  for (I col = I(blockIdx.x) * kThreads + I(threadIdx.x); col < columns; col += I(gridDim.x) * kThreads) {
    const I o = col / inner;
    const I base = o * len * inner + (col - o * inner);   // flat index of (o, 0, c)
    typename Op::Acc acc = Op::identity();
    I l = 0;
    for (; l + kUnroll <= len; l += kUnroll) {
      T raw[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) raw[u] = __ldg(in + base + (l + u) * inner);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc = Op::accumulate(acc, pro(raw[u], base + (l + u) * inner), 0);
    }
    for (; l < len; ++l) acc = Op::accumulate(acc, pro(__ldg(in + base + l * inner), base + l * inner), 0);
    const detail::RowNormer<kKind, C> norm(acc);
    for (l = 0; l < len; ++l) {
      const I f = base + l * inner;
      out[f] = epi(norm(pro(__ldg(in + f), f)), f);
    }
  }
}

}  // namespace kiln
