// kiln/gemv.cuh — skinny products (GemmKind::Gemv): C = A·B where M or N is at most
// kGemvMaxP (config/gemm.h), a memory-bound stream over the large operand with f32 FMA.
//
// ============================================================================================
// CONTRACT (what the emitter instantiates)
// --------------------------------------------------------------------------------------------
// kiln::gemm::Gemv<E, Index, R, P, K, Batch, kBigIsA, kBigKContig, ldBig, strideBig, xK, xP,
//                  strideX, ldc, strideC, BlockRows, V, kVecX, SplitK, Threads>
//   template <class OutT, class Epi>
//   static __device__ void run(const E* A, const E* B, OutT* C, Epi epi);
// The large operand ("big": A when kBigIsA, else B) has R rows of m (A) or n (B) and K columns;
// the small one ("x") has P columns. x(k, p) = X[k * xK + p * xP] (+ strideX per batch; 0
// broadcasts). Output element (r, p) is C(m, n) = (r, p) when kBigIsA, else (p, r):
// C[batch * strideC + m * ldc + n] = epi(sum_k big(r, k) x(k, p), batch, m, n), f32 FMA (the
// products of tf32 or 16-bit inputs are exact in f32; the sum is in f32 in every precision).
// SplitK > 1: split s (k from s * kKChunk) goes to C + s * Batch * M * N; the caller passes the f32
// workspace as C with ldc = N, strideC = M * N and gemm::Identity, and SplitKReduce finishes.
// Launch (config/gemm.h's gemm_geometry, kind Gemv): grid (R / BlockRows, SplitK, Batch), block
// Threads (8 warps), no dynamic shared memory.
//
// [Note: the skinny product]
// Reading the big operand once at the copy bandwidth is the whole cost; the P columns of x are
// small and stay in L1/L2. Two shapes of the stream, after the big operand's layout:
// - k contiguous (A row-major, or B stored [N, K]: a linear layer's weight): "row dot". A block
//   takes BlockRows rows; the 8 / BlockRows warps of a row split its k range, each lane loading
//   V contiguous elements (16 bytes) at a time, 4 loads in flight per lane. Lanes reduce with
//   shuffles, warps of a row through shared memory. With BlockRows > 8 (gemv_warp_rows), each
//   warp carries BlockRows / 8 rows over the whole k range instead, every lane's x values
//   serving all of them ([Note: rows a warp carries]).
// - k strided (the big dim contiguous): "column sweep". A block takes 32 * V consecutive rows r
//   (each lane V of them, 16-byte loads) and its 8 warps split k; x(k, p) is the same for every
//   lane (one broadcast load). The warps' partial sums are added in warp order in shared memory.
// Every sum is taken in a fixed order: the result does not depend on timing.
// kVecX: x's loads take 16 bytes, either along k (xK == 1: x(k .. k + V, p) one vector) or, for
// x stored [K, P] (xP == 1, xK == P), as the V x P block x(k .. k + V, 0 .. P), P vectors.
//
// [Note: rows a warp carries]
// A row dot of one row a warp reads x(k, p) for all P columns once per row: P times the big
// operand's bytes from L1 and L2, which past P of about 2 bound the kernel (8192 x 8 x 8192 f32
// took 2.13 ms on an H100 against cuBLAS's 0.155, 8192 x 16 x 8192 4.27 ms:
// bench/results/2026-12-07-h100-run6/). A warp that carries W rows reads them once for W rows
// (acc W x P registers a lane), and the block's 8 warps walk the same k range together, so the
// block reads x about once per pass from L2. On an H100 (bench/results/2026-12-07-h100-run7/)
// 8192 x 8 x 8192 took 0.114 ms with 8 rows a warp (torch.matmul 0.154), 8192 x 16 x 8192 0.303
// with 4: the planner's rule for x stored [K, P] ([Note: gemv picks] in plan_contraction.cpp).
// ============================================================================================
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/gemm.h"
#include "kiln/gemm_store.cuh"

