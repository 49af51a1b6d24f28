// Example instantiation: y = cummax(x, axis=1), x: f32[8, 4000000].
// Few long rows: scan_rows_lookback, one block per 8192-element tile, decoupled look-back, each
// tile copied into shared memory, 6 blocks an SM ([Note: look-back tiles in shared memory]).
#include "kiln/config/scan.h"
#include "kiln/scan.cuh"

namespace kiln_cummax_lookback {
using Index = int;
constexpr Index kRows = 8, kLen = 4000000;
constexpr int kThreads = kiln::launch::kScanLookbackThreads, kVecs = kiln::launch::scan_lookback_vecs(4, 4);
constexpr Index kTile = Index(kThreads) * kVecs * 4;
using Op = kiln::MaxOp<float>;
static_assert(kiln::launch::scan_use_lookback(kRows, kLen, kTile, 132), "few long rows: look-back");
inline constexpr kiln::launch::Geometry kGeometry =
    kiln::launch::scan_rows_lookback_geometry(kRows, kLen, kTile, kThreads, sizeof(float));

struct Load {
  __device__ float operator()(float x, Index) const { return x; }
};
struct Store {
  __device__ float operator()(float y, Index) const { return y; }
};
}  // namespace kiln_cummax_lookback

extern "C" __global__ void __launch_bounds__(256, 6)
kiln_cummax_lookback_k0(const float* __restrict__ x, float* __restrict__ y, void* __restrict__ workspace) {
  using namespace kiln_cummax_lookback;
  kiln::scan_rows_lookback<kThreads, kVecs, /*exclusive=*/false, /*reverse=*/false, Op>(x, y, workspace, kRows, kLen,
                                                                                     Load{}, Store{});
}
