// The row scans' tunable picks ([Note: scan picks] in generator/plan/plan_memory.cpp, [Note: tuned
// picks] in plan.h): a block per row lists 3 block sizes x 1, 2 or 4 16-byte vectors a thread
// (the heuristic's 256 x 2 among them), a stored pick sets the kernel's threads, vectors and
// block, an illegal one is ignored with a reason, dyn rows keep their classes; the look-back along
// rows of a static length lists threads x vectors x stages x blocks an SM where the stages fit
// ([Note: look-back scan picks]), a pick sizing its tiles, shared memory, grid and workspace, and
// a dyn length offers none; a strided scan over static extents lists up to 3 block sizes x 4, 8 or
// 16 loads in flight and is cut into chunks at the pick's numbers ([Note: strided scan picks]); the
// strided look-back and dyn extents offer none; and every candidate compiles through NVRTC for
// sm_90a and sm_80.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "memory_plan_util.h"

namespace {

using namespace memory_plan_test;

const char* kSpec =
    "op rows {\n"                  // 4096 rows of 1000: a block per row
    "  dims R = 4096, L = 1000\n"
    "  in  x: f32[R, L]\n"
    "  out y = cumsum(x, axis=1)\n"
    "}\n"
    "op rows_dyn {\n"              // dyn rows: still a block per row, picks offered
    "  dims dyn R = 4096, L = 1000\n"
    "  in  x: f32[R, L]\n"
    "  out y = cumsum(x, axis=1, exclusive=true)\n"
    "}\n"
    "op long_rows {\n"             // 4 rows of 2^22: the look-back
    "  dims R = 4, L = 4194304\n"
    "  in  x: f32[R, L]\n"
    "  out y = cumsum(x, axis=1)\n"
    "}\n"
    "op long_rows_half {\n"        // f16 rows, f32 values, odd length (element loads): 4 vectors a thread
    "  dims dyn R = 3, L = 3000001\n"
    "  in  x: f16[R, L]\n"
    "  out y = cummax(x, axis=1)\n"
    "}\n"
    "op long_rows_dyn_len {\n"     // a dyn length: the look-back by class, no picks
    "  dims R = 4, dyn L = 4194304\n"
    "  in  x: f32[R, L]\n"
    "  out y = cumsum(x, axis=1)\n"
    "}\n"
    "op strided {\n"               // along axis 0: the strided scan, chunked (4 blocks of 256 columns)
    "  dims R = 4096, L = 1000\n"
    "  in  x: f32[R, L]\n"
    "  out y = cumsum(x, axis=0)\n"
    "}\n"
    "op strided_narrow {\n"        // 40 columns: blocks of 64 threads only
    "  dims A = 512, R = 300, L = 40\n"
    "  in  x: f32[A, R, L]\n"
    "  out y = cumprod(x, axis=1)\n"
    "}\n"
    "op strided_lookback {\n"      // 8192 x 4096 down the columns: the strided look-back, no picks
    "  dims R = 8192, L = 4096\n"
    "  in  x: f32[R, L]\n"
    "  out y = cumsum(x, axis=0)\n"
    "}\n"
    "op strided_dyn {\n"           // dyn rows: no picks
    "  dims dyn A = 64, R = 300, L = 1000\n"
    "  in  x: f32[A, R, L]\n"
    "  out y = cumsum(x, axis=1)\n"
    "}\n";

kiln::Plan plan_with(const std::string& op, const std::map<int, kiln::TunedPick>& picks = {},
                     const std::string& arch = "sm_90a") {
  return plan_with_picks(kSpec, "scan_picks.kiln", op, picks, arch);
}

const kiln::PlannedKernel& scan_kernel(const kiln::Plan& plan) { return kernel_of(plan, "scan_rows"); }

}  // namespace

TEST_CASE("scan picks: text round trip, parse_pick reads it, malformed text refused") {
  for (const kiln::ScanPick p : {kiln::ScanPick{128, 1}, kiln::ScanPick{512, 4}}) check_pick_round_trip(p);
  CHECK(kiln::ScanPick{256, 2}.text() == "scan rows t256 v2");
  for (const char* bad : {"", "scan", "scan rows t256", "scan cols t256 v2", "scan rows t256 v2 x", "scan rows t0256 v2"})
    CHECK_FALSE(kiln::ScanPick::parse(bad).has_value());
}

