// The mma.sync Gemm's tunable picks ([Note: mma picks] in generator/plan/plan_contraction.cpp,
// [Note: tuned picks] in plan.h): CTA tiles of 64 or 128 x 64 or 128 (none wider than an extent
// needs but the heuristic's), the most stages that fit and one fewer, 1 K slice, the rule's and
// twice as many within the bound; none for a fused softmax; a stored pick sets the tile, warp
// tile, stages and slices (a workspace and its reduce where it splits); an illegal one is ignored
// with a reason; and every candidate compiles through NVRTC for sm_90a and sm_80.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "memory_plan_util.h"

namespace {

using namespace memory_plan_test;
using kiln::MmaPick;

const char* kSpec =
    "op square {\n"    // f32 in ieee: the mma.sync Gemm on sm_90a too; 1024 tiles of 128x128
    "  dims M = 4096, N = 4096, K = 4096\n"
    "  in  a: f32[M, K]\n"
    "  in  b: f32[K, N]\n"
    "  out c = matmul(a, b, precision=\"ieee\")\n"
    "}\n"
    "op narrow {\n"    // 60 columns: 64 only; few tiles and K long: the rule splits
    "  dims M = 100, N = 60, K = 2048\n"
    "  in  a: f32[M, K]\n"
    "  in  b: f32[N, K]\n"
    "  out c = matmul(a, transpose(b), precision=\"ieee\")\n"
    "}\n"
    "op cube {\n"     // the GPU tuner's case (tests/gpu/test_tuner_gpu.cpp): 64x64 tiles, one slice
    "  dims M = 1000, N = 1000, K = 1000\n"
    "  in  a: f32[M, K]\n"
    "  in  b: f32[K, N]\n"
    "  out c = matmul(a, b, precision=\"ieee\")\n"
    "}\n"
    "op with_softmax {\n"   // a fused softmax: row statistics per 128-wide tile, no picks
    "  dims M = 512, N = 512, K = 256\n"
    "  in  a: f32[M, K]\n"
    "  in  b: f32[K, N]\n"
    "  out c = softmax(matmul(a, b, precision=\"ieee\"), axis=1)\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "mma_picks.kiln", op, picks, arch);
}

const kiln::PlannedKernel& gemm_kernel(const kiln::Plan& plan) {
  for (const auto& k : plan.kernels)
    if (k.template_name == "gemm" || k.template_name == "gemm_split_k") return k;
  FAIL("no mma.sync Gemm kernel");
  return plan.kernels.front();
}

}  // namespace

TEST_CASE("mma picks: text round trip, parse_pick reads it, malformed text refused") {
  for (const MmaPick p : {MmaPick{128, 128, 4, 1}, MmaPick{64, 128, 3, 16}, MmaPick{64, 64, 2, 2}})
    check_pick_round_trip(p);
  CHECK(MmaPick{128, 64, 3, 2}.text() == "mma 128x64 st3 k2");
  for (const char* bad : {"", "mma", "mma 128x64", "mma 128x64 st3", "mma 128x64 st3 k2 x", "mma 128x064 st3 k2",
                          "mmas 128x64 st3 k2", "mma 128x64 k2 st3"})
    CHECK_FALSE(MmaPick::parse(bad).has_value());
}

TEST_CASE("mma picks: tiles, stages and slices around the rule's, the heuristic's among them") {
  struct Case {
    const char* op;
    const char* arch;
    std::size_t candidates;
    MmaPick heuristic;
  };
  // square: 4 tiles x 2 stage counts x 1 or 2 slices (the rule's is 1); narrow: 64 columns, 64 or
  // 128 rows, x 2 stage counts x 1 or 16 slices (twice would pass 16); cube: 4 tiles x 2 x 1 or 2.
  for (const Case& k : {Case{"square", "sm_90a", 16, {128, 128, 4, 1}}, Case{"square", "sm_80", 16, {128, 128, 4, 1}},
                        Case{"narrow", "sm_90a", 8, {64, 64, 4, 16}}, Case{"cube", "sm_90a", 16, {64, 64, 4, 1}}}) {
    CAPTURE(std::string(k.op));
    CAPTURE(std::string(k.arch));
    const auto base = plan_with(k.op, {}, k.arch);
    const auto& t = the_tunable(base, k.candidates, k.heuristic);
    CHECK(t.anchor == gemm_kernel(base).anchor);
    CHECK(contains(gemm_kernel(base).reason, "; config: heuristic"));
  }
  CHECK(plan_with("square").tunables[0].what == "matmul 4096x4096x4096 batch 1 (mma.sync Gemm)");
  CHECK(plan_with("with_softmax").tunables.empty());
}

TEST_CASE("mma picks: a stored pick sets the tile, stages and slices, an illegal one is ignored with a reason") {
  for (const std::string op : {"square", "narrow"}) {
    CAPTURE(op);
    const auto base = plan_with(op);
    const auto& t = base.tunables.at(0);
    for (const auto& pick : t.candidates) {
      const auto& r = std::get<MmaPick>(pick);
      CAPTURE(r.text());
      const auto plan = plan_with(op, {{t.anchor, {pick, "tuned: 0.100 ms (test)"}}});
      const auto& k = gemm_kernel(plan);
      const auto& g = std::get<kiln::GemmConfig>(k.config);
      CHECK(g.bm == r.bm);
      CHECK(g.bn == r.bn);
      CHECK(g.wm == (r.bm == 128 ? 64 : 32));
      CHECK(g.wn == 32);
      CHECK(g.stages == r.stages);
      CHECK(k.template_name == (r.split_k > 1 ? "gemm_split_k" : "gemm"));
      if (r.split_k > 1) CHECK(g.split_k == r.split_k);
      const bool reduce = std::any_of(plan.kernels.begin(), plan.kernels.end(), [](const kiln::PlannedKernel& x) {
        return x.template_name == "gemm_split_k_reduce";
      });
      CHECK(reduce == (r.split_k > 1));
      CHECK(contains(k.reason, "; config: tuned: 0.100 ms (test)"));
    }
  }
  const auto base = plan_with("narrow");
  for (const MmaPick bad : {MmaPick{64, 128, 4, 1}, MmaPick{64, 64, 4, 32}, MmaPick{64, 64, 5, 1}}) {
    CAPTURE(bad.text());   // 128 columns for 60; 32 slices; 5 stages
    const auto plan = plan_with("narrow", {{base.tunables[0].anchor, {bad, "tuned: stale"}}});
    CHECK(plan.tunables[0].chosen == base.tunables[0].heuristic);
    CHECK(contains(gemm_kernel(plan).reason,
                   "config: heuristic (the pick " + bad.text() + ", tuned: stale, is not legal for this mma)"));
  }
}

TEST_CASE("mma picks: every candidate compiles with NVRTC for sm_90a and sm_80") {
  if (!nvrtc_or_skip()) return;
  // narrow's 8 candidates a target, the 4 split ones with their reduce kernel
  CHECK(compile_every_candidate(plan_with, {"narrow"}) == 2u * (8 + 4));
}
