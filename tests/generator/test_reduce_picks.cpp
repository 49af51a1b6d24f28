// The contiguous-row reductions' tunable picks ([Note: reduction picks] in
// generator/plan/plan_memory.cpp, [Note: tuned picks] in plan.h): the candidate space in the plan
// (block size and loads in flight within the heuristic's variant), a pick in the Target overriding
// the heuristic (a block per row re-split by the rule at the pick's numbers), an illegal pick
// ignored with a reason, none for a dyn length's block variant nor for strided reductions, and
// every candidate compiling through NVRTC for sm_90a and sm_80.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "memory_plan_util.h"
#include "runtime/nvrtc.h"

namespace {

using namespace memory_plan_test;

const char* kSpec =
    "op warp_rows {\n"             // 8192 rows of 1000: a warp per row
    "  dims R = 8192, L = 1000\n"
    "  in  x: f32[R, L]\n"
    "  out y = sum(x, axis=1)\n"
    "}\n"
    "op block_rows {\n"            // 16 rows of 2^20: a block per row, split along it
    "  dims R = 16, L = 1048576\n"
    "  in  x: f32[R, L]\n"
    "  out y = max(x, axis=1)\n"
    "}\n"
    "op block_dyn_len {\n"         // a dyn length of a block per row: no picks
    "  dims R = 16, dyn L = 1048576\n"
    "  in  x: f32[R, L]\n"
    "  out y = sum(x, axis=1)\n"
    "}\n"
    "op strided {\n"               // reduce_outer: no picks yet
    "  dims R = 4096, L = 4096\n"
    "  in  x: f32[R, L]\n"
    "  out y = sum(x, axis=0)\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "reduce_picks.kiln", op, picks, arch);
}

const kiln::PlannedKernel& reduce_kernel(const kiln::Plan& plan) {
  for (const auto& k : plan.kernels)
    if (k.template_name == "reduce_inner") return k;
  FAIL("no reduce_inner kernel in the plan");
  return plan.kernels.front();
}

const kiln::ReducePick& red_pick(const kiln::Pick& p) { return std::get<kiln::ReducePick>(p); }

}  // namespace

TEST_CASE("reduction picks: text round trip, parse_pick reads it, malformed text refused") {
  for (const kiln::ReducePick p : {kiln::ReducePick{false, 128, 8}, kiln::ReducePick{true, 1024, 2}}) {
    CAPTURE(p.text());
    REQUIRE(kiln::ReducePick::parse(p.text()).has_value());
    CHECK(*kiln::ReducePick::parse(p.text()) == p);
    const auto any = kiln::parse_pick(p.text());
    REQUIRE(any.has_value());
    CHECK(std::holds_alternative<kiln::ReducePick>(*any));
  }
  CHECK(kiln::ReducePick{true, 512, 4}.text() == "reduce block t512 u4");
  for (const char* bad : {"", "reduce", "reduce warp t256", "reduce rows t256 u4", "reduce warp t256 u4 x",
                          "reduce warp t0256 u4", "warp t256 u4"})
    CHECK_FALSE(kiln::ReducePick::parse(bad).has_value());
}

TEST_CASE("reduction picks: the plan lists the candidates within the heuristic's variant") {
  struct Want {
    const char* op;
    bool block;
    int threads;
  };
  for (const Want w : {Want{"warp_rows", false, 256}, Want{"block_rows", true, 512}}) {
    CAPTURE(w.op);
    const auto plan = plan_with(w.op);
    REQUIRE(plan.tunables.size() == 1);
    const auto& t = plan.tunables[0];
    const auto& k = reduce_kernel(plan);
    CHECK(t.anchor == k.anchor);
    CHECK(t.chosen == t.heuristic);
    CHECK(t.candidates.size() == 9u);
    CHECK(std::count(t.candidates.begin(), t.candidates.end(), t.heuristic) == 1);
    CHECK(red_pick(t.heuristic) == kiln::ReducePick{w.block, w.threads, 4});
    for (const auto& c : t.candidates) CHECK(red_pick(c).block == w.block);
    const auto& c = std::get<kiln::ReduceConfig>(k.config);
    CHECK(kiln::ReducePick{c.variant == kiln::ReduceVariant::kInnerBlock, c.threads, c.unroll} == red_pick(t.heuristic));
    CHECK(k.reason.find("; config: heuristic") != std::string::npos);
  }
  CHECK(plan_with("warp_rows").tunables[0].what == "sum: 8192 rows of 1000");
  CHECK(plan_with("block_dyn_len").tunables.empty());
  CHECK(plan_with("strided").tunables.empty());
}

TEST_CASE("reduction picks: a legal pick overrides the heuristic and re-splits a block per row") {
  const auto base = plan_with("block_rows");
  const auto& t = base.tunables[0];
  const auto& heuristic = std::get<kiln::ReduceConfig>(reduce_kernel(base).config);
  REQUIRE(heuristic.splits > 1);
  for (const auto& pick : t.candidates) {
    const auto& r = red_pick(pick);
    CAPTURE(r.text());
    const auto plan = plan_with("block_rows", {{t.anchor, {pick, "tuned: 0.050 ms (test)"}}});
    const auto& k = reduce_kernel(plan);
    const auto& c = std::get<kiln::ReduceConfig>(k.config);
    CHECK(c.threads == r.threads);
    CHECK(c.unroll == r.unroll);
    CHECK(k.block.x == r.threads);
    // The split is the rule's at the pick's numbers: each split at least one unrolled sweep.
    const auto want = kiln::launch::reduce_inner_split(16, 1048576, r.threads, r.unroll, 4, 132);
    CHECK(c.splits == want.splits);
    CHECK(c.chunk == want.chunk);
    CHECK(k.grid.y == want.splits);
    CHECK(plan.kernels.size() == (want.splits > 1 ? 2u : 1u));   // reduce_finish after a split
    CHECK(k.reason.find("; config: tuned: 0.050 ms (test)") != std::string::npos);
  }
  // Another variant's pick, or numbers outside the space, are not legal.
  for (const kiln::ReducePick bad : {kiln::ReducePick{false, 256, 4}, kiln::ReducePick{true, 512, 3}}) {
    CAPTURE(bad.text());
    const auto plan = plan_with("block_rows", {{t.anchor, {bad, "tuned: stale"}}});
    CHECK(plan.tunables[0].chosen == t.heuristic);
    CHECK(reduce_kernel(plan).reason.find("config: heuristic (the pick " + bad.text() +
                                          ", tuned: stale, is not legal for this reduction)") != std::string::npos);
  }
}

TEST_CASE("reduction picks: every candidate of both variants compiles with NVRTC for sm_90a and sm_80") {
  if (!nvrtc_or_skip()) return;
  CHECK(compile_every_candidate(plan_with, {"warp_rows", "block_rows"}) >= 2u * (9 + 9));   // 9 and 9 candidates, two arches; a split adds its reduce_finish
}
