// kiln/conv_sm90.cuh — Hopper conv2d (NCHW, groups 1) as an implicit GEMM on the wgmma engine of
// gemm_sm90.cuh. Compile for sm_90a only.
//
// ============================================================================================
// CONTRACT
// --------------------------------------------------------------------------------------------
// kiln::sm90::WgConvNchw<Precision, Index, Shape, BM, BN, Stages, kVecY, kStream>
//   template <class OutT, class Epi>
//   static __device__ void run(const float* x, const float* w, OutT* y, Epi epi, long long batch = 0);
// (batch: N where Shape's N is 0, a dyn batch: [Note: dyn conv batch] in conv_shape.cuh.)
// x [N][C][H][W], w [K][C][R][S], y [N][K][Ho][Wo] (f32 operands; Precision Tf32 or Tf32x3);
// Shape a conv::ConvShape with groups 1. The GEMM per image n: rows = the K out channels
// (A = w viewed [K][C*R*S], k contiguous: C*R*S % 4 == 0 and w 16-byte aligned), columns = the
// Ho*Wo output pixels of the image (B = the im2col gather of x, k' = (c, r, s) in w's order),
// so y[n] is stored along contiguous output pixels with gemm::store_fragments' 16-byte stores
// (kVecY: Ho*Wo % 4 == 0). (8-byte stores straight from the fragments, without the quad
// shuffle, measured slower on the seed: 3.86 ms against 3.62.)
// Tiles: kGridX = ceil(Ho*Wo / BN) pixel tiles x kGridY = ceil(K / BM) channel tiles x N images,
// pixels fastest. grid = (G, 1, 1) for any G <= the tile count: CTA b takes tiles b, b + G, ...
// (persistent: G = the resident CTAs, so the next tile's loads overlap the stores of the last);
// block = kThreads; dynamic smem kSmemBytes.
// The epilogue functor is conv_igemm.cuh's: epi(acc, n, k, hw), once per output element.
//
// [Note: the gather]
// The B tile is BN pixels x 32 k' in the wgmma layout ([pixel][k'], 128-byte swizzle), filled
// by 4-byte cp.async (zero-filled for padding and tails). A warp covers 8 consecutive pixels x
// 4 consecutive k' per instruction: the 8 lanes of one k' read 32 contiguous bytes of an input
// row (one sector), and the 32 shared stores land in 32 distinct banks (pixel % 8 picks the
// swizzled chunk, k' % 4 the word). Each thread keeps its pixels' input offsets in registers for
// the whole CTA and decodes (c, r, s) of its 8 k' per k tile with constant divisions. A valid
// convolution without padding whose taps all fall inside the input (kNoHalo) skips the bounds
// tests: a tap is a pixel pointer plus the k' offset.
// ============================================================================================
#pragma once

#include "kiln/conv_igemm.cuh"
#include "kiln/gemm_sm90.cuh"

namespace kiln {
namespace sm90 {

template <class Engine, class Index, class Shape>
struct ConvGather {
  static_assert(!conv_im2col_general(Shape::D, Shape::T, Shape::Do, Shape::kTransposed), "a 2-d forward conv");
  static constexpr int kThreads = Engine::kThreads, BM = Engine::kWarpGroups * 64, BN = Engine::NT * 8;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kPix = BN / (8 * kWarps);  // pixels per thread
  static constexpr long long kKdim = Shape::Kdim, kHW = Shape::H * Shape::W;
  static_assert(BN % (8 * kWarps) == 0, "pixels per thread");
  static_assert(Shape::kGroups == 1, "WgConvNchw is for groups == 1");
  static_assert(kKdim % 4 == 0, "w rows must be 16-byte multiples");

  // No padding and every tap of every output pixel inside the input (the seed's valid
  // convolution): a tap is in bounds exactly when its pixel and its k' are.
  static constexpr bool kNoHalo =
      Shape::kPadH == 0 && Shape::kPadW == 0 &&
      (Shape::Ho - 1) * Shape::kStrideH + (Shape::R - 1) * Shape::kDilH < Shape::H &&
      (Shape::Wo - 1) * Shape::kStrideW + (Shape::S - 1) * Shape::kDilW < Shape::W;

  const float* x;
  const float* w;   // filters [K][Kdim]
  const float* xn;  // image n of the tile being loaded
  int m0;
  int cur = -1;                  // the CTA's tile number whose pixels are set up below
  int hbase[kPix], wbase[kPix];  // ho*SH - PH, wo*SW - PW of this thread's pixels (hbase < -H: none)
  const float* px[kPix];         // kNoHalo: x[n][0][hbase][wbase] of each pixel (xn when none)

  __device__ __forceinline__ ConvGather(const float* x_, const float* w_) : x(x_), w(w_) {}

