// Example instantiation: y = max_pool2d(x, 4, stride=1, padding=1), x: f32[32, 64, 512, 512]
// (KernelBench level 1, problem 42). A vector run (pool_vec) of 4 rows (pool_rows): 4 x 4 outputs
// a thread step, each of the 7 input rows they read loaded once as aligned 16-byte vectors; each
// run of 4 outputs stored as the aligned vectors its flat index allows (pool_wide_stores: rows of
// 511 outputs start at every index mod 4).
#include "kiln/config/pool.h"
#include "kiln/pool.cuh"

namespace kiln_pool_max2d {
using Index = long long;
constexpr kiln::PoolConfig kC{256,  true, 32 * 64, 1, 512, 512, 1, 511, 511, 1, 4, 4, 1, 1, 1,
                              0,    1,    1,       1, 1,   1,   true, 0, 4, 4, 4, true};
static_assert(kiln::pool_vec(4, true, kC.in_w, kC.out_w, kC.kernel_w, kC.stride_w, kC.dilation_w, kC.padding_w) == kC.vec,
              "the planner's vector");
static_assert(kiln::pool_run(kC.vec, kC.out_w, kC.kernel_w, kC.stride_w, kC.dilation_w) == kC.run,
              "the planner's run");
static_assert(kiln::pool_rows(kC.max, kC.out_h, kC.kernel_h, kC.stride_h, kC.dilation_h, kiln::pool_run_span(kC)) ==
                  kC.rows,
              "the planner's rows");
static_assert(kiln::pool_wide_stores(kC.max, true, kC.run) == kC.wide_stores, "the planner's stores");

struct Load : kiln::PoolNoLead {
  __device__ float operator()(float x, Index, const Lead&) const { return x; }
};
struct Store : kiln::PoolNoLead {
  __device__ float operator()(float r, Index, const Lead&) const { return r; }
};
}  // namespace kiln_pool_max2d

extern "C" __global__ void __launch_bounds__(256)
kiln_pool_max2d_k0(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_pool_max2d;
  kiln::pool<kC, float, Index>(x, y, Load{}, Store{});
}
