// kiln/config/conv.h — the conv family (conv_igemm.cuh, conv_sm90.cuh): every kernel a conv2d is
// planned as. See config.h for the pattern.
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
};

#if !defined(__CUDACC_RTC__)
inline const char* enum_name(ConvKind k) {
  return k == ConvKind::Nchw ? "Nchw" : k == ConvKind::Depthwise ? "Depthwise" : "Wgmma";
}
#endif

#define KILN_CONV_FIELDS(X)                                                                         \
  X(ConvKind, kind, ConvKind::Nchw)                                                                 \
  X(MmaPrecision, precision, MmaPrecision::Tf32x3)                                                  \
  X(int, elem_bytes, 4)          /* element size of x and w: 4 (f32) or 2 (f16, bf16) */            \
  X(bool, nhwc, false)           /* x and y channels-last (Depthwise only) */                       \
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
  X(int, bm, 0)                  /* CTA tile: out channels x pixels */                              \
  X(int, bn, 0)                                                                                     \
  X(int, bk, 0)                                                                                     \
  X(int, wm, 0)                  /* warp tile (Nchw) */                                             \
  X(int, wn, 0)                                                                                     \
  X(int, stages, 0)                                                                                 \
  X(bool, vec_w, false)          /* Nchw: 16-byte filter loads */                                   \
  X(bool, vec_y, false)          /* Wgmma: 16-byte stores of y */                                   \
  X(bool, stream, false)         /* streaming (evict-first) stores of y */                          \
  X(int, threads, 0)             /* Depthwise: block size */
KILN_CONFIG(ConvConfig, KILN_CONV_FIELDS);

// The GEMM a group of the conv is: rows = out channels of the group, k' = C/groups * R * S.
KILN_RULE constexpr long long conv_gemm_k(const ConvConfig& c) { return c.c / c.groups * c.r * c.s; }

// conv_igemm.cuh's Im2colNchwLoader::kTableBytes: one 8-byte (c, r, s) entry per k' of the
// padded K tiles.
KILN_RULE constexpr int conv_table_bytes(long long kdim, int bk) {
  return static_cast<int>((kdim + bk - 1) / bk * bk * 8);
}

// The dynamic shared memory of the config's kernel: ConvNchw's tile ring (A: filters, k
// contiguous; B: im2col pixels, pixel contiguous) then the im2col table; WgConvNchw's ring.
KILN_RULE constexpr long long conv_smem(const ConvConfig& c) {
  switch (c.kind) {
    case ConvKind::Nchw:
      return tile_engine_smem(c.elem_bytes, c.bm, c.bn, c.bk, c.wn, c.stages, true, false) +
             conv_table_bytes(conv_gemm_k(c), c.bk);
    case ConvKind::Wgmma: return wg_engine_smem(c.bm, c.bn, c.stages, c.precision == MmaPrecision::Tf32x3);
    default: return 0;
  }
}

// The launch: Nchw one CTA per (pixel tile, channel tile, group); Wgmma at most one persistent CTA
// per SM over (pixel tile, channel tile, image); Depthwise one thread per output.
KILN_RULE constexpr launch::Geometry conv_geometry(const ConvConfig& c, int sm_count) {
  launch::Geometry g;
  g.shared_bytes = conv_smem(c);
  switch (c.kind) {
    case ConvKind::Nchw:
      g.block.x = 32LL * (c.bm / c.wm) * (c.bn / c.wn);
      g.grid = {launch::ceil_div(c.n * c.ho * c.wo, c.bn), launch::ceil_div(c.k / c.groups, c.bm), c.groups};
      break;
    case ConvKind::Wgmma: {
      g.block.x = 128LL * c.bm / 64;
      const long long tiles = launch::ceil_div(c.ho * c.wo, c.bn) * launch::ceil_div(c.k, c.bm) * c.n;
      g.grid.x = launch::min_ll(tiles, sm_count);
      break;
    }
    case ConvKind::Depthwise:
      g.block.x = c.threads;
      g.grid.x = launch::ceil_div(c.n * c.k * c.ho * c.wo, c.threads);
      break;
  }
  return g;
}

}  // namespace kiln
