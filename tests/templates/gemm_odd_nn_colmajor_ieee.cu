// General f32 GEMM, plain FFMA, A given as a column-major view: C[33,7] = At[1000,33]^T · B[1000,7].
// A(m, k) = At[k * 33 + m] (lda = 33), B row-major (ldb = 7): every copy is 4 bytes; N = 7 is a
// tail inside one 16-column group (scalar stores).
#include "kiln/gemm.cuh"

namespace odd_nn {
using Index = int;
constexpr int kM = 33, kN = 7, kK = 1000;
using Kernel = kiln::gemm::Gemm<float, kiln::Ieee, float, Index, kM, kN, kK, 1,
                                kiln::gemm::kColMajor, kiln::gemm::kRowMajor, kM, kN, kN, 0, 0, 0,
                                32, 32, 32, 32, 16, 3, false, false, false, false, false>;
}  // namespace odd_nn

extern "C" __global__ void __launch_bounds__(odd_nn::Kernel::kThreads)
kiln_gemm_odd_nn(const float* __restrict__ at, const float* __restrict__ b, float* __restrict__ c) {
  odd_nn::Kernel::run(at, b, c, kiln::gemm::Identity{}, nullptr);
}
