// kiln/conv_sm90.cuh — Hopper conv2d (NCHW, groups 1) as an implicit GEMM on the wgmma engine of
// gemm_sm90.cuh. Compile for sm_90a only.
//
// ============================================================================================
// CONTRACT
// --------------------------------------------------------------------------------------------
// kiln::sm90::WgConvNchw<Precision, Index, Shape, BM, BN, Stages, kVecY, kStream>
//   template <class OutT, class Epi>
//   static __device__ void run(const float* x, const float* w, OutT* y, Epi epi, long long batch = 0,
//                              const conv::ConvDyn& dyn = {});
// (batch: N where Shape's N is 0, a dyn batch: [Note: dyn conv batch] in conv_shape.cuh; dyn: H,
// W, Ho, Wo and Ho x Wo where Shape holds 0, [Note: dyn conv spatial extents] there and below.)
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
//
// Dyn spatial extents ([Note: dyn conv spatial extents] in conv_shape.cuh): the gather reads H,
// W and H x W, the pixel decode divides by the launch's Wo (a DynDim's multiply-high), and a CTA
// decodes its tile by the launch's pixel tiles per image. Nothing else changes: the gather never
// held more than offsets. y's 16-byte stores are taken where the launch's Ho x Wo is a multiple of
// 4 (the store is picked per launch, both compiled). Without padding every tap of a forward conv
// is inside its input at any extent ((Ho - 1) * stride + (R - 1) * dilation <= H - 1 by Ho's
// definition), so kNoHalo is then the padding's alone.
// ============================================================================================
#pragma once

#include "kiln/conv_igemm.cuh"
#include "kiln/gemm_sm90.cuh"

namespace kiln {
namespace sm90 {

// H, W, H x W, Wo and the pixel tiles of an image at this launch, held by a gather whose shape's
// spatial extents are dyn (nothing otherwise).
template <bool kDyn, class Index>
struct GatherExtents {
  int in_h, in_w;
  Index in_hw;
  DynDim wo;
  int howo;               // < 2^31 - BN (the launch's check)
  long long pixel_tiles;  // ceil(howo / BN)
};
template <class Index>
struct GatherExtents<false, Index> {};

template <class Engine, class Index, class Shape>
struct ConvGather : GatherExtents<Shape::kDynSpatial, Index> {
  static_assert(!conv_im2col_general(Shape::D, Shape::T, Shape::Do, Shape::kTransposed), "a 2-d forward conv");
  static constexpr int kThreads = Engine::kThreads, BM = Engine::kWarpGroups * 64, BN = Engine::NT * 8;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kPix = BN / (8 * kWarps);  // pixels per thread
  static constexpr long long kKdim = Shape::Kdim, kHW = Shape::H * Shape::W;
  static_assert(BN % (8 * kWarps) == 0, "pixels per thread");
  static_assert(Shape::kGroups == 1, "WgConvNchw is for groups == 1");
  static_assert(kKdim % 4 == 0, "w rows must be 16-byte multiples");
  static_assert(BN <= 256 && Shape::HoWo < kConvWgmmaMaxPixels, "a pixel within an image in 32 bits");

  // No padding and every tap of every output pixel inside the input (the seed's valid
  // convolution): a tap is in bounds exactly when its pixel and its k' are.
  // (Dyn spatial extents: true of every forward conv without padding, the note above.)
  static constexpr bool kNoHalo =
      Shape::kPadH == 0 && Shape::kPadW == 0 &&
      (Shape::kDynSpatial ||
       ((Shape::Ho - 1) * Shape::kStrideH + (Shape::R - 1) * Shape::kDilH < Shape::H &&
        (Shape::Wo - 1) * Shape::kStrideW + (Shape::S - 1) * Shape::kDilW < Shape::W));

  const float* x;
  const float* w;   // filters [K][Kdim]
  const float* xn;  // image n of the tile being loaded
  int m0;
  int cur = -1;                  // the CTA's tile number whose pixels are set up below
  int hbase[kPix], wbase[kPix];  // ho*SH - PH, wo*SW - PW of this thread's pixels (hbase < -H: none)
  const float* px[kPix];         // kNoHalo: x[n][0][hbase][wbase] of each pixel (xn when none)

  __device__ __forceinline__ ConvGather(const float* x_, const float* w_, const conv::ConvDyn& dyn) : x(x_), w(w_) {
    if constexpr (Shape::kDynSpatial) {
      this->in_h = conv::extent_of<Shape::H, int>(dyn.h), this->in_w = conv::extent_of<Shape::W, int>(dyn.w);
      this->in_hw = Index(this->in_h) * Index(this->in_w);
      this->wo = dyn.wo;
      this->howo = int(dyn.howo.value);
      this->pixel_tiles = (dyn.howo.value + BN - 1) / BN;
    }
  }

  // The pixel tiles of an image: at this launch where the spatial extents are dyn.
  __device__ __forceinline__ long long tiles_p() const {
    if constexpr (Shape::kDynSpatial) return this->pixel_tiles;
    else return (Shape::HoWo + BN - 1) / BN;
  }

