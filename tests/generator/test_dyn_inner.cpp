// dyn inner extents ([Note: dyn inner extents] in generator/plan/plan_memory.cpp): a reduction
// along a strided axis takes one dyn dim among the axes after the reduced ones. Within a bucket,
// row class and size class every value gives the same source, free of the value; each class is
// planned as the specialized reduction at its widest row (variant, vector width, block) and split
// for its narrowest; each launch takes its grid, split count and partial states from its own
// inner; the plans run on the CPU (test_dyn_inner_emulated.cpp) at other values of their class
// and match float64 references; the bucket one is the static extent; the other families, a chain,
// a second dyn dim and a dim that also sizes the rows are refused where the dim is declared; the
// units compile.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>

#include "generator/plan/plan.h"
#include "golden.h"
#include "memory_plan_util.h"
#include "reduce_emulation.h"
#include "templates/kiln/config/reduce.h"

namespace {

using namespace memory_plan_test;

// Each op with C declared by `c_decl` ("dyn C" or "C = <value>" for the specialized plan).
std::string spec_text(const std::string& c_decl) {
  const std::string C = c_decl;
  return "op colsum {\n  dims R = 1000, " + C + "\n  in  x: f32[64, R, C]\n  in  b: f32[C]\n" +
         "  out y = sum(x, axis=1) * b\n}\n" +
         "op colsum_few {\n  dims dyn B = 2, R = 100000, " + C +
         "\n  in  x: f32[B, R, C]\n  out y = mean(x, axis=1)\n}\n" +
         "op colmax_h {\n  dims R = 4096, " + C + "\n  in  x: f16[4, R, C]\n  out y = max(x, axis=1)\n}\n" +
         "op argmax4 {\n  dims R = 512, " + C + "\n  in  x: f32[4, R, C, 4]\n  out y = argmax(x, axis=1)\n}\n" +
         "op first {\n  dims R = 300, " + C + "\n  in  x: f32[R, C]\n  out y = sum(x, axis=0) + 1.0\n}\n";
}
const std::vector<std::string> kOps{"colsum", "colsum_few", "colmax_h", "argmax4", "first"};
// Each op's rows as planned (colsum_few's dyn B: 1), reduced length and columns per C.
struct Shape {
  long long outer, red, per_c;
};
const std::map<std::string, Shape> kShapes{{"colsum", {64, 1000, 1}},
                                           {"colsum_few", {1, 100000, 1}},
                                           {"colmax_h", {4, 4096, 1}},
                                           {"argmax4", {4, 512, 4}},
                                           {"first", {1, 300, 1}}};

kiln::Plan dyn_at(const std::string& op, std::int64_t c, const std::string& arch = "sm_90a") {
  return plan_text_at(spec_text("dyn C"), "inner.kiln", op, {{"C", c}}, arch);
}
kiln::Plan static_at(const std::string& op, std::int64_t c) {
  return plan_text_at(spec_text("C = " + std::to_string(c)), "inner.kiln", op, {}, "sm_90a");
}
const kiln::ReduceConfig& reduce_config(const kiln::Plan& plan) {
  return std::get<kiln::ReduceConfig>(plan.kernels.at(0).config);
}

const char* kRefused =
    "op shared {\n  dims dyn C\n  in  x: f32[C, 16, C]\n  out y = sum(x, axis=1)\n}\n"
    "op two {\n  dims dyn C, dyn D\n  in  x: f32[3, 16, C, D]\n  out y = sum(x, axis=1)\n}\n"
    "op scan {\n  dims L = 8, dyn C\n  in  x: f32[4, L, C, C]\n  out y = cumsum(x, axis=1)\n}\n"
    "op norm {\n  dims L = 8, dyn C\n  in  x: f32[4, L, C]\n  out y = softmax(x, axis=1)\n}\n"
    "op chain {\n  dims L = 8, dyn C\n  in  x: f32[4, L, C, 2]\n  out y = sum(x, axis=[0, 2])\n}\n";

}  // namespace

