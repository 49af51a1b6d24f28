// kiln/gemv_mma.cuh — skinny products on the tensor cores (GemmKind::GemvMma): C = A·B where M or
// N is at most kGemvMaxP, f32 inputs in tf32 or 3xTF32, the big operand k-contiguous.
//
// ============================================================================================
// CONTRACT (what the emitter instantiates)
// --------------------------------------------------------------------------------------------
// kiln::gemm::GemvMma<Prec, Index, R, P, K, Batch, kBigIsA, ldBig, strideBig, xK, xP, strideX,
//                     ldc, strideC, BlockRows, SplitK, Threads>
//   template <class OutT, class Epi>
//   static __device__ void run(const float* A, const float* B, OutT* C, Epi epi);
// The operands, x's placement, C and the K slices are Gemv's (gemv.cuh's contract), with the big
// operand's rows k-contiguous (row r at big + r * ldBig), ldBig, strideBig and the pointer 16-byte
// aligned. Prec: kiln::Tf32 (one product) or kiln::Tf32x3 (three: f32 accuracy, mma.cuh). Split s
// covers k of [s * gemv_mma_slice(K, SplitK), ...). Launch (gemm_geometry, kind GemvMma): grid
// (R / BlockRows, SplitK, Batch), block Threads (8 warps), static shared memory only.
//
// [Note: skinny products on the tensor cores]
// Gemv's FMA sums take, per element of the big operand, P products and x's P values from L1: past
// P of 8 the x loads bound it (8192 x 16 x 8192 f32: 0.303 ms against cuBLAS's 0.155 on an H100,
// bench/results/2026-12-07-h100-run7). Here a warp takes 16 rows (an m16 tile; 32 with two) and
// each step 32 k of them. A sum over k does not care in which order the k come, so a lane (g, t)
// (g = lane / 4, t = lane % 4) loads 8 consecutive k of its rows g and g + 8 as two 16-byte loads,
// k = 8t .. 8t + 7, and mma j (0..3) takes k 8t + 2j in fragment k-slot t and 8t + 2j + 1 in slot
// t + 4, for A and B alike: the m16n8k8 A fragment comes straight from the loads, no shared memory
// for the big operand. x's chunk of kGemvMmaChunk k lives in shared memory transposed, xs[p][k]
// (as tf32 hi, and lo in 3xTF32, split once per block and chunk), rows kGemvMmaChunk + 4 floats
// apart, so lane (g, t)'s two 16-byte loads of xs[8 nt + g][8t ..] fall on 8 distinct 16-byte bank
// groups in each quarter warp. The next step's A loads are issued before this step's products.
// Column p of x past P reads zero; k past the slice's end reads zero on both sides; a row past R
// reads row R - 1 and stores nothing.
//
// [Note: the step's sums]
// The tensor cores' f32 accumulation does not round as an f32 add does: chaining a whole K slice
// through the mma accumulators lost accuracy with the slice's length (H100, 8192 x 16 x 8192 in
// 3xTF32: norm-wise error 4.3e-5 at 2 slices of 4096, 1.8e-5 at 5, within 1e-5 only at 10;
// bench/results/2026-12-08-h100-run1). So each step's 32 k are summed from zero on the tensor
// cores and added to the running sums with f32 adds, as the TMA engine's 3xTF32 promotes each k
// tile.
// ============================================================================================
#pragma once

#include "kiln/gemv.cuh"
#include "kiln/mma.cuh"

