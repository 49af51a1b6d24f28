// kiln/gemm_store.cuh — the GEMM epilogue: tensor-core C fragments through the epilogue functor
// to global memory, and the small helpers the gemm templates share. gemm.cuh includes it; the
// TMA engine (gemm_tma.cuh) includes only this, not the sm_80 tile engine, to keep its units
// small for NVRTC.
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/gemm.h"   // kDynStride
#include "kiln/mma.cuh"   // pack2

namespace kiln {
namespace gemm {

enum Layout : int { kRowMajor = 0, kColMajor = 1 };

struct Identity {
  template <class Index>
  __device__ __forceinline__ float operator()(float acc, Index, Index, Index) const {
    return acc;
  }
};

// [Note: four-lane epilogue]
// An epilogue functor may also have `float4 lanes4(float4 acc, Index batch, Index row, Index col)
// const`: the four adjacent columns col .. col + 3, col a multiple of 4, at once. The generator
// writes one where the four columns share work: a dropout over them draws one Philox block, not
// four (one per element, each keeping one word). A template that holds four adjacent columns
// calls epilogue4, which takes lanes4 where the functor has one, else the element form four times.
template <class Epi, class = void>
struct HasLanes4 {
  static constexpr bool value = false;
};
template <class Epi>
struct HasLanes4<Epi, decltype(void(&Epi::lanes4))> {
  static constexpr bool value = true;
};

template <class Epi, class Index>
__device__ __forceinline__ float4 epilogue4(const Epi& epi, float4 a, Index batch, Index row, Index col) {
  if constexpr (HasLanes4<Epi>::value) {
    return epi.lanes4(a, batch, row, col);
  } else {
    a.x = epi(a.x, batch, row, col);
    a.y = epi(a.y, batch, row, col + 1);
    a.z = epi(a.z, batch, row, col + 2);
    a.w = epi(a.w, batch, row, col + 3);
    return a;
  }
}

template <class T>
struct IsF32 {
  static constexpr bool value = false;
};
template <>
struct IsF32<float> {
  static constexpr bool value = true;
};
template <class A, class B>
struct SameType {
  static constexpr bool value = false;
};
template <class A>
struct SameType<A, A> {
  static constexpr bool value = true;
};

// -infinity without <cmath> (NVRTC has no INFINITY macro).
__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

template <class T>
__device__ __forceinline__ T min_(T a, T b) {
  return a < b ? a : b;
}

// ---------------------------------------------------------------------------------------------
// Stores of four consecutive outputs.
template <class OutT, bool kStream>
__device__ __forceinline__ void store4(OutT* p, const float (&v)[4]) {
  if constexpr (IsF32<OutT>::value) {
    if constexpr (kStream) store_f4_stream(p, v[0], v[1], v[2], v[3]);
    else *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    uint2 w;
    w.x = pack2<OutT>(from_float<OutT>(v[0]), from_float<OutT>(v[1]));
    w.y = pack2<OutT>(from_float<OutT>(v[2]), from_float<OutT>(v[3]));
    if constexpr (kStream) __stcs(reinterpret_cast<uint2*>(p), w);
    else *reinterpret_cast<uint2*>(p) = w;
  }
}
template <class OutT, bool kStream>
__device__ __forceinline__ void store1(OutT* p, float v) {
  if constexpr (kStream) __stcs(p, from_float<OutT>(v));
  else *p = from_float<OutT>(v);
}

// Online (max, sum of exp) update; -inf max means "no element yet".
__device__ __forceinline__ void stats_merge(float& m, float& s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  if (mn == neg_inf()) return;
  s = (m == neg_inf() ? 0.f : s * expf(m - mn)) + (m2 == neg_inf() ? 0.f : s2 * expf(m2 - mn));
  m = mn;
}
// stats_merge of four values at once.
__device__ __forceinline__ void stats_merge4(float& m, float& s, const float (&v)[4]) {
  const float m4 = fmaxf(fmaxf(v[0], v[1]), fmaxf(v[2], v[3]));
  stats_merge(m, s, m4, expf(v[0] - m4) + expf(v[1] - m4) + expf(v[2] - m4) + expf(v[3] - m4));
}

// [Note: dyn matmul extents] (plan_contraction.cpp's [Note: dyn matmul]): a matmul template
// whose M, N, K or Batch template argument is 0 reads that extent at run time from the DynShape
// its run() is given (the kernel's dyn dim argument); every other extent stays a template
// argument. A leading dimension (lda, ldb, ldc) is 0 exactly where it is a dyn extent, and is
// then the one its layout names: a row-major A's is K, a column-major A's M; a row-major B's N, a
// column-major B's K; C's N (the template's own M under swap_ab). In a batched product a batch
// stride that spans the dyn extent is kDynStride (kiln/config/gemm.h), and is then the operand's
// rows x cols at run time (batch_stride; every batched operand is packed); 0 still broadcasts.
// extent(), leading() and batch_stride() fold to the constant where it is known, so a static
// kernel is unchanged.
struct DynShape {
  long long m = 0, n = 0, k = 0, batch = 0;
};
template <long long kStatic>
__device__ __forceinline__ long long extent(long long dyn) {
  if constexpr (kStatic > 0) return kStatic;
  else return dyn;
}
// The leading dimension of an operand stored with `kRowMajorLayout` over (rows x cols): rows are
// M or K, cols K or N, and a row-major operand's lines are its rows.
template <long long kStatic, bool kRowMajorLayout>
__device__ __forceinline__ long long leading(long long rows, long long cols) {
  if constexpr (kStatic > 0) return kStatic;
  else return kRowMajorLayout ? cols : rows;
}

// The batch stride of an operand or C of (rows x cols) elements: kStatic, or where it spans a dyn
// extent (kDynStride) the matrix's size at this launch.
template <long long kStatic>
__device__ __forceinline__ long long batch_stride(long long rows, long long cols) {
  if constexpr (kStatic != kDynStride) return kStatic;
  else return rows * cols;
}

// Output placement of a plain (batched) row-major matrix C(row, col) = C[row * ldc + col].
// Every output policy provides: rows, cols (bounds); apply(epi, v, row, col) -> the stored
// value; put4(row, col, v[4]) for four in-bounds consecutive columns; put1(row, col, v).
template <class OutT, class Index, bool kVec, bool kStream>
struct MatrixOut {
  using Elem = OutT;
  OutT* c;  // already offset to the batch
  Index ldc, rows, cols, batch;
  template <class Epi>
  __device__ __forceinline__ float apply(const Epi& epi, float v, Index row, Index col) const {
    return epi(v, batch, row, col);
  }
  __device__ __forceinline__ void put4(Index row, Index col, const float (&v)[4]) const {
    OutT* dst = c + row * ldc + col;
    if constexpr (kVec) {
      store4<OutT, kStream>(dst, v);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) store1<OutT, kStream>(dst + i, v[i]);
    }
  }
  __device__ __forceinline__ void put1(Index row, Index col, float v) const {
    store1<OutT, kStream>(c + row * ldc + col, v);
  }
  // One 16-bit value given as its bits (store_runs).
  __device__ __forceinline__ void put_bits(Index row, Index col, unsigned short bits) const {
    unsigned short* dst = reinterpret_cast<unsigned short*>(c + row * ldc + col);
    if constexpr (kStream) __stcs(dst, bits);
    else *dst = bits;
  }
};

// [Note: row runs for C without vector stores]
// Where C's rows allow no 4-element stores (MatrixOut without kVec: bf16 C with 3331 columns
// has rows 2-byte aligned), each lane holding columns 4t .. 4t + 3 of row g stored them one at a
// time: a store instruction then wrote 2 (or 4) bytes every 8 (or 16) of each of 8 rows, and
// every 32-byte sector of C took four partial writes. Under Nsight Compute (H100, bf16 a·bᵀ
// 6007x3331x4800 against 3336): 11.7M L2 write sectors against 2.8M, 8.0M write requests against
// 2.1M, 0.400 ms against 0.325 (bench/results/2026-12-07-h100-run1). store_runs moves an 8 x 16
// block (rows g = 0..7 of one fragment half, 16 columns) between the lanes with shuffles so that
// store j writes rows 2j and 2j + 1, 16 consecutive columns each: 16 lanes on one contiguous
// 32 bytes (bf16) or 64 (f32), whole sectors but at the row's ends. 16-bit values move as
// packed pairs, two shuffles a store; f32 four. Each lane stores its own (row, col) in bounds.
template <class Out>
struct RowRuns {
  static constexpr bool value = false;
};
template <class OutT, class Index, bool kStream>
struct RowRuns<MatrixOut<OutT, Index, false, kStream>> {
  static constexpr bool value = true;
};

// v: this lane's four values of row `g`'s columns col16 + 4t .. + 3 (already through the
// epilogue where in bounds); row_of(gg): the C row of fragment row gg (0..7).
template <class Out, class RowOf, class Index>
__device__ __forceinline__ void store_runs(const Out& out, const float (&v)[4], const RowOf& row_of, Index col16) {
  using OutT = typename Out::Elem;
  const int lane = threadIdx.x & 31;
  const int c = lane & 15, i = c & 3;
  const Index col = col16 + c;
  [[maybe_unused]] u32 p01 = 0, p23 = 0;
  if constexpr (sizeof(OutT) == 2) {
    p01 = pack2<OutT>(from_float<OutT>(v[0]), from_float<OutT>(v[1]));
    p23 = pack2<OutT>(from_float<OutT>(v[2]), from_float<OutT>(v[3]));
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int gg = 2 * j + (lane >> 4);
    const int src = 4 * gg + (c >> 2);
    const Index row = row_of(gg);
    if constexpr (sizeof(OutT) == 2) {
      const u32 a = __shfl_sync(0xffffffffu, p01, src);
      const u32 b = __shfl_sync(0xffffffffu, p23, src);
      const u32 w = (i & 2) ? b : a;
      if (row < out.rows && col < out.cols) out.put_bits(row, col, static_cast<unsigned short>((i & 1) ? w >> 16 : w & 0xffffu));
    } else {
      const float x0 = __shfl_sync(0xffffffffu, v[0], src), x1 = __shfl_sync(0xffffffffu, v[1], src);
      const float x2 = __shfl_sync(0xffffffffu, v[2], src), x3 = __shfl_sync(0xffffffffu, v[3], src);
      const float x = i == 0 ? x0 : i == 1 ? x1 : i == 2 ? x2 : x3;
      if (row < out.rows && col < out.cols) out.put1(row, col, x);
    }
  }
}

// Whether four adjacent columns of `Out` are four adjacent columns of the op: the plain row-major
// placement, not a type derived from it (a conv's NhwcOut maps its own rows and columns).
template <class Out>
struct AdjacentColumns {
  static constexpr bool value = false;
};
template <class OutT, class Index, bool kVec, bool kStream>
struct AdjacentColumns<MatrixOut<OutT, Index, kVec, kStream>> {
  static constexpr bool value = true;
};

// v[i] = out.apply(epi, v[i], row, col + i) for four in-bounds columns, col a multiple of 4: at
// once through the functor's lanes4 where the columns are the op's ([Note: four-lane epilogue]).
template <class Out, class Epi, class Index>
__device__ __forceinline__ void apply_columns4(const Out& out, const Epi& epi, float (&v)[4], Index row, Index col) {
  if constexpr (AdjacentColumns<Out>::value) {   // (MatrixOut::apply is epi(v, batch, row, col))
    const float4 r = epilogue4(epi, make_float4(v[0], v[1], v[2], v[3]), out.batch, row, col);
    v[0] = r.x;
    v[1] = r.y;
    v[2] = r.z;
    v[3] = r.w;
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = out.apply(epi, v[i], row, col + i);
  }
}

// The transposed placement C(row, col) = C[col * ldc + row]: the TMA engine's output when it
// computes Cᵀ = Bᵀ·Aᵀ (config swap_ab). Its rows and cols are the engine's (the op's cols and
// rows); the epilogue still sees the op's (row, col). put4's four values go to four C rows.
template <class OutT, class Index, bool kStream>
struct TransposedOut {
  OutT* c;  // already offset to the batch
  Index ldc, rows, cols, batch;
  template <class Epi>
  __device__ __forceinline__ float apply(const Epi& epi, float v, Index row, Index col) const {
    return epi(v, batch, col, row);
  }
  __device__ __forceinline__ void put4(Index row, Index col, const float (&v)[4]) const {
#pragma unroll
    for (int i = 0; i < 4; ++i) store1<OutT, kStream>(c + (col + i) * ldc + row, v[i]);
  }
  __device__ __forceinline__ void put1(Index row, Index col, float v) const {
    store1<OutT, kStream>(c + col * ldc + row, v);
  }
  // Rows row and row + 1 of one column: one store (row and ldc even, c aligned to two elements).
  __device__ __forceinline__ void put2(Index row, Index col, float v0, float v1) const {
    Vec<OutT, 2> v;
    v.v[0] = from_float<OutT>(v0);
    v.v[1] = from_float<OutT>(v1);
    store_vec_bits<kStream>(c + col * ldc + row, v);
  }
};

// Which row of the warp tile fragment row (mt, h, g) holds: the MMA's own order. (The TMA
// engine's consumers that take A through registers permute their rows: TmaEngine::Rows.)
struct DenseRows {
  __device__ __forceinline__ int operator()(int mt, int h, int g) const { return mt * 16 + h * 8 + g; }
};

// The warp's C fragments -> epilogue functor -> global memory (16-byte stores where allowed).
// row0/col0: the warp tile's first GEMM row/column (col0 a multiple of 16, as every warp tile's
// is: four adjacent columns start at a multiple of 4); fragment row (mt, h, g) is row
// row0 + rows(mt, h, g). rmax/rsum: per-row running statistics of the stored values (only with
// kRowStats).
template <class Index, int MT, int NT, bool kRowStats, class Out, class Epi, class Rows = DenseRows>
__device__ __forceinline__ void store_fragments(const float (&acc)[MT][NT][4], const Out& out,
                                                Index row0, Index col0, const Epi& epi,
                                                float (&rmax)[MT][2], float (&rsum)[MT][2],
                                                const Rows& rows = Rows{}) {
  static_assert(NT % 2 == 0, "warp tile N must be a multiple of 16");
  const int lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const int odd = t & 1;
  const int src01 = (lane & ~3) | ((odd << 1) | (t >> 1));
  const int src23 = src01 ^ 1;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const Index row = row0 + rows(mt, h, g);
#pragma unroll
      for (int p = 0; p < NT / 2; ++p) {
        // Quad exchange: lane t ends up with columns 16p + 4t .. 4t+3 of this row. Rounds 0-1
        // read lane {0,2,1,3}[t] which sends n-tile 2p + (its t & 1); rounds 2-3 read the
        // neighbour (lane ^ 1) which sends the other n-tile.
        const float sa0 = odd ? acc[mt][2 * p + 1][2 * h] : acc[mt][2 * p][2 * h];
        const float sa1 = odd ? acc[mt][2 * p + 1][2 * h + 1] : acc[mt][2 * p][2 * h + 1];
        const float sb0 = odd ? acc[mt][2 * p][2 * h] : acc[mt][2 * p + 1][2 * h];
        const float sb1 = odd ? acc[mt][2 * p][2 * h + 1] : acc[mt][2 * p + 1][2 * h + 1];
        const float r0 = __shfl_sync(0xffffffffu, sa0, src01);
        const float r1 = __shfl_sync(0xffffffffu, sa1, src01);
        const float r2 = __shfl_sync(0xffffffffu, sb0, src23);
        const float r3 = __shfl_sync(0xffffffffu, sb1, src23);
        float v[4];
        if (t < 2) { v[0] = r0; v[1] = r1; v[2] = r2; v[3] = r3; }
        else       { v[0] = r2; v[1] = r3; v[2] = r0; v[3] = r1; }
        const Index col = col0 + p * 16 + 4 * t;
        // Without vector stores, the values are stored after the epilogue by store_runs ([Note:
        // row runs for C without vector stores]), else here.
        constexpr bool kRuns = RowRuns<Out>::value;
        if (row < out.rows) {
          if (col + 3 < out.cols) {
            apply_columns4(out, epi, v, row, col);
            if constexpr (!kRuns) out.put4(row, col, v);
            if constexpr (kRowStats) stats_merge4(rmax[mt][h], rsum[mt][h], v);
          } else {
#pragma unroll
            for (int i = 0; i < 4; ++i)
              if (col + i < out.cols) {
                v[i] = out.apply(epi, v[i], row, col + i);
                if constexpr (!kRuns) out.put1(row, col + i, v[i]);
                if constexpr (kRowStats) stats_merge(rmax[mt][h], rsum[mt][h], v[i], 1.f);
              }
          }
        }
        if constexpr (kRuns) store_runs(out, v, [&](int gg) { return row0 + rows(mt, h, gg); }, col0 + p * 16);
      }
    }
}

