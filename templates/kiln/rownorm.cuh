// kiln/rownorm.cuh — softmax, log_softmax, layer norm and RMS norm along a row, with a fused
// prologue and epilogue. (logsumexp of rows is reduce_inner_* / reduce_outer with LogSumExpOp<C>:
// the same online state.)
//
// Contract (__device__ functions called by the generated extern "C" __global__ entry):
//   kKind  RowNormKind::kSoftmax (y = exp(x - m) / s) or kLogSoftmax (y = (x - m) - log(s)),
//          m = max of the row, s = sum of exp(x - m), computed online (LogSumExpOp<C>);
//          kLayerNorm (y = (x - mean) * scale(q), q = sum of (x - mean)^2 over the row) or
//          kRmsNorm (y = x * scale(q), q = sum of x^2): generator/plan/fuse_norms.cpp's Normalize.
//   C      compute type: float (f32/f16/bf16 inputs) or double.
//   T / Out / I  raw input type, output type, index type (int or long long).
//   Pro    __device__ C   operator()(T x, I flat) const   e.g. dropout: keep(seed, flat) ? x*scale : 0.
//          Called once per element per pass over memory (twice on the two-pass path), so it
//          must be a pure function of (x, flat) — dropout keyed by the flat index is.
//   Epi    __device__ Out operator()(C y, I flat) const
//   Scale  norms only: __device__ C operator()(C q) const, the multiplier of the row's deviations
//          from q (the emitter's: rsqrt(q / len + eps), say); softmax passes NoScale.
//
//   rownorm_rows<kThreads, kGroup, kItems, kKind, C[, kAligned, kDynMinLen]>(in, out, rows, len, pro, epi)
//     in/out viewed as [rows, len] row-major. kGroup = 32 (a warp per row) or kThreads (a block
//     per row). Rows with len <= kGroup*kItems are held in registers: one read, one write (rows
//     that are not whole aligned 16-byte vectors as scalars; kDynMinLen > 0, a dyn length's class
//     from that length on, an element a load in the vectors' layout, and every row must be in
//     the class). kAligned: every row is whole aligned 16-byte vectors (RownormConfig::aligned: len
//     a multiple of the vector, in and out 16-byte aligned), so the element-wise paths fold away.
//     Longer rows take two passes (online max/sum, or for a norm the mean and squared deviations
//     by chunks combined as Chan's parallel variance; then re-read and write).
//     block = kThreads; grid.x = ceil(rows / (kThreads/kGroup)), capped at 2^31-1 (grid-strided).
//     kItems must be a multiple of 16/sizeof(T); 0 compiles no register path (a dyn length's
//     class past the registers, where every row takes two passes).
//   rownorm_strided<kThreads, kUnroll, kKind, C>(in, out, outer, len, inner, pro, epi[, scale])   (every kind)
//     in/out viewed as [outer, len, inner], normalizing along len: one thread per (o, c) column,
//     consecutive threads on consecutive c (coalesced). Two passes (the second mostly from L2
//     for moderate len*inner). grid.x = ceil(outer*inner / kThreads), block = kThreads.
//   rownorm_split_stats<kThreads, kKind, C[, kAligned, kRowsFastest]>(in, partials, outer, lead, len, gang, splits,
//                                                                     chunk, pro)
//   rownorm_split_apply<kThreads, kKind, C[, kAligned, kRowsFastest]>(in, out, partials, outer, lead, len, gang,
//                                                                     splits, chunk, pro, epi, scale)
//     norms only, two launches over in viewed as [lead, outer, len], normalizing each row of outer
//     over its lead * len elements: a block per chunk of `chunk` elements of a segment (or, gang
//     > 1, of `gang` whole segments), the first writing each chunk's WelfordAcc<C> to partials
//     (launch::rownorm_split_blocks of them), the second combining a row's and writing y.
//     grid.x = launch::rownorm_split_blocks(lead, gang, outer, splits), block = kThreads. kAligned:
//     every chunk is whole aligned 16-byte vectors (RownormConfig::aligned), so the element-wise
//     paths fold away. kRowsFastest: the blocks take the rows fastest (RownormConfig::rows_fastest).
//   rownorm_split_whole<kThreads, kKind, C[, kAligned]>(in, out, outer, lead, len, pro, epi, scale)
//     norms only, one launch over the same view where a block takes a whole row (its lead * len
//     elements): the statistics, then y. grid.x = outer, block = kThreads.
//   Config and geometry rules: kiln/config/rownorm.h (RownormConfig, launch::rownorm_*).
//
// NaN anywhere in a row makes the whole row NaN; an all -inf row gives NaN (0/0), as PyTorch.
//
// [Note: why this is fast]
// Softmax is memory-bound: the floor is one read and one write of the tensor. At 3 TB/s an H100
// SM must retire ~3.5 floats per cycle each way, so the instructions per element decide whether
// the copy speed is reached (the online per-element fold ran at 76% issue and 79% of copy). When
// the row fits in the registers of its warp or block it is read once (16-byte loads when the
// row is aligned), then max (1 op/element), exp(x - max) kept in place and summed (2 FP ops and
// one SFU ex2 per element), each step one shuffle reduction (plus one shared-memory step for a
// block), then multiplied by the reciprocal of the sum and written with 16-byte streaming
// stores. Rows too long for registers take two passes over memory: pass 1 folds the online
// (max, sum) state a chunk of loads at a time (one rescale per chunk, no branch per element),
// pass 2 re-reads and writes.
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/rownorm.h"
#include "kiln/reduce.cuh"
#include "kiln/reduce_ops.cuh"

