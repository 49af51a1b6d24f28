// Example instantiation: y = min(x, axis=2), x: f32[128, 4096, 4095].
// Reduced axis contiguous: reduce_inner_warp over rows = 524288 of len 4095 (rows are not
// 16-byte aligned: scalar head, 16-byte body, scalar tail).
#include "kiln/config/reduce.h"
#include "kiln/reduce.cuh"

namespace kiln_min_reduce_axis2 {
using Index = long long;
constexpr Index kRows = 128LL * 4096, kLen = 4095;
constexpr int kThreads = 256, kUnroll = 4;
using Op = kiln::MinOp<float>;
static_assert(kiln::launch::reduce_inner_use_warp(kRows, kLen, 132), "many rows: warp per row");
inline constexpr kiln::launch::Geometry kGeometry = kiln::launch::reduce_inner_warp_geometry(kRows, kThreads);

struct Load {
  __device__ float operator()(float x, Index) const { return x; }
};
struct Store {
  __device__ float operator()(float r, Index) const { return r; }
};
}  // namespace kiln_min_reduce_axis2

extern "C" __global__ void __launch_bounds__(256)
kiln_min_reduce_axis2_k0(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_min_reduce_axis2;
  kiln::reduce_inner_warp<kThreads, kUnroll, Op>(x, y, kRows, kLen, Load{}, Store{});
}