TEST_CASE("dyn inner: one source per bucket, row class and size class, the inner read at run time") {
  // Pairs in one bucket, row class and size class of every op: 1001 and 1017 (not multiples of
  // 4: the v4 sweep [512, 1025) of f32, the whole-row sweep of f16), 108 and 124 (multiples of 4,
  // not of 8), 80 and 112 (multiples of 16).
  for (const auto& op : kOps)
    for (const auto& pair : std::vector<std::pair<std::int64_t, std::int64_t>>{{1001, 1017}, {108, 124}, {80, 112}}) {
      CAPTURE(op);
      CAPTURE(pair.first);
      const auto a = dyn_at(op, pair.first), b = dyn_at(op, pair.second);
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(b)));
      CHECK(!a.kernels[0].dyn_inner.empty());
      CHECK(reduce_config(a).inner == 0);
      for (const auto& src : sources_of(a)) {
        INFO(src.text);
        CHECK(src.text.find(std::to_string(pair.first)) == std::string::npos);
        CHECK(src.text.find(std::to_string(pair.first * 4)) == std::string::npos);   // argmax4's inner
        CHECK(contains(src.text, "const Index inner = "));
      }
    }
  // Another class or row class is another source (and the runtime keys executables by both).
  CHECK(all_sources(sources_of(dyn_at("colsum", 1001))) != all_sources(sources_of(dyn_at("colsum", 1000))));
  CHECK(all_sources(sources_of(dyn_at("colsum", 100))) != all_sources(sources_of(dyn_at("colsum", 600))));
  const auto keyed = dyn_at("colsum", 100);
  CHECK(keyed.dyn_row_align.at("C") == 1);   // a multiple of 4, not of 8: the 16-byte columns assume it
  CHECK(keyed.text().find("C=100 (dyn, general, a multiple of 4, not of 8, class [1, 129))") != std::string::npos);
  // C is not argmax4's innermost extent: its 4 static columns keep inner a multiple of 4.
  CHECK(dyn_at("argmax4", 7).dyn_row_align.count("C") == 0);
  CHECK(reduce_config(dyn_at("argmax4", 7)).vec == 4);
}

TEST_CASE("dyn inner: each class is the specialized plan at its widest row, split as at its narrowest") {
  // f32 without 16-byte columns: classes past 32, 64, 128 and 256 columns (reduce_outer's block),
  // at 512 (the v4 sweep) and past 1024 and 2048 (its block); with them (multiples of 4), past
  // 128, 256 and 512 columns.
  CHECK(dyn_at("colsum", 7).dyn_thresholds.at("C") == std::vector<std::int64_t>{33, 65, 129, 257, 512, 1025, 2049});
  CHECK(dyn_at("colsum", 100).dyn_thresholds.at("C") == std::vector<std::int64_t>{129, 257, 513});
  // argmax4: 4 columns per C, so the classes of its inner C * 4 start at C = 33, 65, 129.
  CHECK(dyn_at("argmax4", 7).dyn_thresholds.at("C") == std::vector<std::int64_t>{33, 65, 129});
  for (const auto& op : kOps)
    for (std::int64_t c : {5, 7, 30, 33, 100, 127, 200, 255, 256, 300, 511, 515, 777, 1001, 1024, 1500, 2047, 3001}) {
      CAPTURE(op);
      CAPTURE(c);
      const auto plan = dyn_at(op, c);
      const auto& d = reduce_config(plan);
      const auto& steps = plan.dyn_thresholds.at("C");
      const int klass = kiln::dyn_class(steps, c);
      if (klass == static_cast<int>(steps.size())) continue;   // the top class: below
      const std::int64_t widest = steps[static_cast<std::size_t>(klass)] - 1;
      const std::int64_t narrowest = kiln::dyn_class_low(steps, klass);
      // The specialized plan at the class's widest value of the same row class (the value's residue
      // mod 8 kept, where the dim is a row length and the value not a multiple of 4, 8 or 16).
      std::int64_t like = widest;
      while (like > c && kiln::dyn_row_class(like) != kiln::dyn_row_class(c)) --like;
      if (kiln::dyn_bucket(like) != kiln::dyn_bucket(c)) continue;
      const auto s = static_at(op, like);
      const auto& f = reduce_config(s);
      CHECK(f.variant == d.variant);
      CHECK(f.vec == d.vec);
      if (like == widest) {
        CHECK(f.threads == d.threads);
        CHECK(f.cols == d.cols);
      }
      // The most splits of the class: the rule's at its narrowest width (and the fewest rows: 1
      // where they are dyn), with the class's block.
      if (d.splits > 1) {
        kiln::ReduceConfig at = d;
        at.outer = kShapes.at(op).outer;
        at.red = kShapes.at(op).red;
        at.inner = narrowest * kShapes.at(op).per_c;
        CHECK(kiln::reduce_split_rule(at, 132).splits == d.splits);
      }
    }
  // The top classes take the rules' widest picks.
  CHECK(reduce_config(dyn_at("colsum", 3001)).threads == kiln::launch::kOuterV4MaxThreads);
  CHECK(reduce_config(dyn_at("colmax_h", 3001)).cols == kiln::launch::kOuterRowsMaxCols);
  CHECK(reduce_config(dyn_at("colsum", 3000)).threads == 256);
}

