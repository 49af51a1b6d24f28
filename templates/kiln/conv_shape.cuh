// kiln/conv_shape.cuh — the compile-time shape of a conv2d (NCHW terms; the NHWC templates read
// the same fields), shared by the conv templates: conv_igemm.cuh, conv_sm90.cuh, conv_tma.cuh.
#pragma once

namespace kiln {
namespace conv {

template <long long N_, long long C_, long long H_, long long W_, long long K_, int R_, int S_,
          int SH, int SW, int PH, int PW, int DH, int DW, int G>
struct ConvShape {
  static constexpr long long N = N_, C = C_, H = H_, W = W_, K = K_;
  static constexpr int R = R_, S = S_, kStrideH = SH, kStrideW = SW, kPadH = PH, kPadW = PW,
                       kDilH = DH, kDilW = DW, kGroups = G;
  static constexpr long long Ho = (H + 2 * PH - DH * (R - 1) - 1) / SH + 1;
  static constexpr long long Wo = (W + 2 * PW - DW * (S - 1) - 1) / SW + 1;
  static constexpr long long HoWo = Ho * Wo;
  static constexpr long long P = N * HoWo;  // output pixels
  static constexpr long long Cg = C / G, Kg = K / G;
  static constexpr long long Kdim = Cg * R * S;  // GEMM K
  static_assert(C % G == 0 && K % G == 0, "groups must divide C and K");
  static_assert(Ho > 0 && Wo > 0, "empty output");
};

}  // namespace conv
}  // namespace kiln
