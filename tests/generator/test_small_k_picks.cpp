// The small-K kernels' tunable picks ([Note: small-K picks] in generator/plan/plan_contraction.cpp,
// [Note: tuned picks] in plan.h): on the mma.sync SmallK, CTA tiles of 128 or 256 x 64 or 128 that
// fit shared memory at 1 to 3 CTAs an SM while an SM holds at most 512 threads (256 in 3xTF32); on
// sm_90a's wgmma SmallK (3xTF32), the same tiles with a ring of 2 or 3 B blocks where they fit; a
// stored pick sets the tile, the CTAs an SM (the persistent grid) or the ring; an illegal one is
// ignored with a reason; every candidate compiles through NVRTC for sm_90a and sm_80.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "memory_plan_util.h"

namespace {

using namespace memory_plan_test;
using kiln::SmallKPick;

const char* kSpec =
    "op tf32 {\n"     // the seed problem's shape: SmallK 256x64 at 1 an SM
    "  dims M = 32768, N = 32768, K = 64\n"
    "  in  a: f32[M, K]\n"
    "  in  b: f32[K, N]\n"
    "  out c = matmul(a, b, precision=\"tf32\")\n"
    "}\n"
    "op x3 {\n"       // 3xTF32: the wgmma SmallK on sm_90a, SmallK 128x128 on sm_80
    "  dims M = 16384, N = 16384, K = 64\n"
    "  in  a: f32[M, K]\n"
    "  in  b: f32[K, N]\n"
    "  out c = relu(matmul(a, b, precision=\"3xtf32\"))\n"
    "}\n"
    "op tuner_tf32 {\n"   // tests/gpu/test_tuner_gpu.cpp's sk_tf32: 8 candidates
    "  dims M = 4096, N = 8192, K = 64\n"
    "  in  a: f32[M, K]\n"
    "  in  b: f32[K, N]\n"
    "  out c = matmul(a, b, precision=\"tf32\")\n"
    "}\n"
    "op tuner_x3 {\n"     // and its sk_x3 (K = 32, the wgmma SmallK): 6
    "  dims M = 4096, N = 8192, K = 32\n"
    "  in  a: f32[M, K]\n"
    "  in  b: f32[K, N]\n"
    "  out c = relu(matmul(a, b, precision=\"3xtf32\"))\n"
    "}\n"
    "op k128 {\n"     // K = 128 in tf32: 256x64 does not fit twice, nor 256x128 at all
    "  dims M = 8192, N = 8192, K = 128\n"
    "  in  a: f32[M, K]\n"
    "  in  b: f32[K, N]\n"
    "  out c = matmul(a, b, precision=\"tf32\")\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "small_k_picks.kiln", op, picks, arch);
}

const kiln::PlannedKernel& small_k_kernel(const kiln::Plan& plan) {
  for (const auto& k : plan.kernels)
    if (k.template_name == "gemm_small_k" || k.template_name == "gemm_small_k_wgmma") return k;
  FAIL("no small-K kernel");
  return plan.kernels.front();
}

}  // namespace

TEST_CASE("small-K picks: text round trip, parse_pick reads it, malformed text refused") {
  for (const SmallKPick p : {SmallKPick{false, 256, 64, 1}, SmallKPick{false, 128, 64, 3}, SmallKPick{true, 256, 64, 3},
                             SmallKPick{true, 128, 128, 2}})
    check_pick_round_trip(p);
  CHECK(SmallKPick{false, 128, 64, 3}.text() == "small k 128x64 c3");
  CHECK(SmallKPick{true, 256, 64, 2}.text() == "small k wgmma 256x64 b2");
  for (const char* bad : {"", "small k", "small k 128x64", "small k 128x64 b3", "small k wgmma 128x64 c3",
                          "small k 128x64 c3 x", "small k 128x064 c3", "smallk 128x64 c3", "small k wgmma 256x64"})
    CHECK_FALSE(SmallKPick::parse(bad).has_value());
}

