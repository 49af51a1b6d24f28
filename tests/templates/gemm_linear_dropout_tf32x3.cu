// linear_dropout_softmax seed, tf32x3: H = X[128,16384] · W[16384,16384]^T + b, dropout(p=0.2),
// then softmax over rows as (a) the GEMM with the row-statistics epilogue and (b) the
// normalizing kernel. W row-major [N, K] is B = W^T viewed col-major (ldb = K): no copy.
// Geometry:
//   kiln_linear_tf32x3:          grid (Kernel::kTilesN, Kernel::kTilesM, 1), block Kernel::kThreads,
//                              dynamic smem Kernel::kSmemBytes; workspace stats[M][kTilesN][2] f32.
//   kiln_linear_tf32x3_softmax:  grid (M), block Finalize::kThreads, no dynamic smem.
#include "kiln/gemm.cuh"
#include "gemm_philox_fallback.cuh"

namespace linear_tf32x3 {
using Index = int;  // every tensor < 2^31 elements
constexpr int kM = 128, kN = 16384, kK = 16384;
constexpr unsigned int kThreshold = kiln_test::dropout_threshold(0.2);  // keep when the draw >= it
constexpr float kScale = 1.25f;                  // 1 / (1 - p)

struct Epilogue {
  const float* bias;
  unsigned long long seed;
  __device__ __forceinline__ float operator()(float acc, Index, Index row, Index col) const {
    const float h = acc + __ldg(bias + col);
    const unsigned long long flat = static_cast<unsigned long long>(row) * kN + col;
    return kiln::dropout_keep(seed, flat, kThreshold) ? h * kScale : 0.f;
  }
};

using Kernel = kiln::gemm::Gemm<float, kiln::Tf32x3, float, Index, kM, kN, kK, /*batch*/ 1,
                                kiln::gemm::kRowMajor, kiln::gemm::kColMajor,
                                /*lda*/ kK, /*ldb*/ kK, /*ldc*/ kN, 0, 0, 0,
                                /*BM*/ 128, /*BN*/ 128, /*BK*/ 32, /*WM*/ 64, /*WN*/ 32,
                                /*Stages*/ 6, /*vecA*/ true, /*vecB*/ true, /*vecC*/ true,
                                /*streamC*/ false, /*rowstats*/ true>;
using Finalize = kiln::gemm::SoftmaxFinalize<Index, kM, kN, Kernel::kTilesN, 512>;
}  // namespace linear_tf32x3

extern "C" __global__ void __launch_bounds__(linear_tf32x3::Kernel::kThreads, 1)
kiln_linear_tf32x3(const float* __restrict__ x, const float* __restrict__ w,
                 const float* __restrict__ bias, unsigned long long seed, float* __restrict__ y,
                 float* __restrict__ stats) {
  linear_tf32x3::Kernel::run(x, w, y, linear_tf32x3::Epilogue{bias, seed}, stats);
}

extern "C" __global__ void __launch_bounds__(linear_tf32x3::Finalize::kThreads)
kiln_linear_tf32x3_softmax(float* __restrict__ y, const float* __restrict__ stats) {
  linear_tf32x3::Finalize::run(y, stats);
}
