// kiln/conv_tma.cuh — convs over 1, 2 or 3 spatial axes, forward and transposed (f32 as tf32 or
// 3xTF32, groups 1), as an implicit GEMM on the TMA engine of gemm_tma.cuh, its im2col done by the
// TMA unit (sm_90a only).
//
// ============================================================================================
// CONTRACT (what the emitter instantiates)
// --------------------------------------------------------------------------------------------
// kiln::sm90::TmaConv<Index, Shape, BM, BN, Stages, kX3, kPixelRows, kVecY, kStreamY> (NCHW)
// kiln::sm90::TmaConvNhwc<Index, Shape, BM, BN, Stages, kX3, kVecY, kStreamY>          (NHWC; at its struct)
// kiln::sm90::TmaConvPhased<Index, Shape, BM, BN, Stages, kX3, kStreamY>        (transposed; at its struct)
//   template <class OutT, class Epi>
//   static __device__ void run(const TensorMap& w, const TensorMap& x, OutT* y, Epi epi, long long batch = 0);
// (batch: N where Shape's N is 0, a dyn batch: [Note: dyn conv batch] in conv_shape.cuh; the x
// map's image extent is then the launch's too.) TmaConv's run also takes a conv::ConvDyn after
// the batch: H, W, Ho, Wo and Ho x Wo where Shape holds 0 (a 2-d forward conv's dyn spatial
// extents, [Note: dyn conv spatial extents] in conv_shape.cuh): the tiles per image, the im2col
// origin of a pixel (by the launch's Wo) and y's image stride are then the launch's, and so are
// the x map's extents and strides (the runtime encodes it per launch).
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
  // Dyn spatial extents (2-d, no depth): output pixel hw's row and column by the launch's Wo.
  __device__ __forceinline__ ConvTap(int kt, int hw, const DynDim& wo)
      : tap(kt / kCTiles), c0(kt % kCTiles * kConvTmaChannels),
        wi(conv::mod_by<Shape::Wo>(hw, wo) * Shape::kStrideW - Shape::kPadW),
        h(conv::div_by<Shape::Wo>(hw, wo) * Shape::kStrideH - Shape::kPadH), d(0),
        off_w(static_cast<unsigned short>(tap % Shape::S * Shape::kDilW)),
        off_h(static_cast<unsigned short>(tap / Shape::S * Shape::kDilH)), off_d(0) {
    static_assert(Shape::kDynSpatial && !kDepth, "dyn spatial extents: a 1-d or 2-d conv");
  }
  // The k tile's x operand of image n: one im2col copy of the map's rank.
  __device__ __forceinline__ void load_x(u32 dst, const TensorMap& x, u32 bar, int n) const {
    if constexpr (kDepth) tma_load_im2col(dst, x, bar, c0, wi, h, d, n, off_w, off_h, off_d);
    else tma_load_im2col(dst, x, bar, c0, wi, h, n, off_w, off_h);
  }
  // A direct conv's ([Note: NCHW x read in place] in config/conv.h): x as stored, a tiled map {W,
  // C, N}; kPixels from the multiple of 4 at or below the tile's first pixel wi + off_w (a tiled
  // copy's innermost coordinate is one), in boxes of kBox pixels x 32 channels, chunk_bytes apart.
  template <int kPixels, int kBox>
  __device__ __forceinline__ void load_x_direct(u32 dst, const TensorMap& x, u32 bar, int n, int chunk_bytes) const {
    const int first = (wi + off_w) & ~3;
#pragma unroll
    for (int j = 0; j < kPixels / kBox; ++j) tma_load(dst + j * chunk_bytes, x, bar, first + j * kBox, c0, n);
  }
  // The row of that copy where k tile kt's pixels start, given a first pixel p0 that is a multiple
  // of 4 (stride 1, one output row: wi + off_w = p0 + tap dil - pad).
  static __device__ __forceinline__ int direct_shift(int kt) {
    return (kt / kCTiles % Shape::S * Shape::kDilW - Shape::kPadW) & 3;
  }
};

