// kiln/gemm_prep.cuh — gemm::OperandPrep, the TMA engine's pre-pass (contract 2d in gemm.cuh).
// In a header of its own so that its units (one per prepared operand, and two per conv on the
// engine) do not compile the sm_80 tile engine: NVRTC time is part of a first call's latency.
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/gemm.h"   // kPrepTile, kPrepVecRows: the launch rule's block sizes
#include "kiln/mma.cuh"          // tf32_split

namespace kiln {
namespace gemm {

// The copy's rows, row stride and batch stride (elements) at a launch, where OperandPrep's Rows is
// 0: a conv's copy of x with dyn spatial extents ([Note: dyn conv spatial extents] in
// kiln/conv_shape.cuh), its rows H x W, ld H x W and stride C x H x W (DynValue arguments).
struct PrepRows {
  long long rows = 0, ld = 0, stride = 0;
};

// One operand of the TMA engine copied k-major into a workspace the engine can map:
//   dst[b][r][k] = src[b * kStride + (kKContig ? q * kLd + k : k * kLd + q)]   r < Rows, k < K
// (r: the operand's m or n; q = r, or Rows - 1 - r with kReversed: a transposed conv's filters,
// flipped for the forward conv the engine runs), with dst rows kLdw elements apart
// (config/gemm.h's prep_ldw: K rounded up to 16 bytes, a tensor map's stride rule). Two things bring an operand here: wgmma
// reads f32 only k-major (a k-strided f32 operand is transposed), and a tensor map needs every
// stride to be a multiple of 16 bytes (an operand whose rows are not is copied to padded rows).
// The pad columns K <= k < kLdw need not be written: the engine's map has the true K as its
// inner extent, so TMA zero-fills a box past it and never reads them (the copy's last vector of a
// row happens to cover them and writes zeros; the transpose leaves them alone).
// kSplit (3xTF32, f32): each value x is written as its tf32 part hi = tf32_rna(x) at dst and
// lo = x - hi (exact in f32) at dst + Batches * Rows * kLdw (config/gemm.h's prep_split).
// Rows 0: rows, kLd and kStride are the launch's (PrepRows, given to run); never split or reversed.
// grid = (ceil(Rows / kRowBlock), ceil(kLdw / kKBlock), Batches), block = Threads (whole warps, <= 1024):
//   k-strided ([K][Rows]): a 32 x 32 tile through shared memory, rows padded by one 4-byte word
//     (conflict-free both ways), reads coalesced along the rows, writes along k;
//   k-strided with kVecT (f32; Rows, kLd and kStride multiples of 4, the operand 16-byte aligned:
//     config/gemm.h's prep_vec_transpose): a 32 k x 64 row tile, read as 16-byte vectors of 4
//     rows and written as 16-byte vectors of 4 k (4x fewer memory instructions and index
//     computations than the scalar transpose, which the index arithmetic kept ALU-bound at ~80%
//     of DRAM bandwidth on the conv seed's x); the tile's rows are 65 words apart, so the
//     column reads of the write phase hit 32 distinct banks (the row writes conflict 2-way);
//   k-contiguous ([Rows][K], kLd the pitch): a warp per row reads 32 16-byte vectors' worth of k
//     element by element (coalesced; the rows are not 16-byte aligned, that is why we are here),
//     stages them in shared memory and writes them as 16-byte stores (512 bytes per warp).
template <class E, class Index, long long Rows, long long K_, long long Batches, long long kLd, long long kStride,
          bool kKContig, long long kLdw, bool kSplit, bool kVecT, bool kReversed, int Threads>
struct OperandPrep {
  static constexpr int kThreads = Threads;
  static constexpr int kTile = kPrepTile;              // config/gemm.h: rows of the operand per CTA
  static constexpr int kVecRows = kPrepVecRows;        // config/gemm.h: the same for the vector transpose
  static_assert(!kVecT || (!kKContig && sizeof(E) == 4 && Rows % 4 == 0 && kLd % 4 == 0 && kStride % 4 == 0 &&
                           Threads == 256), "the vector transpose: f32, 4-row vectors, 256 threads");
  static_assert(!(kVecT && kReversed), "reversed rows take the scalar transpose (prep_vec_transpose)");
  static constexpr int kWarps = Threads / 32;
  static constexpr int kVec = 16 / int(sizeof(E));     // elements per 16-byte store
  static constexpr long long kKBlock = kKContig ? 32 * kVec : kTile;   // config/gemm.h's prep_k_block
  static_assert(Threads % 32 == 0 && kWarps <= kTile, "whole warps, at most one per row of the block");
  static_assert(kLdw >= K_ && kLdw % kVec == 0, "rows of whole 16-byte vectors (prep_ldw)");
  static_assert(!kSplit || sizeof(E) == 4, "3xTF32 splits f32 operands");
  // Batches 0: as many as the grid's z (a conv's copy of x with a dyn batch); its copies are not split.
  static_assert(!kSplit || Batches > 0, "a split copy places its lo parts after all the batches");
  static constexpr long long kLoOffset = Batches * Rows * kLdw;   // the lo parts after the hi parts
  static constexpr bool kDynRows = Rows == 0;
  static_assert(!kDynRows || (!kSplit && !kReversed), "a launch's rows: a conv's copy of x");
  // The extents the copy reads: the template's (as constants), or a launch's PrepRows.
  struct Fixed {
    static constexpr long long rows = Rows, ld = kLd, stride = kStride;
  };

