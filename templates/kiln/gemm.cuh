// kiln/gemm.cuh — tiled tensor-core GEMM templates with fused epilogues.
//
// ============================================================================================
// CONTRACT (what the emitter instantiates)
// --------------------------------------------------------------------------------------------
// Index: int when every tensor has < 2^31 elements, else long long (global offsets only).
// Epilogue functor concept (a plain struct built by the emitter, passed by value):
//     struct Epi {
//       // acc: the f32 dot product C[batch][row][col]; returns the value that is stored.
//       __device__ float operator()(float acc, Index batch, Index row, Index col) const;
//     };
//   It is called exactly once per in-bounds output element (never for tails), so it may read
//   bias[col], apply activations, dropout by flat index batch*M*N + row*N + col, etc.
//   kiln::gemm::Identity is the no-op functor.
//
// 1) kiln::gemm::Gemm<Element, Precision, OutT, Index, M, N, K, Batch,
//                      LayoutA, LayoutB, lda, ldb, ldc, strideA, strideB, strideC,
//                      BM, BN, BK, WM, WN, Stages, kVecA, kVecB, kVecC, kStreamC, kRowStats>
//      static __device__ void run(const Element* A, const Element* B, OutT* C, Epi epi,
//                                 float* row_stats /* nullptr unless kRowStats */);
//    C[b] = epi(A[b] · B[b]) for b < Batch. A is M x K, B is K x N, each a strided view:
//      A(m, k) = A[b*strideA + (LayoutA == kRowMajor ? m*lda + k : k*lda + m)]
//      B(k, n) = B[b*strideB + (LayoutB == kRowMajor ? k*ldb + n : n*ldb + k)]
//      C(m, n) = C[b*strideC + m*ldc + n]          (strideA/B = 0 broadcasts)
//    Element: float (with Precision Ieee | Tf32 | Tf32x3), __half or __nv_bfloat16 (Precision
//    ignored: m16n8k16 tensor cores, f32 accumulation). OutT: float, __half, __nv_bfloat16.
//    Geometry: block = kThreads = 32*(BM/WM)*(BN/WN); grid = (ceil(N/BN), ceil(M/BM), Batch);
//    dynamic shared memory = kSmemBytes (raise the limit above 48 KB).
//    Tiles: BM % WM == 0, BN % WN == 0, WM % 16 == 0, WN % 16 == 0, BK % 8 (f32) or 16 (16-bit).
//    kVecA: A's base is 16-byte aligned, lda and strideA are multiples of 16/sizeof(Element)
//      (then cp.async moves 16 bytes; otherwise 4-byte cp.async / scalar loads). Same for B.
//    kVecC: C's base 16-byte aligned, ldc and strideC multiples of 4 (16- or 8-byte stores).
//    kStreamC: st.global.cs (output larger than L2, not re-read soon).
//    kRowStats: also writes, for every row and column tile, (max, sum exp(v - max)) of the
//      stored values v of that tile to row_stats[((b*M + row) * ceil(N/BN) + tile_n) * 2 + {0,1}]
//      for a following softmax_finalize.
//    Any M, N, K >= 1 (tails are zero-filled in shared memory and masked in the epilogue).
//    M, N, K or Batch 0: a dyn extent, run()'s last argument `gemm::DynShape dyn` (and lda, ldb,
//    ldc 0 where one is, strideA, strideB, strideC kDynStride where one spans it: [Note: dyn
//    matmul extents] in gemm_store.cuh); the grid is then the launch's. The same for GemmSplitK
//    and SplitKReduce.
//
// 2) kiln::gemm::SmallK<Precision, Index, M, N, K, lda, ldb, ldc, BM, BN, WM, WN, kPrepA = false>
//      template <class Epi> static __device__ void run(const float* A, const float* B, float* C,
//                                                      Epi epi);
//    f32, A row-major, B row-major, small K (K * (BM + BN) * 4 * ~1.5 bytes of shared memory):
//    the whole K is one tile (no K loop). Persistent: grid = (min(tiles, P)), P = the number of
//    SMs times resident CTAs (2 per SM on sm_90 with __launch_bounds__(256, 2) and 128x128
//    tiles: one CTA's stores drain while the other computes; see kSmemBytes); each CTA walks a
//    contiguous range of tiles in row-major tile order, keeps the A block in shared memory while
//    the row block is unchanged and prefetches the next B block with cp.async while it computes
//    and stores the current tile. block = kThreads; dynamic smem = kSmemBytes. Requires
//    16-byte aligned A, B, C and lda, ldb, ldc multiples of 4; K % 8 == 0; any M, N.
//
// 2b) kiln::gemm::GemmSplitK<E, Precision, Index, M, N, K, Batch, LayoutA, LayoutB, lda, ldb,
//                             strideA, strideB, BM, BN, BK, WM, WN, Stages, kVecA, kVecB, SplitK>
//       static __device__ void run(const E* A, const E* B, float* workspace);
//     + kiln::gemm::SplitKReduce<OutT, Index, M, N, Batch, SplitK, ldc, strideC, kStreamC, Threads>
//       template <class Epi> static __device__ void run(const float* workspace, OutT* C, Epi epi);
//    For M x N tiles too few to fill the GPU: each split sums a contiguous, BK-aligned K range
//    into workspace[SplitK][Batch][M][N] (SplitK * Batch * M * N f32; grid (kTilesN, kTilesM,
//    Batch * SplitK), smem kSmemBytes), then the reduce kernel (grid ceil(Batch * M * N /
//    Threads), block Threads)
//    adds the splits in a fixed order (deterministic) and applies the epilogue. No kRowStats.
//
// 2c) kiln::gemm::SplitKSoftmax<Index, M, N, Batch, SplitK, Threads>
//       template <class Epi> static __device__ void run(const float* workspace, float* Y, Epi epi);
//    The reduce kernel for a softmax over the last axis after a split-K GEMM: one CTA per row
//    (grid kGridX = Batch * M, block Threads, no dynamic smem) adds the splits in a fixed order,
//    applies the epilogue, merges the row's (max, sum exp) in the block and writes
//    Y = softmax(epi(A·B)) once. f32 output, Y 16-byte aligned for the vector path (N % 4 == 0).
//
// 2d) kiln::gemm::OperandPrep<E, Index, Rows, K, Batches, ld, stride, kKContig, ldw, kSplit, kVecT, kReversed,
//                               Threads>
//       static __device__ void run(const E* operand, E* workspace);
//    The TMA engine's pre-pass (gemm_tma.cuh): one operand (f32 whose k is not contiguous, or any
//    operand whose strides are not multiples of 16 bytes) into workspace[Batches][Rows][ldw], k
//    contiguous, rows padded to 16 bytes. Launch and pad columns: at the struct.
//
// 3) kiln::gemm::SoftmaxFinalize<Index, M, N, NumTiles, Threads>
//      static __device__ void run(float* Y, const float* row_stats);
//    In place: Y[row, :] = exp(Y - rowmax) / rowsum, rowmax/rowsum combined from the kRowStats
//    partials. grid = (M * Batch), block = Threads; Y 16-byte aligned and N % 4 == 0 for the
//    vector path (else scalar).
//
// [Note: why it is fast]
// - Operands move global->shared with 16-byte cp.async in a Stages-deep ring, so loads of
//   tile k+Stages-1 overlap the tensor-core work on tile k; one __syncthreads per k tile.
// - Shared tiles are padded so every fragment load of a warp hits 32 distinct banks
//   (K-contiguous rows: stride = 4 mod 32 words; MN-contiguous rows: stride = 8 mod 32 words).
// - Transposition costs nothing: each operand keeps its global layout in shared memory (so the
//   16-byte copies stay contiguous) and the fragment loader reads the other way.
// - The epilogue never touches shared memory: a 4-round quad shuffle turns the mma C fragments
//   (2 consecutive columns per lane) into 4 consecutive columns per lane, so C leaves as one
//   16-byte (st.global.cs) store per lane — full 32-byte sectors, 512 bytes per warp store.
// - SmallK removes the K loop, reuses the A block across column tiles and double-buffers B, so
//   a persistent CTA computes tile i+1 while the memory system drains the stores of tile i:
//   the kernel is bound by HBM writes of C, not by math, in all three precisions but Ieee.
//   Two CTAs per SM (128x64 tiles, <= 128 registers) let one CTA's mma overlap the other's
//   stores, which a single CTA's barrier-separated compute/store phases cannot.
// - A linear layer with a small batch (M = 128, N, K = 16384) has too few output tiles to keep
//   every SM streaming W: GemmSplitK gives each CTA a contiguous K slice of its W rows (two or
//   more resident CTAs per SM, so the cp.async ring always has W in flight), and SplitKSoftmax
//   folds the reduction, the epilogue and a following softmax into one pass over the 8 MB
//   output instead of a row-statistics epilogue plus a normalizing pass.
// ============================================================================================
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/gemm.h"   // the shared-memory rules the planner launches with
#include "kiln/mma.cuh"
#include "kiln/gemm_store.cuh"   // Identity, MatrixOut, store_fragments (the epilogue)
#include "kiln/gemm_prep.cuh"    // OperandPrep (the TMA engine's pre-pass)

