// kiln/conv_tma.cuh — forward convs over 1, 2 or 3 spatial axes (f32 as tf32 or 3xTF32, groups 1)
// as an implicit GEMM on the TMA engine of gemm_tma.cuh, its im2col done by the TMA unit (sm_90a
// only).
//
// ============================================================================================
// CONTRACT (what the emitter instantiates)
// --------------------------------------------------------------------------------------------
// kiln::sm90::TmaConv<Index, Shape, BM, BN, Stages, kX3, kPixelRows, kVecY, kStreamY> (NCHW)
// kiln::sm90::TmaConvNhwc<Index, Shape, BM, BN, Stages, kX3, kVecY, kStreamY>          (NHWC; at its struct)
//   template <class OutT, class Epi>
//   static __device__ void run(const TensorMap& w, const TensorMap& x, OutT* y, Epi epi, long long batch = 0);
// (batch: N where Shape's N is 0, a dyn batch: [Note: dyn conv batch] in conv_shape.cuh; the x
// map's image extent is then the launch's too.)
// y [N][K][Do][Ho][Wo] (NCHW) = epi(conv(x, w), n, k, (do * Ho + ho) * Wo + wo), Shape a forward
// conv::ConvShape with groups 1 (Do = 1 below three axes), f32 accumulation. The operands are
// gemm::OperandPrep's k-major copies of the caller's tensors (config/conv.h's conv_tma_ldc: C
// padded to 16 bytes), or NHWC x itself:
//   w: [K][T*R*S][ldc] (the filters with c innermost), mapped 3-D: dims {C, T*R*S, K * parts},
//      box {32, 1, out channels of a tile} (tiled, 128-byte swizzle);
//   x: [N][H][W][ldc] (NHWC), mapped 4-D in im2col mode: dims {C, W, H, N}, 32 channels per
//      pixel, the tile's pixels per column, pixel box corners {-pad_w, -pad_h} and
//      {pad_w - dil_w * (S - 1), pad_h - dil_h * (R - 1)}, element strides {1, stride_w,
//      stride_h, 1} (config/conv.h's conv_tma_* rules, the planner encodes the maps with them);
//      with a depth axis (conv_tma_depth), [N][D][H][W][ldc] mapped 5-D: dims {C, W, H, D, N},
//      the corners and element strides with the depth's after the height's.
// kX3 (3xTF32): the filters' copy has parts = 2, the lo parts after the hi parts (filter rows
// K..); x stays f32, the engine's A operand, split by its consumers ([Note: 3xTF32 with A split in
// registers] in gemm_tma.cuh). kPixelRows (config/conv.h's conv_tma_pixel_rows, required with kX3):
// the engine's rows are BM output pixels (A = x) and its columns BN out channels (B = the filters),
// stored transposed into y; otherwise rows are BM out channels (A = the filters), columns BN pixels.
// Launch: kThreads, dynamic shared memory kSmemBytes, any grid (persistent).
//
// [Note: the TMA im2col]
// The GEMM per image: the K out channels x the Do*Ho*Wo output pixels (or its transpose,
// kPixelRows), k' = (tap (t, r, s), c) with c fastest, in k tiles of 32 channels of one tap (C is zero-filled up to
// a multiple of 32 by the maps' bounds). A tile is a block of out channels x a block of consecutive
// output pixels of one image (p0 .. in ho * Wo + wo order, across output rows). For k tile (tap, c0)
// the producer issues one tiled copy of the filters and one im2col copy: the TMA unit walks the tile's
// pixel positions from (wo0 * stride_w - pad_w, ho0 * stride_h - pad_h, n) inside the pixel box,
// wrapping from the end of a row to the next row (from the last row to the next depth slice, from
// the last slice to the next image), and loads the 32 channels at each position + (s * dil_w,
// r * dil_h[, t * dil_d]), zeros outside the input: the
// padding costs nothing, and every row of the x tile is one pixel's 128 bytes, the k-major layout
// wgmma's descriptor (or the split's loads) reads. Pixels past the image's end load the next
// image's (or zeros): they are never stored. Tiles: out-channel tiles fastest (they share the pixels' x
// window in L2), then pixel tiles, then images.
// ============================================================================================
#pragma once

#include "kiln/config/conv.h"
#include "kiln/conv_shape.cuh"
#include "kiln/gemm_tma.cuh"

