// Example instantiation: y = argmax(x, axis=1), x: f32[8, 16777219] -> i64[8].
// Few, very long rows: reduce_inner_block split along the row (blockIdx.y), partial
// (value, index) states to a workspace, then reduce_finish (k1) picks the winner per row.
#include "kiln/config/reduce.h"
#include "kiln/reduce.cuh"

namespace kiln_argmax_long {
using Index = int;
constexpr Index kRows = 8, kLen = (1 << 24) + 3;
constexpr int kThreads = 512, kUnroll = 4, kFinishThreads = 32;
using Op = kiln::ArgMaxOp<float, Index>;
static_assert(!kiln::launch::reduce_inner_use_warp(kRows, kLen, 132), "block per row");
inline constexpr kiln::launch::InnerSplit kSplit = kiln::launch::reduce_inner_split(kRows, kLen, kThreads, kUnroll, 4, 132);
static_assert(kSplit.splits > 1, "8 rows: split each row");
inline constexpr kiln::launch::Geometry kGeometry =
    kiln::launch::reduce_inner_block_geometry(kRows, kSplit, kThreads, sizeof(Op::Acc));
inline constexpr kiln::launch::Geometry kFinishGeometry = kiln::launch::reduce_finish_geometry(kRows, kFinishThreads, 1);

struct Load {
  __device__ float operator()(float x, Index) const { return x; }
};
struct Store {
  __device__ long long operator()(Index r, Index) const { return r; }
};
}  // namespace kiln_argmax_long

extern "C" __global__ void __launch_bounds__(512)
kiln_argmax_long_k0(const float* __restrict__ x, kiln_argmax_long::Op::Acc* __restrict__ partials) {
  using namespace kiln_argmax_long;
  kiln::reduce_inner_block<kThreads, kUnroll, Op>(x, static_cast<long long*>(nullptr), partials, kRows, kLen,
                                                  Index(kSplit.splits), Index(kSplit.chunk), Load{}, Store{});
}

extern "C" __global__ void __launch_bounds__(32)
kiln_argmax_long_k1(const kiln_argmax_long::Op::Acc* __restrict__ partials, long long* __restrict__ y) {
  using namespace kiln_argmax_long;
  kiln::reduce_finish<kFinishThreads, 1, Op>(partials, y, kRows, Index(kSplit.splits), kLen, Store{});
}