namespace kiln {
namespace gemm {

// V consecutive elements as floats (16 bytes when V * sizeof(E) == 16, aligned by the caller).
template <class E, int V>
__device__ __forceinline__ void load_floats(const E* p, float (&f)[V]) {
  if constexpr (V * int(sizeof(E)) == 16) {
    const Vec<E, V> v = bit_cast_dev<Vec<E, V>>(ldg16(p));
#pragma unroll
    for (int i = 0; i < V; ++i) f[i] = to_float(v.v[i]);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) f[i] = to_float(p[i]);
  }
}

// Sum (row r of the big operand, column p of x) of a skinny product, through the epilogue, to C, or
// (with K slices) to slice `split` of the workspace (kSplitStride apart) that SplitKReduce adds.
template <bool kBigIsA, long long kSplitStride, long long strideC, long long ldc, class OutT, class Index, class Epi>
__device__ __forceinline__ void gemv_store(OutT* C, int split, Index batch, Index r, int p, float v, const Epi& epi) {
  const Index m = kBigIsA ? r : Index(p), n = kBigIsA ? Index(p) : r;
  store1<OutT, false>(C + Index(split) * Index(kSplitStride) + batch * Index(strideC) + m * Index(ldc) + n,
                      epi(v, batch, m, n));
}

template <class E, class Index, long long R, int P, long long K, long long Batch, bool kBigIsA, bool kBigKContig,
          long long ldBig, long long strideBig, long long xK, long long xP, long long strideX, long long ldc,
          long long strideC, int BlockRows, int V, bool kVecX, int SplitK, int Threads>
struct Gemv {
  static constexpr int kThreads = Threads;
  static constexpr int kWarps = Threads / 32;
  static constexpr int kUnroll = 4;   // 16-byte loads in flight per lane
  // Each split covers a whole number of V-element vectors, so the loads stay aligned.
  static constexpr long long kKChunk = ((K + SplitK - 1) / SplitK + V - 1) / V * V;
  static constexpr long long kSplitStride = SplitK > 1 ? Batch * R * P : 0;
  static_assert(P >= 1 && P <= kGemvMaxP, "P: the skinny side");
  static_assert(Threads == kGemvThreads, "config/gemm.h sizes the grid for this block");
  // Rows each warp carries (BlockRows past the warps: [Note: rows a warp carries]), else 1.
  static constexpr int kWarpRows = gemv_rows_a_warp(kBigKContig, BlockRows);
  static_assert(kBigKContig ? (BlockRows >= 1 && (BlockRows <= kWarps ? kWarps % BlockRows == 0
                                                                      : BlockRows % kWarps == 0))
                            : BlockRows == 32 * V, "BlockRows");
  static_assert(kWarpRows * P <= kGemvMaxWarpSums, "a warp's sums: kGemvMaxWarpSums registers a lane");
  // x's 16-byte loads as V x P blocks: x stored [K, P].
  static constexpr bool kXBlocks = kVecX && xK != 1;
  static_assert(!kVecX || (xK == 1 && (P == 1 || xP % V == 0)) || (xP == 1 && xK == P),
                "vector loads of x need k contiguous or x stored [K, P]");

  template <class OutT, class Epi>
  static __device__ __forceinline__ void store(OutT* C, int split, Index batch, Index r, int p, float v,
                                               const Epi& epi) {
    gemv_store<kBigIsA, kSplitStride, strideC, ldc>(C, split, batch, r, p, v, epi);
  }

  // x(k .. k + V - 1, p) as floats: one vector where x is k-contiguous, else element by element.
  static __device__ __forceinline__ void load_x(const E* x, long long k, int p, float (&f)[V]) {
    if constexpr (kVecX && !kXBlocks) {
      load_floats<E, V>(x + Index(k) + Index(p) * Index(xP), f);
    } else {
#pragma unroll
      for (int i = 0; i < V; ++i) f[i] = to_float(ldg(x + Index(k + i) * Index(xK) + Index(p) * Index(xP)));
    }
  }

  // f[p][i] = x(k + i, p) for every p < P and i < V: x stored [K, P] (kXBlocks) as the V x P block
  // of P vectors, else column by column (load_x).
  static __device__ __forceinline__ void load_x_block(const E* x, long long k, float (&f)[P][V]) {
    if constexpr (kXBlocks) {
#pragma unroll
      for (int j = 0; j < P; ++j) {
        float part[V];
        load_floats<E, V>(x + Index(k) * Index(P) + Index(j * V), part);
#pragma unroll
        for (int e = 0; e < V; ++e) f[(j * V + e) % P][(j * V + e) / P] = part[e];
      }
    } else {
#pragma unroll
      for (int p = 0; p < P; ++p) load_x(x, k, p, f[p]);
    }
  }

