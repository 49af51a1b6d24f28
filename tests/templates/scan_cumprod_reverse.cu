// Example instantiation: y = cumprod(x, axis=1, reverse=true), x: f32[1000, 5003].
// Odd row length: rows are not 16-byte aligned, so every row takes the scalar path.
#include "kiln/config/scan.h"
#include "kiln/scan.cuh"

namespace kiln_cumprod_reverse {
using Index = int;
constexpr Index kRows = 1000, kLen = 5003;
constexpr int kThreads = 256, kVecs = 2;
constexpr Index kTile = Index(kThreads) * kVecs * 4;
using Op = kiln::ProdOp<float>;
static_assert(!kiln::launch::scan_use_lookback(kRows, kLen, kTile, 132), "many rows: block per row");
inline constexpr kiln::launch::Geometry kGeometry = kiln::launch::scan_rows_block_geometry(kRows, kThreads);

struct Load {
  __device__ float operator()(float x, Index) const { return x; }
};
struct Store {
  __device__ float operator()(float y, Index) const { return y; }
};
}  // namespace kiln_cumprod_reverse

extern "C" __global__ void __launch_bounds__(256)
kiln_cumprod_reverse_k0(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_cumprod_reverse;
  kiln::scan_rows_block<kThreads, kVecs, /*exclusive=*/false, /*reverse=*/true, /*aligned=*/false, Op>(x, y, kRows, kLen, Load{}, Store{});
}