// What every conv problem shares: the two maps, the work units (a launch's, with a dyn batch),
// each unit's k tiles from 0.
struct ConvMaps {
  const TensorMap& w;
  const TensorMap& x;
  long long n_units;
  __device__ __forceinline__ long long units() const { return n_units; }
  __device__ __forceinline__ int k_begin(long long) const { return 0; }
  __device__ __forceinline__ void prefetch() const {
    prefetch_tensor_map(w);
    prefetch_tensor_map(x);
  }
};

// A forward conv's: every unit's k tiles are all taps x channel tiles.
template <class Shape>
struct ConvProblem : ConvMaps {
  static_assert(!Shape::kTransposed, "a forward conv (a transposed one comes as the forward conv of its flipped filters)");
  __device__ __forceinline__ int k_end(long long) const { return ConvTap<Shape>::kKTiles; }
};

template <class Index, class Shape, int BM, int BN, int Stages, bool kX3, bool kPixelRows, bool kVecY, bool kStreamY,
          bool kDirect = false>
struct TmaConv {
  static constexpr int BK = kConvTmaChannels;   // config/conv.h: channels per k tile (one 128-byte row)
  // 3xTF32 splits A in registers, so x must be A: the rows are pixels. kDirect: x, the A operand, is
  // m-major (pixels contiguous) and goes through the consumers' registers, each lane holding two
  // adjacent pixels where Ho x Wo is even (kRowsPairs: a lane's two values of a channel are one
  // 8-byte store into y, half the store instructions: KernelBench 67 in tf32 2.97 -> 2.00 ms on
  // an H100, whose warps waited on the global store queue), else in the fragment's own row order
  // (kRowsDense: a store instruction covers 8 adjacent pixels of 4 channels).
  // (kDirect's A tile: conv_tma_a_pad_rows more rows, from the 16-byte boundary before the tile's.)
  // (3xTF32's pixel rows too: its consumers load and split A in registers, in any row order.)
  static constexpr bool kPairs = kPixelRows && (kDirect || kX3) && Shape::HoWo > 0 && Shape::HoWo % 2 == 0;
  using Engine = TmaEngine<float, BM, BN, BK, Stages, !kDirect, true, kX3,
                           kPairs ? kRowsPairs : kDirect ? kRowsDense : kRowsSpread, 1, 1, conv_tma_a_pad_rows(kDirect)>;
  static_assert(!kDirect || (kPixelRows && !kX3 && !Shape::kDynSpatial && !ConvTap<Shape>::kDepth &&
                             Shape::kStrideW == 1 && Shape::Ho == 1 && BM % 4 == 0),
                "a direct conv: pixel rows, tf32, static extents, one output row, stride 1 (conv_tma_direct_fits)");
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

  // A k tile's copies into stage: the filters of out channels k0.., x's window of image n at tap t.
  static __device__ __forceinline__ void load_tap(const ConvMaps& m, u32 stage, u32 full, const ConvTap<Shape>& t,
                                                  int k0, Index n) {
    const u32 sw = kPixelRows ? stage + Engine::kABytes : stage, sx = kPixelRows ? stage : stage + Engine::kABytes;
    tma_load(sw, m.w, full, t.c0, t.tap, k0);
    if constexpr (kDirect)
      t.template load_x_direct<BM + conv_tma_a_pad_rows(kDirect), Engine::kAtom>(sx, m.x, full, int(n), Engine::kChunkBytes);
    else t.load_x(sx, m.x, full, int(n));
    // 3xTF32: the filters' lo parts (rows K..); x is split by the consumers.
    if constexpr (kX3) tma_load(stage + Engine::kBLo, m.w, full, t.c0, t.tap, k0 + int(Shape::K));
  }

  struct Problem : ConvProblem<Shape> {
    using Pixel = long long;   // (the type of a tile's first pixel)
    __device__ __forceinline__ void origin(long long u, Index& n, int& k0, long long& p0) const {
      tile_origin(u, n, k0, p0);
    }
    __device__ __forceinline__ void load(u32 stage, u32 full, long long u, int kt) const {
      Index n;
      int k0;
      long long p0;
      tile_origin(u, n, k0, p0);
      load_tap(*this, stage, full, ConvTap<Shape>(kt, p0), k0, n);
    }
    // kDirect: the engine's consumers read k tile kt's A from this row of the stage on.
    __device__ __forceinline__ int a_shift(long long, int kt) const { return ConvTap<Shape>::direct_shift(kt); }
  };