namespace kiln {
namespace sm90 {

// k tile kt of a conv on the engine for output pixel hw (= (do * Ho + ho) * Wo + wo) of an image:
// the filter tap and first channel it covers, where the im2col walk starts (the pixel's window
// origin in input coordinates) and the tap's offset from there.
template <class Shape>
struct ConvTap {
  // A depth axis: x is a 5-D map (config/conv.h's conv_tma_depth, which the planner encodes by).
  static constexpr bool kDepth = conv_tma_depth(Shape::D, Shape::T, Shape::Do);
  static constexpr int kCTiles = int((Shape::C + kConvTmaChannels - 1) / kConvTmaChannels);
  static constexpr int kKTiles = Shape::T * Shape::R * Shape::S * kCTiles;
  int tap, c0, wi, h, d;
  unsigned short off_w, off_h, off_d;
  __device__ __forceinline__ ConvTap(int kt, long long hw)
      : tap(kt / kCTiles), c0(kt % kCTiles * kConvTmaChannels),
        wi(int(hw % Shape::Wo) * Shape::kStrideW - Shape::kPadW),
        h(int(kDepth ? hw / Shape::Wo % Shape::Ho : hw / Shape::Wo) * Shape::kStrideH - Shape::kPadH),
        d(kDepth ? int(hw / (Shape::Wo * Shape::Ho)) * Shape::kStrideD - Shape::kPadD : 0),
        off_w(static_cast<unsigned short>(tap % Shape::S * Shape::kDilW)),
        off_h(static_cast<unsigned short>((kDepth ? tap / Shape::S % Shape::R : tap / Shape::S) * Shape::kDilH)),
        off_d(static_cast<unsigned short>(kDepth ? tap / (Shape::S * Shape::R) * Shape::kDilD : 0)) {}
  // The k tile's x operand of image n: one im2col copy of the map's rank.
  __device__ __forceinline__ void load_x(u32 dst, const TensorMap& x, u32 bar, int n) const {
    if constexpr (kDepth) tma_load_im2col(dst, x, bar, c0, wi, h, d, n, off_w, off_h, off_d);
    else tma_load_im2col(dst, x, bar, c0, wi, h, n, off_w, off_h);
  }
};

// What both conv problems share: the two maps, the work units (a launch's, with a dyn batch), every
// unit's k tiles (all taps x channel tiles).
template <class Shape>
struct ConvProblem {
  static_assert(!Shape::kTransposed, "a forward conv (a transposed one comes as the forward conv of its flipped filters)");
  const TensorMap& w;
  const TensorMap& x;
  long long n_units;
  __device__ __forceinline__ long long units() const { return n_units; }
  __device__ __forceinline__ int k_begin(long long) const { return 0; }
  __device__ __forceinline__ int k_end(long long) const { return ConvTap<Shape>::kKTiles; }
  __device__ __forceinline__ void prefetch() const {
    prefetch_tensor_map(w);
    prefetch_tensor_map(x);
  }
};

template <class Index, class Shape, int BM, int BN, int Stages, bool kX3, bool kPixelRows, bool kVecY, bool kStreamY>
struct TmaConv {
  static constexpr int BK = kConvTmaChannels;   // config/conv.h: channels per k tile (one 128-byte row)
  // 3xTF32 splits A in registers, so x must be A: the rows are pixels.
  using Engine = TmaEngine<float, BM, BN, BK, Stages, true, true, kX3>;
  static constexpr int kThreads = Engine::kThreads;
  static constexpr int kSmemBytes = Engine::kSmemBytes;
  static constexpr int kChannelTile = kPixelRows ? BN : BM, kPixelTile = kPixelRows ? BM : BN;
  static constexpr long long kTilesK = (Shape::K + kChannelTile - 1) / kChannelTile;
  static constexpr long long kTilesP = (Shape::HoWo + kPixelTile - 1) / kPixelTile;
  static_assert(Shape::kGroups == 1, "TmaConv is for groups == 1");
  static_assert(Engine::kAtom == BK, "a k tile is one 128-byte row of channels");
  static_assert(kPixelRows || !kX3, "3xTF32 splits x, the A operand, in registers (conv_tma_pixel_rows)");

  // Unit u -> (image, first out channel, first output pixel of the image).
  static __device__ __forceinline__ void tile_origin(long long u, Index& n, int& k0, long long& p0) {
    k0 = int(u % kTilesK) * kChannelTile;
    p0 = u / kTilesK % kTilesP * kPixelTile;
    n = Index(u / kTilesK / kTilesP);
  }

  struct Problem : ConvProblem<Shape> {
    __device__ __forceinline__ void load(u32 stage, u32 full, long long u, int kt) const {
      Index n;
      int k0;
      long long p0;
      tile_origin(u, n, k0, p0);
      const ConvTap<Shape> t(kt, p0);
      const u32 sw = kPixelRows ? stage + Engine::kABytes : stage, sx = kPixelRows ? stage : stage + Engine::kABytes;
      tma_load(sw, this->w, full, t.c0, t.tap, k0);
      t.load_x(sx, this->x, full, int(n));
      // 3xTF32: the filters' lo parts (rows K..); x is split by the consumers.
      if constexpr (kX3) tma_load(stage + Engine::kBLo, this->w, full, t.c0, t.tap, k0 + int(Shape::K));
    }
  };

