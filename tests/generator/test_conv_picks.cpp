// The convs' tunable picks ([Note: conv picks] in generator/plan/plan_contraction.cpp, [Note: tuned
// picks] in plan.h): within the route the planner took, the TMA engine's tiles (its stages as
// many as fit), WgConvNchw's and ConvNchw's tiles and stages, DepthwiseDirect's block size (the
// heuristic's among them); a stored pick sets the kernel's config, block and shared memory, an
// illegal one (another route's, a tile that is not a candidate) is ignored with a reason, a dyn
// batch keeps its picks, dyn spatial extents offer none, and every candidate compiles through
// NVRTC for sm_90a and sm_80.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "generator/plan/planner.h"
#include "memory_plan_util.h"

namespace {

using namespace memory_plan_test;
using kiln::ConvKind;
using kiln::ConvPick;

const char* kSpec =
    "op grouped {\n"      // two groups: ConvNchw (the engines take one group); 32 filters a group
    "  dims N = 2, H = 34, W = 34\n"
    "  in  x: f32[N, 64, H, W]\n"
    "  in  w: f32[64, 32, 3, 3]\n"
    "  out y = conv2d(x, w, groups=2)\n"
    "}\n"
    "op transposed {\n"   // a strided transposed conv with groups: ConvNchw by stride phase
    "  dims N = 2, H = 17, W = 17\n"
    "  in  x: f32[N, 32, H, W]\n"
    "  in  w: f32[32, 80, 3, 3]\n"
    "  out y = conv_transpose2d(x, w, stride=2, padding=1, groups=2)\n"
    "}\n"
    "op depthwise {\n"    // groups == C: DepthwiseDirect
    "  dims N = 4, H = 40, W = 40\n"
    "  in  x: f32[N, 32, H, W]\n"
    "  in  w: f32[32, 1, 3, 3]\n"
    "  out y = conv2d(x, w, padding=1, groups=32)\n"
    "}\n"
    "op few_channels {\n" // 4 input channels (under the TMA engine's 8), a GEMM K of 36: WgConvNchw
    "  dims N = 2, H = 66, W = 66\n"
    "  in  x: f32[N, 4, H, W]\n"
    "  in  w: f32[64, 4, 3, 3]\n"
    "  out y = conv2d(x, w, precision=\"tf32\")\n"
    "}\n"
    "op few_channels_x3 {\n"   // the same in 3xTF32: pixel tiles of at most 128
    "  dims N = 2, H = 66, W = 66\n"
    "  in  x: f32[N, 4, H, W]\n"
    "  in  w: f32[64, 4, 3, 3]\n"
    "  out y = conv2d(x, w)\n"
    "}\n"
    "op engine_tf32 {\n"  // the TMA engine, NCHW tf32: out channels x an image's pixels
    "  dims N = 2, C = 64, H = 34, W = 34, K = 96\n"
    "  in  x: f32[N, C, H, W]\n"
    "  in  w: f32[K, C, 3, 3]\n"
    "  out y = conv2d(x, w, precision=\"tf32\")\n"
    "}\n"
    "op engine_x3 {\n"    // the TMA engine in 3xTF32: pixels x out channels, at most 128 columns
    "  dims N = 2, C = 64, H = 34, W = 34, K = 96\n"
    "  in  x: f32[N, C, H, W]\n"
    "  in  w: f32[K, C, 3, 3]\n"
    "  out y = conv2d(x, w)\n"
    "}\n"
    "op engine_direct {\n"  // a 1-d stride-1 tf32 conv: the TMA engine reads x in place (pixel rows)
    "  dims N = 2, C = 64, L = 4096, K = 128\n"
    "  in  x: f32[N, C, L]\n"
    "  in  w: f32[K, C, 3]\n"
    "  out y = conv1d(x, w, precision=\"tf32\")\n"
    "}\n"
    "op dyn_batch {\n"    // a dyn batch: picks as for a static one
    "  dims dyn N = 4, H = 40, W = 40\n"
    "  in  x: f32[N, 32, H, W]\n"
    "  in  w: f32[32, 1, 3, 3]\n"
    "  out y = conv2d(x, w, padding=1, groups=32)\n"
    "}\n"
    "op dyn_spatial {\n"  // dyn spatial extents: no picks
    "  dims N = 4, dyn H = 40, W = 40\n"
    "  in  x: f32[N, 32, H, W]\n"
    "  in  w: f32[32, 1, 3, 3]\n"
    "  out y = conv2d(x, w, padding=1, groups=32)\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "conv_picks.kiln", op, picks, arch);
}