namespace kiln {

enum class RowNormKind { kSoftmax, kLogSoftmax, kLayerNorm, kRmsNorm };

template <RowNormKind k>
constexpr bool kIsNorm = k == RowNormKind::kLayerNorm || k == RowNormKind::kRmsNorm;

// The Scale of the softmax kinds, which have none.
struct NoScale {
  template <class C> __device__ __forceinline__ C operator()(C q) const { return q; }
};

// The running (count, mean, sum of squared deviations) of a stretch of a row, combined as Chan et
// al.'s parallel variance: exact in the mean's rounding, no cancellation of E[x^2] - E[x]^2.
template <class C>
struct WelfordAcc {
  C n, mean, m2;
};
template <class C>
struct WelfordOp {
  using Acc = WelfordAcc<C>;
  static __device__ __forceinline__ Acc identity() { return Acc{C(0), C(0), C(0)}; }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    const C n = a.n + b.n;
    if (b.n == C(0)) return a;   // also keeps an empty side's 0 * inf out of the sum
    if (a.n == C(0)) return b;
    const C delta = b.mean - a.mean, fb = b.n / n;
    return Acc{n, a.mean + delta * fb, a.m2 + b.m2 + delta * delta * (a.n * fb)};
  }
};

namespace detail {

// 2^t through the SFU (ex2.approx.ftz: <= 2 ulp; results below 2^-126 flush to 0). Used for
// exp(x - shift) of softmax, where the row's sum is >= 1, so a flushed term changes no output by
// more than 2^-126 (the f32 tolerances are 1e-4 relative plus an absolute floor far above that).
// The host branch serves the CPU emulator of the tests.
__device__ __forceinline__ float fast_exp2(float t) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(t));
  return r;
#else
  return exp2f(t);
#endif
}
// NaN-propagating max in one instruction where the ISA has it (max.NaN.f32, sm_80+), instead of
// max_prop's compare, compare, select: the register path takes one per element.
__device__ __forceinline__ float max_nan(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return max_prop(a, b);
#endif
}
__device__ __forceinline__ double max_nan(double a, double b) { return max_prop(a, b); }
// exp(x - shift): f32 as 2^((x - shift) * log2(e)) — the subtraction first, so the elements
// that matter (x near the max) keep full accuracy; f64 through exp().
__device__ __forceinline__ float exp_shifted(float x, float shift) { return fast_exp2((x - shift) * 1.44269504088896341f); }
__device__ __forceinline__ double exp_shifted(double x, double shift) { return exp(x - shift); }

// The exponent shift of a row whose max is m: m itself, or 0 for an all -inf row (so no
// -inf - -inf); a NaN m stays NaN and poisons the row, as the semantics ask.
template <class C>
__device__ __forceinline__ C shift_of(C m) { return m == Limits<C>::lowest() ? C(0) : m; }

// Online (max, sum) of a row without a branch per element: sum is relative to shift_of(max),
// and is 0 while max is -inf. Chunks of values fold with one rescale per chunk.
template <class C>
struct LseRowOp {
  using Acc = LseAcc<C>;
  static __device__ __forceinline__ Acc identity() { return Acc{Limits<C>::lowest(), C(0)}; }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    const C m = max_prop(a.max, b.max);
    const C sh = shift_of(m);
    // a.max - sh is -inf when a saw only -inf (its sum is 0): the term is 0, never 0 * inf.
    return Acc{m, a.sum * exp_shifted(a.max, sh) + b.sum * exp_shifted(b.max, sh)};
  }
  template <int N>
  static __device__ __forceinline__ Acc fold(Acc a, const C (&v)[N]) {
    C cm = v[0];
#pragma unroll
    for (int j = 1; j < N; ++j) cm = max_nan(cm, v[j]);
    const C m = max_nan(a.max, cm);
    const C sh = shift_of(m);
    C add = C(0);
#pragma unroll
    for (int j = 0; j < N; ++j) add += exp_shifted(v[j], sh);
    return Acc{m, a.sum * exp_shifted(a.max, sh) + add};
  }
};

// The normalized value of x given the row's shift and sum of exp(x - shift).
template <RowNormKind kKind, class C>
struct RowNormer {
  C shift, inv_sum, log_sum;
  __device__ __forceinline__ RowNormer(C shift_, C sum) : shift(shift_), inv_sum(C(1) / sum), log_sum(log_acc(sum)) {}
  __device__ __forceinline__ C operator()(C x) const {
    if constexpr (kKind == RowNormKind::kSoftmax) return exp_shifted(x, shift) * inv_sum;
    else return (x - shift) - log_sum;
  }
};

template <class Op, int kThreads, int kGroup>
__device__ __forceinline__ typename Op::Acc group_reduce(typename Op::Acc a) {
  static_assert(kGroup == 32 || kGroup == kThreads, "a group is a warp or the whole block");
  if constexpr (kGroup == 32) return warp_reduce<Op>(a);
  else return block_reduce<Op, kThreads>(a);
}

