// The TMA engine's tunable picks ([Note: tuned picks] in generator/plan/plan.h): the candidate
// space in the plan, a pick in the Target overriding the heuristic (and saying so in the reason),
// an illegal pick ignored with a reason, and every candidate of four products compiling through
// NVRTC for sm_90a (the templates static_assert the planner's geometry, so an illegal pick that
// slipped into the list would fail here, not on the GPU).
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
    "op mm16 {\n"
    "  dims M = 1000, N = 1000, K = 1000\n"
    "  in  a: bf16[M, K]\n"
    "  in  b: bf16[K, N]\n"
    "  out c = matmul(a, b)\n"
    "}\n"
    "op long_k {\n"
    "  dims M = 512, N = 512, K = 65536\n"
    "  in  a: f32[M, K]\n"
    "  in  b: f32[K, N]\n"
    "  out c = relu(matmul(a, b, precision=\"tf32\"))\n"
    "}\n"
    "op mm_x3 {\n"
    "  dims M = 2048, N = 2048, K = 1024\n"
    "  in  a: f32[M, K]\n"
    "  in  b: f32[N, K]\n"
    "  out c = matmul(a, transpose(b))\n"
    "}\n"
    "op mm_tf32_regs {\n"
    "  dims M = 2048, N = 1536, K = 1024\n"
    "  in  a: f32[K, M]\n"
    "  in  b: f32[N, K]\n"
    "  out c = matmul(transpose(a), transpose(b), precision=\"tf32\")\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "picks.kiln", op, picks, arch);
}

// A TMA product's pick, and its list of them (Plan::Tunable holds either family's: plan.h).
const kiln::TmaPick& tma(const kiln::Pick& p) { return std::get<kiln::TmaPick>(p); }
std::vector<kiln::TmaPick> tma_list(const std::vector<kiln::Pick>& picks) {
  std::vector<kiln::TmaPick> out;
  for (const auto& p : picks) out.push_back(tma(p));
  return out;
}

const kiln::PlannedKernel& engine(const kiln::Plan& plan) { return kernel_of(plan, "gemm_tma"); }

}  // namespace

TEST_CASE("TMA picks: text round trip, malformed text refused") {
  const kiln::TmaPick p{128, 256, 64, 1, 4, 1, 2, 8};
  CHECK(p.text() == "128x256x64 c1 st4 k1 cl2 g8");
  REQUIRE(kiln::TmaPick::parse(p.text()).has_value());
  CHECK(*kiln::TmaPick::parse(p.text()) == p);
  for (const char* bad : {"", "128x256x64", "128x256x64 c1 st4 k1 cl2", "128x256x64 c1 st4 k1 cl2 g8 x",
                          "128x256x64 c1 st4 k1 cl2 g08", "a28x256x64 c1 st4 k1 cl2 g8"})
    CHECK_FALSE(kiln::TmaPick::parse(bad).has_value());
}

