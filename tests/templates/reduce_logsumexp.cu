// Example instantiation: y = logsumexp(x, axis=1), x: f32[16384, 2048].
// reduce_inner_warp with the online (max, sum) state: one exp per element.
#include "kiln/config/reduce.h"
#include "kiln/reduce.cuh"

namespace kiln_logsumexp {
using Index = int;
constexpr Index kRows = 16384, kLen = 2048;
constexpr int kThreads = 256, kUnroll = 4;
using Op = kiln::LogSumExpOp<float>;
static_assert(kiln::launch::reduce_inner_use_warp(kRows, kLen, 132), "warp per row");
inline constexpr kiln::launch::Geometry kGeometry = kiln::launch::reduce_inner_warp_geometry(kRows, kThreads);

struct Load {
  __device__ float operator()(float x, Index) const { return x; }
};
struct Store {
  __device__ float operator()(float r, Index) const { return r; }
};
}  // namespace kiln_logsumexp

extern "C" __global__ void __launch_bounds__(256)
kiln_logsumexp_k0(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_logsumexp;
  kiln::reduce_inner_warp<kThreads, kUnroll, Op>(x, y, kRows, kLen, Load{}, Store{});
}