TEST_CASE("scan picks: a block per row lists its candidates, a stored pick sets the kernel, an illegal one is ignored") {
  for (const char* op : {"rows", "rows_dyn"}) {
    CAPTURE(op);
    const auto base = plan_with(op);
    REQUIRE(base.tunables.size() == 1);
    const auto& t = base.tunables[0];
    CHECK(t.anchor == scan_kernel(base).anchor);
    CHECK(t.candidates.size() == 9u);
    CHECK(std::count(t.candidates.begin(), t.candidates.end(), t.heuristic) == 1);
    CHECK(std::get<kiln::ScanPick>(t.heuristic) == kiln::ScanPick{256, 2});
    CHECK(scan_kernel(base).reason.find("; config: heuristic") != std::string::npos);
    for (const auto& pick : t.candidates) {
      const auto& r = std::get<kiln::ScanPick>(pick);
      CAPTURE(r.text());
      const auto plan = plan_with(op, {{t.anchor, {pick, "tuned: 0.030 ms (test)"}}});
      const auto& k = scan_kernel(plan);
      const auto& c = std::get<kiln::ScanConfig>(k.config);
      CHECK(c.variant == kiln::ScanVariant::kRowsBlock);
      CHECK(c.threads == r.threads);
      CHECK(c.vecs == r.vecs);
      CHECK(k.block.x == r.threads);
      CHECK(k.reason.find(std::to_string(r.threads * r.vecs * 4) + "-element tiles") != std::string::npos);
      CHECK(k.reason.find("; config: tuned: 0.030 ms (test)") != std::string::npos);
      CHECK(plan.dyn_thresholds == base.dyn_thresholds);
    }
    const kiln::ScanPick bad{1024, 2};
    const auto plan = plan_with(op, {{t.anchor, {bad, "tuned: stale"}}});
    CHECK(plan.tunables[0].chosen == t.heuristic);
    CHECK(scan_kernel(plan).reason.find("config: heuristic (the pick scan rows t1024 v2, tuned: stale, is not legal "
                                        "for this scan)") != std::string::npos);
  }
  CHECK(plan_with("rows").tunables[0].what == "cumsum: 4096 rows of 1000");
}

TEST_CASE("look-back scan picks: text round trip, the candidates, a stored pick sizes the kernel, an illegal one is "
          "ignored") {
  for (const kiln::LookbackScanPick p : {kiln::LookbackScanPick{128, 4, 2, 1}, kiln::LookbackScanPick{512, 16, 4, 2}})
    check_pick_round_trip(p);
  CHECK(kiln::LookbackScanPick{256, 8, 3, 2}.text() == "scan lookback t256 v8 s3 b2");
  for (const char* bad : {"", "scan lookback", "scan lookback t256 v8 s3", "scan rows t256 v8 s3 b2",
                          "scan lookback t256 v8 s3 b2 x", "scan lookback t256 v08 s3 b2"})
    CHECK_FALSE(kiln::LookbackScanPick::parse(bad).has_value());
  CHECK(plan_with("long_rows_dyn_len").tunables.empty());
  struct Case {
    const char* op;
    std::size_t candidates;
    kiln::LookbackScanPick heuristic;
    int elem, value;
  };
  // f32 on sm_90a: stages of 8 to 128 KiB (threads x vectors x 16 bytes); 2-4 of them fit a block
  // (227 KiB) and 1 or 2 blocks an SM (228 KiB, 1 KiB reserved a block): 37 of the 54.
  for (const Case& k : {Case{"long_rows", 37, {256, 8, 3, 2}, 4, 4}, Case{"long_rows_half", 37, {256, 4, 3, 2}, 2, 4}}) {
    CAPTURE(k.op);
    const auto base = plan_with(k.op);
    const auto& t = the_tunable(base, k.candidates, k.heuristic);
    CHECK(scan_kernel(base).reason.find("; config: heuristic") != std::string::npos);
    for (const auto& pick : t.candidates) {
      const auto& r = std::get<kiln::LookbackScanPick>(pick);
      CAPTURE(r.text());
      const auto plan = plan_with(k.op, {{t.anchor, {pick, "tuned: 0.030 ms (test)"}}});
      const auto& kn = scan_kernel(plan);
      const auto& c = std::get<kiln::ScanConfig>(kn.config);
      CHECK(c.variant == kiln::ScanVariant::kRowsLookback);
      CHECK((c.threads == r.threads && c.vecs == r.vecs && c.stages == r.stages));
      CHECK(c.chunks == 132LL * r.blocks);
      CHECK(kn.min_blocks == r.blocks);
      CHECK(kn.block.x == r.threads + 32);
      const long long tile = kiln::launch::scan_rows_tile(r.threads, r.vecs, k.elem);
      CHECK(kn.shared_bytes == r.stages * tile * k.value);
      CHECK(kn.shared_bytes <= 232448);
      CHECK(kn.reason.find(std::to_string(tile) + "-element tiles") != std::string::npos);
      CHECK(kn.reason.find(std::to_string(r.stages) + " shared stages") != std::string::npos);
      CHECK(kn.reason.find("; config: tuned: 0.030 ms (test)") != std::string::npos);
      // The workspace holds a status for every tile of the pick's size (4 static rows).
      if (std::string(k.op) == "long_rows")
        CHECK(plan.buffers[static_cast<std::size_t>(kn.zero_before.at(0))].bytes ==
              kiln::launch::scan_lookback_workspace_bytes(4, 4194304, tile, k.value));
    }
    const kiln::LookbackScanPick bad{512, 16, 4, 2};   // 256 KiB of stages
    const auto plan = plan_with(k.op, {{t.anchor, {bad, "tuned: stale"}}});
    CHECK(plan.tunables[0].chosen == t.heuristic);
    CHECK(scan_kernel(plan).reason.find("config: heuristic (the pick scan lookback t512 v16 s4 b2, tuned: stale, is not "
                                        "legal for this look-back scan)") != std::string::npos);
  }
  CHECK(plan_with("long_rows").tunables[0].what == "cumsum (look-back): 4 rows of 4194304");
}

