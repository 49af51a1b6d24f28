// conv2d NHWC (channels-last filters w[K][R][S][C/groups]), 3x3, padding 1, groups 2, plain FFMA.
// x[2,31,40,16] (N,H,W,C) -> y[2,31,40,24] (N,Ho,Wo,K). 16-byte copies of x (Cg = 8) and stores.
// Geometry: grid (Kernel::kGridX, Kernel::kGridY, groups), block Kernel::kThreads,
// dynamic smem Kernel::kSmemBytes.
#include "kiln/conv_igemm.cuh"

namespace conv_nhwc {
using Index = int;
using Shape = kiln::conv::ConvShape<2, 16, 31, 40, 24, 3, 3, 1, 1, 1, 1, 1, 1, 2>;
using Kernel = kiln::conv::ConvNhwc<float, kiln::Ieee, float, Index, Shape, 64, 64, 32, 32, 32, 3,
                                    /*stream*/ false>;
}  // namespace conv_nhwc

extern "C" __global__ void __launch_bounds__(conv_nhwc::Kernel::kThreads)
kiln_conv_nhwc(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y) {
  conv_nhwc::Kernel::run(x, w, y, kiln::gemm::Identity{});
}
