// Split-K f32 GEMM (3xTF32) for a shape with few output tiles and a long K, scale epilogue:
// C[96,200] = 0.5 * A[96,5000] · B[5000,200]; 2 x 4 tiles, 8 splits of 640 (the last shorter).
// Geometry: kiln_gemm_splitk: grid (Kernel::kTilesN, Kernel::kTilesM, 8), block Kernel::kThreads,
// dynamic smem Kernel::kSmemBytes, workspace kSplits * kM * kN f32;
// kiln_gemm_splitk_reduce: grid (ceil(kM * kN / Reduce::kThreads)), block Reduce::kThreads.
#include "kiln/gemm.cuh"

namespace splitk {
using Index = int;
constexpr int kM = 96, kN = 200, kK = 5000, kSplits = 8;
struct Epilogue {
  __device__ __forceinline__ float operator()(float acc, Index, Index, Index) const {
    return 0.5f * acc;
  }
};
using Kernel = kiln::gemm::GemmSplitK<float, kiln::Tf32x3, Index, kM, kN, kK, 1,
                                      kiln::gemm::kRowMajor, kiln::gemm::kRowMajor, kK, kN, 0, 0,
                                      64, 64, 32, 32, 32, 4, true, true, kSplits>;
using Reduce = kiln::gemm::SplitKReduce<float, Index, kM, kN, 1, kSplits, kN, 0, false, 256>;
}  // namespace splitk

extern "C" __global__ void __launch_bounds__(splitk::Kernel::kThreads)
kiln_gemm_splitk(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ ws) {
  splitk::Kernel::run(a, b, ws);
}

extern "C" __global__ void __launch_bounds__(splitk::Reduce::kThreads)
kiln_gemm_splitk_reduce(const float* __restrict__ ws, float* __restrict__ c) {
  splitk::Reduce::run(ws, c, splitk::Epilogue{});
}
