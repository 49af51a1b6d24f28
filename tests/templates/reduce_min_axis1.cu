// Example instantiation, as the emitter writes it: y = min(x, axis=1), x: f32[128, 4096, 4095].
// Reduced axis strided: reduce_outer over [outer=128, red=4096, inner=4095]. inner % 4 != 0,
// so kVec = 1 (coalesced 4-byte loads, kUnroll deep per thread).
#include "kiln/config/reduce.h"
#include "kiln/reduce.cuh"

namespace kiln_min_reduce_axis1 {
using Index = long long;   // 2^31 <= 128*4096*4095 elements
constexpr Index kOuter = 128, kRed = 4096, kInner = 4095;
constexpr int kThreads = 256, kUnroll = 8, kVec = 1;
using Op = kiln::MinOp<float>;
inline constexpr kiln::launch::OuterSplit kSplit = kiln::launch::reduce_outer_split(kOuter, kRed, kInner, kThreads, kVec, kUnroll, 132);
inline constexpr kiln::launch::Geometry kGeometry = kiln::launch::reduce_outer_geometry(kOuter, kInner, kSplit, kThreads, kVec, sizeof(Op::Acc));
static_assert(kSplit.splits == 1, "132 SMs: 2048 blocks fill the GPU without a split");

struct Load {   // spec: x
  __device__ float operator()(float x, Index) const { return x; }
};
struct Store {  // spec: y
  __device__ float operator()(float r, Index) const { return r; }
};
}  // namespace kiln_min_reduce_axis1

extern "C" __global__ void __launch_bounds__(256)
kiln_min_reduce_axis1_k0(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_min_reduce_axis1;
  kiln::reduce_outer<kThreads, kUnroll, kVec, Op>(x, y, static_cast<Op::Acc*>(nullptr), kOuter, kRed, kInner,
                                                 Index(kSplit.splits), Index(kSplit.chunk), Load{}, Store{});
}
