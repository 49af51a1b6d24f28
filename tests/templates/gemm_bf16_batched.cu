// Batched bf16 GEMM with a broadcast B (batch stride 0), f32 accumulation, bf16 output:
// C[b][257,136] = A[b][257,200] · B[200,136] for b < 3. K = 200 leaves a 8-deep tail tile.
// Geometry: grid (Kernel::kTilesN, Kernel::kTilesM, 3), block Kernel::kThreads,
// dynamic smem Kernel::kSmemBytes.
#include "kiln/gemm.cuh"

namespace bf16_batched {
using Index = int;
using T = __nv_bfloat16;
constexpr int kBatch = 3, kM = 257, kN = 136, kK = 200;
using Kernel = kiln::gemm::Gemm<T, kiln::Tf32, T, Index, kM, kN, kK, kBatch,
                                kiln::gemm::kRowMajor, kiln::gemm::kRowMajor, kK, kN, kN,
                                /*strideA*/ kM * kK, /*strideB*/ 0, /*strideC*/ kM * kN,
                                128, 64, 32, 64, 32, 3, true, true, true, false, false>;
}  // namespace bf16_batched

extern "C" __global__ void __launch_bounds__(bf16_batched::Kernel::kThreads)
kiln_gemm_bf16_batched(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                       __nv_bfloat16* __restrict__ c) {
  bf16_batched::Kernel::run(a, b, c, kiln::gemm::Identity{}, nullptr);
}
