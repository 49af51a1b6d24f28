// kiln/conv_igemm.cuh — conv2d as an implicit GEMM on the gemm.cuh tile engine.
//
// ============================================================================================
// CONTRACT
// --------------------------------------------------------------------------------------------
// Shape: kiln::conv::ConvShape<N, C, H, W, K, R, S, stride_h, stride_w, pad_h, pad_w,
//                              dil_h, dil_w, groups>  (all constexpr; Ho, Wo derived)
// Epilogue functor concept (same role as in gemm.cuh, conv coordinates):
//     __device__ float operator()(float acc, Index n, Index k, Index hw) const;
//   acc = y[n][k][ho][wo] before the epilogue, hw = ho * Wo + wo, k the global out channel.
//   Called once per output element.
//
// 1) ConvNchw<E, Precision, OutT, Index, Shape, BM, BN, BK, WM, WN, Stages, kVecW, kStream>
//      static __device__ void run(const E* x, const E* w, OutT* y, Epi epi, long long batch = 0);
//    (batch: N where Shape's N is 0, a dyn batch: [Note: dyn conv batch] in conv_shape.cuh.)
//    x [N][C][H][W], w [K][C/groups][R][S], y [N][K][Ho][Wo].
//    GEMM per group g: rows = K/groups out channels (A = w, k-contiguous, K' = Cg*R*S in
//    (c, r, s) order), columns = N*Ho*Wo output pixels (B = the im2col gather of x, pixel
//    contiguous, so y is stored along contiguous output width with 16-byte stores).
//    grid = (ceil(N*Ho*Wo / BN), ceil((K/groups) / BM), groups); block = kThreads;
//    dynamic smem = kSmemBytes (the pipeline ring plus an 8-byte-per-k' im2col table). kThreads % BN == 0 and BK % (kThreads / BN) == 0.
//    kVecW: w 16-byte aligned and Cg*R*S a multiple of 16/sizeof(E).
//    16-byte stores of y when Ho*Wo % 4 == 0 (y 16-byte aligned), else scalar.
//
// 2) ConvNhwc<E, Precision, OutT, Index, Shape, BM, BN, BK, WM, WN, Stages, kStream>
//      static __device__ void run(const E* x, const E* w, OutT* y, Epi epi);
//    x [N][H][W][C], w [K][R][S][C/groups] (channels-last filters), y [N][Ho][Wo][K].
//    GEMM per group: rows = N*Ho*Wo pixels (A = im2col, K' = R*S*Cg in (r, s, c) order, c
//    contiguous: 16-byte copies when Cg and C are multiples of 16/sizeof(E)), columns = K/groups
//    (B = w viewed col-major). grid = (ceil((K/groups) / BN), ceil(N*Ho*Wo / BM), groups).
//    16-byte stores when K and K/groups are multiples of 4.
//
// 3) DepthwiseDirect<E, OutT, Index, Shape, kNhwc, Threads>   (groups == C)
//      static __device__ void run(const E* x, const E* w, OutT* y, Epi epi, long long batch = 0);
//    One thread per output element, f32 FMA over R*S taps; w [K][1][R][S].
//    grid = ceil(N*K*Ho*Wo / Threads), block = Threads. Memory-bound: tensor cores do not pay.
//
// Precision and element types as in gemm.cuh (f32: Ieee | Tf32 | Tf32x3; f16/bf16 tensor cores).
//
// [Note: why it is fast]
// The im2col matrix never exists: the B (or A) loader computes, per thread, the pixel it copies
// once per CTA (division by constants only), then per k tile looks (c, r, s) of k' up in a small
// shared table built once per CTA (NCHW; NHWC decodes once per 16-byte chunk) and issues
// cp.async with zero-fill for padding and tails — so the padding costs no branches in the math
// and the copies overlap the tensor cores through the same Stages-deep ring as the GEMM. In NCHW,
// consecutive threads copy consecutive output pixels (contiguous input width: coalesced) and the
// epilogue stores contiguous output width 16 bytes at a time. The filter block (A) stays small
// and L2-resident across all CTAs.
// ============================================================================================
#pragma once

#include "kiln/config/conv.h"
#include "kiln/conv_shape.cuh"
#include "kiln/gemm.cuh"

namespace kiln {
namespace conv {

// Copy one element or a 16-byte vector of V elements (zero-filled when !ok).
template <class E, int V>
__device__ __forceinline__ void copy_elems(E* dst, const E* src, bool ok) {
  if constexpr (V * sizeof(E) == 16) {
    cp_async16(dst, src, ok ? 16 : 0);
  } else if constexpr (sizeof(E) == 4 && V == 1) {
    cp_async4(dst, src, ok ? 4 : 0);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) dst[i] = ok ? src[i] : from_float<E>(0.f);
  }
}

// H and W at this launch, held by a loader whose shape's spatial extents are dyn (nothing otherwise).
template <bool kDyn>
struct LaunchExtentsHW {
  int in_h, in_w;
};
template <>
struct LaunchExtentsHW<false> {};

// ---------------------------------------------------------------------------------------------
// NCHW im2col: B'(k', p) with k' = (c, r, s), p = (n, ho, wo); shared tile [BK][BN + pad].
// The (c, r, s) decode of k' is the same for every pixel: a per-CTA table in shared memory holds,
// per k', the element offset c*H*W + r*dil_h*W + s*dil_w and the packed (r*dil_h, s*dil_w)
// for the bounds test, so a copy costs one broadcast LDS.64 plus a few integer ops.
template <class E, class Tile, class Sh, int BN, int BK, int Threads, class Index>
struct Im2colNchwLoader : LaunchExtentsHW<Sh::kDynSpatial> {
  static_assert(Threads % BN == 0, "kThreads must be a multiple of BN");
  static constexpr int kLinesPerPass = Threads / BN;
  static_assert(BK % kLinesPerPass == 0, "BK must be a multiple of kThreads / BN");
  static constexpr int kTableEntries = int((Sh::Kdim + BK - 1) / BK * BK);
  static constexpr int kTableBytes = conv_table_bytes(Sh::Kdim, BK, false);   // config/conv.h
  static_assert(!conv_im2col_general(Sh::D, Sh::T, Sh::Do, Sh::kTransposed), "a 2-d forward conv");
  static_assert(Sh::R * Sh::kDilH < 32768 && Sh::S * Sh::kDilW < 32768, "filter extent");
  const E* x;       // offset to the group's first channel
  const int2* table;
  Index pix;        // x offset of (n, channel 0, hbase, wbase) of this thread's pixel (may be < 0)
  int hbase, wbase;
  bool pvalid;