  // Dyn spatial extents: the units and pixels of this launch's images ([Note: dyn conv spatial
  // extents] in conv_shape.cuh). Pixels within an image fit 32 bits (the launch's checks).
  struct DynProblem : ConvProblem<Shape> {
    using Pixel = int;
    long long tiles_p;   // pixel tiles per image
    DynDim wo;
    __device__ __forceinline__ void origin(long long u, Index& n, int& k0, int& p0) const {
      k0 = int(u % kTilesK) * kChannelTile;
      p0 = int(u / kTilesK % tiles_p) * kPixelTile;
      n = Index(u / kTilesK / tiles_p);
    }
    __device__ __forceinline__ void load(u32 stage, u32 full, long long u, int kt) const {
      Index n;
      int k0, p0;
      origin(u, n, k0, p0);
      load_tap(*this, stage, full, ConvTap<Shape>(kt, p0, wo), k0, n);
    }
  };

  template <class OutT, class Epi>
  static __device__ __forceinline__ void run(const TensorMap& w, const TensorMap& x, OutT* y, Epi epi,
                                             long long batch = 0, const conv::ConvDyn& dyn = conv::ConvDyn{}) {
    if constexpr (Shape::kDynSpatial) {
      const Index howo = Index(dyn.howo.value);
      const long long tiles_p = (dyn.howo.value + kPixelTile - 1) / kPixelTile;
      DynProblem prob{{{w, x, kTilesK * tiles_p * gemm::extent<Shape::N>(batch)}}, tiles_p, dyn.wo};
      if (kVecY && howo % 4 == 0)
        run_units<kVecY>(prob, y, howo, epi);
      else
        run_units<false>(prob, y, howo, epi);
    } else {
      Problem prob{{{w, x, kTilesK * kTilesP * gemm::extent<Shape::N>(batch)}}};
      run_units<kVecY>(prob, y, Index(Shape::HoWo), epi);
    }
  }

 private:
  // The engine over the problem's units; y's images howo elements apart (16-byte stores where
  // kVec: Ho x Wo a multiple of 4, the launch's with dyn spatial extents).
  template <bool kVec, class Prob, class OutT, class Epi>
  static __device__ __forceinline__ void run_units(Prob& prob, OutT* y, Index howo, const Epi& epi) {
    Engine::run(prob, [&](long long u, const float (&acc)[Engine::NT][4], int c, int warp) {
      Index n;
      int k0;
      typename Prob::Pixel p0;
      prob.origin(u, n, k0, p0);
      OutT* const yn = y + n * (Index(Shape::K) * howo);
      if constexpr (kPixelRows) {   // tile (pixel, channel) -> y[n][channel][pixel]
        const gemm::TransposedOut<OutT, Index, kStreamY> out{yn, howo, howo, Index(Shape::K), n};
        if constexpr (kPairs)
          gemm::store_fragment_pairs<Index>(acc, out, Index(p0 + 64 * c), Index(k0), epi, typename Engine::Rows{warp});
        else
          gemm::store_fragments_direct<Index>(acc, out, Index(p0 + 64 * c), Index(k0), epi, typename Engine::Rows{warp});
      } else {
        const gemm::MatrixOut<OutT, Index, kVec, kStreamY> out{yn, howo, Index(Shape::K), howo, n};
        gemm::store_accumulators<Index>(acc, out, Index(k0 + 64 * c + 16 * warp), Index(p0), epi);
      }
    });
  }
};

