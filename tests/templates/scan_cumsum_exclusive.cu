// Example instantiation: y = cumsum(x, axis=1, exclusive=true), x: f32[32768, 32768].
// Many rows: scan_rows_block, a block per row carrying the prefix over 2048-element tiles.
#include "kiln/config/scan.h"
#include "kiln/scan.cuh"

namespace kiln_cumsum_exclusive {
using Index = int;   // 2^30 elements: int32 indexing
constexpr Index kRows = 32768, kLen = 32768;
// kVecs = 2: 2048-element tiles, 48 registers, 5 blocks (40 KB of prefetched loads) per SM.
constexpr int kThreads = 256, kVecs = 2;
constexpr Index kTile = Index(kThreads) * kVecs * 4;
using Op = kiln::SumOp<float>;
static_assert(!kiln::launch::scan_use_lookback(kRows, kLen, kTile, 132), "many rows: block per row");
inline constexpr kiln::launch::Geometry kGeometry = kiln::launch::scan_rows_block_geometry(kRows, kThreads);

struct Load {
  __device__ float operator()(float x, Index) const { return x; }
};
struct Store {
  __device__ float operator()(float y, Index) const { return y; }
};
}  // namespace kiln_cumsum_exclusive

extern "C" __global__ void __launch_bounds__(256)
kiln_cumsum_exclusive_k0(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_cumsum_exclusive;
  kiln::scan_rows_block<kThreads, kVecs, /*exclusive=*/true, /*reverse=*/false, /*aligned=*/false, Op>(x, y, kRows, kLen, Load{}, Store{});
}