  template <class OutT, class Epi>
  static __device__ __forceinline__ void run(const E* A, const E* B, OutT* C, Epi epi) {
    const int split = blockIdx.y;
    const Index batch = blockIdx.z;
    const E* big = (kBigIsA ? A : B) + batch * Index(strideBig);
    const E* x = (kBigIsA ? B : A) + batch * Index(strideX);
    const long long k_begin = split * kKChunk;
    const long long k_end = K < k_begin + kKChunk ? K : k_begin + kKChunk;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if constexpr (kWarpRows > 1) warp_rows(big, x, C, epi, split, batch, k_begin, k_end, warp, lane);
    else if constexpr (kBigKContig) row_dot(big, x, C, epi, split, batch, k_begin, k_end, warp, lane);
    else column_sweep(big, x, C, epi, split, batch, k_begin, k_end, warp, lane);
  }

  // acc[p] += big[0 .. V) . x(k .., p)
  static __device__ __forceinline__ void fma_vec(const float (&b)[V], const E* x, long long k, float (&acc)[P]) {
#pragma unroll
    for (int p = 0; p < P; ++p) {
      float xf[V];
      load_x(x, k, p, xf);
#pragma unroll
      for (int i = 0; i < V; ++i) acc[p] = fmaf(b[i], xf[i], acc[p]);
    }
  }

  // [Note: rows a warp carries]: warp w takes the block's rows w * kWarpRows .. + kWarpRows over
  // the split's whole k range (a row past R reads row R - 1 and stores nothing); its lanes' sums
  // are added by shuffles, and lane e % 32 stores sum e (row e / P, column e % P).
  template <class OutT, class Epi>
  static __device__ __forceinline__ void warp_rows(const E* big, const E* x, OutT* C, const Epi& epi, int split,
                                                   Index batch, long long k_begin, long long k_end, int warp,
                                                   int lane) {
    const Index r0 = Index(blockIdx.x) * BlockRows + warp * kWarpRows;
    if (r0 >= Index(R)) return;   // (no block-wide sync below)
    const E* rows[kWarpRows];
#pragma unroll
    for (int j = 0; j < kWarpRows; ++j) rows[j] = big + (r0 + j < Index(R) ? r0 + j : Index(R) - 1) * Index(ldBig);
    float acc[kWarpRows][P];
#pragma unroll
    for (int j = 0; j < kWarpRows; ++j)
#pragma unroll
      for (int p = 0; p < P; ++p) acc[j][p] = 0.f;
    long long k = k_begin + lane * V;
#pragma unroll 2
    for (; k + V <= k_end; k += 32LL * V) {
      float b[kWarpRows][V];
#pragma unroll
      for (int j = 0; j < kWarpRows; ++j) load_floats<E, V>(rows[j] + Index(k), b[j]);
      float xf[P][V];
      load_x_block(x, k, xf);
#pragma unroll
      for (int j = 0; j < kWarpRows; ++j)
#pragma unroll
        for (int p = 0; p < P; ++p)
#pragma unroll
          for (int i = 0; i < V; ++i) acc[j][p] = fmaf(b[j][i], xf[p][i], acc[j][p]);
    }
    // The last split's tail when K is not a multiple of V: one element per lane.
    for (long long t = k_begin + (k_end - k_begin) / V * V + lane; t < k_end; t += 32)
#pragma unroll
      for (int p = 0; p < P; ++p) {
        const float xv = to_float(ldg(x + Index(t) * Index(xK) + Index(p) * Index(xP)));
#pragma unroll
        for (int j = 0; j < kWarpRows; ++j) acc[j][p] = fmaf(to_float(rows[j][Index(t)]), xv, acc[j][p]);
      }
#pragma unroll
    for (int j = 0; j < kWarpRows; ++j)
#pragma unroll
      for (int p = 0; p < P; ++p) {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) acc[j][p] += __shfl_xor_sync(0xffffffffu, acc[j][p], o);
        const int e = j * P + p;
        if ((e & 31) == lane && r0 + j < Index(R)) store(C, split, batch, r0 + j, p, acc[j][p], epi);
      }
  }