  // Tile t of the grid: pixels fastest, then out-channel tiles, then images.
  static __device__ __forceinline__ void decode(long long t, Index& n, int& m0, int& p0) {
    constexpr long long kTilesP = (Shape::HoWo + BN - 1) / BN, kTilesM = (Shape::K + BM - 1) / BM;
    p0 = int(t % kTilesP) * BN;
    m0 = int(t / kTilesP % kTilesM) * BM;
    n = Index(t / kTilesP / kTilesM);
  }

  __device__ __forceinline__ void setup(long long t) {
    Index n;
    int p0;
    decode(t, n, m0, p0);
    xn = x + n * Index(Shape::C * kHW);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int q = 0; q < kPix; ++q) {
      const long long hw = p0 + (lane & 7) + 8 * (warp + kWarps * q);
      const int ho = int(hw / Shape::Wo), wo = int(hw % Shape::Wo);
      const bool in = hw < Shape::HoWo;
      hbase[q] = in ? ho * Shape::kStrideH - Shape::kPadH : -(1 << 30);
      wbase[q] = wo * Shape::kStrideW - Shape::kPadW;
      px[q] = in ? xn + (Index(hbase[q]) * Index(Shape::W) + wbase[q]) : xn;
    }
  }

  // k tile kt of the CTA's tile number `tile` (grid tile blockIdx.x + tile * gridDim.x).
  __device__ __forceinline__ void operator()(int tile, int kt, u32 stage) {
    if (tile != cur) {
      setup(blockIdx.x + (long long)tile * gridDim.x);
      cur = tile;
    }
    gather(kt, stage);
  }

  __device__ __forceinline__ void gather(int kt, u32 stage) const {
    load_kmajor<BM, kThreads, Index>(stage, w, Index(kKdim), m0, Shape::K, kt * 32, int(kKdim));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u32 b = stage + Engine::kABytes;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int kk = (lane >> 3) + 4 * i;
      const int k = kt * 32 + kk;
      constexpr int RS = Shape::R * Shape::S;
      const int c = k / RS, rs = k - c * RS, r = rs / Shape::S, s = rs - r * Shape::S;
      const int dr = r * Shape::kDilH, ds = s * Shape::kDilW;
      const Index koff = Index(c) * Index(kHW) + dr * Index(Shape::W) + ds;
      const bool kin = k < kKdim;
      const u32 col = u32(((i ^ (lane & 7)) << 4) + (lane >> 3) * 4);
#pragma unroll
      for (int q = 0; q < kPix; ++q) {
        bool ok;
        const float* src;
        if constexpr (kNoHalo) {
          ok = kin && hbase[q] >= 0;
          src = ok ? px[q] + koff : xn;
        } else {
          const int hi = hbase[q] + dr, wi = wbase[q] + ds;
          ok = kin && unsigned(hi) < unsigned(Shape::H) && unsigned(wi) < unsigned(Shape::W);
          src = ok ? xn + (Index(hbase[q]) * Index(Shape::W) + wbase[q] + koff) : xn;
        }
        const u32 row = u32((lane & 7) + 8 * (warp + kWarps * q));
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(b + row * 128 + col), "l"(src),
                     "r"(ok ? 4 : 0));
      }
    }
  }
};

template <class Precision, class Index, class Shape, int BM, int BN, int Stages, bool kVecY, bool kStream,
          int InFlight = -1>
struct WgConvNchw {
  static_assert(!conv_im2col_general(Shape::D, Shape::T, Shape::Do, Shape::kTransposed), "a 2-d forward conv");
  using Engine = WgEngine<Precision, BM, BN, Stages, InFlight>;
  static constexpr int kThreads = Engine::kThreads;
  static constexpr int kSmemBytes = Engine::kSmemBytes;
  static constexpr long long kGridX = (Shape::HoWo + BN - 1) / BN, kGridY = (Shape::K + BM - 1) / BM;

  // batch: the images, read where Shape::N is 0 (a dyn batch, [Note: dyn conv batch] in conv_shape.cuh).
  template <class OutT, class Epi>
  static __device__ __forceinline__ void run(const float* x, const float* w, OutT* y, Epi epi, long long batch = 0) {
    extern __shared__ __align__(16) char smem[];
    using Gather = ConvGather<Engine, Index, Shape>;
    Gather gather(x, w);
    const long long tiles = kGridX * kGridY * gemm::extent<Shape::N>(batch);
    const int ntiles = int((tiles - blockIdx.x + gridDim.x - 1) / gridDim.x);
    Engine::run_tiles(smem, ntiles, int((Shape::Kdim + 31) / 32), gather,
                      [&](int tile, const float (&acc)[Engine::NT][4]) {
                        Index n;
                        int m0, p0;
                        Gather::decode(blockIdx.x + (long long)tile * gridDim.x, n, m0, p0);
                        const gemm::MatrixOut<OutT, Index, kVecY, kStream> out{
                            y + n * Index(Shape::K * Shape::HoWo), Index(Shape::HoWo), Index(Shape::K),
                            Index(Shape::HoWo), n};
                        store_tile(acc, out, m0, Index(p0), epi);
                      });
  }
};

}  // namespace sm90
}  // namespace kiln
