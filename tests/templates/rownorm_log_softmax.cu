// Example instantiation: y = log_softmax(x, axis=1), x: f32[8192, 1000].
// A warp per row, 32 floats per lane in registers (1000 <= 32*32); rows are 4000 bytes long,
// so every row starts 16-byte aligned and loads/stores are 16 bytes.
#include "kiln/config/rownorm.h"
#include "kiln/rownorm.cuh"

namespace kiln_log_softmax {
using Index = int;
constexpr Index kRows = 8192, kLen = 1000;
constexpr int kThreads = 256, kItems = 32;
static_assert(kiln::launch::rownorm_use_warp(kRows, kLen, kItems, 132), "warp per row");
inline constexpr kiln::launch::Geometry kGeometry = kiln::launch::rownorm_warp_geometry(kRows, kThreads);

struct Load {
  __device__ float operator()(float x, Index) const { return x; }
};
struct Store {
  __device__ float operator()(float y, Index) const { return y; }
};
}  // namespace kiln_log_softmax

extern "C" __global__ void __launch_bounds__(256)
kiln_log_softmax_k0(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_log_softmax;
  kiln::rownorm_rows<kThreads, 32, kItems, kiln::RowNormKind::kLogSoftmax, float>(x, y, kRows, kLen, Load{}, Store{});
}
