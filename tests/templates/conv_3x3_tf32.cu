// conv2d_3x3 seed, tf32: x[8,64,512,1024] * w[128,64,3,3] -> y[8,128,510,1022], NCHW, stride 1,
// no padding. Implicit GEMM: rows = 128 out channels, columns = 4.17M output pixels, K = 576.
// Geometry: grid (Kernel::kGridX, Kernel::kGridY, groups), block Kernel::kThreads,
// dynamic smem Kernel::kSmemBytes.
#include "kiln/conv_igemm.cuh"

namespace conv_3x3_tf32 {
using Index = int;  // y has 534M elements < 2^31
using Shape = kiln::conv::ConvShape<8, 64, 512, 1024, 128, 3, 3, 1, 1, 0, 0, 1, 1, 1>;
using Kernel = kiln::conv::ConvNchw<float, kiln::Tf32, float, Index, Shape, /*BM*/ 128, /*BN*/ 128,
                                    /*BK*/ 32, /*WM*/ 64, /*WN*/ 32, /*Stages*/ 3,
                                    /*vecW*/ true, /*stream*/ true>;
// Two CTAs per SM: 2 x 110 KB of shared memory and <= 128 registers (no spills).
constexpr int kMinBlocks = 2;
}  // namespace conv_3x3_tf32

extern "C" __global__ void __launch_bounds__(conv_3x3_tf32::Kernel::kThreads, conv_3x3_tf32::kMinBlocks)
kiln_conv_3x3_tf32(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y) {
  conv_3x3_tf32::Kernel::run(x, w, y, kiln::gemm::Identity{});
}
