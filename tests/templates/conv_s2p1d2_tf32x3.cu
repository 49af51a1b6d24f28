// conv2d NCHW with stride 2, padding 1, dilation 2, odd sizes, bias epilogue, 3xTF32.
// x[2,13,37,45] * w[20,13,3,3] -> y[2,20,18,22]; Cg*R*S = 117 (not a multiple of 4: 4-byte
// copies of w), Ho*Wo = 396.
#include "kiln/conv_igemm.cuh"

namespace conv_s2p1d2 {
using Index = int;
using Shape = kiln::conv::ConvShape<2, 13, 37, 45, 20, 3, 3, 2, 2, 1, 1, 2, 2, 1>;
struct Epilogue {
  const float* bias;
  __device__ __forceinline__ float operator()(float acc, Index, Index k, Index) const {
    return acc + bias[k];
  }
};
using Kernel = kiln::conv::ConvNchw<float, kiln::Tf32x3, float, Index, Shape, 64, 64, 16, 32, 32,
                                    3, /*vecW*/ false, /*stream*/ false>;
}  // namespace conv_s2p1d2

extern "C" __global__ void __launch_bounds__(conv_s2p1d2::Kernel::kThreads, 4)
kiln_conv_s2p1d2(const float* __restrict__ x, const float* __restrict__ w,
                 const float* __restrict__ bias, float* __restrict__ y) {
  conv_s2p1d2::Kernel::run(x, w, y, conv_s2p1d2::Epilogue{bias});
}