const char* conv_template(ConvKind kind) {
  switch (kind) {
    case ConvKind::Nchw: return "conv_nchw";
    case ConvKind::Wgmma: return "conv_wgmma";
    case ConvKind::Tma: return "conv_tma";
    case ConvKind::Depthwise: return "conv_depthwise";
  }
  return "";
}

}  // namespace

TEST_CASE("conv picks: text round trip, parse_pick reads it, malformed text refused") {
  for (const ConvPick p : {ConvPick{ConvKind::Nchw, 128, 64, 3, 0}, ConvPick{ConvKind::Wgmma, 64, 256, 4, 0},
                           ConvPick{ConvKind::Tma, 128, 32, 6, 0}, ConvPick{ConvKind::Depthwise, 0, 0, 0, 512}})
    check_pick_round_trip(p);
  CHECK(ConvPick{ConvKind::Nchw, 128, 64, 3, 0}.text() == "conv nchw 128x64 st3");
  CHECK(ConvPick{ConvKind::Depthwise, 0, 0, 0, 256}.text() == "conv depthwise t256");
  for (const char* bad : {"", "conv", "conv nchw 128x64", "conv nchw 128x64 st3 x", "conv nchw 128x064 st3",
                          "conv dense 128x64 st3", "conv depthwise 128x64 st3", "conv depthwise t256 st3",
                          "conv nchw t256", "convs depthwise t256"})
    CHECK_FALSE(ConvPick::parse(bad).has_value());
}

TEST_CASE("conv picks: the candidates are the route's tiles that fit, the heuristic's among them") {
  struct Case {
    const char* op;
    const char* arch;
    std::size_t candidates;
    ConvPick heuristic;
  };
  const Case cases[] = {
      // 32 filters a group: 64 rows only; 2 x 32 x 32 pixels: 64 or 128 columns; 2-4 stages
      {"grouped", "sm_90a", 6, {ConvKind::Nchw, 64, 128, 4, 0}},
      {"grouped", "sm_80", 6, {ConvKind::Nchw, 64, 128, 4, 0}},
      // 80 filters a group (64 or 128 rows), one GEMM per stride phase over 2 x 17 x 17 pixels
      {"transposed", "sm_90a", 12, {ConvKind::Nchw, 128, 128, 4, 0}},
      {"depthwise", "sm_90a", 3, {ConvKind::Depthwise, 0, 0, 0, 256}},
      // 64 filters: 64 rows; 64x64 pixels an image: 64, 128 or 256 columns (3xTF32: 128); 3 or 4 stages
      {"few_channels", "sm_90a", 6, {ConvKind::Wgmma, 64, 256, 4, 0}},
      {"few_channels_x3", "sm_90a", 4, {ConvKind::Wgmma, 64, 128, 4, 0}},
      // 96 filters (rows: 64 or 128) x 1024 pixels an image (columns 64, 128 or 256); 64 rows as
      // 2 x 8 tiles of 128 would leave SMs idle ([Note: a wave of TMA conv tiles])
      {"engine_tf32", "sm_90a", 6, {ConvKind::Tma, 64, 128, 8, 0}},
      // 1024 pixels an image (rows: 64 or 128) x 96 filters (columns: 32, 64 or 128); 64 rows
      {"engine_x3", "sm_90a", 6, {ConvKind::Tma, 64, 128, 5, 0}},
      // 4094 pixels an image read in place (rows: 64 or 128) x 128 filters (columns: 32, 64 or 128);
      // 64 rows
      {"engine_direct", "sm_90a", 6, {ConvKind::Tma, 64, 128, 8, 0}},
      {"dyn_batch", "sm_90a", 3, {ConvKind::Depthwise, 0, 0, 0, 256}},
  };
  for (const Case& k : cases) {
    CAPTURE(std::string(k.op));
    CAPTURE(std::string(k.arch));
    const auto base = plan_with(k.op, {}, k.arch);
    const auto& t = the_tunable(base, k.candidates, k.heuristic);
    CHECK(t.anchor == kernel_of(base, conv_template(k.heuristic.kind)).anchor);
    CHECK(contains(kernel_of(base, conv_template(k.heuristic.kind)).reason, "; config: heuristic"));
    for (const auto& pick : t.candidates) CHECK(std::get<ConvPick>(pick).kind == k.heuristic.kind);
  }
  CHECK(plan_with("depthwise").tunables[0].what ==
        "conv2d 4x32x40x40 -> 32 filters 3x3, stride 1x1, pad 1x1, dil 1x1, groups 32, NCHW");
  CHECK(plan_with("dyn_spatial").tunables.empty());
  CHECK_FALSE(contains(kernel_of(plan_with("dyn_spatial"), "conv_depthwise").reason, "config:"));
}

