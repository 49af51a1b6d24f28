// Example instantiation: y = argmax(x, axis=1), x: f32[1048576, 7] -> i64[1048576].
// Rows shorter than a warp: reduce_inner_warp (lanes 0..6 of each warp load one float each,
// as head and tail elements; no vector body).
#include "kiln/config/reduce.h"
#include "kiln/reduce.cuh"

namespace kiln_argmax_short {
using Index = int;
constexpr Index kRows = 1048576, kLen = 7;
constexpr int kThreads = 256, kUnroll = 4;
using Op = kiln::ArgMaxOp<float, Index>;
static_assert(kiln::launch::reduce_inner_use_warp(kRows, kLen, 132), "warp per row");
inline constexpr kiln::launch::Geometry kGeometry = kiln::launch::reduce_inner_warp_geometry(kRows, kThreads);

struct Load {
  __device__ float operator()(float x, Index) const { return x; }
};
struct Store {  // argmax results are int64
  __device__ long long operator()(Index r, Index) const { return r; }
};
}  // namespace kiln_argmax_short

extern "C" __global__ void __launch_bounds__(256)
kiln_argmax_short_k0(const float* __restrict__ x, long long* __restrict__ y) {
  using namespace kiln_argmax_short;
  kiln::reduce_inner_warp<kThreads, kUnroll, Op>(x, y, kRows, kLen, Load{}, Store{});
}
