// Example instantiation: y = avg_pool3d(x, 3, stride=2, padding=1), x: f16[16, 32, 128, 128, 256]
// (KernelBench level 1, problem 46, in f16). A vector run of 8 outputs along w, each window row's
// columns loaded as aligned 16-byte vectors of 8 halves; the window summed in f32; a run's 8
// outputs stored one by one (an avg pool: pool_wide_stores).
#include <cuda_fp16.h>

#include "kiln/config/pool.h"
#include "kiln/pool.cuh"

namespace kiln_pool_avg3d {
using Index = long long;
constexpr kiln::PoolConfig kC{256, false, 16 * 32, 128, 128, 256, 64, 64, 128, 3, 3, 3, 2, 2, 2,
                              1,   1,     1,       1,   1,   1,   true, 0, 8, 8};
static_assert(kiln::pool_vec(2, true, kC.in_w, kC.out_w, kC.kernel_w, kC.stride_w, kC.dilation_w, kC.padding_w) == kC.vec,
              "the planner's vector");
static_assert(kiln::pool_wide_stores(kC.max, true, kC.run) == kC.wide_stores, "the planner's stores");

struct Load : kiln::PoolNoLead {
  __device__ float operator()(__half x, Index, const Lead&) const { return __half2float(x); }
};
struct Store : kiln::PoolNoLead {
  __device__ __half operator()(float r, Index, const Lead&) const { return __float2half_rn(r); }
};
}  // namespace kiln_pool_avg3d

extern "C" __global__ void __launch_bounds__(256)
kiln_pool_avg3d_k0(const __half* __restrict__ x, __half* __restrict__ y) {
  using namespace kiln_pool_avg3d;
  kiln::pool<kC, float, Index>(x, y, Load{}, Store{});
}
