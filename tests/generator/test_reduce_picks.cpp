// The reductions' tunable picks ([Note: reduction picks] in generator/plan/plan_memory.cpp,
// [Note: tuned picks] in plan.h): the candidate space in the plan (block size and loads in flight
// within the heuristic's variant: a warp or a block per contiguous row, threads along a strided
// reduction's inner axis), a pick in the Target overriding the heuristic (a block per row or a
// strided reduction re-split by the rule at the pick's numbers), an illegal pick ignored with a
// reason, none for a dyn length, the 16-byte sweep's block, rows in flight and waves its split
// aims at, the scalar sweep's block (its columns a thread by the rule) and rows in flight, dyn
// rows keeping the heuristic's size classes, a chain's first stage (a reduction over non-adjacent
// axes) with its variant's picks, and every candidate compiling through NVRTC for sm_90a and sm_80.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "generator/plan/plan.h"
#include "kiln/config/reduce.h"
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
    "op strided {\n"               // reduce_outer, threads along L, 16-byte loads, unsplit
    "  dims R = 4096, L = 4096\n"
    "  in  x: f32[R, L]\n"
    "  out y = sum(x, axis=0)\n"
    "}\n"
    "op strided_split {\n"         // 301 columns (4-byte loads), 4 blocks: split along R
    "  dims A = 2, R = 65536, L = 301\n"
    "  in  x: f32[A, R, L]\n"
    "  out y = max(x, axis=1)\n"
    "}\n"
    "op strided_dyn_rows {\n"      // dyn rows: the heuristic's size classes, picks still offered
    "  dims dyn A = 2, R = 65536, L = 301\n"
    "  in  x: f32[A, R, L]\n"
    "  out y = sum(x, axis=1)\n"
    "}\n"
    "op strided_dyn_len {\n"       // a dyn reduced length: no picks
    "  dims A = 2, dyn R = 65536, L = 301\n"
    "  in  x: f32[A, R, L]\n"
    "  out y = sum(x, axis=1)\n"
    "}\n"
    "op strided_sweep {\n"         // inner 4095 (% 4 != 0): the 16-byte whole-row sweep (v4)
    "  dims R = 512, L = 4095\n"
    "  in  x: f32[R, L]\n"
    "  out y = sum(x, axis=0)\n"
    "}\n"
    "op sweep_dyn_rows {\n"        // the seed min over axis 1 with dyn rows: v4, split per launch
    "  dims dyn B = 128, M = 4096, N = 4095\n"
    "  in  x: f32[B, M, N]\n"
    "  out y = min(x, axis=1)\n"
    "}\n"
    "op sweep_scalar {\n"          // f16 rows of 4095: the whole-row sweep of single elements
    "  dims R = 512, L = 4095\n"
    "  in  x: f16[R, L]\n"
    "  out y = sum(x, axis=0)\n"
    "}\n"
    "op sweep_scalar_dyn_rows {\n" // the same over a middle axis with dyn rows: split per launch
    "  dims dyn B = 16, M = 4096, N = 4095\n"
    "  in  x: bf16[B, M, N]\n"
    "  out y = max(x, axis=1)\n"
    "}\n"
    "op chain_rows {\n"            // axes 0 and 2: 8192 contiguous rows of 512 first (a warp per row)
    "  dims A = 64, B = 128, L = 512\n"
    "  in  x: f32[A, B, L]\n"
    "  out y = sum(x, axis=[0, 2])\n"
    "}\n"
    "op chain_strided {\n"         // axes 0 and 2 of four: axis 2 strided over 1024 columns first
    "  dims A = 8, B = 32, C = 64, L = 1024\n"
    "  in  x: f32[A, B, C, L]\n"
    "  out y = max(x, axis=[0, 2])\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "reduce_picks.kiln", op, picks, arch);
}

const kiln::PlannedKernel& reduce_kernel(const kiln::Plan& plan) {
  for (const auto& k : plan.kernels)
    if (k.template_name == "reduce_inner" || k.template_name == "reduce_outer") return k;
  FAIL("no reduce_inner or reduce_outer kernel in the plan");
  return plan.kernels.front();
}

const kiln::ReducePick& red_pick(const kiln::Pick& p) { return std::get<kiln::ReducePick>(p); }

using Kind = kiln::ReducePick::Kind;