// A row held in registers: element e = (it*kGroup + rank)*V + j of the row is x[it][j], loaded
// through the prologue (x[it][j] is left unset past the row's end). kWhole: the row is whole
// aligned vectors (len % V == 0), V elements a 16-byte load; else (a dyn length's rows that are
// not, [Note: dyn lengths] in generator/plan/plan_memory.cpp) each element a load of its own in
// the same layout, the last slot cut at the row's end, so both share one register layout.
// kMinLen: every row is at least that long (a dyn length's class), so the slots that lie wholly
// below it in every thread (reached_slot) are loaded, summed and stored without a bound check.
template <int kGroup, int V>
__device__ __forceinline__ constexpr bool reached_slot(int it, long long min_len) {
  return (long long)(it + 1) * kGroup * V <= min_len;
}
template <int kGroup, bool kWhole, long long kMinLen, int kIt, int V, class C, class T, class I, class Pro>
__device__ __forceinline__ void load_row_registers(C (&x)[kIt][V], const T* __restrict__ row_in, I len, I flat_row,
                                                   int rank, const Pro& pro) {
#pragma unroll
  for (int it = 0; it < kIt; ++it) {
    const I e0 = (I(it) * kGroup + rank) * V;
    const bool reached = reached_slot<kGroup, V>(it, kMinLen);
    if (reached || e0 < len) {
      T raw[V];
      if constexpr (kWhole && V > 1) {
        const Vec<T, V> e = bit_cast_dev<Vec<T, V>>(ldg16(row_in + e0));
#pragma unroll
        for (int j = 0; j < V; ++j) raw[j] = e.v[j];
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j)
          if (kWhole || reached || e0 + j < len) raw[j] = ldg(row_in + e0 + j);
      }
#pragma unroll
      for (int j = 0; j < V; ++j)
        if (kWhole || reached || e0 + j < len) x[it][j] = pro(raw[j], flat_row + e0 + j);
    }
  }
}

// Calls f(x[it][j]) on every element of the row in registers, in order (their sum, say).
template <int kGroup, bool kWhole, long long kMinLen, int kIt, int V, class C, class I, class F>
__device__ __forceinline__ void for_row_registers(C (&x)[kIt][V], I len, int rank, F f) {
#pragma unroll
  for (int it = 0; it < kIt; ++it) {
    const I e0 = (I(it) * kGroup + rank) * V;
    const bool reached = reached_slot<kGroup, V>(it, kMinLen);
    if (reached || e0 < len) {
#pragma unroll
      for (int j = 0; j < V; ++j)
        if (kWhole || reached || e0 + j < len) f(x[it][j]);
    }
  }
}

// Writes the row in registers: y = epi(normalized(x[it][j]), flat), V elements a streaming store
// (kWhole), else an element a store.
template <int kGroup, bool kWhole, long long kMinLen, int kIt, int V, class C, class Out, class I, class Epi, class F>
__device__ __forceinline__ void store_row_registers(const C (&x)[kIt][V], Out* __restrict__ row_out, I len, I flat_row,
                                                    int rank, const Epi& epi, F normalized) {
#pragma unroll
  for (int it = 0; it < kIt; ++it) {
    const I e0 = (I(it) * kGroup + rank) * V;
    const bool reached = reached_slot<kGroup, V>(it, kMinLen);
    if (reached || e0 < len) {
      if constexpr (kWhole) {   // (len % V == 0 and row_in = in + row * len aligned: flat_row + e0 is a multiple of V)
        C r[V];
#pragma unroll
        for (int j = 0; j < V; ++j) r[j] = normalized(x[it][j]);
        Vec<Out, V> o;
        store_lanes(epi, r, flat_row + e0, o.v);   // [Note: flat lanes] in common.cuh
        store_cs<Out, V>(row_out + e0, o);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j)
          if (reached || e0 + j < len) {
            Vec<Out, 1> o;
            o.v[0] = epi(normalized(x[it][j]), flat_row + e0 + j);
            store_cs<Out, 1>(row_out + e0 + j, o);
          }
      }
    }
  }
}

// Softmax of a row in registers. Three cheap steps instead of an online fold per element: the
// max (one max per element, one group reduction), exp(x - max) kept in the registers and summed
// (one exp and one add per element, one group reduction), then one multiply by the reciprocal per
// element (softmax) or one subtraction (log_softmax).
template <int kThreads, int kGroup, int kItems, int V, bool kWhole, long long kMinLen, RowNormKind kKind, class C,
          class T, class Out, class I, class Pro, class Epi>
__device__ __forceinline__ void rownorm_row_registers(const T* __restrict__ row_in, Out* __restrict__ row_out, I len,
                                                      I flat_row, int rank, const Pro& pro, const Epi& epi) {
  static_assert(kItems % V == 0, "kItems must be a multiple of the vector width");
  constexpr int kIt = kItems / V;
  C x[kIt][V];
  load_row_registers<kGroup, kWhole, kMinLen>(x, row_in, len, flat_row, rank, pro);
  C m = Limits<C>::lowest();
  for_row_registers<kGroup, kWhole, kMinLen>(x, len, rank, [&](C& v) { m = max_nan(m, v); });
  m = group_reduce<MaxOp<C>, kThreads, kGroup>(m);
  const C sh = shift_of(m);
  C sum = C(0);
  for_row_registers<kGroup, kWhole, kMinLen>(x, len, rank, [&](C& v) {
    const C e = exp_shifted(v, sh);
    if constexpr (kKind == RowNormKind::kSoftmax) v = e;   // reused by the store
    sum += e;
  });
  sum = group_reduce<SumOp<C>, kThreads, kGroup>(sum);
  const C inv_sum = C(1) / sum;
  const C log_sum = kKind == RowNormKind::kLogSoftmax ? log_acc(sum) : C(0);
  // softmax: x holds exp(x - shift); an all -inf row gives 0 * (1/0) = NaN, as PyTorch.
  store_row_registers<kGroup, kWhole, kMinLen>(x, row_out, len, flat_row, rank, epi, [&](C v) {
    return kKind == RowNormKind::kSoftmax ? v * inv_sum : (v - sh) - log_sum;
  });
}

// A norm's row held in registers: the sum, one group reduction and the mean (layer norm); the
// deviations kept in place and their squares summed, another reduction; then one multiply by
// the scale per element.
template <int kThreads, int kGroup, int kItems, int V, bool kWhole, long long kMinLen, RowNormKind kKind, class C,
          class T, class Out, class I, class Pro, class Epi, class Scale>
