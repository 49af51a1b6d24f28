// The skinny products' tunable picks ([Note: gemv picks] in generator/plan/plan_contraction.cpp,
// [Note: tuned picks] in plan.h): a row dot's 1, 2, 4 or 8 rows a block (and against 2 or more
// columns of x, 16, 32 or 64: warps that carry rows), the column sweep's one block shape, each with the rule's K slices at those rows, half or twice as many within the
// rule's bounds (the heuristic's among them); a stored pick sets the rows, the slices, the grid and
// whether a workspace and its reduce follow; an illegal one is ignored with a reason; and every
// candidate compiles through NVRTC for sm_90a and sm_80. Against 2 or more columns, f32 in tf32 or
// 3xTF32 with the big operand k-contiguous in 16-byte loads, GemvMma's blocks of 128 or 256 rows
// with their rule's K slices, half and twice, are candidates too, and past 8 columns the heuristic
// ([Note: skinny products on the tensor cores] in gemv_mma.cuh).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "memory_plan_util.h"

namespace {

using namespace memory_plan_test;
using kiln::GemvPick;

const char* kSpec =
    "op rows_many {\n"    // 16384 k-contiguous rows of 4096 times a vector: 8 rows a block, one slice
    "  dims M = 16384, K = 4096\n"
    "  in  a: f32[M, K]\n"
    "  in  x: f32[K, 1]\n"
    "  out y = matmul(a, x)\n"
    "}\n"
    "op rows_long_k {\n"  // 64 rows of 262144 against x stored [K, 4]: 8 rows a warp, K in slices
    "  dims M = 64, K = 262144\n"
    "  in  a: f32[M, K]\n"
    "  in  x: f32[K, 4]\n"
    "  out y = matmul(a, x)\n"
    "}\n"
    "op rows_odd {\n"    // 1000 rows of 999 (element loads) against 8 columns of x stored [K, 8]
    "  dims M = 1000, K = 999\n"
    "  in  a: f32[M, K]\n"
    "  in  x: f32[K, 8]\n"
    "  out y = matmul(a, x)\n"
    "}\n"
    "op lin_m4 {\n"       // 4 tokens through a linear layer: x k-contiguous, the rows' old rule
    "  dims M = 4, K = 8192, N = 16384\n"
    "  in  x: f32[M, K]\n"
    "  in  w: f32[N, K]\n"
    "  out y = matmul(x, transpose(w))\n"
    "}\n"
    "op rows_p12 {\n"    // 8192 rows of 8192 against x stored [K, 12]: GemvMma
    "  dims M = 8192, K = 8192\n"
    "  in  a: f32[M, K]\n"
    "  in  x: f32[K, 12]\n"
    "  out y = matmul(a, x)\n"
    "}\n"
    "op rows_p12_ieee {\n"   // the same in plain f32: no tensor cores, Gemv's warps that carry rows
    "  dims M = 8192, K = 8192\n"
    "  in  a: f32[M, K]\n"
    "  in  x: f32[K, 12]\n"
    "  out y = matmul(a, x, precision=\"ieee\")\n"
    "}\n"
    "op rows_p12_short {\n"   // 300 rows of 512 against x stored [K, 12]: few candidates to compile
    "  dims M = 300, K = 512\n"
    "  in  a: f32[M, K]\n"
    "  in  x: f32[K, 12]\n"
    "  out y = matmul(a, x)\n"
    "}\n"
    "op sweep {\n"        // A read k-strided (aᵀ of a [K, M] tensor): the column sweep
    "  dims M = 4096, K = 2048\n"
    "  in  a: f32[K, M]\n"
    "  in  x: f32[K, 2]\n"
    "  out y = matmul(transpose(a), x)\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "gemv_picks.kiln", op, picks, arch);
}

// The plan's skinny product: Gemv's kernel or GemvMma's.
const kiln::PlannedKernel& skinny_kernel(const kiln::Plan& plan) {
  for (const auto& k : plan.kernels)
    if (k.template_name == "gemv_mma") return k;
  return kernel_of(plan, "gemv");
}

}  // namespace

