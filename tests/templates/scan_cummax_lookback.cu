// Example instantiation: y = cummax(x, axis=1), x: f32[8, 4000000].
// Few long rows: scan_rows_lookback over 8192-element tiles, decoupled look-back, a persistent grid
// of 2 blocks an SM, each block's data warps copying tiles into 3 shared stages and a walker warp
// ([Note: the warp-specialized look-back]).
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
    kiln::launch::scan_rows_lookback_geometry(kRows, kLen, kTile, kThreads, sizeof(float),
                                              132 * kiln::launch::scan_lookback_blocks_per_sm(4));
static_assert(kGeometry.block.x == kThreads + 32 && kGeometry.shared_bytes == 3 * 32768, "the launch");

struct Load {
  __device__ float operator()(float x, Index) const { return x; }
};
struct Store {
  __device__ float operator()(float y, Index) const { return y; }
};
}  // namespace kiln_cummax_lookback

extern "C" __global__ void __launch_bounds__(kiln_cummax_lookback::kThreads + 32, 2)
kiln_cummax_lookback_k0(const float* __restrict__ x, float* __restrict__ y, void* __restrict__ workspace) {
  using namespace kiln_cummax_lookback;
  kiln::scan_rows_lookback<kThreads, kVecs, kiln::launch::kScanLookbackStages, /*exclusive=*/false, /*reverse=*/false,
                           /*aligned=*/false, Op>(x, y, workspace, kRows, kLen, Load{}, Store{});
}