TEST_CASE("dyn inner: each launch's grid, split count and partial states are its own") {
  // colsum: 64 rows of 1000, split at the class's narrowest inner; at each launch as the rule at
  // its inner (at least 2 ways), the partial states its geometry sizes; reduce_finish over the
  // launch's outputs.
  const auto plan = dyn_at("colsum", 600);   // [513, ...), 16-byte columns
  REQUIRE(plan.kernels.size() == 2);
  const auto& d = reduce_config(plan);
  kiln::ReduceConfig narrowest = d;   // the rule at the class's narrowest inner, with the class's 256 threads
  narrowest.inner = 513;
  CHECK(d.threads == 256);
  CHECK(d.splits == kiln::reduce_split_rule(narrowest, 132).splits);
  CHECK(d.split_sms == 132);
  int ws = -1;
  for (std::size_t b = 0; b < plan.buffers.size(); ++b)
    if (plan.buffers[b].kind == kiln::BufferKind::Workspace) ws = static_cast<int>(b);
  REQUIRE(ws >= 0);
  CHECK(plan.buffers[static_cast<std::size_t>(ws)].launch_kernel == 0);
  for (std::int64_t c : {520, 600, 1000, 4104, 100008}) {
    CAPTURE(c);
    const std::map<std::string, std::int64_t> dims{{"C", c}, {"R", 1000}};
    const auto g = kiln::launch_for(plan, 0, dims);
    const auto spec = static_at("colsum", c);
    const auto& sc = reduce_config(spec);
    const long long want = std::max<long long>(2, std::min<long long>(sc.splits, d.splits));
    CHECK(g.grid.y == want);
    CHECK(g.grid.x == 64 * kiln::launch::ceil_div(c, 256LL * 4));
    CHECK(plan.buffer_bytes(static_cast<std::size_t>(ws), dims) == want * 64 * c * 4);
    const auto f = kiln::launch_for(plan, 1, dims);
    CHECK(f.grid.x == kiln::launch::reduce_finish_geometry(64 * c, 256, std::get<kiln::ReduceFinishConfig>(
                                                                             plan.kernels[1].config).lanes).grid.x);
    // Where the specialized plan splits too, the launch is the specialized one.
    if (sc.splits > 1 && sc.splits <= d.splits) CHECK(g.grid.y == spec.kernels[0].grid.y);
  }
  // The bound launch, as kiln gen shows it, and the text that says how it splits.
  CHECK(plan.kernels[0].reason.find("each launch splits as the rule at its inner, 2 to") != std::string::npos);
  // Rows of two and a long reduced axis with the rows dyn too (the generic default makes the 2 rows
  // dyn): split at the fewest blocks of both.
  const auto few = dyn_at("colsum_few", 100);
  CHECK(!few.kernels[0].dyn_outer.empty());
  CHECK(reduce_config(few).splits > 1);
  CHECK(few.kernels[0].reason.find("dyn rows and inner: each launch splits as the rule at its rows and inner") !=
        std::string::npos);
  for (std::int64_t b : {1, 2, 7, 300})
    for (std::int64_t c : {4, 108, 124}) {
      CAPTURE(b);
      CAPTURE(c);
      const auto g = kiln::launch_for(few, 0, {{"B", b}, {"C", c}, {"R", 100000}});
      kiln::ReduceConfig at = reduce_config(few);
      at.outer = b;
      at.inner = c;
      const long long rule = kiln::reduce_split_rule(at, 132).splits;
      CHECK(g.grid.y == std::max<long long>(2, std::min(rule, reduce_config(few).splits)));
      CHECK(g.grid.x == b);   // one 32-thread tile of 4 columns a thread covers 128 columns
    }
}