TEST_CASE("TMA picks: the plan lists the candidates, the heuristic's among them") {
  for (const char* op : {"mm16", "long_k", "mm_x3"}) {
    CAPTURE(op);
    const auto plan = plan_with(op);
    REQUIRE(plan.tunables.size() == 1);
    const auto& t = plan.tunables[0];
    CHECK(t.chosen == t.heuristic);
    CHECK(t.origin == "heuristic");
    CHECK(std::count(t.candidates.begin(), t.candidates.end(), t.heuristic) == 1);
    CHECK(t.candidates.size() >= (std::string(op) == "mm_x3" ? 2u : 4u));
    CHECK(engine(plan).reason.find("; config: heuristic") != std::string::npos);
    const auto& g = std::get<kiln::GemmConfig>(engine(plan).config);
    CHECK(kiln::TmaPick{g.bm, g.bn, g.bk, g.consumers_n, g.stages, g.split_k, g.cluster_m, g.group_m} == tma(t.heuristic));
    for (const auto& c : tma_list(t.candidates)) {
      CAPTURE(c.text());
      CHECK(c.stages >= 2);
      CHECK(c.stages <= 8);
      CHECK((c.cluster_m == 1 || c.split_k == 1));
    }
  }
  // 16-bit operands: clusters and two-consumer tiles are in the space; f32: neither.
  const auto c16 = tma_list(plan_with("mm16").tunables[0].candidates);
  CHECK(std::any_of(c16.begin(), c16.end(), [](const kiln::TmaPick& p) { return p.cluster_m == 2; }));
  CHECK(std::any_of(c16.begin(), c16.end(), [](const kiln::TmaPick& p) { return p.consumers_n == 2; }));
  const auto c32 = tma_list(plan_with("long_k").tunables[0].candidates);
  CHECK(std::none_of(c32.begin(), c32.end(), [](const kiln::TmaPick& p) { return p.cluster_m == 2 || p.consumers_n == 2; }));
  CHECK(std::any_of(c32.begin(), c32.end(), [](const kiln::TmaPick& p) { return p.split_k > 1; }));
  // 3xTF32 keeps A's hi and lo parts in registers: one consumer of at most 128 columns, so the
  // 128x256 tile (which shared memory would allow at two stages) is not a candidate, and a
  // stored pick of it is ignored.
  const auto x3 = plan_with("mm_x3");
  const auto cx3 = tma_list(x3.tunables[0].candidates);
  CHECK(std::all_of(cx3.begin(), cx3.end(), [](const kiln::TmaPick& p) { return kiln::tma_tile_fits_x3(p.bn, p.consumers_n); }));
  CHECK(std::any_of(cx3.begin(), cx3.end(), [](const kiln::TmaPick& p) { return p.bm == 128 && p.bn == 128; }));
  kiln::TmaPick wide = tma(x3.tunables[0].heuristic);
  wide.bn = 256, wide.stages = 2;
  const auto refused = plan_with("mm_x3", {{x3.tunables[0].anchor, {wide, "tuned: old"}}});
  CHECK(refused.tunables[0].chosen == x3.tunables[0].heuristic);
  CHECK(engine(refused).reason.find("is not legal for this product") != std::string::npos);
}

TEST_CASE("TMA picks: a legal pick overrides the heuristic, an illegal one is ignored with a reason") {
  const auto base = plan_with("mm16");
  const auto& t = base.tunables[0];
  for (const auto& pick : tma_list(t.candidates)) {
    CAPTURE(pick.text());
    const auto plan = plan_with("mm16", {{t.anchor, {pick, "tuned: 0.010 ms (test)"}}});
    const auto& g = std::get<kiln::GemmConfig>(engine(plan).config);
    CHECK(kiln::TmaPick{g.bm, g.bn, g.bk, g.consumers_n, g.stages, g.split_k, g.cluster_m, g.group_m} == pick);
    CHECK(tma(plan.tunables[0].chosen) == pick);
    CHECK(engine(plan).reason.find("; config: tuned: 0.010 ms (test)") != std::string::npos);
    CHECK(engine(plan).cluster == pick.cluster_m);
    // A split pick adds the reduce kernel; one slice has none.
    const bool reduce = std::any_of(plan.kernels.begin(), plan.kernels.end(),
                                    [](const kiln::PlannedKernel& k) { return k.template_name == "gemm_split_k_reduce"; });
    CHECK(reduce == (pick.split_k > 1));
  }
  kiln::TmaPick bad = tma(t.heuristic);
  bad.stages = 9;
  const auto plan = plan_with("mm16", {{t.anchor, {bad, "tuned: stale"}}});
  CHECK(plan.tunables[0].chosen == t.heuristic);
  CHECK(engine(plan).reason.find("config: heuristic (the pick " + bad.text() + ", tuned: stale, is not legal") !=
        std::string::npos);
  // A pick for another anchor changes nothing.
  CHECK(all_sources(sources_of(plan_with("mm16", {{t.anchor + 100, {t.candidates[0], "x"}}}))) ==
        all_sources(sources_of(base)));
}

TEST_CASE("TMA picks: every candidate of four products compiles with NVRTC for sm_90a") {
  if (!nvrtc_or_skip()) return;
  // bf16 (clusters, two consumers), tf32 in K slices, 3xTF32 (A split in registers) and tf32 with
  // an m-major A loaded through registers (aᵀ·bᵀ), each over all of its tiles.
  CHECK(compile_every_candidate(plan_with, {"mm16", "long_k", "mm_x3", "mm_tf32_regs"}, {"sm_90a"}) > 0u);
}