  // Fills the table (all threads; a __syncthreads must follow before the first load); in_h and
  // in_w are H and W at this launch (read where the shape's are dyn).
  static __device__ __forceinline__ void build_table(int2* t, long long in_h, long long in_w) {
    for (int i = threadIdx.x; i < kTableEntries; i += Threads) {
      const int c = i / (Sh::R * Sh::S), rs = i % (Sh::R * Sh::S);
      const int dh = (rs / Sh::S) * Sh::kDilH, dw = (rs % Sh::S) * Sh::kDilW;
      if constexpr (Sh::kDynSpatial)
        t[i] = make_int2(int(c * (in_h * in_w) + dh * in_w + dw), (dh << 16) | dw);
      else   // (as written before dyn extents: a static conv's code is unchanged)
        t[i] = make_int2(int(c * Sh::H * Sh::W + dh * Sh::W + dw), (dh << 16) | dw);
    }
  }
  // n0: the CTA's first pixel; pixels: the GEMM's columns (N * HoWo, N a launch's when dyn).
  __device__ __forceinline__ void init(long long n0, long long pixels, const ConvDyn& dyn) {
    const long long p = n0 + threadIdx.x % BN;
    pvalid = p < pixels;
    long long n;
    int ho, wo;
    if constexpr (Sh::kDynSpatial) {   // p < 2^31 + BN where Index is 32-bit: unsigned division
      const Index q = Index(p), hw = mod_by<Sh::HoWo>(q, dyn.howo);
      n = div_by<Sh::HoWo>(q, dyn.howo);
      ho = int(div_by<Sh::Wo>(hw, dyn.wo)), wo = int(mod_by<Sh::Wo>(hw, dyn.wo));
    } else {
      n = p / Sh::HoWo;
      const long long hw = p % Sh::HoWo;
      ho = int(hw / Sh::Wo), wo = int(hw % Sh::Wo);
    }
    hbase = ho * Sh::kStrideH - Sh::kPadH;
    wbase = wo * Sh::kStrideW - Sh::kPadW;
    if constexpr (Sh::kDynSpatial) {
      this->in_h = extent_of<Sh::H, int>(dyn.h), this->in_w = extent_of<Sh::W, int>(dyn.w);
      pix = Index(n) * (Index(Sh::C) * Index(this->in_h) * Index(this->in_w)) + Index(hbase) * Index(this->in_w) + wbase;
    } else {
      pix = Index(n) * Index(Sh::C * Sh::H * Sh::W) + Index(hbase) * Index(Sh::W) + wbase;
    }
  }
  __device__ __forceinline__ void load(E* s, int /*n0: fixed by init*/, int k0) const {
    const int pos = threadIdx.x % BN;
    const int line0 = threadIdx.x / BN;
#pragma unroll
    for (int i = 0; i < BK / kLinesPerPass; ++i) {
      const int line = line0 + i * kLinesPerPass;
      const int kp = k0 + line;
      const int2 e = table[kp];  // same address across the warp: broadcast
      const int hi = hbase + (e.y >> 16), wi = wbase + (e.y & 0xffff);
      // (Written out for each case: a static conv's code is as before the dyn extents.)
      bool ok;
      if constexpr (Sh::kDynSpatial)
        ok = pvalid && (Sh::Kdim % BK == 0 || kp < Sh::Kdim) && unsigned(hi) < unsigned(this->in_h) &&
             unsigned(wi) < unsigned(this->in_w);
      else
        ok = pvalid && (Sh::Kdim % BK == 0 || kp < Sh::Kdim) && unsigned(hi) < unsigned(Sh::H) &&
             unsigned(wi) < unsigned(Sh::W);
      const E* src = ok ? x + (pix + e.x) : x;
      copy_elems<E, 1>(s + line * Tile::kLd + pos, src, ok);
    }
  }
};

// [Note: transposed convs by stride phase]
// A transposed conv's output position o along an axis takes tap j from input position
// (o + pad - j*dil) / stride, where the division is exact. Which taps those are depends only on
// the phase o % stride, so the outputs of one phase (o = i*stride + phase) are a dense conv of
// stride 1 over i: its taps are the valid j, each reading input i + delta_j with
// delta_j = (phase + pad - j*dil) / stride (exact, may be negative). ConvNchw runs one such GEMM
// per phase (blockIdx.z = phase * groups + group) with K = C/groups * (the phase's valid taps),
// so no zero tap is multiplied. A phase's pixel grid is ceil(out / stride) per axis for every
// phase (constant extents: divisions by constants); positions past the output are masked.
// Stride 1 is one phase with every tap valid. The w axis is split by phase only where the
// planner says so (kPhaseW, ConvConfig::phase_w): a phase's outputs are strided along w, so their
// stores are scalar and each sector is written by several CTAs, which costs more than it saves
// for a short GEMM K. Unsplit, w keeps every tap and the gather tests (o + pad - j*dil) % stride.
template <int K, int Stride, int Pad, int Dil>
struct PhaseTaps {
  static __device__ __forceinline__ bool valid(int phase, int j) { return (phase + Pad - j * Dil) % Stride == 0; }
  static __device__ __forceinline__ int count(int phase) {
    int n = 0;
#pragma unroll
    for (int j = 0; j < K; ++j) n += valid(phase, j);
    return n;
  }
  // The q-th valid tap: its index j and input offset delta.
  static __device__ __forceinline__ void tap(int phase, int q, int& j, int& delta) {
    j = 0;
    for (int seen = -1; j < K; ++j)
      if (valid(phase, j) && ++seen == q) break;
    delta = (phase + Pad - j * Dil) / Stride;
  }
};

// The general NCHW im2col (conv_im2col_general): a depth axis, or a transposed conv. B'(k', p)
// with k' = (c, taps), p an output pixel; the same shared tile as Im2colNchwLoader. A table entry
// holds x's offset for (c, tap) (channel plus tap offset, relative to the pixel's base position),
// the packed signed (h, w) and the d tap offsets, and (transposed) the filter's offset for the
// A loader. Forward: p = (n, od, oh, ow), base o*stride - pad, tap offsets j*dil. Transposed
// ([Note: transposed convs by stride phase]): p = (n, i) on the phase's grid, base i, tap
// offsets delta_j, K = the phase's k'.
template <class E, class Tile, class Sh, int BN, int BK, int Threads, class Index, bool kPhaseW>
struct Im2colGeneralLoader {
  static_assert(Threads % BN == 0, "kThreads must be a multiple of BN");
  static constexpr int kLinesPerPass = Threads / BN;
  static_assert(BK % kLinesPerPass == 0, "BK must be a multiple of kThreads / BN");
  static constexpr int kTableEntries = int((Sh::Kdim + BK - 1) / BK * BK);
  static constexpr int kTableBytes = conv_table_bytes(Sh::Kdim, BK, true);   // config/conv.h
  // The packed (h, w) tap offsets are signed 16-bit: j*dil forward, (phase + pad - j*dil) / stride
  // transposed.
  static_assert(Sh::R * Sh::kDilH + Sh::kPadH + Sh::kStrideH < 32768 && Sh::S * Sh::kDilW + Sh::kPadW + Sh::kStrideW < 32768,
                "tap offsets are 16-bit");
  static constexpr long long kHW = Sh::H * Sh::W, kDHW = Sh::D * kHW;
  static constexpr int kTaps = Sh::T * Sh::R * Sh::S;
  static_assert(Sh::C * kDHW < (1LL << 31) && Sh::C * Sh::Kg * kTaps < (1LL << 31), "table offsets are 32-bit");
  // The pixel grid: the output (forward) or one stride phase of it (transposed).
  static constexpr long long kGd = Sh::kTransposed ? conv_phase_extent(Sh::Do, Sh::kStrideD) : Sh::Do;
  static constexpr long long kGh = Sh::kTransposed ? conv_phase_extent(Sh::Ho, Sh::kStrideH) : Sh::Ho;
  static constexpr int kPhasesW = Sh::kTransposed && kPhaseW ? Sh::kStrideW : 1;   // w phases
  static constexpr bool kGatherW = Sh::kTransposed && !kPhaseW;   // w by the divisibility test
  static constexpr long long kGw = conv_phase_extent(Sh::Wo, kPhasesW);
  // The GEMM's columns: config/conv.h's rule, the one the launch geometry uses.
  // The GEMM's columns of one image: config/conv.h's rule (the one the launch geometry uses) at N = 1.
  static constexpr long long kPlane = kGd * kGh * kGw;
  static_assert(kPlane == conv_gemm_pixels(1, Sh::Do, Sh::Ho, Sh::Wo, Sh::kStrideD, Sh::kStrideH, kPhasesW, Sh::kTransposed),
                "the pixel grid and conv_gemm_pixels agree");
  using TapsD = PhaseTaps<Sh::T, Sh::kStrideD, Sh::kPadD, Sh::kDilD>;
  using TapsH = PhaseTaps<Sh::R, Sh::kStrideH, Sh::kPadH, Sh::kDilH>;
  using TapsW = PhaseTaps<Sh::S, kPhasesW, kGatherW ? 0 : Sh::kPadW, Sh::kDilW>;   // (kGatherW: every tap, -j*dil)
  const E* x;       // offset to the group's first channel
  const int4* table;
  int kdim;         // this CTA's GEMM K
  Index pix;        // x offset of (n, channel 0, dbase, hbase, wbase) (may be < 0)
  int dbase, hbase, wbase;
  bool pvalid;