TEST_CASE("gemv picks: text round trip, parse_pick reads it, malformed text refused") {
  for (const GemvPick p : {GemvPick{1, 1}, GemvPick{8, 16}, GemvPick{2, 1024}, GemvPick{128, 5, true}})
    check_pick_round_trip(p);
  CHECK(GemvPick{8, 4}.text() == "gemv r8 k4");
  CHECK(GemvPick{256, 3, true}.text() == "gemv mma r256 k3");
  for (const char* bad : {"", "gemv", "gemv r8", "gemv r8 k4 x", "gemv r08 k4", "gemv k4 r8", "gemvs r8 k4", "gemv mma",
                          "gemv mma r128", "gemv mma  r128 k1", "gemv mma r128 k1 x", "gemv mmar128 k1"})
    CHECK_FALSE(GemvPick::parse(bad).has_value());
}

TEST_CASE("gemv picks: rows a block and K slices around the rule's, the heuristic's among them") {
  struct Case {
    const char* op;
    std::size_t candidates;
    GemvPick heuristic;
  };
  // rows_many: one slice at 1 row a block (a slice is at least 4 sweeps of the block: 4096), up to
  // 2 at 2-8 rows; rows_long_k: 8 blocks an SM's slices at each of 1-8 rows, half and twice, and
  // at 16-64 rows (2-8 a warp) the rule's and half (twice would pass 512: slices of 4 sweeps of a
  // warp, 512 elements), the heuristic's 8 rows a warp (x stored [K, 4], 16-byte loads of a) at
  // half the rule's 512; rows_odd (8 columns): 1 slice at 1 or 2 rows, 1 or 3 at 4, 3 or 7 at
  // 8-64 (999 / 128: 4 sweeps of a warp of element loads); 1000 rows: the heuristic's 1 row;
  // sweep: the column sweep's 16 slices and half (32 would be under 128 of K each). GemvMma's
  // (f32 in 3xTF32, 16-byte loads, 2 or more columns): at 128 and 256 rows, two blocks an SM's
  // slices but at least K / 896 (kGemvMmaMaxSlice), half and twice, at most K / 256: rows_long_k's
  // 146, 293, 586 at each (6 more); rows_p12: Gemv's 15 (1-32 rows; 64 would keep 96 sums a lane)
  // and GemvMma's 5, 10, 20 at 128 and 256 rows, the heuristic's GemvMma at 128 rows and 10
  // slices (12 columns); in ieee no tensor cores: Gemv's 15, warps that carry 4 rows at half the
  // rule's 5.
  for (const Case& k : {Case{"rows_many", 7, {8, 1}}, Case{"rows_long_k", 24, {64, 256}}, Case{"rows_odd", 12, {1, 1}},
                        Case{"rows_p12", 21, {128, 10, true}}, Case{"rows_p12_ieee", 15, {32, 2}},
                        Case{"sweep", 2, {1, 16}}}) {
    CAPTURE(std::string(k.op));
    const auto base = plan_with(k.op);
    const auto& t = the_tunable(base, k.candidates, k.heuristic);
    CHECK(t.anchor == skinny_kernel(base).anchor);
    CHECK(contains(skinny_kernel(base).reason, "; config: heuristic"));
    const auto& candidates = t.candidates;
    const auto mma = std::count_if(candidates.begin(), candidates.end(),
                                   [](const kiln::Pick& p) { return std::get<GemvPick>(p).mma; });
    CHECK(mma == (std::string(k.op) == "rows_long_k" || std::string(k.op) == "rows_p12" ? 6 : 0));
  }
  CHECK(plan_with("rows_long_k").tunables[0].what == "matmul 64x4x262144 batch 1 (Gemv)");
  // Against a k-contiguous x the warps carry no rows in the rule (they bought nothing on an H100).
  const auto lin = plan_with("lin_m4");
  CHECK(std::get<GemvPick>(lin.tunables.at(0).heuristic).rows <= 8);
  CHECK(kiln::gemv_warp_rows(std::get<kiln::GemmConfig>(kernel_of(lin, "gemv").config)) == 1);
}

