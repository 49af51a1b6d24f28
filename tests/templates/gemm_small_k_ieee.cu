// matmul_small_k seed, ieee: C[32768,32768] = A[32768,64] · B[64,32768] (f32, row-major).
// Instantiation unit as the emitter writes it: constants, epilogue functor, extern "C" entry.
// Geometry: grid = min(kTiles, num_SMs), block = Kernel::kThreads, smem = Kernel::kSmemBytes.
#include "kiln/gemm.cuh"

namespace small_k_ieee {
using Index = long long;  // C has 2^30 elements: offsets stay int64 in the epilogue
constexpr long long kM = 32768, kN = 32768;
constexpr int kK = 64;
using Kernel = kiln::gemm::SmallK<kiln::Ieee, Index, kM, kN, kK, /*lda*/ kK, /*ldb*/ kN,
                                  /*ldc*/ kN, /*BM*/ 128, /*BN*/ 128, /*WM*/ 64, /*WN*/ 32>;
}  // namespace small_k_ieee

extern "C" __global__ void __launch_bounds__(small_k_ieee::Kernel::kThreads, 1)
kiln_gemm_small_k_ieee(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c) {
  small_k_ieee::Kernel::run(a, b, c, kiln::gemm::Identity{});
}