  // The (d, h, w) phase of blockIdx.z's phase index (0 for a forward conv).
  static __device__ __forceinline__ int3 phase_of(int phase) {
    return make_int3(phase / (Sh::kStrideH * kPhasesW), phase / kPhasesW % Sh::kStrideH, phase % kPhasesW);
  }
  // Fills the table (all threads; a __syncthreads must follow before the first load) and returns
  // the GEMM K of this CTA's phase.
  static __device__ __forceinline__ int build_table(int4* t, int phase) {
    if constexpr (!Sh::kTransposed) {
      for (int i = threadIdx.x; i < kTableEntries; i += Threads) {
        const int c = i / kTaps, trs = i % kTaps;
        const int dd = (trs / (Sh::R * Sh::S)) * Sh::kDilD, dh = (trs / Sh::S % Sh::R) * Sh::kDilH,
                  dw = (trs % Sh::S) * Sh::kDilW;
        t[i] = make_int4(int(c * kDHW + (dd * Sh::H + dh) * Sh::W + dw), (dh << 16) | dw, dd, 0);
      }
      return int(Sh::Kdim);
    } else {
      const int3 ph = phase_of(phase);
      const int vd = TapsD::count(ph.x), vh = TapsH::count(ph.y), vw = TapsW::count(ph.z);
      const int taps = vd * vh * vw, kdim = int(Sh::Cg) * taps;
      for (int i = threadIdx.x; i < kTableEntries; i += Threads) {
        if (i >= kdim) {
          t[i] = make_int4(0, 0, 0, 0);
          continue;
        }
        const int c = i / taps, q = i % taps;
        int jd, jh, jw, dd, dh, dw;
        TapsD::tap(ph.x, q / (vh * vw), jd, dd);
        TapsH::tap(ph.y, q / vw % vh, jh, dh);
        TapsW::tap(ph.z, q % vw, jw, dw);
        if constexpr (kGatherW) dw = jw * Sh::kDilW;   // the load subtracts it and divides by the stride
        t[i] = make_int4(int(c * kDHW + (dd * Sh::H + dh) * Sh::W + (kGatherW ? 0 : dw)), (dh << 16) | (dw & 0xffff), dd,
                         int(c * Sh::Kg * kTaps + (jd * Sh::R + jh) * Sh::S + jw));
      }
      return kdim;
    }
  }
  // pixels: the GEMM's columns (kPixels, or its value at a launch's N when N is dyn).
  __device__ __forceinline__ void init(long long n0, int phase, long long pixels) {
    const long long p = n0 + threadIdx.x % BN;
    const long long n = p / kPlane, sp = p % kPlane;
    const int i = int(sp / (kGh * kGw)), j = int(sp / kGw % kGh), k = int(sp % kGw);
    if constexpr (Sh::kTransposed) {
      const int3 ph = phase_of(phase);
      pvalid = p < pixels && i * Sh::kStrideD + ph.x < Sh::Do && j * Sh::kStrideH + ph.y < Sh::Ho &&
               k * kPhasesW + ph.z < Sh::Wo;
      dbase = i, hbase = j, wbase = kGatherW ? k + Sh::kPadW : k;
    } else {
      pvalid = p < pixels;
      dbase = i * Sh::kStrideD - Sh::kPadD, hbase = j * Sh::kStrideH - Sh::kPadH, wbase = k * Sh::kStrideW - Sh::kPadW;
    }
    pix = Index(n) * Index(Sh::C * kDHW) + (Index(dbase) * Index(Sh::H) + Index(hbase)) * Index(Sh::W) +
          (kGatherW ? 0 : wbase);
  }
  __device__ __forceinline__ void load(E* s, int /*n0: fixed by init*/, int k0) const {
    const int pos = threadIdx.x % BN;
    const int line0 = threadIdx.x / BN;
#pragma unroll
    for (int i = 0; i < BK / kLinesPerPass; ++i) {
      const int line = line0 + i * kLinesPerPass;
      const int kp = k0 + line;
      const int4 e = table[kp];  // same address across the warp: broadcast
      const int di = dbase + e.z, hi = hbase + (e.y >> 16), dw = int(static_cast<short>(e.y & 0xffff));
      int wi = wbase + dw;
      if constexpr (kGatherW) {   // (o + pad - j*dil) / stride where exact
        const int shifted = wbase - dw;
        wi = shifted >= 0 && shifted % Sh::kStrideW == 0 ? shifted / Sh::kStrideW : -1;
      }
      const bool ok = pvalid && kp < kdim && unsigned(di) < unsigned(Sh::D) && unsigned(hi) < unsigned(Sh::H) &&
                      unsigned(wi) < unsigned(Sh::W);
      copy_elems<E, 1>(s + line * Tile::kLd + pos, ok ? x + (pix + e.x + (kGatherW ? wi : 0)) : x, ok);
    }
  }
};

// A transposed conv's filters as the GEMM's A operand: A(k_out, k') = w[c][k_out][tap], with
// (c, tap) of k' from the im2col table's fourth field (the phase's valid taps), k contiguous in
// the tile ([BM][BK + pad]). The block is small and stays in L2.
template <class E, class Tile, class Sh, int BM, int BK, int Threads, class Index>
struct TransposedFilterLoader {
  const E* w;         // offset to the group's first input channel
  const int4* table;
  int kdim;
  __device__ __forceinline__ void load(E* s, int m0, int k0) const {
    constexpr int kTaps = Sh::T * Sh::R * Sh::S;
    // A loop, not unrolled: it is inlined 4 times (the prologue's stages and the main loop), and
    // 4 copies each were 70 of the grouped, dilated conv_transpose2d's 469 ms of NVRTC (sm_90a);
    // its medians are unchanged on an H100 (2026-12-07, bench/results/2026-12-07-h100-run3).
#pragma unroll 1
    for (int c = threadIdx.x; c < BM * BK; c += Threads) {
      const int line = c / BK, pos = c % BK;
      const int row = m0 + line, kp = k0 + pos;
      const bool ok = row < Sh::Kg && kp < kdim;
      const E* src = ok ? w + table[kp].w + Index(row) * kTaps : w;
      if constexpr (sizeof(E) == 4) {
        cp_async4(s + line * Tile::kLd + pos, src, ok ? 4 : 0);
      } else {
        s[line * Tile::kLd + pos] = ok ? *src : from_float<E>(0.f);   // (cp.async has no 2-byte form)
      }
    }
  }
};

// NHWC im2col: A(p, k') with k' = (r, s, c); shared tile [BM][BK + pad]; V elements per copy.
template <class E, class Tile, class Sh, int BM, int BK, int Threads, int V, class Index>
struct Im2colNhwcLoader {
  static constexpr int kPerLine = BK / V;
  static_assert(BK % V == 0 && Threads % kPerLine == 0, "kThreads must be a multiple of BK/V");
  static constexpr int kLinesPerPass = Threads / kPerLine;
  static_assert(BM % kLinesPerPass == 0, "BM must be a multiple of kThreads*V/BK");
  static constexpr int kIters = BM / kLinesPerPass;
  const E* x;  // offset to the group's first channel
  Index base[kIters];
  int hbase[kIters], wbase[kIters];
  bool pvalid[kIters];