TEST_CASE("small-K picks: tiles with CTAs an SM, or the wgmma one's B ring, the heuristic's among them") {
  struct Case {
    const char* op;
    const char* arch;
    std::size_t candidates;
    SmallKPick heuristic;
    const char* what;
  };
  // tf32 at K = 64 on sm_90a (227 KB): 128x64 at 1-3 an SM, 256x64 and 128x128 at 1-2 (shared
  // memory), 256x128 at 1 (512 threads); on sm_80 (163 KB) 128x64 at 1-2 and the others at 1.
  // 3xTF32 on sm_90a: the wgmma SmallK, 256x64 and 128x64 with 2 or 3 B blocks, 128x128 with 2 (3
  // does not fit, nor any 256x128); on sm_80 the mma.sync SmallK at most 256 threads an SM: 128x64
  // at 1-2, 128x128 and 256x64 at 1. K = 128 in tf32: 256x64, 128x64 and 128x128 each once (sm_90a),
  // and on sm_80 128x64 alone, the rule's.
  for (const Case& k : {Case{"tf32", "sm_90a", 8, {false, 256, 64, 1}, "matmul 32768x32768x64 (SmallK)"},
                        Case{"tf32", "sm_80", 5, {false, 256, 64, 1}, "matmul 32768x32768x64 (SmallK)"},
                        Case{"x3", "sm_90a", 5, {true, 256, 64, 3}, "matmul 16384x16384x64 (wgmma SmallK)"},
                        Case{"x3", "sm_80", 4, {false, 128, 128, 1}, "matmul 16384x16384x64 (SmallK)"},
                        Case{"k128", "sm_90a", 3, {false, 256, 64, 1}, "matmul 8192x8192x128 (SmallK)"},
                        Case{"k128", "sm_80", 1, {false, 128, 64, 1}, "matmul 8192x8192x128 (SmallK)"},
                        Case{"tuner_tf32", "sm_90a", 8, {false, 256, 64, 1}, "matmul 4096x8192x64 (SmallK)"},
                        Case{"tuner_x3", "sm_90a", 6, {true, 256, 64, 3}, "matmul 4096x8192x32 (wgmma SmallK)"}}) {
    CAPTURE(std::string(k.op));
    CAPTURE(std::string(k.arch));
    const auto base = plan_with(k.op, {}, k.arch);
    const auto& t = the_tunable(base, k.candidates, k.heuristic);
    CHECK(t.what == k.what);
    CHECK(t.anchor == small_k_kernel(base).anchor);
    CHECK(contains(small_k_kernel(base).reason, "; config: heuristic"));
    for (const auto& c : t.candidates) {
      const auto& r = std::get<SmallKPick>(c);
      CHECK(r.wgmma == k.heuristic.wgmma);
      if (!r.wgmma) CHECK(32 * (r.bm / 64) * (r.bn / 32) * r.depth <= (std::string(k.op) == "x3" ? 256 : 512));
    }
  }
}

TEST_CASE("small-K picks: a stored pick sets the tile and the CTAs an SM or the ring, an illegal one is ignored") {
  for (const std::string op : {"tf32", "x3"}) {
    CAPTURE(op);
    const auto base = plan_with(op);
    const auto& t = base.tunables.at(0);
    for (const auto& pick : t.candidates) {
      const auto& r = std::get<SmallKPick>(pick);
      CAPTURE(r.text());
      const auto plan = plan_with(op, {{t.anchor, {pick, "tuned: 0.100 ms (test)"}}});
      const auto& k = small_k_kernel(plan);
      const auto& g = std::get<kiln::GemmConfig>(k.config);
      CHECK(g.bm == r.bm);
      CHECK(g.bn == r.bn);
      if (r.wgmma) {
        CHECK(k.template_name == "gemm_small_k_wgmma");
        CHECK(g.b_stages == r.depth);
        CHECK(k.block.x == 128 * r.bm / 64);
        CHECK(k.grid.x == 132);
      } else {
        CHECK(k.template_name == "gemm_small_k");
        CHECK(k.min_blocks == r.depth);
        CHECK(k.grid.x == 132 * r.depth);   // persistent: every SM, r.depth CTAs each
        CHECK(k.block.x == 32 * (r.bm / 64) * (r.bn / 32));
      }
      CHECK(k.shared_bytes == kiln::gemm_smem(g));
      CHECK(contains(k.reason, "; config: tuned: 0.100 ms (test)"));
    }
  }
  const auto base = plan_with("tf32");
  // 256x128 twice (shared memory), 128x64 four times, 64-row tiles, the wgmma form on the mma.sync route
  for (const SmallKPick bad : {SmallKPick{false, 256, 128, 2}, SmallKPick{false, 128, 64, 4},
                               SmallKPick{false, 64, 64, 1}, SmallKPick{true, 256, 64, 3}}) {
    CAPTURE(bad.text());
    const auto plan = plan_with("tf32", {{base.tunables[0].anchor, {bad, "tuned: stale"}}});
    CHECK(plan.tunables[0].chosen == base.tunables[0].heuristic);
    CHECK(contains(small_k_kernel(plan).reason,
                   "config: heuristic (the pick " + bad.text() + ", tuned: stale, is not legal for this small k)"));
  }
}

TEST_CASE("small-K picks: every candidate compiles with NVRTC for sm_90a and sm_80") {
  if (!nvrtc_or_skip()) return;
  // k128's 3 candidates on sm_90a and 1 on sm_80; x3's 5 wgmma SmallK ones on sm_90a (each with
  // the pre-pass) and 4 mma.sync ones on sm_80
  CHECK(compile_every_candidate(plan_with, {"k128", "x3"}) == 3 + 1 + 2 * 5 + 4);
}