// kiln::sm90::TmaConvPhased<Index, Shape, BM, BN, Stages, kX3, kStreamY>: a transposed conv
// (Shape::kTransposed, groups 1, over 1-3 axes) as one implicit GEMM per stride phase ([Note:
// strided transposed convs on the TMA engine] in config/conv.h). Rows = BM pixels of one phase's
// grid (ceil(Do / stride_d) x ceil(Ho / stride_h) x ceil(Wo / stride_w)), columns = BN out
// channels; k tiles = the phase's taps x 32-channel slices. The maps:
//   w: the filters w [C][K][T*R*S] copied to [K][T*R*S][ldc] (not reversed), tiled as TmaConv's;
//   x: NDHWC (or NHWC) [N][...][ldc] in im2col mode, element strides 1, pixel box corners
//      conv_tma_lower_* / conv_tma_upper_* (the phases' least offset, the phase grid's extent).
// A phase no tap reaches stores epi(0): its unit takes one k tile loaded wholly out of bounds (the
// channels from ldc up: zeros in both operands). Units: out-channel tiles fastest, then phases,
// then pixel tiles, then images, so that the CTAs at work at once write the phases of the same
// output rows (their strided stores meet in L2).
template <int kTaps, int kStride, int kPad, int kDil>
struct PhaseAxis {
  static constexpr int kStep = conv_phase_step(kStride, kDil);
  static constexpr int kLower = conv_phase_lower(kTaps, kStride, kPad, kDil);
  int first, count;   // the phase's first tap, its number of taps
  __device__ __forceinline__ explicit PhaseAxis(int phase)
      : first(conv_phase_first_tap(phase, kTaps, kStride, kPad, kDil)),
        count(conv_phase_taps(first, kTaps, kStride, kDil)) {}
  // The phase's j-th tap, and its im2col offset from the map's lower corner.
  __device__ __forceinline__ int tap(int j) const { return first + j * kStep; }
  __device__ __forceinline__ static unsigned short offset(int phase, int r) {
    return static_cast<unsigned short>(conv_phase_offset(phase, r, kStride, kPad, kDil) - kLower);
  }
};

template <class Index, class Shape, int BM, int BN, int Stages, bool kX3, bool kStreamY>
struct TmaConvPhased {
  static constexpr int BK = kConvTmaChannels;
  using Engine = TmaEngine<float, BM, BN, BK, Stages, true, true, kX3>;   // (3xTF32: x split by the consumers)
  static constexpr int kThreads = Engine::kThreads;
  static constexpr int kSmemBytes = Engine::kSmemBytes;
  static_assert(Shape::kTransposed && Shape::kGroups == 1, "TmaConvPhased is for transposed convs of one group");
  static_assert(Engine::kAtom == BK, "a k tile is one 128-byte row of channels");
  static constexpr bool kDepth = conv_tma_depth(Shape::D, Shape::T, Shape::Do);
  using AxisD = PhaseAxis<Shape::T, Shape::kStrideD, Shape::kPadD, Shape::kDilD>;
  using AxisH = PhaseAxis<Shape::R, Shape::kStrideH, Shape::kPadH, Shape::kDilH>;
  using AxisW = PhaseAxis<Shape::S, Shape::kStrideW, Shape::kPadW, Shape::kDilW>;
  static constexpr long long Qd = conv_phase_extent(Shape::Do, Shape::kStrideD);
  static constexpr long long Qh = conv_phase_extent(Shape::Ho, Shape::kStrideH);
  static constexpr long long Qw = conv_phase_extent(Shape::Wo, Shape::kStrideW);
  static constexpr long long kGrid = Qd * Qh * Qw;   // a phase grid's pixels
  static constexpr int kPhases = conv_phases(true, Shape::kStrideD, Shape::kStrideH, Shape::kStrideW);
  static constexpr int kCTiles = int((Shape::C + BK - 1) / BK);
  static constexpr long long kTilesK = (Shape::K + BN - 1) / BN;
  static constexpr long long kTilesP = (kGrid + BM - 1) / BM;

  // Unit u -> (first out channel, phase, first pixel of the phase grid, image).
  struct Unit {
    int k0, phase;
    long long p0;
    Index n;
    __device__ __forceinline__ explicit Unit(long long u)
        : k0(int(u % kTilesK) * BN), phase(int(u / kTilesK % kPhases)), p0(u / kTilesK / kPhases % kTilesP * BM),
          n(Index(u / kTilesK / kPhases / kTilesP)) {}
    __device__ __forceinline__ int pd() const { return phase / (Shape::kStrideH * Shape::kStrideW); }
    __device__ __forceinline__ int ph() const { return phase / Shape::kStrideW % Shape::kStrideH; }
    __device__ __forceinline__ int pw() const { return phase % Shape::kStrideW; }
  };
  // A phase's taps along each axis.
  struct Taps {
    AxisD d;
    AxisH h;
    AxisW w;
    __device__ __forceinline__ explicit Taps(const Unit& t) : d(t.pd()), h(t.ph()), w(t.pw()) {}
    __device__ __forceinline__ int count() const { return d.count * h.count * w.count; }
  };