namespace kiln {
namespace gemm {

template <class Prec, class Index, long long R, int P, long long K, long long Batch, bool kBigIsA, long long ldBig,
          long long strideBig, long long xK, long long xP, long long strideX, long long ldc, long long strideC,
          int BlockRows, int SplitK, int Threads>
struct GemvMma {
  static constexpr int kThreads = Threads;
  static constexpr int kWarps = Threads / 32;
  static constexpr bool kX3 = SameType<Prec, Tf32x3>::value;
  static constexpr int kParts = kX3 ? 2 : 1;                       // tf32 hi (and lo) parts of x
  static constexpr int kMT = gemv_mma_tiles_a_warp(BlockRows);     // m16 tiles a warp
  static constexpr int kNT = (P + 7) / 8;                          // n8 tiles
  static constexpr int kCols = 8 * kNT;
  static constexpr int kStep = kGemvMmaStep, kChunk = kGemvMmaChunk;
  static constexpr int kLd = kChunk + 4;                           // floats a row of xs
  static constexpr long long kSlice = gemv_mma_slice(K, SplitK);
  static constexpr long long kSplitStride = SplitK > 1 ? Batch * R * P : 0;
  static_assert(SameType<Prec, Tf32>::value || kX3, "GemvMma: tf32 or 3xTF32 products");
  static_assert(Threads == kGemvThreads && kMT >= 1 && BlockRows == 16 * kWarps * kMT, "BlockRows");
  static_assert(P >= 1 && P <= kGemvMaxP, "P: the skinny side");
  static_assert(kStep == 32 && kChunk % kStep == 0, "a lane's 8 k of a step");
  static_assert(ldBig % 4 == 0 && strideBig % 4 == 0, "16-byte loads of the big operand");

  using Tile = float[kParts][kCols][kLd];

  // x(k0 .., p) for the chunk's kChunk k into xs (zero past P and past k_end), coalesced along
  // whichever of k and p is x's contiguous dim.
  static __device__ __forceinline__ void stage_x(const float* x, long long k0, long long k_end, Tile& xs) {
    for (int e = threadIdx.x; e < kChunk * kCols; e += Threads) {
      const int p = xP == 1 ? e % kCols : e / kChunk;
      const int kk = xP == 1 ? e / kCols : e % kChunk;
      const long long k = k0 + kk;
      const float v = p < P && k < k_end ? ldg(x + Index(k) * Index(xK) + Index(p) * Index(xP)) : 0.f;
      if constexpr (kX3) {
        tf32_split(v, xs[0][p][kk], xs[1][p][kk]);
      } else {
        xs[0][p][kk] = __uint_as_float(tf32_rna(v));
      }
    }
  }

  // The lane's A values of the step at k: rows (mt, h) = 16 mt + 8 h + g, k + 8t .. + 7 (zero
  // past k_end).
  static __device__ __forceinline__ void load_a(const float* const (&rows)[kMT][2], long long k, long long k_end,
                                                int t, float (&a)[kMT][2][8]) {
    const long long k8 = k + 8 * t;
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float(&v)[8] = a[mt][h];
        if (k8 + 8 <= k_end) {
          float lo[4], hi[4];
          load_floats<float, 4>(rows[mt][h] + Index(k8), lo);
          load_floats<float, 4>(rows[mt][h] + Index(k8 + 4), hi);
#pragma unroll
          for (int i = 0; i < 4; ++i) v[i] = lo[i], v[4 + i] = hi[i];
        } else {
#pragma unroll
          for (int i = 0; i < 8; ++i) v[i] = k8 + i < k_end ? ldg(rows[mt][h] + Index(k8 + i)) : 0.f;
        }
      }
  }

