// Example instantiation: y = sum(x * x, axis=0), x: f32[4096, 8192].
// Reduced axis strided with outer = 1: reduce_outer over [1, 4096, 8192] with 16-byte loads
// (inner % 4 == 0). 8 column tiles cannot fill 132 SMs, so the reduced axis is split over
// blockIdx.y and a second kernel (k1) combines the partial sums in split order.
#include "kiln/config/reduce.h"
#include "kiln/reduce.cuh"

namespace kiln_sumsq_axis0 {
using Index = int;
constexpr Index kOuter = 1, kRed = 4096, kInner = 8192;
constexpr int kThreads = 256, kUnroll = 4, kVec = 4, kFinishThreads = 256;
using Op = kiln::SumOp<float>;
static_assert(kiln::launch::reduce_outer_vec(kInner, 4) == kVec, "inner % 4 == 0: 16-byte loads");
inline constexpr kiln::launch::OuterSplit kSplit =
    kiln::launch::reduce_outer_split(kOuter, kRed, kInner, kThreads, kVec, kUnroll, 132);
static_assert(kSplit.splits > 1, "8 blocks do not fill the GPU: split the reduced axis");
inline constexpr kiln::launch::Geometry kGeometry =
    kiln::launch::reduce_outer_geometry(kOuter, kInner, kSplit, kThreads, kVec, sizeof(Op::Acc));
inline constexpr kiln::launch::Geometry kFinishGeometry =
    kiln::launch::reduce_finish_geometry(kOuter * kInner, kFinishThreads, 1);

struct Load {   // spec: x * x
  __device__ float operator()(float x, Index) const { return x * x; }
};
struct Store {  // spec: y
  __device__ float operator()(float r, Index) const { return r; }
};
}  // namespace kiln_sumsq_axis0

extern "C" __global__ void __launch_bounds__(256)
kiln_sumsq_axis0_k0(const float* __restrict__ x, float* __restrict__ partials) {
  using namespace kiln_sumsq_axis0;
  kiln::reduce_outer<kThreads, kUnroll, kVec, Op>(x, static_cast<float*>(nullptr), partials, kOuter, kRed, kInner,
                                                 Index(kSplit.splits), Index(kSplit.chunk), Load{}, Store{});
}

extern "C" __global__ void __launch_bounds__(256)
kiln_sumsq_axis0_k1(const float* __restrict__ partials, float* __restrict__ y) {
  using namespace kiln_sumsq_axis0;
  kiln::reduce_finish<kFinishThreads, 1, Op>(partials, y, kOuter * kInner, Index(kSplit.splits), kRed, Store{});
}