  __device__ __forceinline__ void init(long long m0) {
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const long long p = m0 + threadIdx.x / kPerLine + i * kLinesPerPass;
      pvalid[i] = p < Sh::P;   // (ConvNhwc: a static batch)
      const long long n = p / Sh::HoWo, hw = p % Sh::HoWo;
      const int ho = int(hw / Sh::Wo), wo = int(hw % Sh::Wo);
      base[i] = Index(n) * Index(Sh::H * Sh::W * Sh::C);
      hbase[i] = ho * Sh::kStrideH - Sh::kPadH;
      wbase[i] = wo * Sh::kStrideW - Sh::kPadW;
    }
  }
  __device__ __forceinline__ void load(E* s, int /*m0: fixed by init*/, int k0) const {
    const int pos = (threadIdx.x % kPerLine) * V;
    const int kp = k0 + pos;  // the V elements share (r, s): Cg % V == 0
    const int c = kp % int(Sh::Cg), rs = kp / int(Sh::Cg);
    const int dh = (rs / Sh::S) * Sh::kDilH, dw = (rs % Sh::S) * Sh::kDilW;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int line = threadIdx.x / kPerLine + i * kLinesPerPass;
      const int hi = hbase[i] + dh, wi = wbase[i] + dw;
      const bool ok = pvalid[i] && kp < Sh::Kdim && unsigned(hi) < unsigned(Sh::H) &&
                      unsigned(wi) < unsigned(Sh::W);
      const E* src =
          ok ? x + base[i] + (Index(hi) * Index(Sh::W) + wi) * Index(Sh::C) + c : x;
      copy_elems<E, V>(s + line * Tile::kLd + pos, src, ok);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Output placements (see MatrixOut in gemm.cuh for the policy concept). Derived provides
// at(row, col) (the element's address) and kVec (4 consecutive columns are contiguous and
// 16-byte aligned whenever col % 4 == 0); the stores are shared.
template <class Derived, class OutT, class Index, bool kStream>
struct ConvOutStores {
  // kVecAtLaunch: whether 4 consecutive columns are contiguous and aligned is a launch's
  // (vec_at_launch), where kVec cannot say (dyn extents, [Note: dyn conv spatial extents]).
  static constexpr bool kVecAtLaunch = false;
  __device__ __forceinline__ void put4(Index row, Index col, const float (&v)[4]) const {
    const Derived& d = static_cast<const Derived&>(*this);
    if constexpr (Derived::kVec) {
      gemm::store4<OutT, kStream>(d.at(row, col), v);
    } else {
      if constexpr (Derived::kVecAtLaunch) {
        if (d.vec_at_launch()) {
          gemm::store4<OutT, kStream>(d.at(row, col), v);
          return;
        }
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) gemm::store1<OutT, kStream>(d.at(row, col + i), v[i]);
    }
  }
  __device__ __forceinline__ void put1(Index row, Index col, float v) const {
    gemm::store1<OutT, kStream>(static_cast<const Derived&>(*this).at(row, col), v);
  }
};

// Ho x Wo at this launch, held by an output placement whose shape's spatial extents are dyn.
template <bool kDyn>
struct LaunchHoWo {
  DynDim howo;
};
template <>
struct LaunchHoWo<false> {};

template <class OutT, class Index, class Sh, bool kStream>
struct NchwOut : ConvOutStores<NchwOut<OutT, Index, Sh, kStream>, OutT, Index, kStream>, LaunchHoWo<Sh::kDynSpatial> {
  // GEMM rows = out channels of group g, columns = pixels. 4 | HoWo: 4 aligned pixels share n
  // (dyn spatial extents: tested per launch, vec_at_launch).
  static constexpr bool kVec = !Sh::kDynSpatial && Sh::HoWo % 4 == 0;
  static constexpr bool kVecAtLaunch = Sh::kDynSpatial;
  OutT* y;
  Index g;
  Index rows, cols;
  __device__ __forceinline__ NchwOut(OutT* y_, Index g_, Index rows_, Index cols_)
      : y(y_), g(g_), rows(rows_), cols(cols_) {}
  // With dyn spatial extents: Ho x Wo at this launch ([Note: dyn conv spatial extents]).
  __device__ __forceinline__ NchwOut(OutT* y_, Index g_, Index rows_, Index cols_, const DynDim& howo_)
      : LaunchHoWo<Sh::kDynSpatial>{howo_}, y(y_), g(g_), rows(rows_), cols(cols_) {}
  __device__ __forceinline__ bool vec_at_launch() const {
    if constexpr (Sh::kDynSpatial) return this->howo.value % 4 == 0;
    else return false;
  }
  __device__ __forceinline__ OutT* at(Index row, Index col) const {
    if constexpr (Sh::kDynSpatial) {
      const Index n = div_by<Sh::HoWo>(col, this->howo), hw = mod_by<Sh::HoWo>(col, this->howo);
      return y + (n * Index(Sh::K) + g * Index(Sh::Kg) + row) * Index(this->howo.value) + hw;
    } else {
      const Index n = col / Index(Sh::HoWo), hw = col % Index(Sh::HoWo);
      return y + (n * Index(Sh::K) + g * Index(Sh::Kg) + row) * Index(Sh::HoWo) + hw;
    }
  }
  template <class Epi>
  __device__ __forceinline__ float apply(const Epi& epi, float v, Index row, Index col) const {
    if constexpr (Sh::kDynSpatial)
      return epi(v, div_by<Sh::HoWo>(col, this->howo), g * Index(Sh::Kg) + row, mod_by<Sh::HoWo>(col, this->howo));
    else
      return epi(v, col / Index(Sh::HoWo), g * Index(Sh::Kg) + row, col % Index(Sh::HoWo));
  }
};

// A transposed conv's output, one stride phase of it ([Note: transposed convs by stride phase]):
// GEMM rows = out channels of group g, columns = the phase's pixel grid (n, i, j, k), output
// position (i*stride_d + phase_d, ...). Grid positions past the output are not stored, and the
// epilogue sees them at a clamped position (its result is dropped), so it reads nothing outside.
template <class OutT, class Index, class Sh, class Grid, bool kStream>
struct PhasedOut : ConvOutStores<PhasedOut<OutT, Index, Sh, Grid, kStream>, OutT, Index, kStream> {
  static constexpr bool kVec = false;   // a phase's pixels are strided in y
  OutT* y;
  Index g;
  Index rows, cols;
  int3 phase;
  __device__ __forceinline__ PhasedOut(OutT* y_, Index g_, Index rows_, Index cols_, int3 phase_)
      : y(y_), g(g_), rows(rows_), cols(cols_), phase(phase_) {}
  // (n, the output position within the image), and whether it is inside the output.
  __device__ __forceinline__ bool locate(Index col, Index& n, Index& hw) const {
    constexpr long long kPlane = Grid::kGd * Grid::kGh * Grid::kGw;
    n = col / Index(kPlane);
    const Index sp = col % Index(kPlane);
    const Index od = sp / Index(Grid::kGh * Grid::kGw) * Sh::kStrideD + phase.x;
    const Index oh = sp / Index(Grid::kGw) % Index(Grid::kGh) * Sh::kStrideH + phase.y;
    const Index ow = sp % Index(Grid::kGw) * Grid::kPhasesW + phase.z;
    const bool inside = od < Index(Sh::Do) && oh < Index(Sh::Ho) && ow < Index(Sh::Wo);
    hw = ((inside ? od : 0) * Index(Sh::Ho) + (inside ? oh : 0)) * Index(Sh::Wo) + (inside ? ow : 0);
    return inside;
  }
  __device__ __forceinline__ OutT* at(Index row, Index col) const {
    Index n, hw;
    const bool inside = locate(col, n, hw);
    return inside ? y + (n * Index(Sh::K) + g * Index(Sh::Kg) + row) * Index(Sh::HoWo) + hw : nullptr;
  }
  __device__ __forceinline__ void put4(Index row, Index col, const float (&v)[4]) const {
#pragma unroll
    for (int i = 0; i < 4; ++i) put1(row, col + i, v[i]);
  }
  __device__ __forceinline__ void put1(Index row, Index col, float v) const {
    if (OutT* p = at(row, col)) gemm::store1<OutT, kStream>(p, v);
  }
  template <class Epi>
  __device__ __forceinline__ float apply(const Epi& epi, float v, Index row, Index col) const {
    Index n, hw;
    locate(col, n, hw);
    return epi(v, n, g * Index(Sh::Kg) + row, hw);
  }
};

template <class OutT, class Index, class Sh, bool kStream>
struct NhwcOut : ConvOutStores<NhwcOut<OutT, Index, Sh, kStream>, OutT, Index, kStream> {
  // GEMM rows = pixels, columns = out channels of group g.
  static constexpr bool kVec = Sh::K % 4 == 0 && Sh::Kg % 4 == 0;
  OutT* y;
  Index g;
  Index rows, cols;
  __device__ __forceinline__ NhwcOut(OutT* y_, Index g_, Index rows_, Index cols_)
      : y(y_), g(g_), rows(rows_), cols(cols_) {}
  __device__ __forceinline__ OutT* at(Index row, Index col) const {
    return y + row * Index(Sh::K) + g * Index(Sh::Kg) + col;
  }
  template <class Epi>
  __device__ __forceinline__ float apply(const Epi& epi, float v, Index row, Index col) const {
    return epi(v, row / Index(Sh::HoWo), g * Index(Sh::Kg) + col, row % Index(Sh::HoWo));
  }
};

// ---------------------------------------------------------------------------------------------
template <class E, class Precision, class OutT, class Index, class Sh, int BM, int BN, int BK,
          int WM, int WN, int Stages, bool kVecW, bool kStream, bool kPhaseW = false>
struct ConvNchw {
  using Engine = gemm::TileEngine<E, Precision, BM, BN, BK, WM, WN, Stages, true, false>;
  static constexpr bool kGeneral = conv_im2col_general(Sh::D, Sh::T, Sh::Do, Sh::kTransposed);
  using General = Im2colGeneralLoader<E, typename Engine::TileB, Sh, BN, BK, Engine::kThreads, Index, kPhaseW>;
  using LoaderB = choose_t<kGeneral, General, Im2colNchwLoader<E, typename Engine::TileB, Sh, BN, BK, Engine::kThreads, Index>>;
  using Entry = choose_t<kGeneral, int4, int2>;
  static constexpr int kThreads = Engine::kThreads;
  // The pipeline ring, then the im2col table.
  static constexpr int kSmemBytes = Engine::kSmemBytes + LoaderB::kTableBytes;
  static constexpr int kPhases = conv_phases(Sh::kTransposed, Sh::kStrideD, Sh::kStrideH, General::kPhasesW);
  // The grid of a static batch (config/conv.h's conv_geometry; 0 along x when the batch is dyn).
  static constexpr long long kGridX =
      (conv_gemm_pixels(Sh::N, Sh::Do, Sh::Ho, Sh::Wo, Sh::kStrideD, Sh::kStrideH, General::kPhasesW, Sh::kTransposed) +
       BN - 1) / BN;
  static constexpr long long kGridY = (Sh::Kg + BM - 1) / BM, kGridZ = Sh::kGroups * kPhases;
  static_assert(!(Sh::kTransposed && kVecW), "a transposed conv's filters are gathered (TransposedFilterLoader)");

  // The GEMM's columns at this launch: conv_gemm_pixels, or N x Ho x Wo over dyn spatial extents.
  static __device__ __forceinline__ long long pixels_at(long long batch, const ConvDyn& dyn) {
    if constexpr (Sh::kDynSpatial)
      return gemm::extent<Sh::N>(batch) * dyn.howo.value;
    else
      return conv_gemm_pixels(gemm::extent<Sh::N>(batch), Sh::Do, Sh::Ho, Sh::Wo, Sh::kStrideD, Sh::kStrideH,
                              General::kPhasesW, Sh::kTransposed);
  }

  // batch: the images, read where Sh::N is 0 (a dyn batch, [Note: dyn conv batch]); dyn: the
  // spatial extents, read where Sh holds 0 ([Note: dyn conv spatial extents]).
  template <class Epi>
  static __device__ __forceinline__ void run(const E* x, const E* w, OutT* y, Epi epi, long long batch = 0,
                                             const ConvDyn& dyn = ConvDyn{}) {
    extern __shared__ __align__(16) char smem[];
    static_assert(!Sh::kDynSpatial || !kGeneral, "dyn spatial extents: the 2-d forward loader");
    const long long pixels = pixels_at(batch, dyn);
    const Index g = blockIdx.z % Sh::kGroups;
    const int phase = int(blockIdx.z / Sh::kGroups);
    const long long n0 = static_cast<long long>(blockIdx.x) * BN;
    const int m0 = blockIdx.y * BM;
    Entry* table = reinterpret_cast<Entry*>(smem + Engine::kSmemBytes);
    LoaderB lb;
    if constexpr (Sh::kDynSpatial)
      lb.x = x + g * (Index(Sh::Cg) * extent_of<Sh::H, Index>(dyn.h) * extent_of<Sh::W, Index>(dyn.w));
    else
      lb.x = x + g * Index(Sh::Cg * Sh::D * Sh::H * Sh::W);
    lb.table = table;
    float acc[Engine::MT][Engine::NT][4];
    if constexpr (kGeneral) {
      lb.kdim = LoaderB::build_table(table, phase);
      lb.init(n0, phase, pixels);
    } else {
      LoaderB::build_table(table, extent_of<Sh::H, long long>(dyn.h), extent_of<Sh::W, long long>(dyn.w));
      lb.init(n0, pixels, dyn);
    }
    __syncthreads();  // the table is complete before the prologue copies read it
    if constexpr (Sh::kTransposed) {   // w [C][Kg][taps]: the group's Cg input channels
      const TransposedFilterLoader<E, typename Engine::TileA, Sh, BM, BK, kThreads, Index> la{
          w + g * Index(Sh::Cg * Sh::Kg * Sh::T * Sh::R * Sh::S), table, lb.kdim};
      Engine::mainloop(smem, la, lb, m0, 0, lb.kdim, acc);
    } else {
      const gemm::MatrixLoader<E, typename Engine::TileA, BM, BK, kThreads, kVecW, Index> la{
          w + g * Index(Sh::Kg * Sh::Kdim), Index(Sh::Kdim), int(Sh::Kg), int(Sh::Kdim)};
      Engine::mainloop(smem, la, lb, m0, 0, int(Sh::Kdim), acc);
    }
    if constexpr (kPhases > 1) {
      const PhasedOut<OutT, Index, Sh, General, kStream> out{y, g, Index(Sh::Kg), Index(pixels), General::phase_of(phase)};
      Engine::template epilogue<Index, false>(smem, acc, out, Index(m0), Index(n0), epi, nullptr,
                                              Index(0), Index(0), Index(0));
    } else {
      using Out = NchwOut<OutT, Index, Sh, kStream>;
      if constexpr (Sh::kDynSpatial) {
        const Out out{y, g, Index(Sh::Kg), Index(pixels), dyn.howo};
        Engine::template epilogue<Index, false>(smem, acc, out, Index(m0), Index(n0), epi, nullptr,
                                                Index(0), Index(0), Index(0));
      } else {
        const Out out{y, g, Index(Sh::Kg), Index(pixels)};
        Engine::template epilogue<Index, false>(smem, acc, out, Index(m0), Index(n0), epi, nullptr,
                                                Index(0), Index(0), Index(0));
      }
    }
  }
};

template <class E, class Precision, class OutT, class Index, class Sh, int BM, int BN, int BK,
          int WM, int WN, int Stages, bool kStream>
struct ConvNhwc {
  static_assert(!conv_im2col_general(Sh::D, Sh::T, Sh::Do, Sh::kTransposed), "a 2-d forward conv");
  static_assert(Sh::N > 0, "ConvNhwc takes no dyn batch");
  using Engine = gemm::TileEngine<E, Precision, BM, BN, BK, WM, WN, Stages, true, true>;
  static constexpr int kThreads = Engine::kThreads;
  static constexpr int kSmemBytes = Engine::kSmemBytes;
  static constexpr int kVecElems = 16 / int(sizeof(E));
  static constexpr bool kVecX = Sh::Cg % kVecElems == 0 && Sh::C % kVecElems == 0;
  static constexpr bool kVecW = Sh::Kdim % kVecElems == 0;
  static constexpr long long kGridX = (Sh::Kg + BN - 1) / BN, kGridY = (Sh::P + BM - 1) / BM;

  template <class Epi>
  static __device__ __forceinline__ void run(const E* x, const E* w, OutT* y, Epi epi) {
    extern __shared__ __align__(16) char smem[];
    const Index g = blockIdx.z;
    const int n0 = blockIdx.x * BN;
    const long long m0 = static_cast<long long>(blockIdx.y) * BM;
    Im2colNhwcLoader<E, typename Engine::TileA, Sh, BM, BK, kThreads, kVecX ? kVecElems : 1,
                     Index>
        la;
    la.x = x + g * Index(Sh::Cg);
    la.init(m0);
    gemm::MatrixLoader<E, typename Engine::TileB, BN, BK, kThreads, kVecW, Index> lb{
        w + g * Index(Sh::Kg * Sh::Kdim), Index(Sh::Kdim), int(Sh::Kg), int(Sh::Kdim)};
    float acc[Engine::MT][Engine::NT][4];
    Engine::mainloop(smem, la, lb, 0, n0, int(Sh::Kdim), acc);
    const NhwcOut<OutT, Index, Sh, kStream> out{y, g, Index(Sh::P), Index(Sh::Kg)};
    Engine::template epilogue<Index, false>(smem, acc, out, Index(m0), Index(n0), epi, nullptr,
                                            Index(0), Index(0), Index(0));
  }
};

// ---------------------------------------------------------------------------------------------
template <class E, class OutT, class Index, class Sh, bool kNhwc, int Threads>
struct DepthwiseDirect {
  static_assert(Sh::kGroups == Sh::C && Sh::Cg == 1, "depthwise: groups == C");
  static_assert(!conv_im2col_general(Sh::D, Sh::T, Sh::Do, Sh::kTransposed), "a 2-d forward conv");
  static constexpr int kThreads = Threads;
  // The grid of a static batch (0 when the batch is dyn: the launch's is conv_geometry's).
  static constexpr long long kGridX = (Sh::N * Sh::K * Sh::HoWo + Threads - 1) / Threads;

  // batch: the images, read where Sh::N is 0 (a dyn batch, [Note: dyn conv batch]); dyn: the
  // spatial extents, read where Sh holds 0 ([Note: dyn conv spatial extents]).
  template <class Epi>
  static __device__ __forceinline__ void run(const E* x, const E* w, OutT* y, Epi epi, long long batch = 0,
                                             const ConvDyn& dyn = ConvDyn{}) {
    const Index idx = Index(blockIdx.x) * Threads + threadIdx.x;
    const Index howo = extent_of<Sh::HoWo, Index>(dyn.howo);
    if (idx >= Index(gemm::extent<Sh::N>(batch) * Sh::K) * howo) return;
    Index n, k, hw;
    if constexpr (kNhwc) {  // y [N][Ho][Wo][K]: k fastest
      k = idx % Index(Sh::K);
      const Index p = idx / Index(Sh::K);
      hw = mod_by<Sh::HoWo>(p, dyn.howo);
      n = div_by<Sh::HoWo>(p, dyn.howo);
    } else {  // y [N][K][Ho][Wo]: wo fastest
      hw = mod_by<Sh::HoWo>(idx, dyn.howo);
      const Index nk = div_by<Sh::HoWo>(idx, dyn.howo);
      k = nk % Index(Sh::K);
      n = nk / Index(Sh::K);
    }
    const Index c = k / Index(Sh::Kg);  // channel multiplier Kg = K / C
    const int ho = int(div_by<Sh::Wo>(hw, dyn.wo)), wo = int(mod_by<Sh::Wo>(hw, dyn.wo));
    const int in_h = extent_of<Sh::H, int>(dyn.h), in_w = extent_of<Sh::W, int>(dyn.w);
    // A tap outside the input is skipped by selects, not branches: its load is predicated off and
    // the sum keeps its value (the same bits as a skip), so every tap's load can be in flight at
    // once ([Note: pool windows without branches] in pool.cuh).
    float acc = 0.f;
#pragma unroll
    for (int r = 0; r < Sh::R; ++r) {
      const int hi = ho * Sh::kStrideH - Sh::kPadH + r * Sh::kDilH;
      const bool row_ok = unsigned(hi) < unsigned(in_h);
#pragma unroll
      for (int s = 0; s < Sh::S; ++s) {
        const int wi = wo * Sh::kStrideW - Sh::kPadW + s * Sh::kDilW;
        const bool ok = row_ok && unsigned(wi) < unsigned(in_w);
        const Index xo = kNhwc ? ((n * Index(in_h) + hi) * Index(in_w) + wi) * Index(Sh::C) + c
                               : ((n * Index(Sh::C) + c) * Index(in_h) + hi) * Index(in_w) + wi;
        const float xv = ok ? to_float(x[xo]) : 0.f;
        const float sum = fmaf(xv, to_float(w[k * (Sh::R * Sh::S) + r * Sh::S + s]), acc);
        acc = ok ? sum : acc;
      }
    }
    y[idx] = from_float<OutT>(epi(acc, n, k, hw));
  }
};

}  // namespace conv
}  // namespace kiln