// Plans `op` with each of its candidates stored as its pick: the kernel takes the pick's block
// size and loads and says where they came from; f(pick, plan, config) checks the rest.
template <class F>
void each_candidate(const std::string& op, const F& f) {
  const auto base = plan_with(op);
  REQUIRE(base.tunables.size() == 1);
  const auto& t = base.tunables[0];
  for (const auto& pick : t.candidates) {
    const auto& r = std::get<kiln::ReducePick>(pick);
    CAPTURE(r.text());
    const auto plan = plan_with(op, {{t.anchor, {pick, "tuned: 0.050 ms (test)"}}});
    const auto& k = reduce_kernel(plan);
    const auto& c = std::get<kiln::ReduceConfig>(k.config);
    CHECK(c.threads == r.threads);
    CHECK(c.unroll == r.unroll);
    CHECK(k.block.x == r.threads);
    CHECK(k.reason.find("; config: tuned: 0.050 ms (test)") != std::string::npos);
    f(r, plan, c);
  }
}

Kind kind_of(const kiln::ReduceConfig& c) {
  return c.variant == kiln::ReduceVariant::kInnerBlock ? Kind::block
         : c.variant == kiln::ReduceVariant::kOuter    ? Kind::outer
         : c.variant == kiln::ReduceVariant::kOuterV4  ? Kind::v4
         : c.variant == kiln::ReduceVariant::kOuterRows ? Kind::rows
                                                       : Kind::warp;
}

// A pick's plan (its config `c`) is split as the rule says at `want` (the heuristic's config with
// the pick's numbers): at the bound rows, or with dyn rows (want.outer 0) at the lowest row count
// of the class of dyn dim `dim` = `bound`, the heuristic's classes; reduce_finish follows a split.
void check_split_by_rule(const kiln::Plan& base, kiln::ReduceConfig want, const char* dim, std::int64_t bound,
                         const kiln::Plan& plan, const kiln::ReduceConfig& c) {
  if (want.outer == 0) {
    const auto& at = base.dyn_thresholds.at(dim);
    want.outer = kiln::dyn_class_low(at, kiln::dyn_class(at, bound));
  }
  const auto split = kiln::reduce_split_rule(want, 132);
  CHECK(c.splits == split.splits);
  CHECK(plan.kernels.size() == (split.splits > 1 ? 2u : 1u));   // reduce_finish after a split
  CHECK(plan.dyn_thresholds == base.dyn_thresholds);
}

}  // namespace

TEST_CASE("reduction picks: text round trip, parse_pick reads it, malformed text refused") {
  for (const kiln::ReducePick p : {kiln::ReducePick{Kind::warp, 128, 8}, kiln::ReducePick{Kind::block, 1024, 2},
                                   kiln::ReducePick{Kind::outer, 64, 16}})
    check_pick_round_trip(p);
  CHECK(kiln::ReducePick{Kind::block, 512, 4}.text() == "reduce block t512 u4");
  CHECK(kiln::ReducePick{Kind::outer, 128, 8}.text() == "reduce outer t128 u8");
  check_pick_round_trip(kiln::ReducePick{Kind::v4, 512, 1, 4});
  CHECK(kiln::ReducePick{Kind::v4, 1024, 2, 2}.text() == "reduce v4 t1024 u2 w2");
  check_pick_round_trip(kiln::ReducePick{Kind::rows, 1024, 2});
  CHECK(kiln::ReducePick{Kind::rows, 256, 1}.text() == "reduce rows t256 u1");
  for (const char* bad : {"", "reduce", "reduce warp t256", "reduce cols t256 u4", "reduce warp t256 u4 x",
                          "reduce warp t0256 u4", "warp t256 u4", "reduce v4 t1024 u2", "reduce warp t256 u4 w2",
                          "reduce v4 t1024 u2 w2 x", "reduce rows t256 u1 w2", "reduce rows t256"})
    CHECK_FALSE(kiln::ReducePick::parse(bad).has_value());
}

