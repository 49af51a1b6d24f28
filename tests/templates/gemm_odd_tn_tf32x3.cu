// General f32 GEMM with odd shapes and a transposed B view, 3xTF32, bias + relu epilogue:
// C[1000,127] = relu(A[1000,33] · Bt[127,33]^T + bias). lda = ldb = 33 (not a multiple of 4:
// 4-byte cp.async), ldc = 127 (scalar stores), K = 33 (tail in the last k tile).
// Geometry: grid (Kernel::kTilesN, Kernel::kTilesM, 1), block Kernel::kThreads,
// dynamic smem Kernel::kSmemBytes.
#include "kiln/gemm.cuh"

namespace odd_tn {
using Index = int;
constexpr int kM = 1000, kN = 127, kK = 33;
struct Epilogue {
  const float* bias;
  __device__ __forceinline__ float operator()(float acc, Index, Index, Index col) const {
    return fmaxf(acc + bias[col], 0.f);
  }
};
using Kernel = kiln::gemm::Gemm<float, kiln::Tf32x3, float, Index, kM, kN, kK, 1,
                                kiln::gemm::kRowMajor, kiln::gemm::kColMajor, kK, kK, kN, 0, 0, 0,
                                64, 64, 16, 32, 32, 3, false, false, false, false, false>;
}  // namespace odd_tn

extern "C" __global__ void __launch_bounds__(odd_tn::Kernel::kThreads)
kiln_gemm_odd_tn(const float* __restrict__ a, const float* __restrict__ bt,
                 const float* __restrict__ bias, float* __restrict__ c) {
  odd_tn::Kernel::run(a, bt, c, odd_tn::Epilogue{bias}, nullptr);
}
