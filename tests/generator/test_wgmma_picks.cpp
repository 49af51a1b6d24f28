// The cp.async wgmma engine's tunable picks ([Note: wgmma picks] in generator/plan/plan_contraction.cpp,
// [Note: tuned picks] in plan.h): CTA tiles of 64 or 128 x 64 or 128 (none wider than an extent
// needs but the heuristic's 128x128), the rule's stages at that tile and one fewer, 1 K slice, the
// rule's and twice as many within the bound; a stored pick sets the tile, warpgroups, stages and
// slices (a workspace and its reduce where it splits or a softmax follows); an illegal one is
// ignored with a reason; and every candidate compiles through NVRTC for sm_90a.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "memory_plan_util.h"

namespace {

using namespace memory_plan_test;
using kiln::WgPick;

const char* kSpec =
    "op linear {\n"    // 3xTF32 (fp32-accurate) with 32 tiles of 128x128: the wgmma engine, K split
    "  dims B = 128, IN = 4096, OUT = 4096\n"
    "  in  x: f32[B, IN]\n"
    "  in  w: f32[OUT, IN]\n"
    "  out y = relu(matmul(x, transpose(w)))\n"
    "}\n"
    "op narrow {\n"    // 60 rows: 64-row tiles only (and the heuristic's 128); K short: one slice
    "  dims B = 60, IN = 512, OUT = 2048\n"
    "  in  x: f32[B, IN]\n"
    "  in  w: f32[OUT, IN]\n"
    "  out y = matmul(x, transpose(w))\n"
    "}\n"
    "op tuner_case {\n"   // tests/gpu/test_tuner_gpu.cpp's lin_x3: 18 candidates
    "  dims B = 128, IN = 2048, OUT = 2048\n"
    "  in  x: f32[B, IN]\n"
    "  in  w: f32[OUT, IN]\n"
    "  out y = relu(matmul(x, transpose(w)))\n"
    "}\n"
    "op with_softmax {\n"   // a softmax: the split-K path and SplitKSoftmax even at one slice
    "  dims B = 128, IN = 2048, OUT = 4096\n"
    "  in  x: f32[B, IN]\n"
    "  in  w: f32[OUT, IN]\n"
    "  out y = softmax(matmul(x, transpose(w)), axis=1)\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "wgmma_picks.kiln", op, picks, arch);
}

const kiln::PlannedKernel& wg_kernel(const kiln::Plan& plan) {
  for (const auto& k : plan.kernels)
    if (k.template_name == "gemm_wgmma" || k.template_name == "gemm_wgmma_split_k") return k;
  FAIL("no wgmma engine kernel");
  return plan.kernels.front();
}

}  // namespace

TEST_CASE("wgmma picks: text round trip, parse_pick reads it, malformed text refused") {
  for (const WgPick p : {WgPick{128, 128, 6, 1}, WgPick{64, 128, 3, 16}, WgPick{64, 64, 4, 2}}) check_pick_round_trip(p);
  CHECK(WgPick{128, 64, 3, 2}.text() == "wgmma 128x64 st3 k2");
  for (const char* bad : {"", "wgmma", "wgmma 128x64", "wgmma 128x64 st3", "wgmma 128x64 st3 k2 x", "wgmma 128x064 st3 k2",
                          "wgmmas 128x64 st3 k2", "wgmma 128x64 k2 st3"})
    CHECK_FALSE(WgPick::parse(bad).has_value());
}

TEST_CASE("wgmma picks: tiles, stages and slices around the rule's, the heuristic's among them") {
  struct Case {
    const char* op;
    std::size_t candidates;
    WgPick heuristic;
  };
  // linear (3xTF32: 4 stages at most): 4 tiles x 2 stage counts x slices 1, the rule's and twice
  // (32 tiles of 128x128: 4 and 8; 64 of 64x128 or 128x64: 2 and 4; 128 of 64x64: 1 and 2);
  // narrow: 60 rows, 64-row tiles and the heuristic's, K = 512 (no split); with_softmax: as
  // linear, K = 2048 bounds the slices at 4.
  for (const Case& k : {Case{"linear", 22, {128, 128, 4, 4}}, Case{"narrow", 5, {128, 128, 4, 1}},
                        Case{"with_softmax", 20, {128, 128, 4, 4}}, Case{"tuner_case", 18, {128, 128, 4, 4}}}) {
    CAPTURE(std::string(k.op));
    const auto base = plan_with(k.op);
    const auto& t = the_tunable(base, k.candidates, k.heuristic);
    CHECK(t.anchor == wg_kernel(base).anchor);
    CHECK(contains(wg_kernel(base).reason, "; config: heuristic"));
  }
  CHECK(plan_with("linear").tunables[0].what == "matmul 128x4096x4096 batch 1 (wgmma engine)");
}

TEST_CASE("wgmma picks: a stored pick sets the tile, stages and slices, an illegal one is ignored with a reason") {
  for (const std::string op : {"linear", "narrow", "with_softmax"}) {
    CAPTURE(op);
    const bool softmax = op == "with_softmax";
    const auto base = plan_with(op);
    const auto& t = base.tunables.at(0);
    for (const auto& pick : t.candidates) {
      const auto& r = std::get<WgPick>(pick);
      CAPTURE(r.text());
      const auto plan = plan_with(op, {{t.anchor, {pick, "tuned: 0.100 ms (test)"}}});
      const auto& k = wg_kernel(plan);
      const auto& g = std::get<kiln::GemmConfig>(k.config);
      CHECK(g.bm == r.bm);
      CHECK(g.bn == r.bn);
      CHECK(g.stages == r.stages);
      CHECK(k.block.x == 128 * r.bm / 64);
      CHECK(k.shared_bytes == kiln::gemm_smem(g));
      const bool split = r.split_k > 1 || softmax;
      CHECK(k.template_name == (split ? "gemm_wgmma_split_k" : "gemm_wgmma"));
      if (split) CHECK(g.split_k == r.split_k);
      const bool reduce = std::any_of(plan.kernels.begin(), plan.kernels.end(), [&](const kiln::PlannedKernel& x) {
        return x.template_name == (softmax ? "gemm_split_k_softmax" : "gemm_split_k_reduce");
      });
      CHECK(reduce == split);
      CHECK(contains(k.reason, "; config: tuned: 0.100 ms (test)"));
      CHECK(contains(k.reason, r.bm == 64 ? "(1 warpgroup of m64n" : "(2 warpgroups of m64n"));
    }
  }
  const auto base = plan_with("narrow");
  // 128 rows for 60 (but the heuristic's 128x128), 5 stages, slices at K = 512, 256 columns
  for (const WgPick bad : {WgPick{128, 64, 4, 1}, WgPick{64, 64, 5, 1}, WgPick{64, 64, 4, 2}, WgPick{64, 256, 4, 1}}) {
    CAPTURE(bad.text());
    const auto plan = plan_with("narrow", {{base.tunables[0].anchor, {bad, "tuned: stale"}}});
    CHECK(plan.tunables[0].chosen == base.tunables[0].heuristic);
    CHECK(contains(wg_kernel(plan).reason,
                   "config: heuristic (the pick " + bad.text() + ", tuned: stale, is not legal for this wgmma engine)"));
  }
}

TEST_CASE("wgmma picks: every candidate compiles with NVRTC for sm_90a") {
  if (!nvrtc_or_skip()) return;
  // narrow's 5 candidates (one slice); linear's 22, the 14 split ones with their reduce kernel
  CHECK(compile_every_candidate(plan_with, {"narrow", "linear"}, {"sm_90a"}) == 5u + 22 + 14);
}