TEST_CASE("reduction picks: the plan lists the candidates within the heuristic's variant") {
  struct Want {
    const char* op;
    Kind kind;
    int threads, unroll;
    std::size_t candidates;
  };
  // strided: 4096 columns of 16-byte loads (1024 thread columns): 64..512 threads x 2, 4, 8 loads;
  // strided_split: 301 columns of 4-byte loads (256 threads, 8 loads): 64, 128, 256 x 4, 8, 16.
  // strided_sweep, sweep_dyn_rows: 4095 columns in 1, 2 or 4 tiles (1024, 512, 256 threads) x 1
  // or 2 rows of loads x 1, 2 or 4 waves. sweep_scalar, sweep_scalar_dyn_rows: 128, 256, 512 or
  // 1024 threads x 1 or 2 rows of loads.
  for (const Want w : {Want{"warp_rows", Kind::warp, 256, 4, 9}, Want{"block_rows", Kind::block, 512, 4, 9},
                       Want{"strided", Kind::outer, 256, 4, 12}, Want{"strided_split", Kind::outer, 256, 8, 9},
                       Want{"strided_dyn_rows", Kind::outer, 256, 8, 9}, Want{"strided_sweep", Kind::v4, 1024, 2, 18},
                       Want{"sweep_dyn_rows", Kind::v4, 1024, 2, 18}, Want{"sweep_scalar", Kind::rows, 256, 1, 8},
                       Want{"sweep_scalar_dyn_rows", Kind::rows, 256, 1, 8}}) {
    CAPTURE(w.op);
    const auto plan = plan_with(w.op);
    REQUIRE(plan.tunables.size() == 1);
    const auto& t = plan.tunables[0];
    const auto& k = reduce_kernel(plan);
    CHECK(t.anchor == k.anchor);
    CHECK(t.chosen == t.heuristic);
    CHECK(t.candidates.size() == w.candidates);
    CHECK(std::count(t.candidates.begin(), t.candidates.end(), t.heuristic) == 1);
    const int waves = w.kind == Kind::v4 ? kiln::launch::kOuterV4Waves : 0;
    CHECK(red_pick(t.heuristic) == kiln::ReducePick{w.kind, w.threads, w.unroll, waves});
    for (const auto& c : t.candidates) CHECK(red_pick(c).kind == w.kind);
    const auto& c = std::get<kiln::ReduceConfig>(k.config);
    CHECK(kiln::ReducePick{kind_of(c), c.threads, c.unroll, waves} == red_pick(t.heuristic));
    CHECK(k.reason.find("; config: heuristic") != std::string::npos);
  }
  CHECK(plan_with("warp_rows").tunables[0].what == "sum: 8192 rows of 1000");
  CHECK(plan_with("strided").tunables[0].what == "sum: 1 rows of 4096, strided, 4096 columns");
  CHECK(plan_with("block_dyn_len").tunables.empty());
  CHECK(plan_with("strided_dyn_len").tunables.empty());
  CHECK(plan_with("strided_sweep").tunables[0].what == "sum: 1 rows of 512, strided, 4095 columns, 16-byte sweep");
  CHECK(plan_with("sweep_scalar").tunables[0].what == "sum: 1 rows of 512, strided, 4095 columns, scalar sweep");
}

TEST_CASE("reduction picks: a 16-byte sweep's pick sets its block, rows in flight and waves, and the split follows") {
  for (const char* op : {"strided_sweep", "sweep_dyn_rows"}) {
    CAPTURE(op);
    const auto base = plan_with(op);
    const auto heuristic = std::get<kiln::ReduceConfig>(reduce_kernel(base).config);
    REQUIRE(heuristic.variant == kiln::ReduceVariant::kOuterV4);
    each_candidate(op, [&](const kiln::ReducePick& r, const kiln::Plan& plan, const kiln::ReduceConfig& c) {
      CHECK(c.waves == r.waves);
      CHECK(reduce_kernel(plan).min_blocks == kiln::launch::reduce_outer_v4_blocks_per_sm(r.threads));
      // The split is the rule's at the pick's block and waves (B = 128 under dyn rows).
      kiln::ReduceConfig want = heuristic;
      want.threads = r.threads, want.unroll = r.unroll, want.waves = r.waves;
      check_split_by_rule(base, want, "B", 128, plan, c);
    });
  }
  // More waves, more splits: the seed's 128 rows of 4096 x 4095 split 2, 4 and 8 ways.
  kiln::ReduceConfig seed;
  seed.variant = kiln::ReduceVariant::kOuterV4;
  seed.outer = 128, seed.red = 4096, seed.inner = 4095, seed.threads = 1024, seed.unroll = 2, seed.vec = 4;
  for (const auto [waves, splits] : {std::pair{1, 2}, std::pair{2, 4}, std::pair{4, 8}}) {
    seed.waves = waves;
    CHECK(kiln::reduce_split_rule(seed, 132).splits == splits);
  }
}

