// Example instantiation: y = softmax(dropout(h, p=0.2, seed=seed), axis=1), h: f32[128, 16384]
// (the softmax half of linear+dropout+softmax). A 1024-thread block per row; 16 floats per
// thread hold the whole row in registers: one read, one write. The dropout mask is computed
// in the prologue from the flat index, so it does not depend on the tiling.
//
// kiln/philox.cuh (kiln::dropout_keep) was not on main when this was written: DropoutStub below
// stands in with the same shape of interface (a pure function of seed and flat index), and is
// what bench/standalone/memtpl_check.cu checks against. Swap in kiln::dropout_keep when it lands.
#include "kiln/config/rownorm.h"
#include "kiln/rownorm.cuh"

namespace kiln_softmax_dropout {
using Index = int;
constexpr Index kRows = 128, kLen = 16384;
constexpr int kThreads = 1024, kItems = 16;
constexpr float kP = 0.2f, kScale = 1.0f / (1.0f - kP);
static_assert(!kiln::launch::rownorm_use_warp(kRows, kLen, 32, 132), "block per row");
static_assert(kLen <= kThreads * kItems, "row fits in registers");
inline constexpr kiln::launch::Geometry kGeometry = kiln::launch::rownorm_block_geometry(kRows, kThreads);

// STUB for kiln::dropout_keep: splitmix64 of (seed, flat index) -> u in [0, 1), keep if u >= p.
struct DropoutStub {
  static __host__ __device__ __forceinline__ float uniform(unsigned long long seed, unsigned long long flat) {
    unsigned long long z = seed + 0x9E3779B97F4A7C15ULL * (flat + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return float(z >> 40) * (1.0f / 16777216.0f);
  }
};

struct Load {   // spec: dropout(h, p=0.2, seed=seed)
  unsigned long long seed;
  __device__ float operator()(float h, Index flat) const {
    return DropoutStub::uniform(seed, (unsigned long long)flat) >= kP ? h * kScale : 0.0f;
  }
};
struct Store {  // spec: y
  __device__ float operator()(float y, Index) const { return y; }
};
}  // namespace kiln_softmax_dropout

extern "C" __global__ void __launch_bounds__(1024)
kiln_softmax_dropout_k0(const float* __restrict__ h, float* __restrict__ y, unsigned long long seed) {
  using namespace kiln_softmax_dropout;
  kiln::rownorm_rows<kThreads, kThreads, kItems, kiln::RowNormKind::kSoftmax, float>(h, y, kRows, kLen, Load{seed},
                                                                                   Store{});
}
