// kiln/conv_shape.cuh — the compile-time shape of a conv (NCHW terms; the NHWC templates read
// the same fields), shared by the conv templates: conv_igemm.cuh, conv_sm90.cuh, conv_tma.cuh.
// The spatial axes are (D, H, W), right-aligned: a conv2d has D = T = 1 (the defaults), a conv1d
// also H = R = 1. A transposed conv (kTransposed) reads w [C][K/groups][T][R][S].
#pragma once

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
  static constexpr long long Do = conv_out_size(D, T, SD, PD, DD, OPD, kTransposed);
  static constexpr long long Ho = conv_out_size(H, R, SH, PH, DH, OPH, kTransposed);
  static constexpr long long Wo = conv_out_size(W, S, SW, PW, DW, OPW, kTransposed);
  static constexpr long long HoWo = Do * Ho * Wo;  // output positions per image (Do = 1 below 3-d)
  static constexpr long long P = N * HoWo;  // output pixels (0: a dyn batch)
  static constexpr long long Cg = C / G, Kg = K / G;
  static constexpr long long Kdim = Cg * T * R * S;  // GEMM K
  static_assert(C % G == 0 && K % G == 0, "groups must divide C and K");
  static_assert(Do > 0 && Ho > 0 && Wo > 0, "empty output");
  static_assert(N >= 0, "N_ is the images, or 0 for a dyn batch");
};

}  // namespace conv
}  // namespace kiln
