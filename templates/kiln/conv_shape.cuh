// kiln/conv_shape.cuh — the compile-time shape of a conv (NCHW terms; the NHWC templates read
// the same fields), shared by the conv templates: conv_igemm.cuh, conv_sm90.cuh, conv_tma.cuh.
// The spatial axes are (D, H, W), right-aligned: a conv2d has D = T = 1 (the defaults), a conv1d
// also H = R = 1. A transposed conv (kTransposed) reads w [C][K/groups][T][R][S].
//
// [Note: dyn conv spatial extents]
// H_ or W_ 0: a dyn spatial extent ([Note: dyn conv] and the note of this name in
// generator/plan/plan_contraction.cpp), a 1-d or 2-d forward conv's only. Ho, Wo and HoWo are
// then 0 too, and the templates that take it (ConvNchw's 2-d loader and DepthwiseDirect,
// conv_igemm.cuh; WgConvNchw, conv_sm90.cuh; TmaConv, conv_tma.cuh) read H, W, Ho, Wo and HoWo
// from a ConvDyn: the launch's values, with the
// division constants the host computed ([Note: division constants on the host] in
// kiln/dyn_dim.h), since they divide by Wo and HoWo per pixel.
#pragma once

#include "kiln/common.cuh"      // DynExtent, DynDim
#include "kiln/config/conv.h"   // conv_out_size

namespace kiln {
namespace conv {

template <long long N_, long long C_, long long H_, long long W_, long long K_, int R_, int S_,
          int SH, int SW, int PH, int PW, int DH, int DW, int G, long long D_ = 1, int T_ = 1, int SD = 1,
          int PD = 0, int DD = 1, bool kTransposed_ = false, int OPD = 0, int OPH = 0, int OPW = 0>
struct ConvShape {
  static constexpr long long N = N_, C = C_, D = D_, H = H_, W = W_, K = K_;
  static constexpr int T = T_, R = R_, S = S_, kStrideD = SD, kStrideH = SH, kStrideW = SW, kPadD = PD, kPadH = PH,
                       kPadW = PW, kDilD = DD, kDilH = DH, kDilW = DW, kGroups = G;
  static constexpr bool kTransposed = kTransposed_;
  static constexpr bool kDynSpatial = H_ == 0 || W_ == 0;   // [Note: dyn conv spatial extents]
  static constexpr long long Do = conv_out_size(D, T, SD, PD, DD, OPD, kTransposed);
  static constexpr long long Ho = H_ == 0 ? 0 : conv_out_size(H, R, SH, PH, DH, OPH, kTransposed);
  static constexpr long long Wo = W_ == 0 ? 0 : conv_out_size(W, S, SW, PW, DW, OPW, kTransposed);
  static constexpr long long HoWo = Do * Ho * Wo;  // output positions per image (Do = 1 below 3-d; 0: dyn)
  static constexpr long long P = N * HoWo;  // output pixels (0: a dyn batch or dyn spatial extents)
  static constexpr long long Cg = C / G, Kg = K / G;
  static constexpr long long Kdim = Cg * T * R * S;  // GEMM K
  static_assert(C % G == 0 && K % G == 0, "groups must divide C and K");
  static_assert(Do > 0 && (Ho > 0 || H_ == 0) && (Wo > 0 || W_ == 0), "empty output");
  static_assert(N >= 0, "N_ is the images, or 0 for a dyn batch");
  static_assert(!kDynSpatial || (D_ == 1 && T_ == 1 && !kTransposed_), "dyn spatial extents: a 1-d or 2-d forward conv");
};

// The spatial extents of a conv at this launch where its ConvShape holds 0 (the members in
// kConvDynFields' order, config/conv.h): KernelArg::DynValue arguments named "conv_" and the
// member. A static conv passes none (ConvDyn{}), and nothing reads them.
struct ConvDyn {
  DynDim h, w, ho, wo, howo;
};

// An extent of the shape: its constant, or the launch's where the shape holds 0.
template <long long kStatic, class I>
__device__ __forceinline__ I extent_of(const DynDim& d) {
  if constexpr (kStatic > 0) return I(kStatic);
  else return I(d.value);
}
// n / extent and n % extent (0 <= n): by the constant, or by the launch's value with its
// division constants (a multiply-high and a shift for 32-bit I).
template <long long kStatic, class I>
__device__ __forceinline__ I div_by(I n, const DynDim& d) {
  if constexpr (kStatic > 0) return n / I(kStatic);
  else return n / DynExtent<I>(d);
}
template <long long kStatic, class I>
__device__ __forceinline__ I mod_by(I n, const DynDim& d) {
  if constexpr (kStatic > 0) return n % I(kStatic);
  else return n % DynExtent<I>(d);
}

}  // namespace conv
}  // namespace kiln