  template <class OutT, class Epi>
  static __device__ __forceinline__ void row_dot(const E* big, const E* x, OutT* C, const Epi& epi, int split,
                                                 Index batch, long long k_begin, long long k_end, int warp, int lane) {
    constexpr int kParts = kWarps / BlockRows;   // warps per row
    constexpr long long kStep = 32LL * kParts * V;
    __shared__ float red[kWarps][P];
    const int local = warp % BlockRows, part = warp / BlockRows;
    const Index r = Index(blockIdx.x) * BlockRows + local;
    float acc[P];
#pragma unroll
    for (int p = 0; p < P; ++p) acc[p] = 0.f;
    if (r < Index(R)) {
      const E* row = big + r * Index(ldBig);
      long long k = k_begin + (part * 32LL + lane) * V;
      for (; k + (kUnroll - 1) * kStep + V <= k_end; k += kUnroll * kStep) {
        float b[kUnroll][V];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) load_floats<E, V>(row + Index(k + u * kStep), b[u]);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) fma_vec(b[u], x, k + u * kStep, acc);
      }
      for (; k + V <= k_end; k += kStep) {
        float b[V];
        load_floats<E, V>(row + Index(k), b);
        fma_vec(b, x, k, acc);
      }
      // The last split's tail when K is not a multiple of V: one element per lane.
      const long long tail = k_begin + (k_end - k_begin) / V * V;
      for (long long t = tail + part * 32LL + lane; t < k_end; t += 32LL * kParts)
#pragma unroll
        for (int p = 0; p < P; ++p)
          acc[p] = fmaf(to_float(row[Index(t)]), to_float(ldg(x + Index(t) * Index(xK) + Index(p) * Index(xP))),
                        acc[p]);
    }
#pragma unroll
    for (int p = 0; p < P; ++p) {
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) acc[p] += __shfl_xor_sync(0xffffffffu, acc[p], o);
      if (lane == 0) red[warp][p] = acc[p];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < BlockRows * P; i += Threads) {
      const int rl = i / P, p = i % P;
      const Index row = Index(blockIdx.x) * BlockRows + rl;
      if (row >= Index(R)) continue;
      float s = 0.f;
      for (int q = 0; q < kParts; ++q) s += red[q * BlockRows + rl][p];
      store(C, split, batch, row, p, s, epi);
    }
  }

  template <class OutT, class Epi>
  static __device__ __forceinline__ void column_sweep(const E* big, const E* x, OutT* C, const Epi& epi, int split,
                                                      Index batch, long long k_begin, long long k_end, int warp,
                                                      int lane) {
    __shared__ float red[BlockRows][P];
    const Index r0 = Index(blockIdx.x) * BlockRows + lane * V;
    const bool whole = r0 + V <= Index(R);
    float acc[P][V];
#pragma unroll
    for (int p = 0; p < P; ++p)
#pragma unroll
      for (int i = 0; i < V; ++i) acc[p][i] = 0.f;
    if (r0 < Index(R)) {
#pragma unroll 4
      for (long long k = k_begin + warp; k < k_end; k += kWarps) {
        const E* src = big + Index(k) * Index(ldBig) + r0;
        float b[V];
        if (whole) {
          load_floats<E, V>(src, b);
        } else {
#pragma unroll
          for (int i = 0; i < V; ++i) b[i] = r0 + i < Index(R) ? to_float(src[i]) : 0.f;
        }
#pragma unroll
        for (int p = 0; p < P; ++p) {
          const float xv = to_float(ldg(x + Index(k) * Index(xK) + Index(p) * Index(xP)));
#pragma unroll
          for (int i = 0; i < V; ++i) acc[p][i] = fmaf(b[i], xv, acc[p][i]);
        }
      }
    }
    // The warps' sums in warp order: warp 0 writes, warps 1.. add theirs one after another.
    for (int w = 0; w < kWarps; ++w) {
      if (warp == w)
#pragma unroll
        for (int p = 0; p < P; ++p)
#pragma unroll
          for (int i = 0; i < V; ++i) red[lane * V + i][p] = w == 0 ? acc[p][i] : red[lane * V + i][p] + acc[p][i];
      __syncthreads();
    }
    for (int i = threadIdx.x; i < BlockRows * P; i += Threads) {
      const int rl = i / P, p = i % P;
      const Index row = Index(blockIdx.x) * BlockRows + rl;
      if (row < Index(R)) store(C, split, batch, row, p, red[rl][p], epi);
    }
  }
};

}  // namespace gemm
}  // namespace kiln
