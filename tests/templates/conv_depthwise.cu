// Depthwise conv2d (groups == C), NCHW, 3x3, padding 1: x[2,32,33,33] * w[32,1,3,3] -> y[2,32,33,33].
// Geometry: grid (Kernel::kGridX), block Kernel::kThreads, no shared memory.
#include "kiln/conv_igemm.cuh"

namespace conv_depthwise {
using Index = int;
using Shape = kiln::conv::ConvShape<2, 32, 33, 33, 32, 3, 3, 1, 1, 1, 1, 1, 1, 32>;
using Kernel = kiln::conv::DepthwiseDirect<float, float, Index, Shape, /*nhwc*/ false, 256>;
}  // namespace conv_depthwise

extern "C" __global__ void __launch_bounds__(conv_depthwise::Kernel::kThreads)
kiln_conv_depthwise(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y) {
  conv_depthwise::Kernel::run(x, w, y, kiln::gemm::Identity{});
}
