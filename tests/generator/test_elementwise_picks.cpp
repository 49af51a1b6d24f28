// The elementwise family's tunable picks ([Note: elementwise picks] in generator/plan/plan.cpp,
// [Note: tuned picks] in plan.h): the candidate space in the plan (blocks of 128 to 1024 threads,
// each with a persistent grid where it caps the grid), a pick in the Target overriding the
// heuristic and saying so, an illegal pick ignored with a reason, and every candidate compiling
// through NVRTC for sm_90a and sm_80 (the unit static_asserts the planner's launch).
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
    "op big {\n"                   // 2^26 elements: every grid is past the persistent cap
    "  dims R = 4096, L = 16384\n"
    "  in  a: f32[R, L]\n"
    "  in  b: f32[R, L]\n"
    "  out y = relu(a + b)\n"
    "}\n"
    "op broadcast {\n"             // a 2^22-element operand re-read every 2^22 outputs: persistent
    "  dims N = 16, C = 64, H = 256, W = 256\n"
    "  in  x: f32[N, C, H, W]\n"
    "  in  w: f32[C, H, W]\n"
    "  out y = x * w\n"
    "}\n"
    "op small {\n"                 // 1000 elements: one block, no persistent grid to pick
    "  dims N = 1000\n"
    "  in  x: f32[N]\n"
    "  out y = x * 2\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "ew_picks.kiln", op, picks, arch);
}

const kiln::ElementwisePick& ew_pick(const kiln::Pick& p) { return std::get<kiln::ElementwisePick>(p); }

}  // namespace

TEST_CASE("elementwise picks: text round trip, parse_pick reads every family, malformed text refused") {
  for (const kiln::ElementwisePick p : {kiln::ElementwisePick{512, false}, kiln::ElementwisePick{128, true}})
    check_pick_round_trip(p);
  CHECK(kiln::ElementwisePick{256, true}.text() == "ew t256 persistent");
  CHECK(kiln::ElementwisePick{1024, false}.text() == "ew t1024");
  for (const char* bad : {"", "ew", "ew t", "ew t256 persistent x", "ew t256 persist", "ew t0256", "t256"})
    CHECK_FALSE(kiln::ElementwisePick::parse(bad).has_value());
  CHECK(std::holds_alternative<kiln::RownormPick>(*kiln::parse_pick("rows t256 g32 i8")));
}

TEST_CASE("elementwise picks: the plan lists the candidates, the heuristic's among them and in the config") {
  struct Want {
    const char* op;
    std::size_t candidates;
    bool heuristic_persistent;
  };
  for (const Want w : {Want{"big", 8, false}, Want{"broadcast", 8, true}, Want{"small", 4, false}}) {
    CAPTURE(w.op);
    const auto plan = plan_with(w.op);
    REQUIRE(plan.kernels.size() == 1);
    REQUIRE(plan.tunables.size() == 1);
    const auto& t = plan.tunables[0];
    const auto& k = plan.kernels[0];
    CHECK(t.anchor == k.stores[0].node);   // no anchor: keyed by the first stored node
    CHECK(t.chosen == t.heuristic);
    CHECK(t.origin == "heuristic");
    CHECK(std::count(t.candidates.begin(), t.candidates.end(), t.heuristic) == 1);
    CHECK(t.candidates.size() == w.candidates);
    CHECK(ew_pick(t.heuristic) == kiln::ElementwisePick{256, w.heuristic_persistent});
    const auto& c = std::get<kiln::ElementwiseConfig>(k.config);
    CHECK(kiln::ElementwisePick{c.threads, c.persistent} == ew_pick(t.heuristic));
    CHECK(k.reason.find("; config: heuristic") != std::string::npos);
  }
  CHECK(plan_with("big").tunables[0].what == "elementwise: 67108864 elements");
}

TEST_CASE("elementwise picks: a legal pick overrides the heuristic, an illegal one is ignored with a reason") {
  const auto base = plan_with("broadcast");
  const auto& t = base.tunables[0];
  for (const auto& pick : t.candidates) {
    const auto& e = ew_pick(pick);
    CAPTURE(e.text());
    const auto plan = plan_with("broadcast", {{t.anchor, {pick, "tuned: 0.200 ms (test)"}}});
    const auto& k = plan.kernels[0];
    const auto& c = std::get<kiln::ElementwiseConfig>(k.config);
    CHECK(kiln::ElementwisePick{c.threads, c.persistent} == e);
    CHECK(k.block.x == e.threads);
    CHECK(k.grid.x == kiln::elementwise_geometry(c, 16LL * 64 * 256 * 256, 256, 132).grid.x);
    CHECK(plan.tunables[0].chosen == pick);
    CHECK(k.reason.find("; config: tuned: 0.200 ms (test)") != std::string::npos);
    CHECK((k.reason.find("persistent grid") != std::string::npos) == e.persistent);
  }
  // A block size outside the space, and the persistent grid where it caps nothing, are not legal.
  for (const auto& [op, bad] : {std::pair{"broadcast", kiln::ElementwisePick{64, false}},
                                std::pair{"small", kiln::ElementwisePick{128, true}}}) {
    CAPTURE(bad.text());
    const auto anchor = plan_with(op).tunables[0].anchor;
    const auto plan = plan_with(op, {{anchor, {bad, "tuned: stale"}}});
    CHECK(plan.tunables[0].chosen == plan.tunables[0].heuristic);
    CHECK(plan.kernels[0].reason.find("config: heuristic (the pick " + bad.text() +
                                      ", tuned: stale, is not legal for this elementwise kernel)") != std::string::npos);
  }
}

TEST_CASE("elementwise picks: every candidate of two ops compiles with NVRTC for sm_90a and sm_80") {
  if (!nvrtc_or_skip()) return;
  CHECK(compile_every_candidate(plan_with, {"big", "small"}) == 2u * (8 + 4));   // one kernel a plan: 8 and 4 candidates, two arches
}
