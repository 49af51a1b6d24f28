// Example instantiation: y = softmax(x, axis=1), x: f32[64, 333, 1024] (normalized axis strided).
// rownorm_strided: a thread per (o, c) column, coalesced along c, two passes over the column.
#include "kiln/config/rownorm.h"
#include "kiln/rownorm.cuh"

namespace kiln_softmax_strided {
using Index = int;
constexpr Index kOuter = 64, kLen = 333, kInner = 1024;
constexpr int kThreads = 256, kUnroll = 8;
inline constexpr kiln::launch::Geometry kGeometry = kiln::launch::rownorm_strided_geometry(kOuter, kInner, kThreads);

struct Load {
  __device__ float operator()(float x, Index) const { return x; }
};
struct Store {
  __device__ float operator()(float y, Index) const { return y; }
};
}  // namespace kiln_softmax_strided

extern "C" __global__ void __launch_bounds__(256)
kiln_softmax_strided_k0(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_softmax_strided;
  kiln::rownorm_strided<kThreads, kUnroll, kiln::RowNormKind::kSoftmax, float>(x, y, kOuter, kLen, kInner, Load{},
                                                                              Store{});
}
