// The pools' tunable picks ([Note: pool picks] in generator/plan/plan_pool.cpp, [Note: tuned picks]
// in plan.h): a pool over static pooled axes lists 3 block sizes x the runs along w the template
// can take (one output, 4 by element, a vector run) x 1 or 4 rows along h for a max pool (the
// heuristic's among them), a stored pick sets the kernel's config and block, an illegal one is
// ignored with a reason, dyn planes keep their picks, dyn pooled axes offer none, and every
// candidate compiles through NVRTC for sm_90a and sm_80.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "memory_plan_util.h"

namespace {

using namespace memory_plan_test;

const char* kSpec =
    "op max_vec {\n"     // vector runs of 4 (aligned rows of 64), windows overlapping along h
    "  dims N = 8, C = 16, H = 64, W = 64\n"
    "  in  x: f32[N, C, H, W]\n"
    "  out y = max_pool2d(x, 3, stride=2, padding=1)\n"
    "}\n"
    "op max_rows {\n"    // KernelBench 42's window: k4 s1, 4 rows along h pay
    "  dims N = 4, C = 8, H = 64, W = 64\n"
    "  in  x: f32[N, C, H, W]\n"
    "  out y = max_pool2d(x, 4, stride=1, padding=1)\n"
    "}\n"
    "op avg3d {\n"       // an average: rows along h never (a sum's grouping would change its rounding); 512 threads (pool_threads)
    "  dims N = 2, C = 4, D = 16, H = 32, W = 33\n"
    "  in  x: f32[N, C, D, H, W]\n"
    "  out y = avg_pool3d(x, 3, stride=1, padding=1)\n"
    "}\n"
    "op wide {\n"        // a window of 100 along w: its columns never fit the registers, one output a step
    "  dims N = 4, C = 8, L = 4096\n"
    "  in  x: f32[N, C, L]\n"
    "  out y = max_pool1d(x, 100, stride=3)\n"
    "}\n"
    "op dyn_planes {\n"  // dyn planes: picks as for static ones
    "  dims dyn N = 8, C = 16, H = 64, W = 64\n"
    "  in  x: f32[N, C, H, W]\n"
    "  out y = max_pool2d(x, 3, stride=2, padding=1)\n"
    "}\n"
    "op dyn_axes {\n"    // a dyn pooled axis: no picks
    "  dims N = 8, C = 16, dyn H = 64, W = 64\n"
    "  in  x: f32[N, C, H, W]\n"
    "  out y = max_pool2d(x, 3, stride=2, padding=1)\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "pool_picks.kiln", op, picks, arch);
}

const kiln::PlannedKernel& pool_kernel(const kiln::Plan& plan) { return kernel_of(plan, "pool"); }

}  // namespace

TEST_CASE("pool picks: text round trip, parse_pick reads it, malformed text refused") {
  for (const kiln::PoolPick p : {kiln::PoolPick{128, 1, 1, 1}, kiln::PoolPick{512, 4, 4, 4}, kiln::PoolPick{256, 8, 8, 1}})
    check_pick_round_trip(p);
  CHECK(kiln::PoolPick{256, 4, 1, 4}.text() == "pool t256 w4 v1 h4");
  for (const char* bad : {"", "pool", "pool t256 w4 v4", "pool t256 w4 v4 h1 x", "pool t256 w04 v4 h1", "pools t256 w4 v4 h1"})
    CHECK_FALSE(kiln::PoolPick::parse(bad).has_value());
}

TEST_CASE("pool picks: the candidates are what the template can take, the heuristic's among them") {
  struct Case {
    const char* op;
    std::size_t candidates;
    kiln::PoolPick heuristic;
  };
  for (const Case& k : {Case{"max_vec", 18, {256, 4, 4, 1}}, Case{"max_rows", 18, {256, 4, 4, 4}},
                        Case{"avg3d", 6, {512, 4, 1, 1}}, Case{"wide", 3, {256, 1, 1, 1}},
                        Case{"dyn_planes", 18, {256, 4, 4, 1}}}) {
    CAPTURE(k.op);
    const auto base = plan_with(k.op);
    REQUIRE(base.tunables.size() == 1);
    const auto& t = base.tunables[0];
    CHECK(t.anchor == pool_kernel(base).anchor);
    CHECK(t.candidates.size() == k.candidates);
    CHECK(std::count(t.candidates.begin(), t.candidates.end(), t.heuristic) == 1);
    CHECK(std::get<kiln::PoolPick>(t.heuristic) == k.heuristic);
    CHECK(pool_kernel(base).reason.find("; config: heuristic") != std::string::npos);
    for (const auto& pick : t.candidates) {
      const auto& r = std::get<kiln::PoolPick>(pick);
      CHECK((r.vec == 1 || r.run == r.vec));
      const bool max_pool = std::string(k.op) != "avg3d";
      CHECK((r.rows == 1 || max_pool));
    }
  }
  CHECK(plan_with("max_vec").tunables[0].what == "max_pool2d: 3x3 window over 128 planes of 64x64");
  CHECK(plan_with("dyn_axes").tunables.empty());
  CHECK(pool_kernel(plan_with("dyn_axes")).reason.find("config:") == std::string::npos);
}

TEST_CASE("pool picks: a stored pick sets the kernel, an illegal one is ignored with a reason") {
  for (const char* op : {"max_vec", "avg3d"}) {
    CAPTURE(op);
    const auto base = plan_with(op);
    const auto& t = base.tunables.at(0);
    for (const auto& pick : t.candidates) {
      const auto& r = std::get<kiln::PoolPick>(pick);
      CAPTURE(r.text());
      const auto plan = plan_with(op, {{t.anchor, {pick, "tuned: 0.030 ms (test)"}}});
      const auto& k = pool_kernel(plan);
      const auto& c = std::get<kiln::PoolConfig>(k.config);
      CHECK(c.threads == r.threads);
      CHECK(c.run == r.run);
      CHECK(c.vec == r.vec);
      CHECK(c.rows == r.rows);
      CHECK(c.wide_stores == kiln::pool_wide_stores(c.max, true, c.run));
      CHECK(k.block.x == r.threads);
      CHECK(k.reason.find("; config: tuned: 0.030 ms (test)") != std::string::npos);
    }
  }
  const kiln::PoolPick rows_on_average{256, 4, 1, 4};
  const auto avg = plan_with("avg3d");
  const auto plan = plan_with("avg3d", {{avg.tunables[0].anchor, {rows_on_average, "tuned: stale"}}});
  CHECK(plan.tunables[0].chosen == avg.tunables[0].heuristic);
  CHECK(pool_kernel(plan).reason.find("config: heuristic (the pick pool t256 w4 v1 h4, tuned: stale, is not legal "
                                      "for this pool)") != std::string::npos);
}

TEST_CASE("pool picks: every candidate compiles with NVRTC for sm_90a and sm_80") {
  if (!nvrtc_or_skip()) return;
  CHECK(compile_every_candidate(plan_with, {"max_rows", "avg3d"}) >= 2u * (18 + 6));
}