  template <class OutT, class Epi>
  static __device__ __forceinline__ void run(const TensorMap& w, const TensorMap& x, OutT* y, Epi epi,
                                             long long batch = 0) {
    Problem prob{{w, x, kTilesK * kTilesP * gemm::extent<Shape::N>(batch)}};
    Engine::run(prob, [&](long long u, const float (&acc)[Engine::NT][4], int c, int warp) {
      Index n;
      int k0;
      long long p0;
      tile_origin(u, n, k0, p0);
      OutT* const yn = y + n * Index(Shape::K * Shape::HoWo);
      if constexpr (kPixelRows) {   // tile (pixel, channel) -> y[n][channel][pixel]
        const gemm::TransposedOut<OutT, Index, kStreamY> out{yn, Index(Shape::HoWo), Index(Shape::HoWo),
                                                             Index(Shape::K), n};
        gemm::store_fragments_direct<Index>(acc, out, Index(p0 + 64 * c), Index(k0), epi, typename Engine::Rows{warp});
      } else {
        const gemm::MatrixOut<OutT, Index, kVecY, kStreamY> out{yn, Index(Shape::HoWo), Index(Shape::K),
                                                                Index(Shape::HoWo), n};
        gemm::store_accumulators<Index>(acc, out, Index(k0 + 64 * c + 16 * warp), Index(p0), epi);
      }
    });
  }
};

// NHWC output placement: y [N*Ho*Wo][K] is a row-major matrix of (flat output pixel, out channel);
// the epilogue gets the pixel's image and its ho * Wo + wo, as the NCHW template gives it.
template <class OutT, class Index, long long HoWo, bool kVec, bool kStream>
struct NhwcOut : gemm::MatrixOut<OutT, Index, kVec, kStream> {
  template <class Epi>
  __device__ __forceinline__ float apply(const Epi& epi, float v, Index row, Index col) const {
    return epi(v, row / Index(HoWo), col, row % Index(HoWo));
  }
};

// kiln::sm90::TmaConvNhwc<Index, Shape, BM, BN, Stages, kX3, kVecY, kStreamY>: the same conv with
// x and y channels-last (layout="NHWC"): x [N][H][W][C] is read in place (or its 16-byte-row
// copy), the filters as for TmaConv. Rows = the N*Ho*Wo output pixels (A, the im2col copies: BM
// pixels, flat across rows and images), columns = the K out channels (B, the filters), so y
// [N*Ho*Wo][K] is stored along contiguous channels. Maps as above, with BM pixels per column.
template <class Index, class Shape, int BM, int BN, int Stages, bool kX3, bool kVecY, bool kStreamY>
struct TmaConvNhwc {
  static constexpr int BK = kConvTmaChannels;
  using Engine = TmaEngine<float, BM, BN, BK, Stages, true, true, kX3>;   // (3xTF32: x split by the consumers)
  static constexpr int kThreads = Engine::kThreads;
  static constexpr int kSmemBytes = Engine::kSmemBytes;
  static constexpr long long kTilesN = (Shape::K + BN - 1) / BN;
  static_assert(Shape::kGroups == 1, "TmaConvNhwc is for groups == 1");
  static_assert(Engine::kAtom == BK, "a k tile is one 128-byte row of channels");

  // Unit u -> (first output pixel over all images, first out channel): channel tiles fastest.
  static __device__ __forceinline__ void tile_origin(long long u, long long& p0, int& n0) {
    n0 = int(u % kTilesN) * BN;
    p0 = u / kTilesN * BM;
  }

  struct Problem : ConvProblem<Shape> {
    __device__ __forceinline__ void load(u32 stage, u32 full, long long u, int kt) const {
      long long p0;
      int n0;
      tile_origin(u, p0, n0);
      const int n = int(p0 / Shape::HoWo);
      const ConvTap<Shape> t(kt, p0 % Shape::HoWo);
      t.load_x(stage, this->x, full, n);
      tma_load(stage + Engine::kABytes, this->w, full, t.c0, t.tap, n0);
      // 3xTF32: the filters' lo parts (rows K..); x is split by the consumers.
      if constexpr (kX3) tma_load(stage + Engine::kBLo, this->w, full, t.c0, t.tap, n0 + int(Shape::K));
    }
  };

  template <class OutT, class Epi>
  static __device__ __forceinline__ void run(const TensorMap& w, const TensorMap& x, OutT* y, Epi epi,
                                             long long batch = 0) {
    const long long pixels = gemm::extent<Shape::N>(batch) * Shape::HoWo;
    Problem prob{{w, x, kTilesN * ((pixels + BM - 1) / BM)}};
    Engine::run(prob, [&](long long u, const float (&acc)[Engine::NT][4], int c, int warp) {
      long long p0;
      int n0;
      tile_origin(u, p0, n0);
      const NhwcOut<OutT, Index, Shape::HoWo, kVecY, kStreamY> out{
          {y, Index(Shape::K), Index(pixels), Index(Shape::K), Index(0)}};
      gemm::store_accumulators<Index>(acc, out, Index(p0 + 64 * c + 16 * warp), Index(n0), epi);
    });
  }
};

}  // namespace sm90
}  // namespace kiln