TEST_CASE("conv picks: a stored pick sets the kernel, an illegal one is ignored with a reason") {
  for (const std::string op :
       {"grouped", "transposed", "depthwise", "few_channels", "engine_tf32", "engine_x3", "engine_direct"}) {
    CAPTURE(op);
    const auto base = plan_with(op);
    const auto& t = base.tunables.at(0);
    for (const auto& pick : t.candidates) {
      const auto& r = std::get<ConvPick>(pick);
      CAPTURE(r.text());
      const auto plan = plan_with(op, {{t.anchor, {pick, "tuned: 0.030 ms (test)"}}});
      const auto& k = kernel_of(plan, conv_template(r.kind));
      const auto& c = std::get<kiln::ConvConfig>(k.config);
      CHECK(c.kind == r.kind);
      if (r.kind == ConvKind::Depthwise) {
        CHECK(c.threads == r.threads);
      } else {
        CHECK(c.bm == r.bm);
        CHECK(c.bn == r.bn);
        CHECK(c.stages == r.stages);
      }
      const auto g = kiln::conv_geometry(c, plan.target.sm_count);
      CHECK(k.block.x == g.block.x);
      CHECK(k.shared_bytes == g.shared_bytes);
      CHECK(k.shared_bytes <= kiln::smem_limit(plan.target));
      CHECK(contains(k.reason, "; config: tuned: 0.030 ms (test)"));
    }
  }
  // Another route's pick, and a tile that is not a candidate.
  const auto base = plan_with("grouped");
  const int anchor = base.tunables.at(0).anchor;
  for (const ConvPick stale : {ConvPick{ConvKind::Tma, 128, 128, 6, 0}, ConvPick{ConvKind::Nchw, 128, 128, 4, 0}}) {
    CAPTURE(stale.text());
    const auto plan = plan_with("grouped", {{anchor, {stale, "tuned: stale"}}});
    CHECK(plan.tunables[0].chosen == base.tunables[0].heuristic);
    CHECK(contains(kernel_of(plan, "conv_nchw").reason,
                   "config: heuristic (the pick " + stale.text() + ", tuned: stale, is not legal for this conv)"));
  }
}

TEST_CASE("conv picks: every candidate compiles with NVRTC for sm_90a and sm_80") {
  if (!nvrtc_or_skip()) return;
  CHECK(compile_every_candidate(plan_with, {"grouped", "depthwise", "few_channels_x3", "engine_x3", "engine_direct"}) >=
        20u);
}
