// Fused attention's tunable picks ([Note: attention picks] in generator/plan/plan_contraction.cpp,
// [Note: tuned picks] in plan.h): key tiles of 64 or 128 (64 only at head dim 256) and a k and v
// ring of 2-4 stages where it fits (the heuristic's among them); a stored pick sets the kernel's
// config, shared memory and the k and v maps' boxes; an illegal one is ignored with a reason; dyn
// extents keep their picks; and every candidate compiles through NVRTC for sm_90a.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "generator/plan/planner.h"
#include "memory_plan_util.h"

namespace {

using namespace memory_plan_test;
using kiln::AttentionPick;

const char* kSpec =
    "op d128 {\n"
    "  dims B = 2, H = 4, S = 512\n"
    "  in  q: f16[B, H, S, 128]\n"
    "  in  k: f16[B, H, S, 128]\n"
    "  in  v: f16[B, H, S, 128]\n"
    "  out o = matmul(softmax(matmul(q, transpose(k)) * 0.125, axis=-1), v)\n"
    "}\n"
    "op d64_causal {\n"
    "  dims B = 2, H = 4, S = 500\n"
    "  in  q: bf16[B, H, S, 64]\n"
    "  in  k: bf16[B, H, S, 64]\n"
    "  in  v: bf16[B, H, S, 64]\n"
    "  let s = matmul(q, transpose(k)) * 0.125\n"
    "  out o = matmul(softmax(where(iota(S, S, axis=1) <= iota(S, S, axis=0), s, -3.4e38), axis=-1), v)\n"
    "}\n"
    "op d256 {\n"
    "  dims BH = 6, S = 333\n"
    "  in  q: f16[BH, S, 256]\n"
    "  in  k: f16[BH, S, 256]\n"
    "  in  v: f16[BH, S, 256]\n"
    "  out o = matmul(softmax(matmul(q, transpose(k)) * 0.0625, axis=-1), v)\n"
    "}\n"
    "op dyn_seq {\n"
    "  dims B = 2, H = 4, dyn S = 512\n"
    "  in  q: f16[B, H, S, 128]\n"
    "  in  k: f16[B, H, S, 128]\n"
    "  in  v: f16[B, H, S, 128]\n"
    "  out o = matmul(softmax(matmul(q, transpose(k)) * 0.125, axis=-1), v)\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "attention_picks.kiln", op, picks, arch);
}

}  // namespace

TEST_CASE("attention picks: text round trip, parse_pick reads it, malformed text refused") {
  for (const AttentionPick p : {AttentionPick{64, 2}, AttentionPick{128, 3}, AttentionPick{64, 4}})
    check_pick_round_trip(p);
  CHECK(AttentionPick{128, 3}.text() == "attention n128 st3");
  for (const char* bad : {"", "attention", "attention n128", "attention n128 st3 x", "attention n0128 st3",
                          "attention t128 st3", "attentions n128 st3"})
    CHECK_FALSE(AttentionPick::parse(bad).has_value());
}

TEST_CASE("attention picks: key tiles and stages that fit, the heuristic's among them") {
  struct Case {
    const char* op;
    std::size_t candidates;
    AttentionPick heuristic;
  };
  // Head dim 128: 64 keys in 2-4 stages, 128 in 2 or 3 (4 would not fit with the q block); 64:
  // both tiles in 2-4 stages; 256: 64 keys in 2 stages only.
  for (const Case& k : {Case{"d128", 5, {128, 3}}, Case{"d64_causal", 6, {128, 3}}, Case{"d256", 1, {64, 2}},
                        Case{"dyn_seq", 5, {128, 3}}}) {
    CAPTURE(std::string(k.op));
    const auto base = plan_with(k.op);
    const auto& t = the_tunable(base, k.candidates, k.heuristic);
    const auto& kn = kernel_of(base, "flash_attention");
    CHECK(t.anchor == kn.anchor);
    CHECK(contains(kn.reason, "; config: heuristic"));
    for (const auto& pick : t.candidates) CHECK(std::get<AttentionPick>(pick).bn <= kiln::attention_bn(256, 256) * 2);
  }
  CHECK(plan_with("d64_causal").tunables[0].what == "attention 500 queries x 500 keys, head dims 64 and 64, causal");
  CHECK(plan_with("dyn_seq").tunables[0].what == "attention S queries x S keys, head dims 128 and 128");
}

TEST_CASE("attention picks: a stored pick sets the kernel and its maps, an illegal one is ignored with a reason") {
  for (const std::string op : {"d128", "d64_causal", "dyn_seq"}) {
    CAPTURE(op);
    const auto base = plan_with(op);
    const auto& t = base.tunables.at(0);
    for (const auto& pick : t.candidates) {
      const auto& r = std::get<AttentionPick>(pick);
      CAPTURE(r.text());
      const auto plan = plan_with(op, {{t.anchor, {pick, "tuned: 1.000 ms (test)"}}});
      const auto& k = kernel_of(plan, "flash_attention");
      const auto& c = std::get<kiln::AttentionConfig>(k.config);
      CHECK(c.bn == r.bn);
      CHECK(c.stages == r.stages);
      CHECK(c.bm == 128);
      CHECK(k.shared_bytes == kiln::attention_smem(c));
      CHECK(k.shared_bytes <= kiln::smem_limit(plan.target));
      int boxes = 0;   // the k and v maps' key boxes follow the tile
      for (const auto& a : k.args)
        if (a.name == "tmap_k" || a.name == "tmap_v") {
          CHECK(a.tensor_map.box[1] == r.bn);
          ++boxes;
        }
      CHECK(boxes == 2);
      CHECK(contains(k.reason, "key tiles of " + std::to_string(r.bn) + " through a " + std::to_string(r.stages) +
                                   "-stage ring"));
      CHECK(contains(k.reason, "; config: tuned: 1.000 ms (test)"));
    }
  }
  const auto base = plan_with("d256");
  for (const AttentionPick bad : {AttentionPick{128, 2}, AttentionPick{64, 3}}) {
    CAPTURE(bad.text());
    const auto plan = plan_with("d256", {{base.tunables[0].anchor, {bad, "tuned: stale"}}});
    CHECK(plan.tunables[0].chosen == base.tunables[0].heuristic);
    CHECK(contains(kernel_of(plan, "flash_attention").reason,
                   "config: heuristic (the pick " + bad.text() + ", tuned: stale, is not legal for this attention)"));
  }
}

TEST_CASE("attention picks: every candidate compiles with NVRTC for sm_90a") {
  if (!nvrtc_or_skip()) return;
  CHECK(compile_every_candidate(plan_with, {"d64_causal", "d256"}, {"sm_90a"}) == 6u + 1u);
}