  // One step's products: the chunk's k kk .. kk + 31 ([Note: skinny products on the tensor cores]),
  // summed on the tensor cores from zero, then added to acc in f32 ([Note: the step's sums]).
  static __device__ __forceinline__ void step(const float (&a)[kMT][2][8], const Tile& xs, int kk, int g, int t,
                                              float (&acc)[kMT][kNT][4]) {
    float d[kMT][kNT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) d[mt][nt][i] = 0.f;
    float b[kParts][kNT][8];
#pragma unroll
    for (int part = 0; part < kParts; ++part)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
        const float4 b0 = *reinterpret_cast<const float4*>(&xs[part][8 * nt + g][kk + 8 * t]);
        const float4 b1 = *reinterpret_cast<const float4*>(&xs[part][8 * nt + g][kk + 8 * t + 4]);
        b[part][nt][0] = b0.x, b[part][nt][1] = b0.y, b[part][nt][2] = b0.z, b[part][nt][3] = b0.w;
        b[part][nt][4] = b1.x, b[part][nt][5] = b1.y, b[part][nt][6] = b1.z, b[part][nt][7] = b1.w;
      }
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        // fragment (row g, slot t), (g + 8, t), (g, t + 4), (g + 8, t + 4)
        const float v[4] = {a[mt][0][2 * j], a[mt][1][2 * j], a[mt][0][2 * j + 1], a[mt][1][2 * j + 1]};
        u32 hi[4], lo[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          if constexpr (kX3) tf32_split(v[r], hi[r], lo[r]);
          else hi[r] = tf32_rna(v[r]);
        }
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) {
          const u32 bh[2] = {__float_as_uint(b[0][nt][2 * j]), __float_as_uint(b[0][nt][2 * j + 1])};
          if constexpr (kX3) {   // small terms first (mma.cuh)
            const u32 bl[2] = {__float_as_uint(b[kParts - 1][nt][2 * j]), __float_as_uint(b[kParts - 1][nt][2 * j + 1])};
            mma_tf32_16x8x8(d[mt][nt], lo, bh);
            mma_tf32_16x8x8(d[mt][nt], hi, bl);
          }
          mma_tf32_16x8x8(d[mt][nt], hi, bh);
        }
      }
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[mt][nt][i] += d[mt][nt][i];
  }

  template <class OutT, class Epi>
  static __device__ __forceinline__ void run(const float* A, const float* B, OutT* C, Epi epi) {
    __shared__ __align__(16) Tile xs;
    const int split = blockIdx.y;
    const Index batch = blockIdx.z;
    const float* big = (kBigIsA ? A : B) + batch * Index(strideBig);
    const float* x = (kBigIsA ? B : A) + batch * Index(strideX);
    const long long k_begin = split * kSlice;
    const long long k_end = K < k_begin + kSlice ? K : k_begin + kSlice;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const Index r0 = Index(blockIdx.x) * BlockRows + warp * 16 * kMT;
    const float* rows[kMT][2];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const Index r = r0 + 16 * mt + 8 * h + g;
        rows[mt][h] = big + (r < Index(R) ? r : Index(R) - 1) * Index(ldBig);
      }
    float acc[kMT][kNT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[mt][nt][i] = 0.f;
    float a[kMT][2][8];
    if (k_begin < k_end) load_a(rows, k_begin, k_end, t, a);
    // Every thread walks the same k range (the block's), so the barriers are uniform.
    for (long long k = k_begin; k < k_end; k += kStep) {
      const int kk = int((k - k_begin) % kChunk);
      if (kk == 0) {
        __syncthreads();   // the previous chunk's readers are done
        stage_x(x, k, k_end, xs);
        __syncthreads();
      }
      float next[kMT][2][8];
      const bool more = k + kStep < k_end;
      if (more) load_a(rows, k + kStep, k_end, t, next);
      step(a, xs, kk, g, t, acc);
      if (more) {
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int i = 0; i < 8; ++i) a[mt][h][i] = next[mt][h][i];
      }
    }
    // acc[mt][nt]: (row g, columns 2t, 2t + 1), then row g + 8 (mma.cuh's C layout)
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const Index r = r0 + 16 * mt + 8 * h + g;
        if (r >= Index(R)) continue;
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            const int p = 8 * nt + 2 * t + i;
            if (p < P) gemv_store<kBigIsA, kSplitStride, strideC, ldc>(C, split, batch, r, p, acc[mt][nt][2 * h + i], epi);
          }
      }
  }
};

}  // namespace gemm
}  // namespace kiln