  struct Problem : ConvMaps {
    __device__ __forceinline__ int k_end(long long u) const {
      const int taps = Taps(Unit(u)).count();
      return taps == 0 ? 1 : taps * kCTiles;   // (no tap: one k tile of zeros)
    }
    __device__ __forceinline__ void load(u32 stage, u32 full, long long u, int kt) const {
      const Unit t(u);
      const Taps taps(t);
      int c0 = kCTiles * BK, rd = 0, rh = 0, rw = 0;   // no tap: channels past the tensor, zeros
      if (taps.count() > 0) {
        const int j = kt / kCTiles;
        c0 = kt % kCTiles * BK;
        rw = taps.w.tap(j % taps.w.count);
        rh = taps.h.tap(j / taps.w.count % taps.h.count);
        rd = taps.d.tap(j / (taps.w.count * taps.h.count));
      }
      const int tap = (rd * Shape::R + rh) * Shape::S + rw;
      const int qw = int(t.p0 % Qw), qh = int(t.p0 / Qw % Qh), qd = int(t.p0 / (Qw * Qh));
      if constexpr (kDepth)
        tma_load_im2col(stage, this->x, full, c0, qw + AxisW::kLower, qh + AxisH::kLower, qd + AxisD::kLower, int(t.n),
                        AxisW::offset(t.pw(), rw), AxisH::offset(t.ph(), rh), AxisD::offset(t.pd(), rd));
      else
        tma_load_im2col(stage, this->x, full, c0, qw + AxisW::kLower, qh + AxisH::kLower, int(t.n),
                        AxisW::offset(t.pw(), rw), AxisH::offset(t.ph(), rh));
      tma_load(stage + Engine::kABytes, this->w, full, c0, tap, t.k0);
      // 3xTF32: the filters' lo parts (rows K..); x is split by the consumers.
      if constexpr (kX3) tma_load(stage + Engine::kBLo, this->w, full, c0, tap, t.k0 + int(Shape::K));
    }
  };

  // A phase's output placement: phase-grid pixel `row`, out channel `col` -> y[n][col][pixel],
  // nothing past the output (the epilogue then sees pixel 0 of the image and its value is dropped).
  template <class OutT>
  struct PhasedOut {
    OutT* y;   // the image's
    Index rows, cols, batch;
    int pd, ph, pw;
    __device__ __forceinline__ Index pixel(Index q) const {
      const Index od = q / Index(Qw * Qh) * Shape::kStrideD + pd, oh = q / Index(Qw) % Index(Qh) * Shape::kStrideH + ph,
                  ow = q % Index(Qw) * Shape::kStrideW + pw;
      return od < Shape::Do && oh < Shape::Ho && ow < Shape::Wo ? (od * Index(Shape::Ho) + oh) * Index(Shape::Wo) + ow
                                                                 : Index(-1);
    }
    template <class Epi>
    __device__ __forceinline__ float apply(const Epi& epi, float v, Index row, Index col) const {
      const Index p = pixel(row);
      return epi(v, batch, col, p < 0 ? Index(0) : p);
    }
    __device__ __forceinline__ void put1(Index row, Index col, float v) const {
      const Index p = pixel(row);
      if (p >= 0) gemm::store1<OutT, kStreamY>(y + col * Index(Shape::HoWo) + p, v);
    }
  };

  template <class OutT, class Epi>
  static __device__ __forceinline__ void run(const TensorMap& w, const TensorMap& x, OutT* y, Epi epi,
                                             long long batch = 0) {
    Problem prob{{w, x, kTilesK * kPhases * kTilesP * gemm::extent<Shape::N>(batch)}};
    Engine::run(prob, [&](long long u, const float (&acc)[Engine::NT][4], int c, int warp) {
      const Unit t(u);
      const PhasedOut<OutT> out{y + t.n * Index(Shape::K * Shape::HoWo), Index(kGrid), Index(Shape::K), t.n,
                                t.pd(), t.ph(), t.pw()};
      gemm::store_fragments_direct<Index>(acc, out, Index(t.p0 + 64 * c), Index(t.k0), epi, typename Engine::Rows{warp});
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
    Problem prob{{{w, x, kTilesN * ((pixels + BM - 1) / BM)}}};
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