// The fragments of one 16-row slab straight to TransposedOut, each value on its own: the quad
// exchange of store_fragments only serves 16-byte row stores, and a transposed C takes none. A
// store instruction (fixed h, j, i) covers 8 consecutive C rows (the lanes' g, DenseRows) of 4
// C columns (the lanes' t): four whole 32-byte sectors, as with the exchange, in less code.
template <class Index, int NT, class Out, class Epi, class Rows>
__device__ __forceinline__ void store_fragments_direct(const float (&acc)[NT][4], const Out& out, Index row0,
                                                       Index col0, const Epi& epi, const Rows& rows) {
  const int lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const Index row = row0 + rows(0, h, g);
    if (row >= out.rows) continue;
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const Index col = col0 + 8 * j + 2 * t + i;
        if (col < out.cols) out.put1(row, col, out.apply(epi, acc[j][2 * h + i], row, col));
      }
  }
}

// As store_fragments_direct, where fragment rows (0, g) and (1, g) are C rows r and r + 1 with r
// even (the TMA engine's kRowsPairs), into a TransposedOut whose ldc is even: each lane's two
// values of a column are one store of two elements (half the store instructions).
template <class Index, int NT, class Out, class Epi, class Rows>
__device__ __forceinline__ void store_fragment_pairs(const float (&acc)[NT][4], const Out& out, Index row0,
                                                     Index col0, const Epi& epi, const Rows& rows) {
  const int lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const Index row = row0 + rows(0, 0, g);
  if (row >= out.rows) return;
  const bool both = row + 1 < out.rows;
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const Index col = col0 + 8 * j + 2 * t + i;
      if (col >= out.cols) continue;
      const float v0 = out.apply(epi, acc[j][i], row, col);
      if (both) out.put2(row, col, v0, out.apply(epi, acc[j][2 + i], row + 1, col));
      else out.put1(row, col, v0);
    }
}

// A consumer warp's accumulators (16 rows of a 64-row slab, BN columns) through the epilogue:
// fragment row (h, g) is row row0 + rows(0, h, g).
template <class Index, int NT, class Out, class Epi, class Rows = DenseRows>
__device__ __forceinline__ void store_accumulators(const float (&acc)[NT][4], const Out& out, Index row0, Index col0,
                                                   const Epi& epi, const Rows& rows = Rows{}) {
  float rmax[1][2], rsum[1][2];   // row statistics: not kept (the TMA engines, attention)
  const float (&frag)[1][NT][4] = reinterpret_cast<const float (&)[1][NT][4]>(acc);
  store_fragments<Index, 1, NT, false>(frag, out, row0, col0, epi, rmax, rsum, rows);
}

}  // namespace gemm
}  // namespace kiln
