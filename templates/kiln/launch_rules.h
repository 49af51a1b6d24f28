// kiln/launch_rules.h — the shared base of the templates' launch rules: Geometry, the launch
// check of generated units and small integer helpers. Plain constexpr C++ with no includes, so the
// planner (generator/, no CUDA headers), NVRTC units and the hand-written example units in
// tests/templates all compile it. Each family's own rules live beside its config in
// kiln/config/<family>.h (reduce.h, scan.h, rownorm.h, elementwise.h, ...).
#pragma once

// Host-only for the planner; host+device under nvcc/NVRTC so a unit may evaluate the rules in
// constant expressions (NVRTC rejects unannotated functions).
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KILN_RULE __host__ __device__
#else
#define KILN_RULE
#endif

namespace kiln {
namespace launch {

struct Dim3L {
  long long x = 1, y = 1, z = 1;
};

struct Geometry {
  Dim3L grid;
  Dim3L block;
  long long shared_bytes = 0;      // dynamic shared memory
  long long workspace_bytes = 0;   // scratch the planner allocates (0: none)
  bool zero_workspace = false;     // the workspace must be zeroed before every launch
};

// A generated unit's check that its own copy of a rule gives the launch the planner computed
// (the grid only when `with_grid`: with dyn dims it is a run-time value).
KILN_RULE constexpr bool same_launch(const Geometry& g, bool with_grid, long long gx, long long gy, long long gz,
                                     long long bx, long long by, long long bz, long long shared_bytes) {
  return (!with_grid || (g.grid.x == gx && g.grid.y == gy && g.grid.z == gz)) && g.block.x == bx &&
         g.block.y == by && g.block.z == bz && g.shared_bytes == shared_bytes;
}

KILN_RULE constexpr long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }
KILN_RULE constexpr long long min_ll(long long a, long long b) { return a < b ? a : b; }
KILN_RULE constexpr long long max_ll(long long a, long long b) { return a > b ? a : b; }
constexpr long long kMaxGridX = 2147483647LL;
constexpr long long kMaxGridY = 65535LL;

// Elements of a type of `elem_bytes` in one 16-byte vector.
KILN_RULE constexpr int vec_elems(int elem_bytes) { return 16 / elem_bytes; }

// Multiples of m.
KILN_RULE constexpr long long round_up_ll(long long x, long long m) { return ceil_div(x, m) * m; }

// [Note: cutting an axis against wave quantization]
// `blocks` blocks that do not fill one wave (`wave` resident blocks) are multiplied by cutting an
// axis into parts, at most `most` of them and no more than one wave's worth. The parts count is
// the one whose blocks fill the largest share of their last wave's slots, the fewest on a tie:
// a count just past a wave leaves most of the second wave empty while its blocks run as long as
// the first's (128 column blocks of a strided scan cut 9 ways made 1152 blocks against a wave of
// 1056; 8 ways make 1024). Blocks that already fill a wave are not cut (1).
// That count is the most parts whose blocks still fit one wave, wave / blocks (at most `most`):
// up to there the one wave's fill grows with the parts, and one part more makes two waves, whose
// fill, (wave / blocks + 1) * blocks / 2, is no larger. A closed form, since launches with dyn
// rows evaluate it on the host at each launch ([Note: splits per launch] in config/reduce.h);
// tests/generator/test_launch_rules.cpp checks it against the scan of every count.
KILN_RULE constexpr long long wave_filling_parts(long long blocks, long long wave, long long most) {
  if (blocks >= wave) return 1;
  return max_ll(1, min_ll(most, wave / max_ll(1, blocks)));
}

}  // namespace launch
}  // namespace kiln