TEST_CASE("gemv picks: a stored pick sets the rows, the slices and the grid, an illegal one is ignored with a reason") {
  for (const std::string op : {"rows_many", "rows_long_k", "rows_odd", "rows_p12", "sweep"}) {
    CAPTURE(op);
    const auto base = plan_with(op);
    const auto& t = base.tunables.at(0);
    for (const auto& pick : t.candidates) {
      const auto& r = std::get<GemvPick>(pick);
      CAPTURE(r.text());
      const auto plan = plan_with(op, {{t.anchor, {pick, "tuned: 0.100 ms (test)"}}});
      const auto& k = skinny_kernel(plan);
      const auto& g = std::get<kiln::GemmConfig>(k.config);
      CHECK(g.kind == (r.mma ? kiln::GemmKind::GemvMma : kiln::GemmKind::Gemv));
      CHECK(g.bm == r.rows);
      CHECK(g.split_k == r.splits);
      CHECK(k.grid.x == kiln::launch::ceil_div(kiln::gemv_rows(g), kiln::gemv_block_rows(g)));
      CHECK(k.grid.y == r.splits);
      const bool reduce = std::any_of(plan.kernels.begin(), plan.kernels.end(), [](const kiln::PlannedKernel& x) {
        return x.template_name == "gemm_split_k_reduce";
      });
      CHECK(reduce == (r.splits > 1));
      CHECK(contains(k.reason, "; config: tuned: 0.100 ms (test)"));
    }
  }
  // Warps that carry rows (the rule's here) read x stored [K, 4] as 16-byte blocks; a row a warp
  // reads it by element.
  const auto long_k = plan_with("rows_long_k");
  CHECK(kiln::gemv_warp_rows(std::get<kiln::GemmConfig>(kernel_of(long_k, "gemv").config)) == 8);
  CHECK(kiln::gemv_vec_x(std::get<kiln::GemmConfig>(kernel_of(long_k, "gemv").config)));
  CHECK(contains(kernel_of(long_k, "gemv").reason, "64 rows per block (8 a warp: [Note: rows a warp carries])"));
  const auto single = plan_with("rows_long_k", {{long_k.tunables[0].anchor, {GemvPick{1, 17}, "tuned: 0.100 ms"}}});
  CHECK(kiln::gemv_warp_rows(std::get<kiln::GemmConfig>(kernel_of(single, "gemv").config)) == 1);
  CHECK_FALSE(kiln::gemv_vec_x(std::get<kiln::GemmConfig>(kernel_of(single, "gemv").config)));
  const auto base = plan_with("sweep");
  for (const GemvPick bad : {GemvPick{8, 16}, GemvPick{1, 32}}) {   // rows for a sweep; slices under 128 of K
    CAPTURE(bad.text());
    const auto plan = plan_with("sweep", {{base.tunables[0].anchor, {bad, "tuned: stale"}}});
    CHECK(plan.tunables[0].chosen == base.tunables[0].heuristic);
    CHECK(contains(kernel_of(plan, "gemv").reason,
                   "config: heuristic (the pick " + bad.text() + ", tuned: stale, is not legal for this gemv)"));
  }
}

TEST_CASE("gemv picks: every candidate compiles with NVRTC for sm_90a and sm_80") {
  if (!nvrtc_or_skip()) return;
  // 7 + 12 + 2 candidates a target, the split ones (3, 9, 2) with their reduce kernel; GemvMma's
  // (rows_p12_short: Gemv's 6 at one slice, GemvMma's 1 or 2 slices at 128 and 256 rows)
  CHECK(compile_every_candidate(plan_with, {"rows_many", "rows_odd", "sweep", "rows_p12_short"}) ==
        2u * (7 + 3 + 12 + 9 + 2 * 2 + 6 + 2 + 2 * 2));
}
