// kiln/config/conv.h — the conv family (conv_igemm.cuh, conv_sm90.cuh, conv_tma.cuh): every kernel
// a conv (1-3 spatial axes, forward or transposed) is planned as. See config.h for the pattern.
//
// The spatial axes are right-aligned into (d, h, w): a conv1d is d = h = 1, a conv2d d = 1. Nchw
// and Tma take a depth (d, t, dout > 1) and a transposed conv (Tma by stride phase, or a stride-1
// one as a forward conv); the others are 2-d forward kernels.
//
// One ConvConfig, `kind` naming the template: the three share the problem shape (ConvShape's
// fields) and differ only in the tiling fields, which a kind that does not read them leaves at
// their defaults. The implicit GEMMs reuse gemm.h's shared-memory rules (the same tile engines).
#pragma once

#include "kiln/config/config.h"
#include "kiln/config/gemm.h"   // MmaPrecision, tile_engine_smem, wg_engine_smem

namespace kiln {

enum class ConvKind : int {
  Nchw,        // conv::ConvNchw: implicit GEMM on the mma.sync tile engine
  Depthwise,   // conv::DepthwiseDirect: one thread per output, f32 FMA
  Wgmma,       // sm90::WgConvNchw: implicit GEMM on wgmma, persistent CTAs
  Tma,         // sm90::TmaConv: implicit GEMM on the TMA engine, TMA im2col over an NHWC copy of x
};

#if !defined(__CUDACC_RTC__)
inline const char* enum_name(ConvKind k) {
  return k == ConvKind::Nchw ? "Nchw" : k == ConvKind::Depthwise ? "Depthwise" : k == ConvKind::Wgmma ? "Wgmma" : "Tma";
}
#endif

#define KILN_CONV_FIELDS(X)                                                                         \
  X(ConvKind, kind, ConvKind::Nchw)                                                                 \
  X(MmaPrecision, precision, MmaPrecision::Tf32x3)                                                  \
  X(int, elem_bytes, 4)          /* element size of x and w: 4 (f32) or 2 (f16, bf16) */            \
  X(bool, nhwc, false)           /* x and y channels-last (Depthwise, Tma) */                       \
  X(long long, n, 1)             /* x: N x C x H x W, w: K x C/groups x R x S, y: N x K x Ho x Wo */ \
  X(long long, c, 1)                                                                                \
  X(long long, h, 1)                                                                                \
  X(long long, w, 1)                                                                                \
  X(long long, k, 1)                                                                                \
  X(int, r, 1)                                                                                      \
  X(int, s, 1)                                                                                      \
  X(int, stride_h, 1)                                                                               \
  X(int, stride_w, 1)                                                                               \
  X(int, pad_h, 0)                                                                                  \
  X(int, pad_w, 0)                                                                                  \
  X(int, dil_h, 1)                                                                                  \
  X(int, dil_w, 1)                                                                                  \
  X(int, groups, 1)                                                                                 \
  X(long long, ho, 1)                                                                               \
  X(long long, wo, 1)                                                                               \
  X(bool, transposed, false)     /* Nchw, Tma: conv_transpose, w [C, K/groups, T, R, S] */          \
  X(long long, d, 1)             /* Nchw, Tma, 3-d: x depth, filter depth, its stride, pad, */      \
  X(int, t, 1)                   /* dilation, and y depth */                                        \
  X(int, stride_d, 1)                                                                               \
  X(int, pad_d, 0)                                                                                  \
  X(int, dil_d, 1)                                                                                  \
  X(long long, dout, 1)                                                                             \
  X(int, opad_d, 0)              /* transposed: output_padding per axis */                          \
  X(int, opad_h, 0)                                                                                 \
  X(int, opad_w, 0)                                                                                 \
  X(bool, phase_w, false)        /* transposed: split w by stride phase too (conv_igemm.cuh) */     \
  X(int, bm, 0)                  /* CTA tile rows x columns (which: conv_tma_pixel_rows) */         \
  X(int, bn, 0)                                                                                     \
  X(int, bk, 0)                                                                                     \
  X(int, wm, 0)                  /* warp tile (Nchw) */                                             \
  X(int, wn, 0)                                                                                     \
  X(int, stages, 0)                                                                                 \
  X(bool, vec_w, false)          /* Nchw: 16-byte filter loads */                                   \
  X(bool, vec_y, false)          /* Wgmma: 16-byte stores of y */                                   \
  X(bool, stream, false)         /* streaming (evict-first) stores of y */                          \
  X(int, threads, 0)             /* Depthwise: block size */                                        \
  X(bool, direct, false)         /* Tma: NCHW x read in place by tiled copies (conv_tma_direct_fits) */
KILN_CONFIG(ConvConfig, KILN_CONV_FIELDS);

// kiln::conv::ConvDyn's members (conv_shape.cuh), in order: a conv with dyn spatial extents takes
// KernelArg::DynValue arguments named "conv_" and the member ([Note: dyn conv spatial extents]);
// its config holds 0 for h, w, ho and wo.
constexpr const char* kConvDynFields[5] = {"h", "w", "ho", "wo", "howo"};
// Whether the config's spatial extents are a launch's (ConvNchw's 2-d loader, DepthwiseDirect,
// WgConvNchw and TmaConv).
KILN_RULE constexpr bool conv_dyn_spatial(const ConvConfig& c) { return c.h == 0 || c.w == 0; }

// One spatial axis's output size (docs/semantics.md, "Convolution"): ConvShape's Do, Ho, Wo.
KILN_RULE constexpr long long conv_out_size(long long in, int k, int stride, int pad, int dil, int opad, bool transposed) {
  return transposed ? (in - 1) * stride - 2 * pad + dil * (k - 1) + opad + 1 : (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

// The GEMM a group of the conv is: rows = out channels of the group, k' = C/groups * T * R * S.
KILN_RULE constexpr long long conv_gemm_k(const ConvConfig& c) { return c.c / c.groups * c.t * c.r * c.s; }

// A transposed conv runs as one implicit GEMM per stride phase ([Note: transposed convs by stride
// phase] in conv_igemm.cuh), over a pixel grid of ceil(out / stride) per axis.
KILN_RULE constexpr long long conv_phase_extent(long long out, int stride) { return (out + stride - 1) / stride; }
KILN_RULE constexpr int conv_phases(bool transposed, int stride_d, int stride_h, int stride_w) {
  return transposed ? stride_d * stride_h * stride_w : 1;
}
// The w phases of a transposed conv: its w stride where w is split by phase (phase_w).
KILN_RULE constexpr int conv_phases_w(const ConvConfig& c) { return c.transposed && c.phase_w ? c.stride_w : 1; }
// The GEMM's columns (output pixels, or one phase's pixel grid) per group and phase; stride_w
// here is the number of w phases (conv_phases_w).
KILN_RULE constexpr long long conv_gemm_pixels(long long n, long long dout, long long ho, long long wo, int stride_d,
                                               int stride_h, int stride_w, bool transposed) {
  return transposed ? n * conv_phase_extent(dout, stride_d) * conv_phase_extent(ho, stride_h) *
                          conv_phase_extent(wo, stride_w)
                    : n * dout * ho * wo;
}

// Whether conv_igemm.cuh's Im2colNchwLoader takes its general path: a depth axis or a transposed
// conv (16-byte table entries, the depth tap and the transposed index mapping) rather than the
// 2-d forward one (8-byte entries).
KILN_RULE constexpr bool conv_im2col_general(long long d, int t, long long dout, bool transposed) {
  return d > 1 || t > 1 || dout > 1 || transposed;
}

// Whether ConvNchw's im2col tables (32-bit offsets within an image, c*D*H*W + taps) index x's
// images: fewer than 2^31 elements an image (a dyn spatial conv's: checked at each launch).
KILN_RULE constexpr bool conv_nchw_image_fits(const ConvConfig& c) {
  return c.c * c.d * c.h * c.w < (1LL << 31);
}

// Im2colNchwLoader::kTableBytes: one (c, t, r, s) entry per k' of the padded K tiles.
KILN_RULE constexpr int conv_table_bytes(long long kdim, int bk, bool general) {
  return static_cast<int>((kdim + bk - 1) / bk * bk * (general ? 16 : 8));
}

// ConvNchw (conv_igemm.cuh) of a transposed conv: the most CTAs per SM its __launch_bounds__ asks
// the registers to allow (where shared memory holds that many; the planner's rule, in
// plan_contraction.cpp). Two of 256 threads cap a thread at 128 registers.
constexpr int kConvNchwMaxBlocksPerSm = 2;

// ---------------------------------------------------------------- WgConvNchw (conv_sm90.cuh)
// The output pixels an image may have: a tile's pixel within its image (under Ho x Wo plus a
// tile of at most 256) is decoded with 32-bit arithmetic.
constexpr long long kConvWgmmaMaxPixels = (1LL << 31) - 256;
// The widest pixel tile of a 3xTF32 WgConvNchw: its accumulators and their promotion copies
// (WgEngine::promote) take 2 x BN / 2 registers a thread, which at 256 would not fit.
constexpr int kConvWgmmaX3MaxCols = 128;

// ---------------------------------------------------------------- TmaConv (conv_tma.cuh)
// A k tile is 32 channels of one filter tap: one 128-byte swizzle row of f32 per pixel.
constexpr int kConvTmaChannels = 32;
// Whether TmaConv maps x with a depth axis: [N][D][H][W][ldc] as a 5-D im2col map (dims {C, W, H,
// D, N}, three tap offsets a copy) rather than [N][H][W][ldc] as a 4-D one.
KILN_RULE constexpr bool conv_tma_depth(long long d, int t, long long dout) { return d > 1 || t > 1 || dout > 1; }
// The fewest input channels the planner sends to TmaConv: a tap's k tile is kConvTmaChannels wide
// whatever C is, so C channels use C / 32 of its MMAs. At C = 8 (25%) it still beat cuDNN on every
// KernelBench problem (level 2's 21, 57, 65-92: 1.08-2.33x, run 35); at C = 3 (level 1's 50,
// AlexNet's first layer) it took 10.4 ms against cuDNN's 2.7.
constexpr int kConvTmaMinChannels = kConvTmaChannels / 4;
// Over three spatial axes the engine's alternative is ConvNchw, which multiplies no padding
// channels: there it takes at least half a k tile of channels. Measured on the H200 (KernelBench
// level 2, 3x3x3 filters, 3xTF32, against ConvNchw in the same call,
// bench/results/2026-12-04-h200-run29/): C = 32 (43, 47) 0.30-0.32x the time, C = 8 (7, 8, 90)
// 1.26-2.19x.
constexpr int kConvTmaMinChannels3d = kConvTmaChannels / 2;
// The fewest input channels TmaConv takes for this conv (conv_tma_depth: a depth axis).
KILN_RULE constexpr int conv_tma_min_channels(const ConvConfig& c) {
  return conv_tma_depth(c.d, c.t, c.dout) ? kConvTmaMinChannels3d : kConvTmaMinChannels;
}
// 3xTF32: the filters' copy holds tf32 hi and lo parts (lo after hi), and the engine loads both;
// x stays f32 and is the engine's A operand, which its consumers split into tf32 hi and lo parts
// in registers ([Note: 3xTF32 with A split in registers] in gemm_tma.cuh).
KILN_RULE constexpr bool conv_x3(const ConvConfig& c) { return c.precision == MmaPrecision::Tf32x3; }
// The engine's GEMM rows are output pixels (A = x by im2col, B = the filters) for NHWC, where y's
// rows are pixels, and for 3xTF32, whose A operand is split in registers; otherwise (NCHW tf32)
// out channels (A = the filters, B = x), so that y's pixel rows take 16-byte stores. A transposed
// conv's phases store strided pixels (no 16-byte stores either way): pixel rows.
// A direct conv (below) also has pixel rows: x is its A operand.
KILN_RULE constexpr bool conv_tma_pixel_rows(const ConvConfig& c) {
  return c.nhwc || conv_x3(c) || c.transposed || c.direct;
}
// [Note: NCHW x read in place]
// A 1-d forward conv of stride 1 over NCHW x in tf32 needs no copy of x: for filter tap s, the
// engine's A tile (BM output pixels x 32 channels of one image) is x[n][c0 .. c0 + 32][p0 + s dil -
// pad ..], a plain m-major box of x as stored (pixels contiguous), which the TMA unit's tiled mode
// loads (zeros past either end: the padding costs nothing) and the engine's consumers take through
// registers ([Note: tf32 A through registers] in gemm_tma.cuh). A tiled copy's innermost
// coordinate must be a multiple of 16 bytes (on an H100 any other raised
// CUDA_ERROR_ILLEGAL_INSTRUCTION: session 67, bench/results/2026-12-06-h100-run10), and a tap's
// first pixel p0 + s dil - pad is one only where s dil - pad is a multiple of 4 (p0 is a multiple
// of BM). So the producer copies BM / 32 + 1 boxes of 32 pixels x 32 channels from the multiple of
// 4 at or below it, and the consumers read the tile shift = (s dil - pad) & 3 rows further on
// (conv_tma_a_pad_rows: the one box more a stage holds). x's rows must be 16-byte multiples (a
// tensor map's stride rule: W a multiple of 4) and its extents static (the map is encoded once; a
// dyn batch is a launch's image extent). A stride over 1 would need the map's element strides on
// the pixels, and 3xTF32 splits A as k-major rows: both keep the copy of x. It saves the copy's
// pass over x (read x, write and read it again as NHWC).
KILN_RULE constexpr bool conv_tma_direct_fits(const ConvConfig& c) {
  return !c.nhwc && !c.transposed && !conv_x3(c) && c.elem_bytes == 4 && c.groups == 1 && c.d == 1 && c.t == 1 &&
         c.dout == 1 && c.h == 1 && c.r == 1 && c.ho == 1 && c.stride_w == 1 && c.w > 0 && c.w % 4 == 0;
}
// The rows of x a direct conv's stage holds past its BM pixels: one box of 32 (the shift above).
KILN_RULE constexpr int conv_tma_a_pad_rows(bool direct) { return direct ? kConvTmaChannels : 0; }
KILN_RULE constexpr int conv_tma_a_pad_rows(const ConvConfig& c) { return conv_tma_a_pad_rows(c.direct); }
// The k-major copies OperandPrep makes for it: filters [K][T*R*S][ldc] and x [N][D*H*W][ldc], the
// channel rows padded to 16 bytes (a tensor map's stride rule); the maps' channel extent stays C,
// so TMA zero-fills the pad and the channels past C of the last k tile.
KILN_RULE constexpr long long conv_tma_ldc(const ConvConfig& c) { return (c.c + 3) / 4 * 4; }
// [Note: strided transposed convs on the TMA engine]
// A transposed conv (conv_tma.cuh's TmaConvPhased) runs as one implicit GEMM per stride phase, as
// ConvNchw does ([Note: transposed convs by stride phase] in conv_igemm.cuh): along an axis of
// stride s, output o = q s + phase takes tap r from input (o + pad - r dil) / s = q + e, where
// e = (phase + pad - r dil) / s is exact, which holds for every (s / gcd(s, dil))-th tap from the
// phase's first (conv_phase_first_tap). So a phase is a stride-1 conv over x on its phase grid
// q = 0 .. ceil(out / s) - 1 with its own taps at offsets e. One im2col map serves every phase:
// its pixel box starts at the least e of any phase and tap (conv_phase_lower) and spans the
// phase grid, and a tap's im2col offset is e - lower (>= 0). A phase grid past the output (the
// last q of a phase whose outputs end one short) is computed and not stored.
KILN_RULE constexpr int conv_gcd(int a, int b) { return b == 0 ? a : conv_gcd(b, a % b); }
// Whether tap r reaches phase `phase` of an axis (stride s, padding pad, dilation dil).
KILN_RULE constexpr bool conv_phase_reaches(int phase, int r, int s, int pad, int dil) {
  return ((phase + pad - r * dil) % s + s) % s == 0;
}
// The input offset e of tap r in phase `phase` (where it reaches it).
KILN_RULE constexpr int conv_phase_offset(int phase, int r, int s, int pad, int dil) { return (phase + pad - r * dil) / s; }
// The first of a phase's taps (taps: none reaches it), and the step between them.
KILN_RULE constexpr int conv_phase_step(int s, int dil) { return s / conv_gcd(s, dil); }
KILN_RULE constexpr int conv_phase_first_tap(int phase, int taps, int s, int pad, int dil) {
  for (int r = 0; r < taps && r < conv_phase_step(s, dil); ++r)
    if (conv_phase_reaches(phase, r, s, pad, dil)) return r;
  return taps;
}
KILN_RULE constexpr int conv_phase_taps(int first, int taps, int s, int dil) {
  return first >= taps ? 0 : (taps - first + conv_phase_step(s, dil) - 1) / conv_phase_step(s, dil);
}
// The least offset e of any phase's taps: the im2col map's lower corner along the axis.
KILN_RULE constexpr int conv_phase_lower(int taps, int s, int pad, int dil) {
  int lower = 0;
  bool any = false;
  for (int phase = 0; phase < s; ++phase)
    for (int r = 0; r < taps; ++r)
      if (conv_phase_reaches(phase, r, s, pad, dil)) {
        const int e = conv_phase_offset(phase, r, s, pad, dil);
        lower = any && lower < e ? lower : e;
        any = true;
      }
  return lower;
}
// The im2col map's pixel box, innermost (W) first: the positions of a filter window's first tap
// (t = r = s = 0) that the output pixels take, from -pad to the last one whose window ends at the
// far pad (exclusive upper bound: extent + upper corner). A transposed conv's: every phase's grid
// from the least offset (above), ceil(out / stride) positions.
KILN_RULE constexpr int conv_tma_lower_w(const ConvConfig& c) {
  return c.transposed ? conv_phase_lower(c.s, c.stride_w, c.pad_w, c.dil_w) : -c.pad_w;
}
KILN_RULE constexpr int conv_tma_lower_h(const ConvConfig& c) {
  return c.transposed ? conv_phase_lower(c.r, c.stride_h, c.pad_h, c.dil_h) : -c.pad_h;
}
KILN_RULE constexpr int conv_tma_lower_d(const ConvConfig& c) {
  return c.transposed ? conv_phase_lower(c.t, c.stride_d, c.pad_d, c.dil_d) : -c.pad_d;
}
KILN_RULE constexpr long long conv_tma_upper_w(const ConvConfig& c) {
  return c.transposed ? conv_phase_extent(c.wo, c.stride_w) + conv_tma_lower_w(c) - c.w : c.pad_w - c.dil_w * (c.s - 1);
}
KILN_RULE constexpr long long conv_tma_upper_h(const ConvConfig& c) {
  return c.transposed ? conv_phase_extent(c.ho, c.stride_h) + conv_tma_lower_h(c) - c.h : c.pad_h - c.dil_h * (c.r - 1);
}
KILN_RULE constexpr long long conv_tma_upper_d(const ConvConfig& c) {
  return c.transposed ? conv_phase_extent(c.dout, c.stride_d) + conv_tma_lower_d(c) - c.d
                      : c.pad_d - c.dil_d * (c.t - 1);
}
// An im2col map's corners are signed, 8-bit at rank 4 and 5-bit at rank 5 (cuda.h); its element
// strides 1..8, an offset (tap position) 16-bit: the conv fits the TMA unit's im2col mode only
// within these.
KILN_RULE constexpr bool conv_tma_im2col_fits(const ConvConfig& c) {
  const bool depth = conv_tma_depth(c.d, c.t, c.dout);
  const int limit = depth ? 16 : 128;
  const long long corners[6] = {conv_tma_lower_w(c), conv_tma_lower_h(c), conv_tma_upper_w(c), conv_tma_upper_h(c),
                                depth ? conv_tma_lower_d(c) : 0, depth ? conv_tma_upper_d(c) : 0};
  for (long long v : corners)
    if (v < -limit || v >= limit) return false;
  // (A transposed conv walks its phase grids with element strides 1: its stride is the phases'.)
  return (c.transposed || (c.stride_h <= 8 && c.stride_w <= 8 && c.stride_d <= 8)) && c.dil_h * (c.r - 1) < 65536 &&
         c.dil_w * (c.s - 1) < 65536 && c.dil_d * (c.t - 1) < 65536;
}

// The output pixels of an image the TMA engine's GEMM walks: all of them, or for a transposed conv
// (TmaConvPhased) one stride phase's grid.
KILN_RULE constexpr long long conv_tma_grid(const ConvConfig& c) {
  return c.transposed ? conv_phase_extent(c.dout, c.stride_d) * conv_phase_extent(c.ho, c.stride_h) *
                            conv_phase_extent(c.wo, c.stride_w)
                      : c.dout * c.ho * c.wo;
}

// TmaConv's tiles: (out-channel tile, pixel tile of an image, image) in NCHW, BM x BN of rows x
// columns (conv_tma_pixel_rows); TmaConvNhwc's: (pixel tile over all images, out-channel tile).
KILN_RULE constexpr long long conv_tma_units(const ConvConfig& c) {
  if (c.transposed)   // TmaConvPhased: (out-channel tile, phase, pixel tile of the phase grid, image)
    return launch::ceil_div(c.k, c.bn) * conv_phases(true, c.stride_d, c.stride_h, c.stride_w) *
           launch::ceil_div(conv_tma_grid(c), c.bm) * c.n;
  const long long pixels = c.dout * c.ho * c.wo;   // an image's
  if (c.nhwc) return launch::ceil_div(c.n * pixels, c.bm) * launch::ceil_div(c.k, c.bn);
  const long long pixel_tile = conv_tma_pixel_rows(c) ? c.bm : c.bn, channel_tile = conv_tma_pixel_rows(c) ? c.bn : c.bm;
  return launch::ceil_div(c.k, channel_tile) * launch::ceil_div(pixels, pixel_tile) * c.n;
}

// The dynamic shared memory of the config's kernel: ConvNchw's tile ring (A: filters, k
// contiguous; B: im2col pixels, pixel contiguous) then the im2col table; WgConvNchw's ring;
// TmaConv's the TMA engine's.
KILN_RULE constexpr long long conv_smem(const ConvConfig& c) {
  switch (c.kind) {
    case ConvKind::Nchw:
      return tile_engine_smem(c.elem_bytes, c.bm, c.bn, c.bk, c.wn, c.stages, true, false) +
             conv_table_bytes(conv_gemm_k(c), c.bk, conv_im2col_general(c.d, c.t, c.dout, c.transposed));
    case ConvKind::Wgmma: return wg_engine_smem(c.bm, c.bn, c.stages, c.precision == MmaPrecision::Tf32x3);
    case ConvKind::Tma:
      return tma_gemm_smem(4, c.bm, c.bn, kConvTmaChannels, c.stages, conv_x3(c), conv_tma_a_pad_rows(c));
    default: return 0;
  }
}

// The launch: Nchw one CTA per (pixel tile, channel tile, group and stride phase); Wgmma and Tma at most one
// persistent CTA per SM over (pixel tile, channel tile, image); Depthwise one thread per output.
KILN_RULE constexpr launch::Geometry conv_geometry(const ConvConfig& c, int sm_count) {
  launch::Geometry g;
  g.shared_bytes = conv_smem(c);
  switch (c.kind) {
    case ConvKind::Nchw:
      g.block.x = 32LL * (c.bm / c.wm) * (c.bn / c.wn);
      g.grid = {launch::ceil_div(conv_gemm_pixels(c.n, c.dout, c.ho, c.wo, c.stride_d, c.stride_h, conv_phases_w(c),
                                                  c.transposed), c.bn),
                launch::ceil_div(c.k / c.groups, c.bm),
                c.groups * conv_phases(c.transposed, c.stride_d, c.stride_h, conv_phases_w(c))};
      break;
    case ConvKind::Wgmma: {
      g.block.x = 128LL * c.bm / 64;
      const long long tiles = launch::ceil_div(c.ho * c.wo, c.bn) * launch::ceil_div(c.k, c.bm) * c.n;
      g.grid.x = launch::min_ll(tiles, sm_count);
      break;
    }
    case ConvKind::Tma:
      g.block.x = tma_gemm_threads(c.bm, 1);   // (consumers along M only)
      g.grid.x = launch::min_ll(conv_tma_units(c), sm_count);
      break;
    case ConvKind::Depthwise:
      g.block.x = c.threads;
      g.grid.x = launch::ceil_div(c.n * c.k * c.ho * c.wo, c.threads);
      break;
  }
  return g;
}

}  // namespace kiln