TEST_CASE("reduction picks: a scalar sweep's pick sets its block and rows in flight, its columns and split follow") {
  for (const char* op : {"sweep_scalar", "sweep_scalar_dyn_rows"}) {
    CAPTURE(op);
    const auto base = plan_with(op);
    const auto heuristic = std::get<kiln::ReduceConfig>(reduce_kernel(base).config);
    REQUIRE(heuristic.variant == kiln::ReduceVariant::kOuterRows);
    REQUIRE(heuristic.cols == kiln::launch::reduce_outer_rows_cols(4095, kiln::launch::kOuterRowsThreads));
    std::set<int> cols;
    each_candidate(op, [&](const kiln::ReducePick& r, const kiln::Plan& plan, const kiln::ReduceConfig& c) {
      // A thread's columns: the rule's at the pick's block (16, 16, 8, 4 at 128 .. 1024 threads).
      CHECK(c.cols == kiln::launch::reduce_outer_rows_cols(4095, r.threads));
      cols.insert(c.cols);
      CHECK(reduce_kernel(plan).reason.find(fmt::format("({} threads x {} columns, {} loads in flight a thread)",
                                                        r.threads, c.cols, c.cols * r.unroll)) != std::string::npos);
      // The split is the rule's at the pick's block and columns (B = 16 under dyn rows).
      kiln::ReduceConfig want = heuristic;
      want.threads = r.threads, want.unroll = r.unroll, want.cols = c.cols;
      check_split_by_rule(base, want, "B", 16, plan, c);
    });
    CHECK(cols == std::set<int>{4, 8, 16});
  }
  // No candidate spills (16 columns x 2 rows of loads in flight at 128 threads), sm_90a.
  if (!nvrtc_or_skip()) return;
  each_candidate("sweep_scalar", [](const kiln::ReducePick&, const kiln::Plan& plan, const kiln::ReduceConfig&) {
    for (const auto& src : sources_of(plan)) {
      CAPTURE(src.entry);
      for (const auto& r : kiln::compile(compile_request(src, "sm_90a")).resources) {
        CHECK(r.spill_stores == 0);
        CHECK(r.spill_loads == 0);
      }
    }
  });
}

TEST_CASE("reduction picks: a legal pick overrides the heuristic and re-splits a block per row") {
  const auto base = plan_with("block_rows");
  const auto& t = base.tunables[0];
  REQUIRE(std::get<kiln::ReduceConfig>(reduce_kernel(base).config).splits > 1);
  each_candidate("block_rows", [](const kiln::ReducePick& r, const kiln::Plan& plan, const kiln::ReduceConfig& c) {
    // The split is the rule's at the pick's numbers: each split at least one unrolled sweep.
    const auto want = kiln::launch::reduce_inner_split(16, 1048576, r.threads, r.unroll, 4, 132);
    CHECK(c.splits == want.splits);
    CHECK(c.chunk == want.chunk);
    CHECK(reduce_kernel(plan).grid.y == want.splits);
    CHECK(plan.kernels.size() == (want.splits > 1 ? 2u : 1u));   // reduce_finish after a split
  });
  // Another variant's pick, or numbers outside the space, are not legal.
  for (const kiln::ReducePick bad : {kiln::ReducePick{Kind::warp, 256, 4}, kiln::ReducePick{Kind::block, 512, 3},
                                     kiln::ReducePick{Kind::outer, 512, 4}}) {
    CAPTURE(bad.text());
    const auto plan = plan_with("block_rows", {{t.anchor, {bad, "tuned: stale"}}});
    CHECK(plan.tunables[0].chosen == t.heuristic);
    CHECK(reduce_kernel(plan).reason.find("config: heuristic (the pick " + bad.text() +
                                          ", tuned: stale, is not legal for this reduction)") != std::string::npos);
  }
}