TEST_CASE("strided scan picks: text round trip, the candidates, a stored pick re-cuts the axis, an illegal one is "
          "ignored") {
  for (const kiln::StridedScanPick p : {kiln::StridedScanPick{64, 4}, kiln::StridedScanPick{256, 16}})
    check_pick_round_trip(p);
  CHECK(kiln::StridedScanPick{256, 8}.text() == "scan strided t256 u8");
  for (const char* bad : {"", "scan strided", "scan strided t256", "scan rows t256 u8", "scan strided t256 u8 x"})
    CHECK_FALSE(kiln::StridedScanPick::parse(bad).has_value());
  CHECK(plan_with("strided_lookback").tunables.empty());
  CHECK(plan_with("strided_dyn").tunables.empty());
  struct Case {
    const char* op;
    std::size_t candidates;
    kiln::StridedScanPick heuristic;
  };
  for (const Case& k : {Case{"strided", 9, {256, 8}}, Case{"strided_narrow", 3, {64, 8}}}) {
    CAPTURE(k.op);
    const auto base = plan_with(k.op);
    const auto& t = the_tunable(base, k.candidates, k.heuristic);
    CHECK(base.kernels[0].reason.find("; config: heuristic") != std::string::npos);
    for (const auto& pick : t.candidates) {
      const auto& r = std::get<kiln::StridedScanPick>(pick);
      CAPTURE(r.text());
      const auto plan = plan_with(k.op, {{t.anchor, {pick, "tuned: 0.030 ms (test)"}}});
      const auto& c = std::get<kiln::ScanConfig>(plan.kernels[0].config);
      CHECK(c.threads == r.threads);
      CHECK(c.unroll == r.unroll);
      CHECK(plan.kernels[0].block.x == r.threads);
      CHECK(plan.kernels[0].reason.find(std::to_string(r.unroll) + " loads in flight") != std::string::npos);
      CHECK(plan.kernels[0].reason.find("; config: tuned: 0.030 ms (test)") != std::string::npos);
      // The axis is cut by the rule at the pick's numbers; a chunked plan's scan kernel has the same.
      const auto ch = kiln::launch::scan_strided_chunks(c.outer, c.len, c.inner, r.threads, r.unroll, 132);
      CHECK(c.chunks == ch.chunks);
      CHECK(plan.kernels.size() == (ch.chunks > 1 ? 2u : 1u));
      if (ch.chunks > 1) CHECK(std::get<kiln::ScanConfig>(plan.kernels[1].config).unroll == r.unroll);
    }
  }
  const auto base = plan_with("strided_narrow");
  const auto plan = plan_with("strided_narrow", {{base.tunables[0].anchor, {kiln::StridedScanPick{256, 8}, "tuned: stale"}}});
  CHECK(plan.tunables[0].chosen == base.tunables[0].heuristic);
  CHECK(plan.kernels[0].reason.find("config: heuristic (the pick scan strided t256 u8, tuned: stale, is not legal for "
                                    "this strided scan)") != std::string::npos);
}

TEST_CASE("scan picks: every candidate compiles with NVRTC for sm_90a and sm_80") {
  if (!nvrtc_or_skip()) return;
  CHECK(compile_every_candidate(plan_with, {"rows", "strided", "strided_narrow", "long_rows"}) >= 2u * (9 + 9 + 3) + 37);
}
