// The split norms' tunable picks ([Note: split norm picks] in generator/plan/plan_memory.cpp,
// [Note: tuned picks] in plan.h): a split norm lists 256, 512 or 1024 threads x chunks aimed at 1, 2
// or 4 waves, and for ganged segments a block per row at each block size that holds one (waves 0;
// the heuristic's among them: 512 x 2 for split rows, a block per row of 256 for 512 rows of 6272),
// a stored pick sets both kernels' block and re-sizes the chunks (or gangs) by the rule at its
// numbers, or makes one kernel of a block a row, an illegal one is ignored with a reason, and every
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
    "op ln_long {\n"     // 16 rows of 2^22: split rows
    "  dims B = 16, N = 4194304\n"
    "  in  x: f32[B, N]\n"
    "  let mu = mean(x, axis=1, keepdims=true)\n"
    "  let d = x - mu\n"
    "  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5)\n"
    "}\n"
    "op bn_short {\n"    // a batch norm over 7x7 images: short segments ganged
    "  dims N = 128, C = 512, H = 7, W = 7\n"
    "  in  x: f32[N, C, H, W]\n"
    "  let mu = mean(x, axis=[0, 2, 3], keepdims=true)\n"
    "  let d = x - mu\n"
    "  out y = d * rsqrt(mean(d * d, axis=[0, 2, 3], keepdims=true) + 1e-5)\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "split_norm_picks.kiln", op, picks, arch);
}

}  // namespace

TEST_CASE("split norm picks: text round trip, parse_pick reads it, malformed text refused") {
  for (const kiln::SplitNormPick p : {kiln::SplitNormPick{256, 1}, kiln::SplitNormPick{1024, 4}}) check_pick_round_trip(p);
  CHECK(kiln::SplitNormPick{512, 2}.text() == "split norm t512 w2");
  for (const char* bad : {"", "split norm", "split norm t512", "split t512 w2", "split norm t512 w2 x"})
    CHECK_FALSE(kiln::SplitNormPick::parse(bad).has_value());
}

TEST_CASE("split norm picks: the candidates, a stored pick sizes both kernels, an illegal one is ignored") {
  struct Case {
    const char* op;
    kiln::SplitNormPick heuristic;
    std::size_t candidates;
  };
  for (const Case& k : {Case{"ln_long", {512, 2}, 9u}, Case{"bn_short", {256, 0}, 12u}}) {
    CAPTURE(k.op);
    const auto base = plan_with(k.op);
    REQUIRE(base.tunables.size() == 1);
    const auto& t = base.tunables[0];
    CHECK(t.candidates.size() == k.candidates);
    CHECK(std::count(t.candidates.begin(), t.candidates.end(), t.heuristic) == 1);
    CHECK(std::get<kiln::SplitNormPick>(t.heuristic) == k.heuristic);
    REQUIRE(base.kernels.size() == (k.heuristic.waves == 0 ? 1u : 2u));
    CHECK(base.kernels[0].reason.find("; config: heuristic") != std::string::npos);
    for (const auto& pick : t.candidates) {
      const auto& r = std::get<kiln::SplitNormPick>(pick);
      CAPTURE(r.text());
      const auto plan = plan_with(k.op, {{t.anchor, {pick, "tuned: 0.030 ms (test)"}}});
      const auto& first = std::get<kiln::RownormConfig>(plan.kernels[0].config);
      CHECK(first.threads == r.threads);
      CHECK(plan.kernels[0].block.x == r.threads);
      CHECK(plan.kernels[0].reason.find("; config: tuned: 0.030 ms (test)") != std::string::npos);
      if (r.waves == kiln::launch::kRowNormWholeWaves) {   // a block a row: one kernel, the row whole
        REQUIRE(plan.kernels.size() == 1);
        CHECK(first.variant == kiln::RownormVariant::kSplitWhole);
        CHECK((first.gang == first.lead && first.splits == 1 && first.chunk == first.len));
        CHECK(plan.kernels[0].grid.x == first.outer);
        CHECK(kiln::launch::rownorm_split_whole_fits(first.lead, first.len, r.threads));
        continue;
      }
      REQUIRE(plan.kernels.size() == 2);
      const auto& stats = first;
      const auto& apply = std::get<kiln::RownormConfig>(plan.kernels[1].config);
      CHECK(stats.variant == kiln::RownormVariant::kSplitStats);
      CHECK(apply.variant == kiln::RownormVariant::kSplitApply);
      CHECK(apply.threads == r.threads);
      CHECK(plan.kernels[1].block.x == r.threads);
      CHECK((stats.gang > 1) == (k.candidates > 9));   // ganged: the short segments' op
      // The chunks (or gangs) by the rule at the pick's numbers, the same in both passes.
      CHECK(stats.gang == kiln::launch::rownorm_split_gang(stats.lead, stats.outer, stats.len, 132, r.threads, r.waves));
      CHECK(stats.chunk == kiln::launch::rownorm_split_chunk(stats.lead * stats.outer, stats.len, 4, 132, r.threads,
                                                            r.waves));
      CHECK(apply.gang == stats.gang);
      CHECK(apply.chunk == stats.chunk);
      CHECK(apply.splits == stats.splits);
    }
    const auto plan = plan_with(k.op, {{t.anchor, {kiln::SplitNormPick{128, 2}, "tuned: stale"}}});
    CHECK(plan.tunables[0].chosen == t.heuristic);
    CHECK(plan.kernels[0].reason.find("config: heuristic (the pick split norm t128 w2, tuned: stale, is not legal for "
                                      "this split norm)") != std::string::npos);
  }
  CHECK(plan_with("bn_short").tunables[0].what == "centered norm: 512 rows of 128 segments of 49");
  // A block a row is no pick for split segments (ln_long's rows of 4M).
  const int anchor = plan_with("ln_long").tunables[0].anchor;
  const auto plan = plan_with("ln_long", {{anchor, {kiln::SplitNormPick{1024, 0}, "tuned: stale"}}});
  CHECK(plan.kernels.size() == 2);
  CHECK(plan.kernels[0].reason.find("is not legal for this split norm") != std::string::npos);
}

TEST_CASE("split norm picks: every candidate compiles with NVRTC for sm_90a and sm_80") {
  if (!nvrtc_or_skip()) return;
  // Two archs x (two ops x 9 split picks x 2 kernels + bn_short's 3 blocks a row x 1 kernel).
  CHECK(compile_every_candidate(plan_with, {"ln_long", "bn_short"}) == 2u * (2 * 9 * 2 + 3));
}