  // The stored row that row r of the copy comes from.
  static __device__ __forceinline__ long long source_row(long long r) { return kReversed ? Rows - 1 - r : r; }

  // dst[i] = x (or its hi part, and the lo part kLoOffset further on).
  static __device__ __forceinline__ void put(E* dst, Index i, E x) {
    if constexpr (kSplit) {
      float hi, lo;
      tf32_split(x, hi, lo);
      dst[i] = hi;
      dst[i + Index(kLoOffset)] = lo;
    } else {
      dst[i] = x;
    }
  }

  // The vector transpose (kVecT): the CTA's 32 k x 64 rows, k0 and r0 its first.
  template <class X>
  static __device__ __forceinline__ void run_vec(const X& x, const E* s, E* d, long long r0, long long k0) {
    __shared__ float tile[kTile][kVecRows + 1];
    const int t = threadIdx.x;
#pragma unroll
    for (int h = 0; h < 2; ++h) {   // read: k row t / 16 (+ 16), rows r0 + 4 (t % 16) .. + 3
      const int kk = t / 16 + 16 * h, rr = 4 * (t % 16);
      const long long k = k0 + kk, r = r0 + rr;
      Vec<float, 4> v;
      if (k < K_ && r < x.rows) v = load_vec<float, 4>(s + Index(k) * Index(x.ld) + Index(r));
      else v.v[0] = v.v[1] = v.v[2] = v.v[3] = 0.f;
#pragma unroll
      for (int j = 0; j < 4; ++j) tile[kk][rr + j] = v.v[j];
    }
    __syncthreads();
#pragma unroll
    for (int h = 0; h < 2; ++h) {   // write: row r0 + t / 8 (+ 32), k0 + 4 (t % 8) .. + 3
      const int rr = t / 8 + 32 * h, kk = 4 * (t % 8);
      const long long r = r0 + rr, k = k0 + kk;
      if (r >= x.rows || k >= kLdw) continue;
      Vec<float, 4> v;
#pragma unroll
      for (int j = 0; j < 4; ++j) v.v[j] = tile[kk + j][rr];   // zeros past K (pad columns)
      float* out = d + Index(r) * Index(kLdw) + Index(k);
      if constexpr (kSplit) {
        Vec<float, 4> lo;
#pragma unroll
        for (int j = 0; j < 4; ++j) tf32_split(v.v[j], v.v[j], lo.v[j]);
        store_vec<float, 4>(out + Index(kLoOffset), lo);
      }
      store_vec<float, 4>(out, v);
    }
  }

  static __device__ __forceinline__ void run(const E* src, E* dst, const PrepRows& at = PrepRows{}) {
    if constexpr (kDynRows)
      copy(at, src, dst);
    else
      copy(Fixed{}, src, dst);
  }

 private:
  template <class X>
  static __device__ __forceinline__ void copy(const X& x, const E* src, E* dst) {
    const long long r0 = (long long)blockIdx.x * (kVecT ? kVecRows : kTile), k0 = (long long)blockIdx.y * kKBlock;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const E zero = from_float<E>(0.f);
    const E* s = src + Index(blockIdx.z) * Index(x.stride);
    E* d = dst + Index(blockIdx.z) * Index(x.rows * kLdw);
    if constexpr (kVecT) {
      run_vec(x, s, d, r0, k0);
    } else if constexpr (kKContig) {
      __shared__ __align__(16) E line[kWarps][32 * kVec];   // one row's block of k per warp
      for (int i = warp; i < kTile && r0 + i < x.rows; i += kWarps) {
        const E* row = s + Index(source_row(r0 + i)) * Index(x.ld);
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const long long k = k0 + j * 32 + lane;
          line[warp][j * 32 + lane] = k < K_ ? row[Index(k)] : zero;
        }
        __syncwarp();
        const long long k = k0 + lane * kVec;
        if (k < kLdw) {
          Vec<E, kVec> v = load_vec<E, kVec>(&line[warp][lane * kVec]);
          E* out = d + Index(r0 + i) * Index(kLdw) + Index(k);
          if constexpr (kSplit) {
            Vec<E, kVec> lo;
#pragma unroll
            for (int j = 0; j < kVec; ++j) tf32_split(v.v[j], v.v[j], lo.v[j]);
            store_vec<E, kVec>(out + Index(kLoOffset), lo);
          }
          store_vec<E, kVec>(out, v);
        }
        __syncwarp();   // the line is rewritten for the warp's next row
      }
    } else {
      constexpr int kPad = 4 / int(sizeof(E));   // one 4-byte word: rows land on distinct banks
      __shared__ E tile[kTile][kTile + kPad];
      for (int i = warp; i < kTile; i += kWarps) {   // source row k0 + i, operand rows r0 + lane
        const long long k = k0 + i, r = r0 + lane;
        tile[i][lane] = k < K_ && r < x.rows ? s[Index(k) * Index(x.ld) + Index(source_row(r))] : zero;
      }
      __syncthreads();
      for (int i = warp; i < kTile; i += kWarps) {   // operand row r0 + i, k0 + lane
        const long long r = r0 + i, k = k0 + lane;
        if (r < x.rows && k < K_) put(d, Index(r) * Index(kLdw) + Index(k), tile[lane][i]);
      }
    }
  }
};

}  // namespace gemm
}  // namespace kiln