__device__ __forceinline__ void rownorm_norm_registers(const T* __restrict__ row_in, Out* __restrict__ row_out, I len,
                                                       I flat_row, int rank, const Pro& pro, const Epi& epi,
                                                       const Scale& scale) {
  static_assert(kItems % V == 0, "kItems must be a multiple of the vector width");
  constexpr int kIt = kItems / V;
  C x[kIt][V];
  load_row_registers<kGroup, kWhole, kMinLen>(x, row_in, len, flat_row, rank, pro);
  if constexpr (kKind == RowNormKind::kLayerNorm) {
    C sum = C(0);
    for_row_registers<kGroup, kWhole, kMinLen>(x, len, rank, [&](C& v) { sum += v; });
    const C mean = group_reduce<SumOp<C>, kThreads, kGroup>(sum) / C(len);
    for_row_registers<kGroup, kWhole, kMinLen>(x, len, rank, [&](C& v) { v -= mean; });
  }
  C q = C(0);
  for_row_registers<kGroup, kWhole, kMinLen>(x, len, rank, [&](C& v) { q += v * v; });
  const C s = scale(group_reduce<SumOp<C>, kThreads, kGroup>(q));
  store_row_registers<kGroup, kWhole, kMinLen>(x, row_out, len, flat_row, rank, epi, [&](C v) { return v * s; });
}

// Scalar loads a thread has in flight where a row's elements are not whole 16-byte vectors.
constexpr int kScalarLoads = 8;

// Where element i of a stretch lies, counted from the stretch's first: in order (Contiguous), or
// in runs of `run` elements `stride` apart (Runs: a split norm's ganged segments).
struct Contiguous {
  static constexpr bool kInOrder = true;
  template <class I>
  __device__ __forceinline__ I operator()(I i) const { return i; }
};
template <class I>
struct Runs {
  static constexpr bool kInOrder = false;
  I run, stride;
  __device__ __forceinline__ I operator()(I i) const {
    const I r = i / run;
    return r * stride + (i - r * run);
  }
};

// Folds a chunk of values into a norm's running state: vals[0, count) are the row's, the rest 0
// (indexed by compile-time positions only, so the chunk stays in registers).
template <RowNormKind kKind, int N, class C>
__device__ __forceinline__ void norm_fold(WelfordAcc<C>& acc, const C (&vals)[N], int count) {
  if (count == 0) return;
  C sum = C(0);
#pragma unroll
  for (int j = 0; j < N; ++j) sum += kKind == RowNormKind::kRmsNorm ? vals[j] * vals[j] : vals[j];
  if constexpr (kKind == RowNormKind::kRmsNorm) {
    acc.m2 += sum;
  } else {
    const C m = sum / C(count);
    C q = C(0);
#pragma unroll
    for (int j = 0; j < N; ++j) q += j < count ? (vals[j] - m) * (vals[j] - m) : C(0);
    acc = WelfordOp<C>::combine(acc, WelfordAcc<C>{C(count), m, q});
  }
}

// Streams a row a chunk of loads at a time (4 16-byte loads a lane, or 8 scalar ones in flight):
// fold(vals, count) gets each chunk through the prologue, vals[0, count) the row's values and the
// rest `pad` (the row's values come first: loads past its end are the chunk's last). Element i of
// the row is at row_in + map(i) (whole vectors within a run where `vector`).
template <int kGroup, class C, class T, class I, class Pro, class Fold, class Map = Contiguous>
__device__ __forceinline__ void fold_row_chunks(const T* __restrict__ row_in, I len, I flat_row, int rank, bool vector,
                                                const Pro& pro, C pad, Fold fold, const Map& map = Map{}) {
  constexpr int V = 16 / int(sizeof(T));
  constexpr int kVecChunk = 4, kScalarChunk = kScalarLoads;
  if (vector) {
    const I nvec = len / V;
    for (I v = rank; v < nvec; v += I(kVecChunk) * kGroup) {
      uint4 raw[kVecChunk];
#pragma unroll
      for (int u = 0; u < kVecChunk; ++u)
        if (v + I(u) * kGroup < nvec) raw[u] = ldg16(row_in + map((v + I(u) * kGroup) * V));
      C vals[kVecChunk * V];
      int count = 0;
#pragma unroll
      for (int u = 0; u < kVecChunk; ++u) {
        const I i0 = map((v + I(u) * kGroup) * V);
        const Vec<T, V> e = bit_cast_dev<Vec<T, V>>(raw[u]);
        const bool in_row = v + I(u) * kGroup < nvec;   // whole vectors: in the row or past it
        count += in_row ? V : 0;
#pragma unroll
        for (int j = 0; j < V; ++j) vals[u * V + j] = in_row ? pro(e.v[j], flat_row + i0 + j) : pad;
      }
      fold(vals, count);
    }
  } else {
    for (I i = rank; i < len; i += I(kScalarChunk) * kGroup) {
      T raw[kScalarChunk];
#pragma unroll
      for (int u = 0; u < kScalarChunk; ++u)
        if (i + I(u) * kGroup < len) raw[u] = ldg(row_in + map(i + I(u) * kGroup));
      C vals[kScalarChunk];
      int count = 0;
#pragma unroll
      for (int u = 0; u < kScalarChunk; ++u) {
        const I e = i + I(u) * kGroup;
        count += e < len ? 1 : 0;
        vals[u] = e < len ? pro(raw[u], flat_row + map(e)) : pad;
      }
      fold(vals, count);
    }
  }
}