namespace {

struct Run {
  std::string op;
  std::int64_t planned_at;                 // the dyn dim's value the plan is made at
  std::vector<std::int64_t> launched_at;   // values of its bucket, row class and size class
  bool aligned16 = true;                   // the target's
};

const char* kSmall =
    "op colsum {\n  dims R = 300, dyn C = 40\n  in  x: f32[3, R, C]\n  out y = sum(x, axis=1)\n}\n"
    "op colmax {\n  dims R = 40, dyn C = 40\n  in  x: f32[2, R, C]\n  out y = max(x, axis=1)\n}\n";

kiln::Plan small_at(const Run& r, std::int64_t c) {
  auto spec = kiln::parse_spec(kSmall, "small.kiln");
  std::map<std::string, kiln::ir::DimValue> given{{"C", {c, "test"}}};
  auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, r.op), given));
  kiln::Target t = kiln::Target::for_arch("sm_90a");
  t.aligned16 = r.aligned16;
  return kiln::make_plan(bound, t);
}

}  // namespace

TEST_CASE("dyn inner: a plan made at one inner runs right at the others of its class (emulated)") {
  // Each kind of class of an f32 C: no vectors in [1, 33) (widths not multiples of 4), 16-byte
  // columns (multiples of 4; the bucket multiple of 16; the top class), the v4 sweep from 512
  // columns in two classes (256 and 1024 threads), and the whole-row sweep and narrow blocks where
  // the bases are not known to be aligned; sums split (300 rows), maxima with a NaN.
  const std::vector<Run> runs = {
      {"colsum", 7, {5, 7, 9, 31, 30}},         {"colsum", 100, {4, 12, 100, 124}},
      {"colsum", 32, {16, 48, 112}},            {"colsum", 600, {520, 600, 1208}},
      {"colmax", 1001, {513, 777, 1001, 1023}}, {"colmax", 3001, {2049, 3001}},
      {"colmax", 700, {512, 700, 1024}, false}, {"colsum", 200, {130, 200, 255}, false},
  };
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::set<kiln::ReduceVariant> variants;
  for (const Run& r : runs) {
    const kiln::Plan plan = small_at(r, r.planned_at);
    const auto& c = reduce_config(plan);
    variants.insert(c.variant);
    const bool sum = r.op == "colsum";
    const int outer = sum ? 3 : 2, red = sum ? 300 : 40;
    int ws = -1;
    for (std::size_t b = 0; b < plan.buffers.size(); ++b)
      if (plan.buffers[b].kind == kiln::BufferKind::Workspace) ws = static_cast<int>(b);
    for (std::int64_t value : r.launched_at) {
      INFO(r.op << " planned at C = " << r.planned_at << ", launched at " << value << ": "
                << plan.kernels[0].reason);
      CHECK(small_at(r, value).kernels[0].config == plan.kernels[0].config);   // one compile serves it
      const int inner = static_cast<int>(value);
      const std::map<std::string, std::int64_t> dims{{"C", value}, {"R", red}};
      reduce_emulation::Launch l;
      l.config = c;
      const auto g = kiln::launch_for(plan, 0, dims);
      l.grid_x = g.grid.x;
      l.grid_y = g.grid.y;
      if (c.splits > 1) {
        CHECK(g.grid.y >= 2);
        CHECK(g.grid.y <= c.splits);
        l.chunk = kiln::launch::reduce_dyn_chunk(red, g.grid.y, 1);   // as the unit's body
        REQUIRE(ws >= 0);
        CHECK(plan.buffer_bytes(static_cast<std::size_t>(ws), dims) == g.grid.y * outer * inner * 4);
        const auto& f = std::get<kiln::ReduceFinishConfig>(plan.kernels.at(1).config);
        l.finish_threads = f.threads;
        l.finish_lanes = f.lanes;
        l.finish_grid_x = kiln::launch_for(plan, 1, dims).grid.x;
      } else {
        CHECK(g.grid.y == 1);
        l.chunk = c.chunk;
      }
      std::vector<float> storage(static_cast<std::size_t>(outer) * red * inner + 8);
      const auto base = reinterpret_cast<std::uintptr_t>(storage.data());
      float* x = reinterpret_cast<float*>((base + 15) & ~std::uintptr_t{15});
      for (std::size_t i = 0; i < static_cast<std::size_t>(outer) * red * inner; ++i) x[i] = u(gen);
      if (!sum) x[(1 * red + 3) * inner + inner - 1] = std::numeric_limits<float>::quiet_NaN();
      const std::vector<float> y = reduce_emulation::run(l, !sum, x, outer, red, inner);
      int bad = 0;
      for (int o = 0; o < outer; ++o)
        for (int col = 0; col < inner; ++col) {
          double ref = sum ? 0.0 : -std::numeric_limits<double>::infinity();
          bool nan = false;
          for (int i = 0; i < red; ++i) {
            const double v = x[(static_cast<std::size_t>(o) * red + i) * inner + col];
            nan = nan || std::isnan(v);
            ref = sum ? ref + v : std::max(ref, v);
          }
          const float got = y[static_cast<std::size_t>(o) * inner + col];
          const bool ok = nan ? std::isnan(got) : sum ? std::fabs(got - ref) <= 1e-4 : got == ref;
          if (!ok && bad++ < 3) FAIL_CHECK("o " << o << " col " << col << ": " << got << " vs " << ref);
        }
      CHECK(bad == 0);
    }
  }
  CHECK(variants == std::set<kiln::ReduceVariant>{kiln::ReduceVariant::kOuter, kiln::ReduceVariant::kOuterV4,
                                                  kiln::ReduceVariant::kOuterRows});
}