TEST_CASE("reduction picks: a strided pick re-splits by the rule at its numbers, and dyn rows keep the heuristic's classes") {
  for (const char* op : {"strided_split", "strided_dyn_rows"}) {
    CAPTURE(op);
    const auto base = plan_with(op);
    const auto heuristic = std::get<kiln::ReduceConfig>(reduce_kernel(base).config);
    REQUIRE(heuristic.splits > 1);
    each_candidate(op, [&](const kiln::ReducePick& r, const kiln::Plan& plan, const kiln::ReduceConfig& c) {
      // The split is the rule's at the pick's numbers (A = 2 under dyn rows).
      kiln::ReduceConfig want = heuristic;
      want.threads = r.threads, want.unroll = r.unroll;
      check_split_by_rule(base, want, "A", 2, plan, c);
    });
  }
}

TEST_CASE("reduction picks: every candidate of the five variants compiles with NVRTC for sm_90a and sm_80") {
  if (!nvrtc_or_skip()) return;
  // 9, 9, 12, 9, 18 and 8 candidates, two arches; a split adds its reduce_finish
  CHECK(compile_every_candidate(plan_with, {"warp_rows", "block_rows", "strided", "strided_split", "strided_sweep",
                                            "sweep_scalar"}) >= 2u * (9 + 9 + 12 + 9 + 18 + 8));
}

TEST_CASE("reduction picks: a chain's first stage has its variant's picks, and its later stages keep the rule") {
  struct Case {
    const char* op;
    Kind kind;
    std::size_t candidates;
  };
  // A warp per row: 3 blocks x 3 loads; strided over 1024 columns (16-byte loads: 256 thread
  // columns): 64, 128 or 256 threads x half, the same or twice the heuristic's loads.
  for (const Case& k : {Case{"chain_rows", Kind::warp, 9}, Case{"chain_strided", Kind::outer, 9}}) {
    CAPTURE(std::string(k.op));
    const auto base = plan_with(k.op);
    REQUIRE(base.tunables.size() == 1);
    const auto& t = base.tunables[0];
    CHECK(t.candidates.size() == k.candidates);
    CHECK(std::count(t.candidates.begin(), t.candidates.end(), t.heuristic) == 1);
    CHECK(red_pick(t.heuristic).kind == k.kind);
    CHECK(t.what.rfind("over non-adjacent axes, stage 1 of 2: reduce_", 4) != std::string::npos);
    auto stages = [](const kiln::Plan& plan) {
      std::vector<const kiln::PlannedKernel*> out;
      for (const auto& kn : plan.kernels)
        if (kn.template_name == "reduce_chain") out.push_back(&kn);
      REQUIRE(out.size() == 2u);
      return out;
    };
    const auto base_stages = stages(base);
    CHECK(contains(base_stages[0]->reason, "; config: heuristic"));
    CHECK_FALSE(contains(base_stages[1]->reason, "config:"));
    for (const auto& pick : t.candidates) {
      const auto& r = red_pick(pick);
      CAPTURE(r.text());
      const auto plan = plan_with(k.op, {{t.anchor, {pick, "tuned: 0.050 ms (test)"}}});
      const auto st = stages(plan);
      const auto& c = std::get<kiln::ReduceChainConfig>(st[0]->config);
      CHECK(c.threads == r.threads);
      CHECK(c.unroll == r.unroll);
      CHECK(st[0]->block.x == r.threads);
      CHECK(contains(st[0]->reason, "; config: tuned: 0.050 ms (test)"));
      CHECK(std::get<kiln::ReduceChainConfig>(st[1]->config) ==
            std::get<kiln::ReduceChainConfig>(base_stages[1]->config));
    }
  }
  const auto base = plan_with("chain_rows");
  const kiln::ReducePick outer{Kind::outer, 256, 8};
  const auto plan = plan_with("chain_rows", {{base.tunables[0].anchor, {outer, "tuned: stale"}}});
  CHECK(plan.tunables[0].chosen == base.tunables[0].heuristic);
  CHECK(contains(plan.kernels[0].reason, "config: heuristic (the pick reduce outer t256 u8, tuned: stale, is not legal "
                                         "for this reduction chain)"));
}

TEST_CASE("reduction picks: every candidate of a chain's first stage compiles with NVRTC for sm_90a and sm_80") {
  if (!nvrtc_or_skip()) return;
  // two arches, two stages
  CHECK(compile_every_candidate(plan_with, {"chain_rows", "chain_strided"}) == 2u * 2 * (9 + 9));
}