// Pass 1 of a norm's row too long for registers: (count, mean, squared deviations) per chunk of
// loads, two-pass within the chunk's registers, combined across chunks and the group (WelfordOp).
// An RMS norm needs only the sum of squares: its mean stays 0 and its count is unused.
template <int kThreads, int kGroup, RowNormKind kKind, class C, class T, class I, class Pro, class Map = Contiguous>
__device__ __forceinline__ WelfordAcc<C> rownorm_norm_stats(const T* __restrict__ row_in, I len, I flat_row, int rank,
                                                            bool vector, const Pro& pro, const Map& map = Map{}) {
  using Op = WelfordOp<C>;
  typename Op::Acc acc = Op::identity();
  fold_row_chunks<kGroup>(
      row_in, len, flat_row, rank, vector, pro, C(0),
      [&](const auto& vals, int count) { norm_fold<kKind>(acc, vals, count); }, map);
  if constexpr (kKind == RowNormKind::kRmsNorm) {
    acc.m2 = group_reduce<SumOp<C>, kThreads, kGroup>(acc.m2);
    return acc;
  } else {
    return group_reduce<Op, kThreads, kGroup>(acc);
  }
}

// Pass 1 of a softmax row too long for registers: the online (max, sum), one rescale a chunk.
template <int kGroup, class C, class T, class I, class Pro>
__device__ __forceinline__ LseAcc<C> rownorm_fold(const T* __restrict__ row_in, I len, I flat_row, int rank,
                                                  bool vector, const Pro& pro) {
  using Op = LseRowOp<C>;
  typename Op::Acc acc = Op::identity();
  fold_row_chunks<kGroup>(row_in, len, flat_row, rank, vector, pro, Limits<C>::lowest(),
                          [&](const auto& vals, int) { acc = Op::fold(acc, vals); });
  return acc;
}

// The normalized value of x given a norm row's mean and scale.
template <class C>
struct NormApplier {
  C mean, scale;
  __device__ __forceinline__ C operator()(C x) const { return (x - mean) * scale; }
};

// Writes y = epi(norm(pro(x))) over a stretch of a row, the group's threads a 16-byte vector (or,
// not `vector`, an element) each in turn, with streaming stores. Element i is at offset map(i).
template <int kGroup, class T, class Out, class I, class Pro, class Epi, class Norm, class Map = Contiguous>
__device__ __forceinline__ void normalize_stream(const T* __restrict__ row_in, Out* __restrict__ row_out, I len,
                                                 I flat_row, int rank, bool vector, const Pro& pro, const Epi& epi,
                                                 const Norm& norm, const Map& map = Map{}) {
  constexpr int V = 16 / int(sizeof(T));
  if (vector) {
    const I nvec = len / V;
    for (I v = rank; v < nvec; v += kGroup) {
      const I at = map(v * V);
      const Vec<T, V> e = bit_cast_dev<Vec<T, V>>(ldg16(row_in + at));
      Vec<Out, V> o;
      auto each = [&] {
#pragma unroll
        for (int j = 0; j < V; ++j) o.v[j] = epi(norm(pro(e.v[j], flat_row + at + j)), flat_row + at + j);
      };
      if constexpr (Map::kInOrder) {
        // Whole vectors in order: the lanes form ([Note: flat lanes] in common.cuh) where the
        // stretch's flat index is a multiple of V. Its pointers are aligned, but with the tensors'
        // bases misaligned alike (a split norm's chunk of another offset) the index need not be.
        if (flat_row % I(V) == 0) {
          decltype(norm(pro(e.v[0], flat_row))) r[V];
#pragma unroll
          for (int j = 0; j < V; ++j) r[j] = norm(pro(e.v[j], flat_row + at + j));
          store_lanes(epi, r, flat_row + at, o.v);
        } else {
          each();
        }
      } else {
        each();
      }
      store_cs<Out, V>(row_out + at, o);
    }
  } else {
    // kScalarLoads loads a thread issued before their stores: one by one, each load stayed behind
    // the store before it (which may alias it), one 4-byte load in flight a thread.
    for (I e0 = rank; e0 < len; e0 += I(kScalarLoads) * kGroup) {
      T raw[kScalarLoads];
#pragma unroll
      for (int u = 0; u < kScalarLoads; ++u)
        if (e0 + I(u) * kGroup < len) raw[u] = ldg(row_in + map(e0 + I(u) * kGroup));
#pragma unroll
      for (int u = 0; u < kScalarLoads; ++u) {
        const I e = e0 + I(u) * kGroup;
        if (e < len) {
          const I at = map(e);
          Vec<Out, 1> o;
          o.v[0] = epi(norm(pro(raw[u], flat_row + at)), flat_row + at);
          store_cs<Out, 1>(row_out + at, o);
        }
      }
    }
  }
}

// A row too long for registers: pass 1 folds the online state (softmax) or the statistics (a
// norm), pass 2 re-reads and writes.
template <int kThreads, int kGroup, RowNormKind kKind, class C, bool kAligned, class T, class Out, class I, class Pro,
          class Epi, class Scale>
__device__ __forceinline__ void rownorm_row_two_pass(const T* __restrict__ row_in, Out* __restrict__ row_out, I len,
                                                     I flat_row, int rank, const Pro& pro, const Epi& epi,
                                                     const Scale& scale) {
  constexpr int V = 16 / int(sizeof(T));
  const bool vector =
      kAligned || (len % V == 0 && is_aligned(row_in, 16) && is_aligned(row_out, kVecStoreAlign<Out, V>));
  const auto norm = [&] {
    if constexpr (kIsNorm<kKind>) {
      const WelfordAcc<C> a = rownorm_norm_stats<kThreads, kGroup, kKind, C>(row_in, len, flat_row, rank, vector, pro);
      return NormApplier<C>{a.mean, scale(a.m2)};
    } else {
      const LseAcc<C> a =
          group_reduce<LseRowOp<C>, kThreads, kGroup>(rownorm_fold<kGroup, C>(row_in, len, flat_row, rank, vector, pro));
      return RowNormer<kKind, C>(shift_of(a.max), a.sum);
    }
  }();
  normalize_stream<kGroup>(row_in, row_out, len, flat_row, rank, vector, pro, epi, norm);
}

