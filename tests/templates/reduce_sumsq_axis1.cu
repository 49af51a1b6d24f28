// Example instantiation: y = sum(x * x, axis=1), x: f32[4096, 8192].
// Reduced axis contiguous, rows too few for a warp each to fill the GPU (4096 < 32*132) and
// long: reduce_inner_block, a 512-thread block per row, no split (4096 rows >= 2*132 blocks).
#include "kiln/config/reduce.h"
#include "kiln/reduce.cuh"

namespace kiln_sumsq_axis1 {
using Index = int;
constexpr Index kRows = 4096, kLen = 8192;
constexpr int kThreads = 512, kUnroll = 4;
using Op = kiln::SumOp<float>;
static_assert(!kiln::launch::reduce_inner_use_warp(kRows, kLen, 132), "block per row");
inline constexpr kiln::launch::InnerSplit kSplit = kiln::launch::reduce_inner_split(kRows, kLen, kThreads, kUnroll, 4, 132);
static_assert(kSplit.splits == 1, "enough rows: no split");
inline constexpr kiln::launch::Geometry kGeometry =
    kiln::launch::reduce_inner_block_geometry(kRows, kSplit, kThreads, sizeof(Op::Acc));

struct Load {
  __device__ float operator()(float x, Index) const { return x * x; }
};
struct Store {
  __device__ float operator()(float r, Index) const { return r; }
};
}  // namespace kiln_sumsq_axis1

extern "C" __global__ void __launch_bounds__(512)
kiln_sumsq_axis1_k0(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_sumsq_axis1;
  kiln::reduce_inner_block<kThreads, kUnroll, Op>(x, y, static_cast<Op::Acc*>(nullptr), kRows, kLen,
                                                  Index(kSplit.splits), Index(kSplit.chunk), Load{}, Store{});
}