namespace kiln {
namespace gemm {
// ---------------------------------------------------------------------------------------------
// A shared-memory operand tile of MN x BK. KContig: stored [MN][kLd] with k contiguous;
// otherwise [BK][kLd] with mn contiguous. Padding keeps fragment loads conflict-free and rows
// 16-byte aligned.
template <class E, int MN, int BK, bool KContig>
struct SmemTile {
  static constexpr bool kKContig = KContig;
  static constexpr int kPad = KContig ? (sizeof(E) == 4 ? 4 : 8) : (sizeof(E) == 4 ? 8 : 16);
  static constexpr int kLd = (KContig ? BK : MN) + kPad;
  static constexpr int kLines = KContig ? MN : BK;
  static constexpr int kElems = kLines * kLd;
  static constexpr int kBytes = smem_tile_bytes(int(sizeof(E)), MN, BK, KContig);
  static_assert(kBytes == kElems * int(sizeof(E)), "smem_tile_bytes (config/gemm.h) is this layout");
  static __device__ __forceinline__ E at(const E* s, int mn, int k) {
    return KContig ? s[mn * kLd + k] : s[k * kLd + mn];
  }
  // Two consecutive k (k even) packed, lower k in the low half (16-bit element types).
  static __device__ __forceinline__ u32 pair(const E* s, int mn, int k) {
    if constexpr (KContig) {
      return *reinterpret_cast<const u32*>(s + mn * kLd + k);
    } else {
      return pack2<E>(s[k * kLd + mn], s[(k + 1) * kLd + mn]);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Global -> shared copy of one operand tile from a strided matrix view.
// A line is a run of elements contiguous in global memory: a row of K (KContig) or of MN.
template <class E, class Tile, int MN, int BK, int Threads, bool kVec, class Index>
struct MatrixLoader {
  const E* ptr;     // already offset to the batch
  Index ld;         // elements between consecutive lines
  int mn_extent;    // M (or N)
  int k_extent;     // K

  __device__ __forceinline__ void load(E* s, int mn0, int k0) const {
    constexpr bool kc = Tile::kKContig;
    constexpr int kLen = kc ? BK : MN;   // tile line length
    constexpr int kNum = kc ? MN : BK;   // lines per tile
    const int line0 = kc ? mn0 : k0;
    const int pos0 = kc ? k0 : mn0;
    const int line_ext = kc ? mn_extent : k_extent;
    const int pos_ext = kc ? k_extent : mn_extent;
    if constexpr (kVec) {
      constexpr int V = 16 / int(sizeof(E));
      static_assert(kLen % V == 0, "tile line must be a multiple of 16 bytes");
      constexpr int kPerLine = kLen / V;
      constexpr int kTotal = kNum * kPerLine;
#pragma unroll
      for (int i = 0; i < (kTotal + Threads - 1) / Threads; ++i) {
        const int c = int(threadIdx.x) + i * Threads;
        if (kTotal % Threads == 0 || c < kTotal) {
          const int line = c / kPerLine;
          const int pos = (c % kPerLine) * V;
          const int gl = line0 + line, gp = pos0 + pos;
          int valid = gl < line_ext ? min_(pos_ext - gp, V) : 0;
          valid = valid < 0 ? 0 : valid;
          const E* src = valid > 0 ? ptr + Index(gl) * ld + gp : ptr;
          cp_async16(s + line * Tile::kLd + pos, src, valid * int(sizeof(E)));
        }
      }
    } else {
      constexpr int kTotal = kNum * kLen;
#pragma unroll 4
      for (int c = threadIdx.x; c < kTotal; c += Threads) {
        const int line = c / kLen;
        const int pos = c % kLen;
        const int gl = line0 + line, gp = pos0 + pos;
        const bool ok = gl < line_ext && gp < pos_ext;
        if constexpr (sizeof(E) == 4) {
          cp_async4(s + line * Tile::kLd + pos, ok ? ptr + Index(gl) * ld + gp : ptr, ok ? 4 : 0);
        } else {
          // cp.async has no 2-byte form: a synchronous copy (ordered by the stage barrier).
          s[line * Tile::kLd + pos] = ok ? ptr[Index(gl) * ld + gp] : from_float<E>(0.f);
        }
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------
// One warp's share of one shared-memory k tile: acc[MT][NT][4] += A(WM x BK) * B(BK x WN) in the
// m16n8 C-fragment layout of mma.cuh, for every precision.
// kPromote (3xTF32 only): accumulate each call's products into a fresh `part` and add it to
// `acc` with IEEE rounding (see below). A caller whose whole K is one short call (SmallK, K <= 128:
// at most 16 truncating accumulations, ~1e-6 relative) turns it off and saves 4 * MT * NT registers.
// kPrepA (f32 tensor-core paths only): the A tile already holds tf32-rounded values, and for
// 3xTF32 `sa_lo` holds the low parts (see prep_a): a caller that reuses one A tile for many
// B tiles (SmallK) converts it once instead of once per B tile.
template <class E, class Precision, int WM, int WN, int BK, class TileA, class TileB,
          bool kPromote = true, bool kPrepA = false>
struct WarpMma {
  static constexpr int MT = WM / 16;
  static constexpr int NT = WN / 8;

  static __device__ __forceinline__ void run(float (&acc)[MT][NT][4], const E* sa, const E* sb,
                                             int wm0, int wn0, const E* sa_lo = nullptr) {
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    if constexpr (IsF32<E>::value && SameType<Precision, Ieee>::value) {
#pragma unroll 4
      for (int k = 0; k < BK; ++k) {
        float a[MT][2], b[NT][2];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          a[mt][0] = TileA::at(sa, wm0 + mt * 16 + g, k);
          a[mt][1] = TileA::at(sa, wm0 + mt * 16 + g + 8, k);
        }
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          b[nt][0] = TileB::at(sb, wn0 + nt * 8 + 2 * t, k);
          b[nt][1] = TileB::at(sb, wn0 + nt * 8 + 2 * t + 1, k);
        }
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            acc[mt][nt][0] = fmaf(a[mt][0], b[nt][0], acc[mt][nt][0]);
            acc[mt][nt][1] = fmaf(a[mt][0], b[nt][1], acc[mt][nt][1]);
            acc[mt][nt][2] = fmaf(a[mt][1], b[nt][0], acc[mt][nt][2]);
            acc[mt][nt][3] = fmaf(a[mt][1], b[nt][1], acc[mt][nt][3]);
          }
      }
    } else if constexpr (IsF32<E>::value) {
      constexpr bool kSplit = SameType<Precision, Tf32x3>::value;
      constexpr bool kPart = kSplit && kPromote;
      // The tensor core adds into its f32 accumulator with truncation, an error that grows
      // with K (measured on an H200: 1.7e-4 relative at K = 16384, above fp32 level). For
      // 3xTF32 each k tile accumulates into a fresh `part`, promoted into `acc` with an
      // IEEE-rounded add, so the truncation only ever sees one tile's sum.
      float part[MT][NT][4];
      if constexpr (kPart) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) part[mt][nt][i] = 0.f;
      }
      float (&dst)[MT][NT][4] = kPart ? part : acc;
#pragma unroll 1
      for (int kk = 0; kk < BK; kk += 8) {
        u32 ah[MT][4], al[MT][4], bh[NT][2], bl[NT][2];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          const int r = wm0 + mt * 16 + g;
          const float x[4] = {TileA::at(sa, r, kk + t), TileA::at(sa, r + 8, kk + t),
                              TileA::at(sa, r, kk + t + 4), TileA::at(sa, r + 8, kk + t + 4)};
          if constexpr (kPrepA) {
#pragma unroll
            for (int i = 0; i < 4; ++i) ah[mt][i] = __float_as_uint(x[i]);
            if constexpr (kSplit) {
              const float y[4] = {TileA::at(sa_lo, r, kk + t), TileA::at(sa_lo, r + 8, kk + t),
                                  TileA::at(sa_lo, r, kk + t + 4), TileA::at(sa_lo, r + 8, kk + t + 4)};
#pragma unroll
              for (int i = 0; i < 4; ++i) al[mt][i] = __float_as_uint(y[i]);
            }
          } else {
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              if constexpr (kSplit) tf32_split(x[i], ah[mt][i], al[mt][i]);
              else ah[mt][i] = tf32_rna(x[i]);
            }
          }
        }
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const int n = wn0 + nt * 8 + g;
          const float x[2] = {TileB::at(sb, n, kk + t), TileB::at(sb, n, kk + t + 4)};
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            if constexpr (kSplit) tf32_split(x[i], bh[nt][i], bl[nt][i]);
            else bh[nt][i] = tf32_rna(x[i]);
          }
        }
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            if constexpr (kSplit) {
              mma_tf32_16x8x8(dst[mt][nt], al[mt], bh[nt]);
              mma_tf32_16x8x8(dst[mt][nt], ah[mt], bl[nt]);
            }
            mma_tf32_16x8x8(dst[mt][nt], ah[mt], bh[nt]);
          }
      }
      if constexpr (kPart) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) acc[mt][nt][i] += part[mt][nt][i];
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < BK; kk += 16) {
        u32 a[MT][4], b[NT][2];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          const int r = wm0 + mt * 16 + g;
          if constexpr (TileA::kKContig) {
            // matrices: rows 0-7 k 0-7 | rows 8-15 k 0-7 | rows 0-7 k 8-15 | rows 8-15 k 8-15
            ldmatrix_x4(a[mt], sa + (wm0 + mt * 16 + (lane & 15)) * TileA::kLd + kk + (lane >> 4) * 8);
          } else {
            a[mt][0] = TileA::pair(sa, r, kk + 2 * t);
            a[mt][1] = TileA::pair(sa, r + 8, kk + 2 * t);
            a[mt][2] = TileA::pair(sa, r, kk + 2 * t + 8);
            a[mt][3] = TileA::pair(sa, r + 8, kk + 2 * t + 8);
          }
        }
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const int n = wn0 + nt * 8 + g;
          if constexpr (TileB::kKContig) {
            // matrices: n 0-7 k 0-7 | n 0-7 k 8-15 (lanes 16-31 repeat valid addresses)
            ldmatrix_x2(b[nt], sb + (wn0 + nt * 8 + (lane & 7)) * TileB::kLd + kk + ((lane >> 3) & 1) * 8);
          } else {
            b[nt][0] = TileB::pair(sb, n, kk + 2 * t);
            b[nt][1] = TileB::pair(sb, n, kk + 2 * t + 8);
          }
        }
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) mma_16x8x16<E>(acc[mt][nt], a[mt], b[nt]);
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------
// The tile engine shared by Gemm and conv_igemm: a Stages-deep cp.async ring over the K tiles,
// then the fragment epilogue. Loaders provide load(smem, mn0, k0) (see MatrixLoader).
template <class E, class Precision, int BM, int BN, int BK, int WM, int WN, int Stages,
          bool AKContig, bool BKContig>