// A row in registers, in slots of V elements (kWhole: a 16-byte load each): the softmax kinds or
// the norms. kMinLen: a length every row has (load_row_registers).
template <int kThreads, int kGroup, int kItems, int V, bool kWhole, RowNormKind kKind, class C, long long kMinLen = 0,
          class T, class Out, class I, class Pro, class Epi, class Scale>
__device__ __forceinline__ void rownorm_row_in_registers(const T* __restrict__ row_in, Out* __restrict__ row_out, I len,
                                                         I flat_row, int rank, const Pro& pro, const Epi& epi,
                                                         const Scale& scale) {
  if constexpr (kIsNorm<kKind>)
    rownorm_norm_registers<kThreads, kGroup, kItems, V, kWhole, kMinLen, kKind, C>(row_in, row_out, len, flat_row,
                                                                                   rank, pro, epi, scale);
  else
    rownorm_row_registers<kThreads, kGroup, kItems, V, kWhole, kMinLen, kKind, C>(row_in, row_out, len, flat_row, rank,
                                                                                  pro, epi);
}

// The widest slot of at most V elements that divides kItems (a narrower streamed tensor than the
// planner counted items in, a cast prologue from bool or f16, has wider vectors).
template <int kItems, int V>
constexpr int register_slot() {
  return kItems % V == 0 ? V : kItems % 4 == 0 && V >= 4 ? 4 : kItems % 2 == 0 ? 2 : 1;
}

}  // namespace detail

// kDynMinLen > 0: a dyn length's size class, whose lowest length it is ([Note: dyn lengths] in
// generator/plan/plan_memory.cpp). With kItems > 0 every row of the class fits the registers (the
// runtime keeps each launch's length in its executable's class; a row outside it traps), the slots
// below the class's lowest length need no bound check (load_row_registers), and rows that are not whole
// aligned vectors load an element at a time in the same register layout. No two-pass path is
// compiled beside the register one: the pair took 79-111 registers a thread on sm_90a where the
// register path alone takes 29-64, cutting the occupancy of every row (1.9x the specialized
// kernel on f32 rows of 5000, bench/results/2026-12-01-h200-run1/). With a length known at compile
// time the compiler keeps only the path it takes.
template <int kThreads, int kGroup, int kItems, RowNormKind kKind, class C, bool kAligned = false,
          long long kDynMinLen = 0, class T, class Out, class I, class Pro, class Epi, class Scale = NoScale>
__device__ __forceinline__ void rownorm_rows(const T* __restrict__ in, Out* __restrict__ out, I rows, I len, Pro pro,
                                             Epi epi, Scale scale = Scale{}) {
  static_assert(kThreads % kGroup == 0, "the block holds whole groups");
  constexpr bool kDynLen = kDynMinLen > 0;
  constexpr int V = 16 / int(sizeof(T));
  constexpr int kGroupsPerBlock = kThreads / kGroup;
  const int rank = int(threadIdx.x) % kGroup;
  const I first = I(blockIdx.x) * kGroupsPerBlock + I(threadIdx.x) / kGroup;
  const I stride = I(gridDim.x) * kGroupsPerBlock;
  for (I row = first; row < rows; row = stride_next(row, stride, rows)) {   // uniform per group (per block when kGroup == kThreads)
    const I flat_row = row * len;
    const T* row_in = in + flat_row;
    Out* row_out = out + flat_row;
    const bool whole =
        kAligned || (len % V == 0 && is_aligned(row_in, 16) && is_aligned(row_out, kVecStoreAlign<Out, V>));
    if constexpr (kItems > 0 && kDynLen) {
      if (len < kDynMinLen || !launch::rownorm_row_in_registers(len, kGroup, kItems)) __trap();   // outside the class
      constexpr int kSlot = detail::register_slot<kItems, V>();
      if constexpr (kSlot == V) {
        if (whole) {
          detail::rownorm_row_in_registers<kThreads, kGroup, kItems, V, true, kKind, C, kDynMinLen>(
              row_in, row_out, len, flat_row, rank, pro, epi, scale);
          continue;
        }
      }
      detail::rownorm_row_in_registers<kThreads, kGroup, kItems, kSlot, false, kKind, C, kDynMinLen>(
          row_in, row_out, len, flat_row, rank, pro, epi, scale);
      continue;
    }
    if constexpr (kItems > 0) {
      if (launch::rownorm_row_in_registers(len, kGroup, kItems)) {   // the planner's rule too
        // The planner counts items in vectors of the operand's type; a narrower streamed tensor (a
        // cast prologue from bool or f16) has wider vectors, which need not divide them: scalar then.
        if constexpr (kItems % V == 0) {
          if (whole) {
            detail::rownorm_row_in_registers<kThreads, kGroup, kItems, V, true, kKind, C>(row_in, row_out, len,
                                                                                          flat_row, rank, pro, epi,
                                                                                          scale);
            continue;
          }
        }
        detail::rownorm_row_in_registers<kThreads, kGroup, kItems, 1, true, kKind, C>(row_in, row_out, len, flat_row,
                                                                                      rank, pro, epi, scale);
        continue;
      }
    }
    detail::rownorm_row_two_pass<kThreads, kGroup, kKind, C, kAligned>(row_in, row_out, len, flat_row, rank, pro, epi,
                                                                        scale);
  }
}

template <int kThreads, int kUnroll, RowNormKind kKind, class C, class T, class Out, class I, class Pro, class Epi,
          class Scale = NoScale>
