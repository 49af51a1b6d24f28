// The row norms' tunable picks ([Note: row norm picks] in generator/plan/plan_memory.cpp, [Note:
// tuned picks] in plan.h): the candidate space in the plan (a warp per row where the row fits a
// warp's registers, a block per row of 256 to 1024 threads), a pick in the Target overriding the
// heuristic and saying so, an illegal pick ignored with a reason, picks per size class of dyn
// rows, none for strided norms, and every candidate compiling through NVRTC for sm_90a and sm_80
// (the template static_asserts the planner's geometry).
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
    "op sm_short {\n"              // rows of 1000: a warp per row fits, and plenty of rows
    "  dims R = 8192, L = 1000\n"
    "  in  x: f32[R, L]\n"
    "  out y = softmax(x, axis=1)\n"
    "}\n"
    "op ln_long {\n"               // a layer norm written out over rows of 8192: a block per row
    "  dims R = 4096, L = 8192\n"
    "  in  x: f32[R, L]\n"
    "  in  g: f32[L]\n"
    "  in  b: f32[L]\n"
    "  let m = mean(x, axis=1, keepdims=true)\n"
    "  let d = x - m\n"
    "  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5) * g + b\n"
    "}\n"
    "op lsm_half {\n"              // f16 rows of 20000: past a block's registers at 256 threads
    "  dims R = 512, L = 20000\n"
    "  in  x: f16[R, L]\n"
    "  out y = log_softmax(x, axis=1)\n"
    "}\n"
    "op sm_dyn {\n"                // dyn rows: tuned per size class
    "  dims dyn R = 4096, L = 1000\n"
    "  in  x: f32[R, L]\n"
    "  out y = softmax(x, axis=1)\n"
    "}\n"
    "op sm_strided {\n"            // the strided variant: no picks
    "  dims A = 64, L = 100, C = 4096\n"
    "  in  x: f32[A, L, C]\n"
    "  out y = softmax(x, axis=1)\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "norm_picks.kiln", op, picks, arch);
}

const kiln::PlannedKernel& norm_kernel(const kiln::Plan& plan) { return kernel_of(plan, "rownorm"); }

const kiln::RownormPick& rows_pick(const kiln::Pick& p) { return std::get<kiln::RownormPick>(p); }

}  // namespace

TEST_CASE("row norm picks: text round trip, either family's text parses, malformed text refused") {
  const kiln::RownormPick p{512, 32, 8};
  CHECK(p.text() == "rows t512 g32 i8");
  REQUIRE(kiln::RownormPick::parse(p.text()).has_value());
  CHECK(*kiln::RownormPick::parse(p.text()) == p);
  for (const char* bad : {"", "rows t512 g32", "rows t512 g32 i8 x", "rows t0512 g32 i8", "t512 g32 i8"})
    CHECK_FALSE(kiln::RownormPick::parse(bad).has_value());
  const auto any = kiln::parse_pick("rows t256 g256 i16");
  REQUIRE(any.has_value());
  CHECK(std::holds_alternative<kiln::RownormPick>(*any));
  const auto tma = kiln::parse_pick("128x256x64 c1 st4 k1 cl2 g8");
  REQUIRE(tma.has_value());
  CHECK(std::holds_alternative<kiln::TmaPick>(*tma));
  CHECK(kiln::pick_text(*tma) == "128x256x64 c1 st4 k1 cl2 g8");
  CHECK_FALSE(kiln::parse_pick("rows 128x256x64").has_value());
}