  // Tile t of the grid: pixels fastest, then out-channel tiles, then images.
  __device__ __forceinline__ void decode(long long t, Index& n, int& m0, int& p0) const {
    constexpr long long kTilesM = (Shape::K + BM - 1) / BM;
    if constexpr (Shape::kDynSpatial) {
      const long long tiles_p = this->pixel_tiles;
      p0 = int(t % tiles_p) * BN;
      m0 = int(t / tiles_p % kTilesM) * BM;
      n = Index(t / tiles_p / kTilesM);
    } else {   // (a constant expression: ptxas schedules the static conv as before dyn extents)
      constexpr long long kTilesP = (Shape::HoWo + BN - 1) / BN;
      p0 = int(t % kTilesP) * BN;
      m0 = int(t / kTilesP % kTilesM) * BM;
      n = Index(t / kTilesP / kTilesM);
    }
  }

  __device__ __forceinline__ void setup(long long t) {
    Index n;
    int p0;
    decode(t, n, m0, p0);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if constexpr (Shape::kDynSpatial) {   // hw < Ho x Wo + BN < 2^31 (the launch's check): 32-bit division
      xn = x + n * (Index(Shape::C) * this->in_hw);
      const int wo_n = int(this->wo.value);
#pragma unroll
      for (int q = 0; q < kPix; ++q) {
        const int hw = p0 + (lane & 7) + 8 * (warp + kWarps * q);
        const int ho = conv::div_by<Shape::Wo>(hw, this->wo), wo = hw - ho * wo_n;
        const bool in = hw < this->howo;
        hbase[q] = in ? ho * Shape::kStrideH - Shape::kPadH : -(1 << 30);
        wbase[q] = wo * Shape::kStrideW - Shape::kPadW;
        px[q] = in ? xn + (Index(hbase[q]) * Index(this->in_w) + wbase[q]) : xn;
      }
    } else {   // (as written before dyn extents: a static conv's code is unchanged)
      xn = x + n * Index(Shape::C * kHW);
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
      Index koff;
      if constexpr (Shape::kDynSpatial)
        koff = Index(c) * this->in_hw + dr * Index(this->in_w) + ds;
      else
        koff = Index(c) * Index(kHW) + dr * Index(Shape::W) + ds;
      const bool kin = k < kKdim;
      const u32 col = u32(((i ^ (lane & 7)) << 4) + (lane >> 3) * 4);
#pragma unroll
      for (int q = 0; q < kPix; ++q) {
        bool ok;
        const float* src;
        if constexpr (kNoHalo) {
          ok = kin && hbase[q] >= 0;
          src = ok ? px[q] + koff : xn;
        } else if constexpr (Shape::kDynSpatial) {
          const int hi = hbase[q] + dr, wi = wbase[q] + ds;
          ok = kin && unsigned(hi) < unsigned(this->in_h) && unsigned(wi) < unsigned(this->in_w);
          src = ok ? xn + (Index(hbase[q]) * Index(this->in_w) + wbase[q] + koff) : xn;
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

  using Gather = ConvGather<Engine, Index, Shape>;

  // batch: the images, read where Shape::N is 0 (a dyn batch, [Note: dyn conv batch] in conv_shape.cuh);
  // dyn: the spatial extents, read where Shape holds 0 ([Note: dyn conv spatial extents]).
  template <class OutT, class Epi>
  static __device__ __forceinline__ void run(const float* x, const float* w, OutT* y, Epi epi, long long batch = 0,
                                             const conv::ConvDyn& dyn = conv::ConvDyn{}) {
    extern __shared__ __align__(16) char smem[];
    Gather gather(x, w, dyn);
    const long long tiles = gather.tiles_p() * kGridY * gemm::extent<Shape::N>(batch);
    const int ntiles = int((tiles - blockIdx.x + gridDim.x - 1) / gridDim.x);
    if constexpr (Shape::kDynSpatial) {   // y's images of Ho x Wo at this launch: 16-byte stores where 4 divides it
      const Index howo = Index(dyn.howo.value);
      if (kVecY && howo % 4 == 0)
        run_tiles<kVecY>(smem, gather, ntiles, y, howo, epi);
      else
        run_tiles<false>(smem, gather, ntiles, y, howo, epi);
    } else {
      run_tiles<kVecY>(smem, gather, ntiles, y, Index(Shape::HoWo), epi);
    }
  }

 private:
  // The CTA's tiles, y's images howo elements apart (its row length).
  template <bool kVec, class OutT, class Epi>
  static __device__ __forceinline__ void run_tiles(char* smem, Gather& gather, int ntiles, OutT* y, Index howo,
                                                   const Epi& epi) {
    Engine::run_tiles(smem, ntiles, int((Shape::Kdim + 31) / 32), gather,
                      [&](int tile, const float (&acc)[Engine::NT][4]) {
                        Index n;
                        int m0, p0;
                        gather.decode(blockIdx.x + (long long)tile * gridDim.x, n, m0, p0);
                        const gemm::MatrixOut<OutT, Index, kVec, kStream> out{y + n * (Index(Shape::K) * howo), howo,
                                                                              Index(Shape::K), howo, n};
                        store_tile(acc, out, m0, Index(p0), epi);
                      });
  }
};

}  // namespace sm90
}  // namespace kiln