__device__ __forceinline__ void rownorm_strided(const T* __restrict__ in, Out* __restrict__ out, I outer, I len, I inner,
                                                Pro pro, Epi epi, Scale scale = Scale{}) {
  const I columns = outer * inner;
  for (I col = I(blockIdx.x) * kThreads + I(threadIdx.x); col < columns; col += I(gridDim.x) * kThreads) {
    const I o = col / inner;
    const I base = o * len * inner + (col - o * inner);   // flat index of (o, 0, c)
    // Pass 1: the column's statistics, kUnroll loads in flight; pass 2 re-reads and writes.
    const auto norm = [&] {
      if constexpr (kIsNorm<kKind>) {
        // A norm: (count, mean, squared deviations) a chunk of kUnroll at a time (norm_fold; the
        // tail's missing values are 0, which norm_fold leaves out), combined as Chan's.
        WelfordAcc<C> acc = WelfordOp<C>::identity();
        for (I l = 0; l < len; l += kUnroll) {
          C vals[kUnroll];
          const int count = len - l < kUnroll ? int(len - l) : kUnroll;
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) vals[u] = u < count ? pro(ldg(in + base + (l + u) * inner), base + (l + u) * inner) : C(0);
          detail::norm_fold<kKind>(acc, vals, count);
        }
        return detail::NormApplier<C>{acc.mean, scale(acc.m2)};
      } else {
        using Op = LogSumExpOp<C>;
        typename Op::Acc acc = Op::identity();
        I l = 0;
        for (; l + kUnroll <= len; l += kUnroll) {
          T raw[kUnroll];
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) raw[u] = ldg(in + base + (l + u) * inner);
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) acc = Op::accumulate(acc, pro(raw[u], base + (l + u) * inner), 0);
        }
        for (; l < len; ++l) acc = Op::accumulate(acc, pro(ldg(in + base + l * inner), base + l * inner), 0);
        // LogSumExpOp's sum is relative to acc.max (an all -inf column: max -inf, so NaN, as asked).
        // A +inf makes the whole column NaN (docs/semantics.md), where LogSumExpOp would count it as 1.
        const C sum = acc.max == Limits<C>::highest() ? C(0) / C(0) : acc.sum;
        return detail::RowNormer<kKind, C>(acc.max, sum);
      }
    }();
    for (I l = 0; l < len; ++l) {
      const I f = base + l * inner;
      out[f] = epi(norm(pro(ldg(in + f), f)), f);
    }
  }
}

// ---------------------------------------------------------------- split norms
// [Note: split norms] in kiln/config/rownorm.h. x is viewed as [lead, outer, len]: row r of outer
// is normalized over its lead segments of len elements (lead 1: the row is one segment). The
// row's segments go in gangs of `gang` (the last may hold fewer), each gang's segments in `splits`
// chunks of `chunk` elements (gang > 1: splits 1, chunk len, a chunk the gang's whole segments).
// Block s of ceil(lead / gang) * outer * splits takes chunk s % splits of gang s / splits (gangs
// in memory order: gang g of row r is the (g * outer + r)-th); with kRowsFastest, row s % outer's
// chunk (s / outer) % splits of gang s / (outer * splits) ([Note: split norm block order] in
// kiln/config/rownorm.h).
namespace detail {

template <class I>
struct SplitChunk {
  I flat;    // the chunk's first element
  I count;   // its elements (the last chunk of a segment, or the last gang, may be shorter)
  I row;     // the row of outer it belongs to
  I slot;    // its partial state: partials[(row * gangs + g) * splits + c]
};
template <bool kRowsFastest, class I>
__device__ __forceinline__ SplitChunk<I> split_chunk(I s, I outer, I lead, I len, I gang, I splits, I chunk) {
  const I gangs = I(launch::ceil_div(lead, gang));
  I row, g, c;
  if constexpr (kRowsFastest) {
    const I across = s / outer;
    row = s - across * outer;
    g = across / splits;
    c = across - g * splits;
  } else {
    const I ganged = s / splits;
    c = s - ganged * splits;
    g = ganged / outer;
    row = ganged - g * outer;
  }
  const I l0 = g * gang, segments = lead - l0 < gang ? lead - l0 : gang;
  const I begin = c * chunk;
  return SplitChunk<I>{(l0 * outer + row) * len + begin, (segments - 1) * len + (len - begin < chunk ? len - begin : chunk),
                       row, (row * gangs + g) * splits + c};
}

// Calls f(map, vector) with where a chunk's elements lie (a gang's segments: runs of len, outer *
// len apart; else in order) and whether it streams 16-byte vectors (every run whole vectors, and
// the chunk's pointers aligned to them).
// kAligned: every chunk is (RownormConfig::aligned).
template <int V, bool kAligned, class I, class F>
__device__ __forceinline__ void with_chunk_map(I outer, I len, I gang, I count, bool aligned, const F& f) {
  if (gang > 1) f(Runs<I>{len, outer * len}, kAligned || (len % V == 0 && aligned));
  else f(Contiguous{}, kAligned || (count % V == 0 && aligned));
}

}  // namespace detail

// Pass 1: each chunk's (count, mean, squared deviations), a norm's statistics as rownorm_rows' two-pass
// path folds them (an RMS norm: the sum of squares in m2 only), written to partials[slot].
// block = kThreads; grid.x = launch::rownorm_split_blocks (grid-strided past 2^31 - 1).
template <int kThreads, RowNormKind kKind, class C, bool kAligned = false, bool kRowsFastest = false, class T, class I,
          class Pro>