TEST_CASE("row norm picks: the plan lists the candidates, the heuristic's among them and in the config") {
  struct Want {
    const char* op;
    bool warp_candidates;   // the row fits a warp's registers
    int heuristic_group;    // 32: a warp per row
  };
  for (const Want w : {Want{"sm_short", true, 32}, Want{"ln_long", false, 512}, Want{"lsm_half", false, 1024}}) {
    CAPTURE(w.op);
    const auto plan = plan_with(w.op);
    REQUIRE(plan.tunables.size() == 1);
    const auto& t = plan.tunables[0];
    CHECK(t.chosen == t.heuristic);
    CHECK(t.origin == "heuristic");
    CHECK(std::count(t.candidates.begin(), t.candidates.end(), t.heuristic) == 1);
    CHECK(t.candidates.size() == (w.warp_candidates ? 6u : 3u));
    CHECK(rows_pick(t.heuristic).group == w.heuristic_group);
    const auto& k = norm_kernel(plan);
    CHECK(t.anchor == k.anchor);
    CHECK(k.reason.find("; config: heuristic") != std::string::npos);
    const auto& c = std::get<kiln::RownormConfig>(k.config);
    CHECK(kiln::RownormPick{c.threads, c.group, c.items} == rows_pick(t.heuristic));
    for (const auto& cand : t.candidates) {
      const auto& r = rows_pick(cand);
      CAPTURE(r.text());
      CHECK((r.group == 32 || r.group == r.threads));
      CHECK(r.items >= 1);
      CHECK(r.items <= (r.group == 32 ? 32 : kiln::launch::kRowNormMaxItems));   // (a warp's: 32 lanes x 32)
    }
  }
  // The layer norm's what names it a norm; the softmax's its op.
  CHECK(plan_with("ln_long").tunables[0].what == "norm: 4096 rows of 8192");
  CHECK(plan_with("sm_short").tunables[0].what == "softmax: 8192 rows of 1000");
  // Dyn rows (the generic default's): tuned per size class of the rows, which `what` names. The
  // strided variant has none.
  const auto dyn = plan_with("sm_dyn");
  REQUIRE(dyn.tunables.size() == 1);
  CHECK(dyn.tunables[0].what.find("softmax: R (dyn) rows (R in ") == 0);
  CHECK(dyn.tunables[0].candidates.size() == 6u);
  CHECK(plan_with("sm_strided").tunables.empty());
}

TEST_CASE("row norm picks: a legal pick overrides the heuristic, an illegal one is ignored with a reason") {
  const auto base = plan_with("sm_short");
  const auto& t = base.tunables[0];
  for (const auto& pick : t.candidates) {
    const auto& r = rows_pick(pick);
    CAPTURE(r.text());
    const auto plan = plan_with("sm_short", {{t.anchor, {pick, "tuned: 0.010 ms (test)"}}});
    const auto& k = norm_kernel(plan);
    const auto& c = std::get<kiln::RownormConfig>(k.config);
    CHECK(kiln::RownormPick{c.threads, c.group, c.items} == r);
    CHECK(c.variant == (r.group == 32 ? kiln::RownormVariant::kWarpRows : kiln::RownormVariant::kBlockRows));
    CHECK(k.block.x == r.threads);
    CHECK(plan.tunables[0].chosen == pick);
    CHECK(k.reason.find("; config: tuned: 0.010 ms (test)") != std::string::npos);
  }
  kiln::RownormPick bad = rows_pick(t.heuristic);
  bad.items = 3;   // not a candidate's
  const auto plan = plan_with("sm_short", {{t.anchor, {bad, "tuned: stale"}}});
  CHECK(plan.tunables[0].chosen == t.heuristic);
  CHECK(norm_kernel(plan).reason.find("config: heuristic (the pick " + bad.text() +
                                      ", tuned: stale, is not legal for this row norm)") != std::string::npos);
  // A TMA pick stored for the norm's anchor (another family's) is not a candidate either.
  const auto other = plan_with("sm_short", {{t.anchor, {kiln::TmaPick{128, 128, 32, 1, 4, 1, 1, 8}, "tuned: x"}}});
  CHECK(other.tunables[0].chosen == t.heuristic);
  CHECK(std::get<kiln::RownormConfig>(norm_kernel(other).config).to_string() ==
        std::get<kiln::RownormConfig>(norm_kernel(base).config).to_string());
  CHECK(norm_kernel(other).reason.find("is not legal for this row norm") != std::string::npos);
}

TEST_CASE("row norm picks: every candidate of three norms compiles with NVRTC for sm_90a and sm_80") {
  if (!nvrtc_or_skip()) return;
  CHECK(compile_every_candidate(plan_with, {"sm_short", "ln_long", "lsm_half"}) == 2u * (6 + 3 + 3));   // one kernel a plan: 6, 3 and 3 candidates, two arches
}