namespace {

const char* kScans =
    "op cs {\n  dims R = 1000, dyn C = 40\n  in  x: f32[64, R, C]\n  out y = cumsum(x, axis=1) * 2.0\n}\n"
    "op cs_few {\n  dims R = 3000, dyn C = 40\n  in  x: f32[2, R, C]\n  out y = cummax(x, axis=1, reverse=true)\n}\n"
    "op cs_rows {\n  dims dyn B = 3, R = 500, dyn C = 40\n  in  x: f32[B, R, C]\n  out y = cumsum(x, axis=1)\n}\n";

kiln::Plan scan_at(const std::string& op, std::int64_t c, std::int64_t b = 3) {
  return plan_text_at(kScans, "scan.kiln", op, {{"C", c}, {"B", b}}, "sm_90a");
}
const kiln::ScanConfig& scan_config(const kiln::Plan& plan) {
  return std::get<kiln::ScanConfig>(plan.kernels.at(0).config);
}

}  // namespace

TEST_CASE("dyn inner: strided scans, one source per class, cut into chunks as the rule at the class's narrowest") {
  for (const std::string op : {"cs", "cs_few", "cs_rows"})
    for (const auto& pair : std::vector<std::pair<std::int64_t, std::int64_t>>{{1001, 1017}, {108, 124}}) {
      CAPTURE(op);
      CAPTURE(pair.first);
      const auto a = scan_at(op, pair.first), b = scan_at(op, pair.second);
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(b)));
      CHECK(!a.kernels[0].dyn_inner.empty());
      CHECK(scan_config(a).inner == 0);
      for (const auto& src : sources_of(a)) {
        INFO(src.text);
        CHECK(src.text.find(std::to_string(pair.first)) == std::string::npos);
        CHECK(contains(src.text, "const Index inner = "));
      }
    }
  // cs_few: 2 rows of 3000 steps. Classes past 32, 64, 128 columns (the block), at the width from
  // which the rule no longer chunks, and below it past 256 at the powers of two where its count
  // changes; each class chunked as the rule at its narrowest, with the class's block.
  const auto held = scan_at("cs_few", 100);
  const auto& steps = held.dyn_thresholds.at("C");
  REQUIRE(steps.size() >= 4);
  CHECK(std::vector<std::int64_t>(steps.begin(), steps.begin() + 3) == std::vector<std::int64_t>{33, 65, 129});
  auto rule = [](std::int64_t w, int threads) {
    return kiln::launch::scan_strided_chunks(2, 3000, w, threads, 8, 132);
  };
  const std::int64_t full = steps.back();
  CHECK(rule(full, 256).chunks == 1);
  CHECK(rule(full - 1, 256).chunks > 1);
  for (std::int64_t c : std::vector<std::int64_t>{7, 40, 100, 200, 300, 1000, 5000, full - 1, full, 3 * full}) {
    CAPTURE(c);
    const auto plan = scan_at("cs_few", c);
    const auto& sc = scan_config(plan);
    const int klass = kiln::dyn_class(steps, c);
    const std::int64_t narrowest = kiln::dyn_class_low(steps, klass);
    CHECK(sc.chunks == rule(narrowest, sc.threads).chunks);
    CHECK(sc.chunk_sms == (sc.chunks > 1 ? 132 : 0));
    CHECK(sc.variant == (sc.chunks > 1 ? kiln::ScanVariant::kStridedTotals : kiln::ScanVariant::kStrided));
    if (klass < static_cast<int>(steps.size()))
      CHECK(sc.threads == kiln::launch::scan_strided_threads(steps[static_cast<std::size_t>(klass)] - 1));
    // A launch of the class: its own grid, chunked as the rule at its width (at most the class's
    // count), and the totals its geometry sizes.
    const std::map<std::string, std::int64_t> dims{{"C", c}, {"R", 3000}};
    const auto g = kiln::launch_for(plan, plan.kernels.size() - 1, dims);
    CHECK(g.grid.x == 2 * kiln::launch::ceil_div(c, sc.threads));
    CHECK(g.grid.y == std::min(sc.chunks, rule(c, sc.threads).chunks));
    for (std::size_t b = 0; b < plan.buffers.size(); ++b)
      if (plan.buffers[b].kind == kiln::BufferKind::Workspace)
        CHECK(plan.buffer_bytes(b, dims) == g.grid.y * 2 * c * 4);
  }
  // With the rows dyn too: chunked as the rule at the fewest rows (1) and the class's narrowest
  // inner; each launch as the rule at its own rows and inner, and where that is one chunk, the
  // totals kernel's grid is empty (the runtime does not launch it) and the scan runs in one pass.
  const auto both = scan_at("cs_rows", 100);
  REQUIRE(both.kernels.size() == 2);
  const auto& bc = scan_config(both);
  CHECK(bc.variant == kiln::ScanVariant::kStridedTotals);
  CHECK(bc.chunks == kiln::launch::scan_strided_chunks(1, 500, 65, bc.threads, 8, 132).chunks);
  for (const auto& [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 65}, {3, 100}, {20, 128}, {1000, 100}, {2000, 100}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    const std::map<std::string, std::int64_t> dims{{"B", rows}, {"C", cols}, {"R", 500}};
    const std::int64_t want =
        std::min(bc.chunks, kiln::launch::scan_strided_chunks(rows, 500, cols, bc.threads, 8, 132).chunks);
    const auto totals = kiln::launch_for(both, 0, dims), scan = kiln::launch_for(both, 1, dims);
    CHECK(scan.grid.y == want);
    CHECK(totals.grid.y == want);
    CHECK(scan.grid.x == rows * kiln::launch::ceil_div(cols, bc.threads));
    CHECK(totals.grid.x == (want > 1 ? scan.grid.x : 0));
    for (std::size_t b = 0; b < both.buffers.size(); ++b)
      if (both.buffers[b].kind == kiln::BufferKind::Workspace)
        CHECK(both.buffer_bytes(b, dims) == (want > 1 ? want * rows * cols * 4 : 0));
  }
  CHECK(kiln::launch_for(both, 0, {{"B", 2000}, {"C", 100}, {"R", 500}}).grid.x == 0);   // past half a wave
}