struct TileEngine {
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int MT = WM / 16, NT = WN / 8;
  using TileA = SmemTile<E, BM, BK, AKContig>;
  using TileB = SmemTile<E, BN, BK, BKContig>;
  using Warp = WarpMma<E, Precision, WM, WN, BK, TileA, TileB>;
  static constexpr int kStageBytes = TileA::kBytes + TileB::kBytes;
  static constexpr int kStatsBytes = BM * kWarpsN * 2 * 4;
  // The ring, or the row statistics' exchange if larger (config/gemm.h).
  static constexpr int kSmemBytes = tile_engine_smem(int(sizeof(E)), BM, BN, BK, WN, Stages, AKContig, BKContig);
  static_assert(kSmemBytes >= Stages * kStageBytes && kSmemBytes >= kStatsBytes, "tile_engine_smem");
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "tile shape");
  static_assert(BK % (IsF32<E>::value ? 8 : 16) == 0, "BK must be a multiple of the mma k");
  static_assert(Stages >= 2, "Stages >= 2");

  template <class LoaderA, class LoaderB>
  static __device__ __forceinline__ void mainloop(char* smem, const LoaderA& la, const LoaderB& lb,
                                                  int m0, int n0, int K,
                                                  float (&acc)[MT][NT][4]) {
    const int warp = threadIdx.x >> 5;
    const int wm0 = (warp / kWarpsN) * WM, wn0 = (warp % kWarpsN) * WN;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[i][j][c] = 0.f;
    const int ktiles = (K + BK - 1) / BK;
    auto stage_a = [&](int s) { return reinterpret_cast<E*>(smem + s * kStageBytes); };
    auto stage_b = [&](int s) {
      return reinterpret_cast<E*>(smem + s * kStageBytes + TileA::kBytes);
    };
#pragma unroll
    for (int s = 0; s < Stages - 1; ++s) {
      if (s < ktiles) {
        la.load(stage_a(s), m0, s * BK);
        lb.load(stage_b(s), n0, s * BK);
      }
      cp_async_commit();
    }
    for (int kt = 0; kt < ktiles; ++kt) {
      cp_async_wait<Stages - 2>();
      __syncthreads();  // tile kt visible; everyone is done with the slot refilled below
      const int pre = kt + Stages - 1;
      if (pre < ktiles) {
        la.load(stage_a(pre % Stages), m0, pre * BK);
        lb.load(stage_b(pre % Stages), n0, pre * BK);
      }
      cp_async_commit();
      Warp::run(acc, stage_a(kt % Stages), stage_b(kt % Stages), wm0, wn0);
    }
    cp_async_wait<0>();
    __syncthreads();  // shared memory is free for the epilogue
  }

  // Epilogue for one CTA tile; with kRowStats also the per-(row, column tile) statistics.
  template <class Index, bool kRowStats, class Out, class Epi>
  static __device__ __forceinline__ void epilogue(char* smem, const float (&acc)[MT][NT][4],
                                                  const Out& out, Index m0, Index n0,
                                                  const Epi& epi, float* stats, Index batch,
                                                  Index num_tiles_n, Index tile_n) {
    const int warp = threadIdx.x >> 5;
    const int wm = warp / kWarpsN, wn = warp % kWarpsN;
    float rmax[MT][2], rsum[MT][2];
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      rmax[i][0] = rmax[i][1] = neg_inf();
      rsum[i][0] = rsum[i][1] = 0.f;
    }
    store_fragments<Index, MT, NT, kRowStats>(acc, out, Index(m0 + wm * WM),
                                              Index(n0 + wn * WN), epi, rmax, rsum);
    if constexpr (kRowStats) {
      const int lane = threadIdx.x & 31;
      float* red = reinterpret_cast<float*>(smem);  // [BM][kWarpsN][2]
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#pragma unroll
          for (int off = 1; off <= 2; off <<= 1) {  // the quad shares a row
            const float m2 = __shfl_xor_sync(0xffffffffu, rmax[i][h], off);
            const float s2 = __shfl_xor_sync(0xffffffffu, rsum[i][h], off);
            stats_merge(rmax[i][h], rsum[i][h], m2, s2);
          }
          if ((lane & 3) == 0) {
            const int r = wm * WM + i * 16 + h * 8 + (lane >> 2);
            red[(r * kWarpsN + wn) * 2 + 0] = rmax[i][h];
            red[(r * kWarpsN + wn) * 2 + 1] = rsum[i][h];
          }
        }
      __syncthreads();
      for (int r = threadIdx.x; r < BM; r += kThreads) {
        float m = neg_inf(), s = 0.f;
        for (int w = 0; w < kWarpsN; ++w)
          stats_merge(m, s, red[(r * kWarpsN + w) * 2], red[(r * kWarpsN + w) * 2 + 1]);
        const Index row = m0 + r;
        if (row < out.rows) {
          float* o = stats + ((batch * out.rows + row) * num_tiles_n + tile_n) * 2;
          o[0] = m;
          o[1] = s;
        }
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------
template <class E, class Precision, class OutT, class Index, long long M_, long long N_,
          long long K_, long long Batch, int LayoutA, int LayoutB, long long lda_, long long ldb_,
          long long ldc_, long long strideA, long long strideB, long long strideC, int BM, int BN,
          int BK, int WM, int WN, int Stages, bool kVecA, bool kVecB, bool kVecC, bool kStreamC,
          bool kRowStats>
struct Gemm {
  // A (M x K) row-major keeps k contiguous; B (K x N) col-major keeps k contiguous.
  using Engine = TileEngine<E, Precision, BM, BN, BK, WM, WN, Stages, LayoutA == kRowMajor,
                            LayoutB == kColMajor>;
  static constexpr int kThreads = Engine::kThreads;
  static constexpr int kSmemBytes = Engine::kSmemBytes;
  static constexpr long long kTilesM = (M_ + BM - 1) / BM, kTilesN = (N_ + BN - 1) / BN;   // (0: dyn)

  // M, N, K or Batch 0: dyn, read from `dyn` ([Note: dyn matmul extents] in gemm_store.cuh); the
  // grid covers the launch's tiles and batches.
  template <class Epi>
  static __device__ __forceinline__ void run(const E* A, const E* B, OutT* C, Epi epi,
                                             float* row_stats, DynShape dyn = {}) {
    extern __shared__ __align__(16) char smem[];
    const long long m = extent<M_>(dyn.m), n = extent<N_>(dyn.n), k = extent<K_>(dyn.k);
    const long long lda = leading<lda_, LayoutA == kRowMajor>(m, k);
    const long long ldb = leading<ldb_, LayoutB == kRowMajor>(k, n);
    const long long ldc = extent<ldc_>(n);
    const Index batch = blockIdx.z;
    const int tile_n = blockIdx.x, tile_m = blockIdx.y;
    const int m0 = tile_m * BM, n0 = tile_n * BN;
    MatrixLoader<E, typename Engine::TileA, BM, BK, kThreads, kVecA, Index> la{
        A + batch * Index(batch_stride<strideA>(m, k)), Index(lda), int(m), int(k)};
    MatrixLoader<E, typename Engine::TileB, BN, BK, kThreads, kVecB, Index> lb{
        B + batch * Index(batch_stride<strideB>(k, n)), Index(ldb), int(n), int(k)};
    float acc[Engine::MT][Engine::NT][4];
    Engine::mainloop(smem, la, lb, m0, n0, int(k), acc);
    const MatrixOut<OutT, Index, kVecC, kStreamC> out{C + batch * Index(batch_stride<strideC>(m, n)), Index(ldc),
                                                      Index(m), Index(n), batch};
    Engine::template epilogue<Index, kRowStats>(smem, acc, out, Index(m0), Index(n0), epi,
                                                row_stats, batch, Index((n + BN - 1) / BN), Index(tile_n));
  }
};

// ---------------------------------------------------------------------------------------------
// Split-K: for shapes whose M x N tiles cannot fill the GPU. Same parameters as Gemm plus SplitK;
// partial sums go to an f32 workspace, SplitKReduce adds them and applies the epilogue.
template <class E, class Precision, class Index, long long M_, long long N_, long long K_,
          long long Batch, int LayoutA, int LayoutB, long long lda_, long long ldb_,
          long long strideA, long long strideB, int BM, int BN, int BK, int WM, int WN,
          int Stages, bool kVecA, bool kVecB, int SplitK>
struct GemmSplitK {
  using Engine = TileEngine<E, Precision, BM, BN, BK, WM, WN, Stages, LayoutA == kRowMajor,
                            LayoutB == kColMajor>;
  static constexpr int kThreads = Engine::kThreads;
  static constexpr int kSmemBytes = Engine::kSmemBytes;
  static constexpr long long kTilesM = (M_ + BM - 1) / BM, kTilesN = (N_ + BN - 1) / BN;   // (0: dyn)
  // Each split covers a whole number of k tiles, so 16-byte copies stay aligned.
  static __host__ __device__ constexpr long long chunk_of(long long k) { return ((k + SplitK - 1) / SplitK + BK - 1) / BK * BK; }
  static constexpr long long kKChunk = chunk_of(K_);   // (K dyn: the launch's chunk_of(K))

  // grid = (tiles N, tiles M, batches * SplitK); workspace: SplitK * batches * M * N f32. M, N,
  // K or Batch 0: dyn, as Gemm's.
  static __device__ __forceinline__ void run(const E* A, const E* B, float* workspace, DynShape dyn = {}) {
    extern __shared__ __align__(16) char smem[];
    const long long m = extent<M_>(dyn.m), n = extent<N_>(dyn.n), k = extent<K_>(dyn.k);
    const long long batches = extent<Batch>(dyn.batch);
    const long long lda = leading<lda_, LayoutA == kRowMajor>(m, k);
    const long long ldb = leading<ldb_, LayoutB == kRowMajor>(k, n);
    const long long k_chunk = K_ > 0 ? kKChunk : chunk_of(k);
    const Index batch = blockIdx.z % batches;
    const Index split = blockIdx.z / batches;
    const int tile_n = blockIdx.x, tile_m = blockIdx.y;
    const int m0 = tile_m * BM, n0 = tile_n * BN;
    const long long k_begin = split * k_chunk;
    const int k_len = int(k - k_begin < k_chunk ? k - k_begin : k_chunk);  // <= 0: zeros
    const Index a_off = Index(LayoutA == kRowMajor ? k_begin : k_begin * lda);
    const Index b_off = Index(LayoutB == kColMajor ? k_begin : k_begin * ldb);
    MatrixLoader<E, typename Engine::TileA, BM, BK, kThreads, kVecA, Index> la{
        A + batch * Index(batch_stride<strideA>(m, k)) + a_off, Index(lda), int(m), k_len};
    MatrixLoader<E, typename Engine::TileB, BN, BK, kThreads, kVecB, Index> lb{
        B + batch * Index(batch_stride<strideB>(k, n)) + b_off, Index(ldb), int(n), k_len};
    float acc[Engine::MT][Engine::NT][4];
    Engine::mainloop(smem, la, lb, m0, n0, k_len > 0 ? k_len : 0, acc);
    // (A dyn N stores by element: only a static N's rows are known to keep 16-byte alignment.)
    const MatrixOut<float, Index, (N_ > 0 && N_ % 4 == 0), false> out{
        workspace + (split * Index(batches) + batch) * Index(m * n), Index(n), Index(m),
        Index(n), batch};
    Engine::template epilogue<Index, false>(smem, acc, out, Index(m0), Index(n0), Identity{},
                                            nullptr, batch, Index(0), Index(0));
  }
};

// C[b](m, n) = epi(sum over splits); grid = ceil(Batch * M * N / Threads), block = Threads. M, N
// or Batch 0: dyn, as Gemm's.
template <class OutT, class Index, long long M_, long long N_, long long Batch, int SplitK,
          long long ldc_, long long strideC, bool kStreamC, int Threads>
struct SplitKReduce {
  static constexpr int kThreads = Threads;

  template <class Epi>
  static __device__ __forceinline__ void run(const float* workspace, OutT* C, Epi epi, DynShape dyn = {}) {
    const long long rows = extent<M_>(dyn.m), cols = extent<N_>(dyn.n);
    const long long total = extent<Batch>(dyn.batch) * rows * cols, ldc = extent<ldc_>(cols);
    const Index i = Index(blockIdx.x) * Threads + threadIdx.x;
    if (i >= Index(total)) return;
    float acc = 0.f;
#pragma unroll
    for (int s = 0; s < SplitK; ++s) acc += workspace[Index(s) * Index(total) + i];
    const Index n = i % Index(cols), m = (i / Index(cols)) % Index(rows), b = i / Index(rows * cols);
    store1<OutT, kStreamC>(C + b * Index(batch_stride<strideC>(rows, cols)) + m * Index(ldc) + n, epi(acc, b, m, n));
  }
};

// ---------------------------------------------------------------------------------------------
// Small K: one k tile holds all of K. See the contract at the top.
// kPrepA: convert the A block to tf32 (hi, and lo for 3xTF32 in a second A-sized buffer) once
// per row block, not once per tile (ignored for Ieee).
template <class Precision, class Index, long long M_, long long N_, int K_, long long lda,
          long long ldb, long long ldc, int BM, int BN, int WM, int WN, bool kPrepA_ = false>
struct SmallK {
  using TileA = SmemTile<float, BM, K_, true>;    // A block [BM][K] (k contiguous)
  using TileB = SmemTile<float, BN, K_, false>;   // B block [K][BN] (n contiguous)
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int MT = WM / 16, NT = WN / 8;
  static constexpr bool kPrepA = kPrepA_ && !SameType<Precision, Ieee>::value;
  static constexpr bool kALo = kPrepA && SameType<Precision, Tf32x3>::value;
  using Warp = WarpMma<float, Precision, WM, WN, K_, TileA, TileB, (K_ > 128), kPrepA>;
  static constexpr int kSmemBytes = small_k_smem(BM, BN, K_, kALo);   // config/gemm.h

  // In place: A -> tf32_rna(A) (as f32 bits), and A - that into sa_lo for 3xTF32.
  static __device__ __forceinline__ void prep_a(float* sa, float* sa_lo) {
    for (int i = threadIdx.x; i < TileA::kElems; i += kThreads) {
      float hi, lo;
      tf32_split(sa[i], hi, lo);
      sa[i] = hi;
      if constexpr (kALo) sa_lo[i] = lo;
    }
  }
  static constexpr long long kTilesM = (M_ + BM - 1) / BM, kTilesN = (N_ + BN - 1) / BN;
  static constexpr long long kTiles = kTilesM * kTilesN;
  static_assert(K_ % 8 == 0, "SmallK needs K % 8 == 0");
  static_assert(lda % 4 == 0 && ldb % 4 == 0 && ldc % 4 == 0, "SmallK needs 16-byte rows");

  template <class Epi>
  static __device__ __forceinline__ void run(const float* A, const float* B, float* C, Epi epi) {
    extern __shared__ __align__(16) char smem[];
    float* sa = reinterpret_cast<float*>(smem);
    // The two B buffers; selected by arithmetic (an indexed pointer array would go to local memory).
    auto sb = [&](long long i) {
      return reinterpret_cast<float*>(smem + TileA::kBytes + int(i & 1) * TileB::kBytes);
    };
    float* sa_lo = reinterpret_cast<float*>(smem + TileA::kBytes + 2 * TileB::kBytes);
    bool a_fresh = true;  // the A block in shared memory has not been converted yet
    const long long begin = kTiles * blockIdx.x / gridDim.x;
    const long long end = kTiles * (blockIdx.x + 1) / gridDim.x;
    if (begin >= end) return;
    MatrixLoader<float, TileA, BM, K_, kThreads, true, Index> la{A, Index(lda), int(M_), K_};
    MatrixLoader<float, TileB, BN, K_, kThreads, true, Index> lb{B, Index(ldb), int(N_), K_};
    const int warp = threadIdx.x >> 5;
    const int wm0 = (warp / kWarpsN) * WM, wn0 = (warp % kWarpsN) * WN;

    la.load(sa, int(begin / kTilesN) * BM, 0);
    lb.load(sb(0), int(begin % kTilesN) * BN, 0);
    cp_async_commit();
    for (long long tile = begin, i = 0; tile < end; ++tile, ++i) {
      const int tm = int(tile / kTilesN), tn = int(tile % kTilesN);
      const bool has_next = tile + 1 < end;
      const int tm_next = int((tile + 1) / kTilesN), tn_next = int((tile + 1) % kTilesN);
      const bool same_row = has_next && tm_next == tm;
      float* cur_b = sb(i);
      float* next_b = sb(i + 1);
      if (same_row) {  // next B block streams in while this tile computes and stores
        lb.load(next_b, tn_next * BN, 0);
        cp_async_commit();
        cp_async_wait<1>();
      } else {
        cp_async_wait<0>();
      }
      __syncthreads();
      if constexpr (kPrepA) {
        if (a_fresh) {
          prep_a(sa, sa_lo);
          __syncthreads();
          a_fresh = false;
        }
      }
      float acc[MT][NT][4];
#pragma unroll
      for (int a = 0; a < MT; ++a)
#pragma unroll
        for (int b = 0; b < NT; ++b)
#pragma unroll
          for (int c = 0; c < 4; ++c) acc[a][b][c] = 0.f;
      Warp::run(acc, sa, cur_b, wm0, wn0, sa_lo);
      __syncthreads();  // every warp is done with sa and cur_b
      if (has_next && !same_row) {  // new row block: refill A (rare) and the next B
        la.load(sa, tm_next * BM, 0);
        lb.load(next_b, tn_next * BN, 0);
        cp_async_commit();
        a_fresh = true;
      }
      float rmax[MT][2], rsum[MT][2];
      const MatrixOut<float, Index, true, true> out{C, Index(ldc), Index(M_), Index(N_), Index(0)};
      store_fragments<Index, MT, NT, false>(acc, out, Index(tm) * BM + wm0, Index(tn) * BN + wn0,
                                            epi, rmax, rsum);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Block-wide merge of per-thread softmax statistics (max, sum of exp(v - max)); every thread
// gets the row's (max, 1 / sum). One call per CTA (it uses two __syncthreads).
template <int Threads>
__device__ __forceinline__ void block_row_stats(float m, float s, float& rmax, float& rinv) {
  static_assert(Threads % 32 == 0 && Threads <= 1024, "Threads");
  __shared__ float red_m[32], red_s[32];
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    stats_merge(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 0) { red_m[warp] = m; red_s[warp] = s; }
  __syncthreads();
  if (warp == 0) {
    m = lane < Threads / 32 ? red_m[lane] : neg_inf();
    s = lane < Threads / 32 ? red_s[lane] : 0.f;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
      stats_merge(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
    if (lane == 0) { red_m[0] = m; red_s[0] = s; }
  }
  __syncthreads();
  rmax = red_m[0];
  rinv = 1.f / red_s[0];
}

// ---------------------------------------------------------------------------------------------
// Split-K reduction fused with the epilogue and a softmax over the last axis. One CTA per row
// (of all batches): it adds the SplitK partial rows of the workspace in a fixed order
// (deterministic), applies the epilogue functor (bias, dropout, ...), merges the row's
// statistics in the block and writes softmax(row) once. When the row fits in registers
// (N % 4 == 0 and at most 8 float4 per thread) nothing else is written; otherwise the epilogue
// values go to Y first and are re-read (from L2) by the same thread for the normalization.
// grid = (kGridX), block = Threads, no dynamic shared memory; workspace as GemmSplitK writes it.
template <class Index, long long M_, long long N_, long long Batch, int SplitK, int Threads>
struct SplitKSoftmax {
  static constexpr int kThreads = Threads;
  static constexpr long long kRows = Batch * M_;
  static constexpr long long kGridX = kRows;
  static constexpr long long kVecs = N_ / 4;  // float4 per row (vector path)
  static constexpr int kPerThread = int((kVecs + Threads - 1) / Threads);
  static constexpr bool kInRegs = N_ % 4 == 0 && kPerThread <= 8;

  template <class Epi>
  static __device__ __forceinline__ void run(const float* workspace, float* Y, Epi epi) {
    const Index r = blockIdx.x;  // batch * M + row
    const Index batch = r / Index(M_), row = r % Index(M_);
    const float* src = workspace + r * Index(N_);
    float* y = Y + r * Index(N_);
    float rmax, rinv;
    if constexpr (kInRegs) {
      float4 v[kPerThread];
      float m = neg_inf();
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const Index c4 = Index(threadIdx.x) + Index(i) * Threads;
        if (kVecs % Threads == 0 || c4 < Index(kVecs)) {
          float4 a = __ldcs(reinterpret_cast<const float4*>(src) + c4);
#pragma unroll
          for (int sp = 1; sp < SplitK; ++sp) {
            const float4 b = __ldcs(reinterpret_cast<const float4*>(src + Index(sp) * Index(kRows * N_)) + c4);
            a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w;
          }
          a = epilogue4(epi, a, batch, row, 4 * c4);   // [Note: four-lane epilogue]
          m = fmaxf(m, fmaxf(fmaxf(a.x, a.y), fmaxf(a.z, a.w)));
          v[i] = a;
        }
      }
      float s = 0.f;
      if (m != neg_inf()) {
#pragma unroll
        for (int i = 0; i < kPerThread; ++i)
          if (kVecs % Threads == 0 || Index(threadIdx.x) + Index(i) * Threads < Index(kVecs))
            s += expf(v[i].x - m) + expf(v[i].y - m) + expf(v[i].z - m) + expf(v[i].w - m);
      }
      block_row_stats<Threads>(m, s, rmax, rinv);
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const Index c4 = Index(threadIdx.x) + Index(i) * Threads;
        if (kVecs % Threads == 0 || c4 < Index(kVecs)) {
          float4 o;
          o.x = expf(v[i].x - rmax) * rinv;
          o.y = expf(v[i].y - rmax) * rinv;
          o.z = expf(v[i].z - rmax) * rinv;
          o.w = expf(v[i].w - rmax) * rinv;
          __stcs(reinterpret_cast<float4*>(y) + c4, o);
        }
      }
    } else {
      float m = neg_inf(), s = 0.f;
      for (Index c = threadIdx.x; c < Index(N_); c += Threads) {
        float a = src[c];
        for (int sp = 1; sp < SplitK; ++sp) a += src[Index(sp) * Index(kRows * N_) + c];
        const float h = epi(a, batch, row, c);
        y[c] = h;
        stats_merge(m, s, h, 1.f);
      }
      block_row_stats<Threads>(m, s, rmax, rinv);
      for (Index c = threadIdx.x; c < Index(N_); c += Threads) y[c] = expf(y[c] - rmax) * rinv;
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Softmax normalization from kRowStats partials. One CTA per row (of all batches).
template <class Index, long long M_, long long N_, long long NumTiles, int Threads>
struct SoftmaxFinalize {
  static_assert(Threads % 32 == 0 && Threads <= 1024, "Threads");
  static constexpr int kThreads = Threads;

  static __device__ __forceinline__ void run(float* Y, const float* row_stats) {
    const Index row = blockIdx.x;  // batch * M + row
    const float* st = row_stats + row * Index(NumTiles) * 2;
    float m = neg_inf(), s = 0.f;
    for (Index i = threadIdx.x; i < NumTiles; i += Threads) stats_merge(m, s, st[2 * i], st[2 * i + 1]);
    float rmax, rinv;
    block_row_stats<Threads>(m, s, rmax, rinv);
    float* y = Y + row * Index(N_);
    if constexpr (N_ % 4 == 0) {
      for (Index i = threadIdx.x * 4; i < N_; i += Threads * 4) {
        float4 v = __ldcs(reinterpret_cast<const float4*>(y + i));
        v.x = expf(v.x - rmax) * rinv;
        v.y = expf(v.y - rmax) * rinv;
        v.z = expf(v.z - rmax) * rinv;
        v.w = expf(v.w - rmax) * rinv;
        __stcs(reinterpret_cast<float4*>(y + i), v);
      }
    } else {
      for (Index i = threadIdx.x; i < N_; i += Threads) y[i] = expf(y[i] - rmax) * rinv;
    }
  }
};

}  // namespace gemm
}  // namespace kiln