__device__ __forceinline__ void rownorm_split_stats(const T* __restrict__ in, WelfordAcc<C>* __restrict__ partials,
                                                    I outer, I lead, I len, I gang, I splits, I chunk, Pro pro) {
  static_assert(kIsNorm<kKind>, "split rows are a norm's");
  static_assert(launch::rownorm_split_workspace_bytes(1, int(sizeof(C))) == sizeof(WelfordAcc<C>),
                "the planner sizes the workspace by launch::rownorm_split_workspace_bytes");
  constexpr int V = 16 / int(sizeof(T));
  const I blocks = I(launch::rownorm_split_blocks(lead, gang, outer, splits));
  for (I s = I(blockIdx.x); s < blocks; s = stride_next(s, I(gridDim.x), blocks)) {
    const detail::SplitChunk<I> k = detail::split_chunk<kRowsFastest>(s, outer, lead, len, gang, splits, chunk);
    const T* p = in + k.flat;
    detail::with_chunk_map<V, kAligned>(outer, len, gang, k.count, is_aligned(p, 16), [&](const auto& map, bool vector) {
      const WelfordAcc<C> a = detail::rownorm_norm_stats<kThreads, kThreads, kKind, C>(p, k.count, k.flat,
                                                                                      int(threadIdx.x), vector, pro, map);
      if (threadIdx.x == 0) partials[k.slot] = a;
    });
  }
}

// Pass 2: each chunk's row statistics from the row's ceil(lead / gang) * splits partial states
// (each thread folds its share in slot order, then the block reduces; thread 0's result is every
// thread's, so every element of the row sees the same mean and scale), then
// y = epi(((x - mean) * scale(m2))) over the chunk. The chunks are taken in reverse of pass 1's
// order ([Note: split norms]).
template <int kThreads, RowNormKind kKind, class C, bool kAligned = false, bool kRowsFastest = false, class T,
          class Out, class I, class Pro, class Epi, class Scale>
__device__ __forceinline__ void rownorm_split_apply(const T* __restrict__ in, Out* __restrict__ out,
                                                    const WelfordAcc<C>* __restrict__ partials, I outer, I lead, I len,
                                                    I gang, I splits, I chunk, Pro pro, Epi epi, Scale scale) {
  static_assert(kIsNorm<kKind>, "split rows are a norm's");
  constexpr int V = 16 / int(sizeof(T));
  using Op = WelfordOp<C>;
  __shared__ C row_stats[2];
  const I blocks = I(launch::rownorm_split_blocks(lead, gang, outer, splits)), states = blocks / outer;
  for (I t = I(blockIdx.x); t < blocks; t = stride_next(t, I(gridDim.x), blocks)) {
    const detail::SplitChunk<I> k = detail::split_chunk<kRowsFastest>(blocks - 1 - t, outer, lead, len, gang, splits, chunk);
    const WelfordAcc<C>* row_states = partials + k.row * states;
    typename Op::Acc a = Op::identity();
    for (I i = I(threadIdx.x); i < states; i += kThreads) {
      if constexpr (kKind == RowNormKind::kRmsNorm) a.m2 += row_states[i].m2;
      else a = Op::combine(a, row_states[i]);
    }
    if constexpr (kKind == RowNormKind::kRmsNorm) a.m2 = block_reduce<SumOp<C>, kThreads>(a.m2);
    else a = block_reduce<Op, kThreads>(a);
    if (threadIdx.x == 0) {
      row_stats[0] = a.mean;
      row_stats[1] = scale(a.m2);
    }
    __syncthreads();
    const detail::NormApplier<C> norm{row_stats[0], row_stats[1]};
    __syncthreads();   // every thread has read row_stats before the next chunk's thread 0 writes it
    const T* p = in + k.flat;
    Out* q = out + k.flat;
    const bool aligned = is_aligned(p, 16) && is_aligned(q, kVecStoreAlign<Out, V>);
    detail::with_chunk_map<V, kAligned>(outer, len, gang, k.count, aligned, [&](const auto& map, bool vector) {
      detail::normalize_stream<kThreads>(p, q, k.count, k.flat, int(threadIdx.x), vector, pro, epi, norm, map);
    });
  }
}

// One kernel where a block takes a whole row ([Note: a block per row of short segments] in
// kiln/config/rownorm.h): the row's statistics as pass 1 folds a chunk (its lead segments of len,
// outer * len apart), then y = epi((x - mean) * scale(m2)) over the same elements, re-read.
// block = kThreads; grid.x = outer (launch::rownorm_split_blocks with gang lead, splits 1;
// grid-strided past 2^31 - 1).
template <int kThreads, RowNormKind kKind, class C, bool kAligned = false, class T, class Out, class I, class Pro,
          class Epi, class Scale>
__device__ __forceinline__ void rownorm_split_whole(const T* __restrict__ in, Out* __restrict__ out, I outer, I lead,
                                                    I len, Pro pro, Epi epi, Scale scale) {
  static_assert(kIsNorm<kKind>, "split rows are a norm's");
  constexpr int V = 16 / int(sizeof(T));
  for (I r = I(blockIdx.x); r < outer; r = stride_next(r, I(gridDim.x), outer)) {
    const detail::SplitChunk<I> k = detail::split_chunk<false>(r, outer, lead, len, lead, I(1), len);
    const T* p = in + k.flat;
    Out* q = out + k.flat;
    const bool aligned = is_aligned(p, 16) && is_aligned(q, kVecStoreAlign<Out, V>);
    detail::with_chunk_map<V, kAligned>(outer, len, lead, k.count, aligned, [&](const auto& map, bool vector) {
      const WelfordAcc<C> a = detail::rownorm_norm_stats<kThreads, kThreads, kKind, C>(p, k.count, k.flat,
                                                                                      int(threadIdx.x), vector, pro, map);
      const detail::NormApplier<C> norm{a.mean, scale(a.m2)};
      detail::normalize_stream<kThreads>(p, q, k.count, k.flat, int(threadIdx.x), vector, pro, epi, norm, map);
    });
  }
}

}  // namespace kiln