TEST_CASE("dyn inner: a strided scan planned at one inner runs right at the others of its class (emulated)") {
  // cs_few (a reverse cummax, chunked below the full width), cs (a cumsum over 64 rows) and
  // cs_rows (dyn rows too: B x C launches of one class, chunked per launch, one of them in one
  // chunk), each planned at one C (and B = 3) and launched at others of its class, against float64.
  struct ScanRun {
    std::string op;
    std::int64_t planned_at;
    std::vector<std::pair<std::int64_t, std::int64_t>> launched_at;   // (C, B)
  };
  const std::vector<ScanRun> runs = {{"cs_few", 7, {{5, 2}, {9, 2}, {31, 2}}},
                                     {"cs_few", 100, {{70, 2}, {100, 2}, {127, 2}}},
                                     {"cs_few", 300, {{260, 2}, {300, 2}, {511, 2}}},
                                     {"cs", 40, {{33, 64}, {40, 64}, {64, 64}}},
                                     {"cs_rows", 100, {{65, 1}, {100, 3}, {128, 20}, {127, 300}}}};
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (const ScanRun& r : runs) {
    const bool few = r.op == "cs_few";
    const int len = few ? 3000 : r.op == "cs" ? 1000 : 500;
    const kiln::Plan plan = scan_at(r.op, r.planned_at);
    const auto& sc = scan_config(plan);
    for (const auto& [value, rows] : r.launched_at) {
      INFO(r.op << " planned at C = " << r.planned_at << ", launched at " << value << " x " << rows << ": "
                << plan.kernels[0].reason);
      CHECK(scan_at(r.op, value, rows).kernels[0].config == plan.kernels[0].config);
      const int inner = static_cast<int>(value), outer = static_cast<int>(rows);
      const std::map<std::string, std::int64_t> dims{{"C", value}, {"B", rows}, {"R", len}};
      const auto g = kiln::launch_for(plan, plan.kernels.size() - 1, dims);
      CHECK(g.grid.y == std::min(sc.chunks, kiln::launch::scan_strided_chunks(rows, len, value, sc.threads, 8, 132).chunks));
      std::vector<float> x(static_cast<std::size_t>(outer) * len * inner);
      for (auto& v : x) v = u(gen);
      const std::vector<float> y = reduce_emulation::run_scan(sc, g, few, x.data(), outer, len, inner);
      int bad = 0;
      for (int o = 0; o < outer; ++o)
        for (int col = 0; col < inner; ++col) {
          double run = few ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int q = 0; q < len; ++q) {
            const int i = few ? len - 1 - q : q;
            const std::size_t at = (static_cast<std::size_t>(o) * len + i) * inner + col;
            run = few ? std::max(run, double(x[at])) : run + x[at];
            const bool ok = few ? y[at] == run : std::fabs(y[at] - run) <= 1e-3;
            if (!ok && bad++ < 3)
              FAIL_CHECK("o " << o << " step " << i << " col " << col << ": " << y[at] << " vs " << run);
          }
        }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("dyn inner: the bucket one is the static extent") {
  const auto one = dyn_at("colsum", 1);
  CHECK(one.kernels[0].dyn_inner.empty());
  CHECK(reduce_config(one).variant == kiln::ReduceVariant::kInnerWarp);   // rows of 1000, contiguous
  const auto four = dyn_at("argmax4", 1);
  CHECK(four.kernels[0].dyn_inner.empty());
  CHECK(reduce_config(four).inner == 4);
}

TEST_CASE("dyn inner: a second dyn dim, a dim of the rows and chains are refused where declared") {
  auto refused = [](const std::string& op) { return refusal_of(kRefused, "inner.kiln", op, {{"C", 100}, {"D", 3}}); };
  CHECK(refused("shared") ==
        "inner.kiln:2:12: op shared: dim 'C' is dyn, but the reduce template (for line 4) takes a dyn dim after the "
        "axes it works along only where it sizes nothing else, and 'C' also sizes its rows");
  CHECK(refused("two") == "inner.kiln:7:12: op two: dim 'C' is dyn, but the reduce template (for line 9) takes one dyn "
                          "dim among the axes after those it works along");
  CHECK(refused("scan") == "inner.kiln:12:19: op scan: dim 'C' is dyn, but the scan template (for line 14) takes one "
                           "dyn dim among the axes after those it works along");
  CHECK(refused("norm") == "planned");   // a strided softmax: below
  CHECK(refused("chain").find("inner.kiln:22:19: op chain: dim 'C' is dyn, but the reduce (a chain over non-adjacent "
                              "axes) template (for line 24)") == 0);
}

TEST_CASE("dyn inner: a softmax down a strided axis takes any inner in one source, its grid each launch's") {
  const char* text = "op sm {\n  dims B = 8, L = 100, dyn C\n  in  x: f32[B, L, C]\n  in  b: f32[C]\n"
                     "  out y = log_softmax(x + b, axis=1)\n}\n";
  auto at = [&](std::int64_t c) { return plan_text_at(text, "sm.kiln", "sm", {{"C", c}}, "sm_90a"); };
  const auto plan = at(300);
  REQUIRE(plan.kernels.size() == 1);
  const auto& c = std::get<kiln::RownormConfig>(plan.kernels[0].config);
  CHECK(c.variant == kiln::RownormVariant::kStrided);
  CHECK(c.inner == 0);
  CHECK(!plan.kernels[0].dyn_inner.empty());
  CHECK(plan.dyn_thresholds.count("C") == 0);   // nothing of the plan follows the width
  for (std::int64_t v : {2, 7, 301, 1000, 4099}) {
    CAPTURE(v);
    CHECK(all_sources(sources_of(at(v))) == all_sources(sources_of(plan)));
    CHECK(kiln::launch_for(plan, 0, {{"B", 8}, {"C", v}, {"L", 100}}).grid.x ==
          kiln::launch::rownorm_strided_geometry(8, v, 256).grid.x);
  }
  for (const auto& src : sources_of(plan)) CHECK(src.text.find("300") == std::string::npos);
  if (!nvrtc_or_skip()) return;
  for (const char* arch : {"sm_80", "sm_90a"})
    CHECK(check_units_compile(plan_text_at(text, "sm.kiln", "sm", {{"C", 1001}}, arch), arch) == 1);
}

TEST_CASE("dyn inner: golden of a split column sum with a broadcast epilogue") {
  check_golden("source/dyn_inner_colsum.cu", [] {
    const auto plan = dyn_at("colsum", 1001);
    return plan.text() + "\n" + all_sources(sources_of(plan));
  }());
}

TEST_CASE("dyn inner: every unit compiles with NVRTC for sm_80 and sm_90a") {
  if (!nvrtc_or_skip()) return;
  int units = 0;
  for (const auto& op : kOps)
    for (const char* arch : {"sm_80", "sm_90a"})
      for (std::int64_t c : {7, 100, 1001, 3000}) {
        CAPTURE(op);
        CAPTURE(c);
        units += check_units_compile(dyn_at(op, c, arch), arch);
      }
  for (const std::string op : {"cs", "cs_few", "cs_rows"})
    for (const char* arch : {"sm_80", "sm_90a"})
      for (std::int64_t c : {7, 1001, 5000}) {
        CAPTURE(op);
        CAPTURE(c);
        units += check_units_compile(plan_text_at(kScans, "scan.kiln", op, {{"C", c}, {"B", 3}}, arch), arch);
      }
  MESSAGE(units << " units compiled");
}

TEST_CASE("dyn inner: golden of a strided scan with dyn rows and inner, chunked per launch") {
  check_golden("source/dyn_inner_scan_rows.cu", [] {
    const auto plan = scan_at("cs_rows", 1000, 2);
    return plan.text() + "\n" + all_sources(sources_of(plan));
  }());
}
