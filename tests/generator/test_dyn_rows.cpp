// dyn rows for the memory-bound family ([Note: dyn rows] in generator/plan/plan_memory.cpp, [Note:
// dyn size classes] in generator/plan/plan.h): reductions, scans and row normalizations take a dyn
// dim among the axes before those they work along. Within a bucket and size class every value
// gives the same source, free of the value; the launch follows the values through the family's
// geometry rule; other dyn dims are refused where they are declared; the units compile.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "memory_plan_util.h"
#include "runtime/nvrtc.h"

namespace {

using namespace memory_plan_test;

// Each op twice: `dims dyn B` and, for the comparison of launches, B baked in (the "_static" ops).
std::string spec_text(const std::string& b_decl) {
  return "op sm {\n  dims " + b_decl + ", N = 1000\n  in  x: f32[B, N]\n  out y = softmax(x, axis=-1)\n}\n" +
         "op rsum {\n  dims " + b_decl + ", S = 12, N = 4096\n  in  x: f32[B, S, N]\n  out y = sum(x, axis=2) * 2.0\n}\n" +
         "op csum {\n  dims " + b_decl + ", N = 3000\n  in  x: f32[B, N]\n  out y = cumsum(x, axis=1)\n}\n" +
         "op colsum {\n  dims " + b_decl + ", R = 64, C = 1000\n  in  x: f32[B, R, C]\n  out y = sum(x, axis=1)\n}\n" +
         "op cs_strided {\n  dims " + b_decl + ", L = 100, C = 300\n  in  x: f32[B, L, C]\n" +
         "  out y = cumsum(x, axis=1)\n}\n" +
         "op sm_strided {\n  dims " + b_decl + ", L = 100, C = 300\n  in  x: f32[B, L, C]\n" +
         "  out y = softmax(x, axis=1)\n}\n" +
         "op layernorm {\n  const eps: f32 = 1e-5\n  dims " + b_decl + ", N = 4096\n  in  x: f32[B, N]\n" +
         "  in  g: f32[B]\n  let mu = mean(x, axis=1, keepdims=true)\n  let d = x - mu\n" +
         "  let var = mean(d * d, axis=1, keepdims=true)\n  out y = d * rsqrt(var + eps)\n" +
         "  out s = sum(x, axis=1) * g\n}\n" +
         "op lsum {\n  dims " + b_decl + ", N = 1048576\n  in  x: f32[B, N]\n  out y = sum(x, axis=1)\n}\n" +
         "op lcs {\n  dims " + b_decl + ", N = 1048576\n  in  x: f32[B, N]\n  out y = cumsum(x, axis=1)\n}\n" +
         "op cs_mid {\n  dims " + b_decl + ", M = 65536, N = 32\n  in  x: f32[B, M, N]\n" +
         "  out y = cumsum(x, axis=1, exclusive=true)\n}\n";
}

const char* kRefused =
    "op reduced {\n"
    "  dims B = 8, dyn N\n"
    "  in  x: f32[B, N, N]\n"
    "  out y = softmax(x, axis=1)\n"
    "}\n"
    "op inner {\n"
    "  dims dyn B, L = 8, dyn C\n"
    "  in  x: f32[B, L, C, C]\n"
    "  out y = softmax(x, axis=1)\n"
    "}\n"
    "op chain {\n"
    "  dims dyn B, M = 8, N = 64\n"
    "  in  x: f32[B, M, N]\n"
    "  out y = sum(x, axis=[0, 2])\n"
    "}\n";

kiln::Plan plan_text_at(const std::string& text, const std::string& op, std::int64_t b, const std::string& arch = "sm_90a") {
  auto spec = kiln::parse_spec(text, "rows.kiln");
  std::map<std::string, kiln::ir::DimValue> given{{"B", {b, "test"}}};
  for (const char* dim : {"N", "C"})   // the refused ops' other dyn dims
    if (text.find(std::string("dyn ") + dim) != std::string::npos) given[dim] = {100, "test"};
  auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, op), given));
  return kiln::make_plan(bound, kiln::Target::for_arch(arch));
}
kiln::Plan dyn_at(const std::string& op, std::int64_t b, const std::string& arch = "sm_90a") {
  return plan_text_at(spec_text("dyn B"), op, b, arch);
}
kiln::Plan static_at(const std::string& op, std::int64_t b) {
  return plan_text_at(spec_text("B = " + std::to_string(b)), op, b);
}

const std::vector<std::string> kOps{"sm",         "rsum",      "csum", "colsum", "cs_strided",
                                    "sm_strided", "layernorm", "lsum", "lcs",    "cs_mid"};

}  // namespace

TEST_CASE("dyn rows: one source per bucket and class, values only at launch") {
  // 1037, 1077 and 3313 are in the bucket "general"; 272 and 1040 multiples of 16. For every op
  // the class is the same for the values of one group (sm: [264, 1056); rsum: B < 352).
  for (const auto& op : kOps) {
    CAPTURE(op);
    const auto a = dyn_at(op, 299), b = dyn_at(op, 301), c = dyn_at(op, 303);
    CHECK(all_sources(sources_of(a)) == all_sources(sources_of(b)));
    CHECK(all_sources(sources_of(a)) == all_sources(sources_of(c)));
    for (const auto* p : {&a, &b, &c})
      for (const auto& src : sources_of(*p)) {
        INFO(src.text);
        CHECK(src.text.find("299") == std::string::npos);
        CHECK(src.text.find("301") == std::string::npos);
        CHECK(src.text.find("303") == std::string::npos);
        if (src.text.find("kiln/elementwise.cuh") == std::string::npos)
          CHECK(src.text.find("const Index rows = ") != std::string::npos);
      }
    // The small class too (split reductions, the look-back scan): 7 and 100 share a source (colsum's
    // classes are 8 times apart: 67 and 100).
    CHECK(all_sources(sources_of(dyn_at(op, op == "colsum" ? 67 : 7))) == all_sources(sources_of(dyn_at(op, 100))));
    // Every anchor kernel takes B and computes its rows from it.
    for (const auto& kn : a.kernels)
      if (kn.anchor >= 0) CHECK(!kn.dyn_outer.empty());
  }
}

TEST_CASE("dyn rows: size classes where the plan changes with the row count") {
  // softmax over rows of 1000 floats on 132 SMs: a block per row with 4 or 16 items a thread below
  // 2 rows an SM and below 8, a warp per row from 8 rows an SM (rownorm_use_warp, _block_threads).
  const auto few = dyn_at("sm", 100), some = dyn_at("sm", 1000), many = dyn_at("sm", 5000);
  CHECK(few.dyn_thresholds.at("B") == std::vector<std::int64_t>{264, 1056});
  CHECK(std::get<kiln::RownormConfig>(few.kernels[0].config).variant == kiln::RownormVariant::kBlockRows);
  CHECK(std::get<kiln::RownormConfig>(many.kernels[0].config).variant == kiln::RownormVariant::kWarpRows);
  CHECK(some.text().find("B=1000 (dyn, general, class [264, 1056))") != std::string::npos);
  CHECK(many.text().find("B=5000 (dyn, general, class >= 1056)") != std::string::npos);
  CHECK(all_sources(sources_of(some)) != all_sources(sources_of(many)));
  // Each class plans as the static op at the class's lowest row count.
  CHECK(std::get<kiln::RownormConfig>(dyn_at("sm", 1055).kernels[0].config).variant ==
        std::get<kiln::RownormConfig>(static_at("sm", 264).kernels[0].config).variant);
  CHECK(std::get<kiln::RownormConfig>(dyn_at("sm", 1056).kernels[0].config).variant == kiln::RownormVariant::kWarpRows);
  // sum over rows of 4096 (S = 12 rows per B): a warp per row from 32 rows an SM, 4224 rows, so
  // B >= 352; below, a block per row, never split with dyn rows.
  const auto r_few = dyn_at("rsum", 351), r_many = dyn_at("rsum", 352);
  CHECK(r_few.dyn_thresholds.at("B") == std::vector<std::int64_t>{22, 352});
  CHECK(std::get<kiln::ReduceConfig>(r_few.kernels[0].config).variant == kiln::ReduceVariant::kInnerBlock);
  CHECK(std::get<kiln::ReduceConfig>(r_few.kernels[0].config).splits == 1);
  CHECK(r_few.kernels.size() == 1);
  CHECK(std::get<kiln::ReduceConfig>(r_many.kernels[0].config).variant == kiln::ReduceVariant::kInnerWarp);
  // Rows of 2^20 floats: under 2 rows an SM each row is split, at most 128 ways (planned for 1 row),
  // the partial states sized for the class's most rows (263), and each launch splits as the
  // specialized plan at its rows ([Note: splits per launch]): the kernel and reduce_finish read
  // that count (launch_value), and reduce_finish counts its outputs at launch; from 264 rows, a
  // block per row.
  const auto l_few = dyn_at("lsum", 100), l_some = dyn_at("lsum", 300);
  REQUIRE(l_few.kernels.size() == 2);
  const auto& l_config = std::get<kiln::ReduceConfig>(l_few.kernels[0].config);
  CHECK(l_config.splits == 128);
  CHECK(l_config.split_sms == 132);
  CHECK(l_config.chunk == 0);
  CHECK(std::get<kiln::ReduceFinishConfig>(l_few.kernels[1].config).n_out == 0);
  CHECK(!l_few.kernels[1].dyn_outer.empty());
  for (const auto& b : l_few.buffers)
    if (b.kind == kiln::BufferKind::Workspace) CHECK(b.bytes == 128 * 263 * 4);
  for (std::int64_t b : {1, 2, 7, 100, 263}) {
    CAPTURE(b);
    const std::map<std::string, std::int64_t> at{{"B", b}, {"N", 1 << 20}};
    const auto s = static_at("lsum", b);
    REQUIRE(s.kernels.size() == 2);
    const auto g = kiln::launch_for(l_few, 0, at);
    CHECK(g.grid.x == s.kernels[0].grid.x);
    CHECK(g.grid.y == s.kernels[0].grid.y);   // 38 ways at 7 rows, not 128
    for (std::size_t k : {0u, 1u}) {
      const auto& args = l_few.kernels[k].args;
      const auto count = std::find_if(args.begin(), args.end(), [](const kiln::KernelArg& a) {
        return a.kind == kiln::KernelArg::Kind::LaunchSplits;
      });
      REQUIRE(count != args.end());
      CHECK(count->kernel == 0);
      CHECK(kiln::launch_value(l_few, *count, at) == s.kernels[0].grid.y);
    }
  }
  CHECK(kiln::launch_for(l_few, 1, {{"B", 7}, {"N", 1 << 20}}).grid.x == 1);   // 7 outputs, a thread each
  CHECK(l_some.kernels.size() == 1);
  // A cumsum of such rows: the look-back scan under 2 rows an SM, its flags sized for 263 rows and
  // zeroed at each launch as far as that launch's rows reach (the launch's workspace_bytes).
  const auto c_few = dyn_at("lcs", 3);
  CHECK(std::get<kiln::ScanConfig>(c_few.kernels[0].config).variant == kiln::ScanVariant::kRowsLookback);
  CHECK(kiln::launch_for(c_few, 0, {{"B", 3}, {"N", 1 << 20}}).workspace_bytes <
        kiln::launch_for(c_few, 0, {{"B", 263}, {"N", 1 << 20}}).workspace_bytes);
  for (const auto& b : c_few.buffers)
    if (b.kind == kiln::BufferKind::Workspace)
      CHECK(b.bytes == kiln::launch_for(c_few, 0, {{"B", 263}, {"N", 1 << 20}}).workspace_bytes);
  CHECK(std::get<kiln::ScanConfig>(dyn_at("lcs", 264).kernels[0].config).variant == kiln::ScanVariant::kRowsBlock);
  // A scan along a middle axis of 65536 with rows of 32 columns: chunked below a full wave of
  // blocks (132 SMs x 64 blocks of 32 threads: 8448 rows), in classes 8 times apart, the chunk
  // totals sized for each class's most rows; each launch chunks as the rule at its own rows, at
  // most the class's count ([Note: chunks per launch]).
  const auto m_few = dyn_at("cs_mid", 4), m_more = dyn_at("cs_mid", 500), m_full = dyn_at("cs_mid", 8448);
  CHECK(m_few.dyn_thresholds.at("B") == std::vector<std::int64_t>{132, 1056, 8448});
  REQUIRE(m_few.kernels.size() == 2);
  const auto few_chunks = std::get<kiln::ScanConfig>(m_few.kernels[0].config).chunks;
  CHECK(few_chunks == 128);
  for (const auto& b : m_few.buffers)
    if (b.kind == kiln::BufferKind::Workspace) CHECK(b.bytes == few_chunks * 131 * 32 * 4);
  REQUIRE(m_more.kernels.size() == 2);
  CHECK(std::get<kiln::ScanConfig>(m_more.kernels[0].config).chunks == 64);   // planned for 132 rows
  CHECK(m_full.kernels.size() == 1);
  CHECK(kiln::launch_for(m_few, 0, {{"B", 100}, {"M", 65536}, {"N", 32}}).grid.x == 100);
  const auto at_100 = kiln::launch::scan_strided_chunks(100, 65536, 32, 32, 8, 132);
  CHECK(at_100.chunks < 128);
  CHECK(kiln::launch_for(m_few, 1, {{"B", 100}, {"M", 65536}, {"N", 32}}).grid.y == at_100.chunks);
  CHECK(kiln::launch_for(m_few, 0, {{"B", 4}, {"M", 65536}, {"N", 32}}).grid.y == 128);
  for (const std::int64_t b : {1, 4, 100, 131})
    for (std::size_t k = 0; k < 2; ++k) {
      CAPTURE(b);
      const std::map<std::string, std::int64_t> dims{{"B", b}, {"M", 65536}, {"N", 32}};
      CHECK(kiln::launch_for(m_few, k, dims).grid.y ==
            std::min<std::int64_t>(few_chunks, kiln::launch::scan_strided_chunks(b, 65536, 32, 32, 8, 132).chunks));
    }
  // Both kernels read the launch's count: the totals kernel's grid.y.
  for (const auto& kn : m_few.kernels)
    CHECK(std::count_if(kn.args.begin(), kn.args.end(), [](const kiln::KernelArg& a) {
            return a.kind == kiln::KernelArg::Kind::LaunchSplits && a.kernel == 0;
          }) == 1);
  // Scans over short rows have no classes.
  CHECK(dyn_at("csum", 7).dyn_thresholds.empty());
  // A reduction along a strided axis splits in classes 8 times apart below the rows whose blocks
  // fill the GPU unsplit (colsum: 529 rows of 1000 columns), each split as the specialized
  // reduction at its lowest row count, its partial states sized for its most rows; from 529 on,
  // one pass.
  const std::vector<std::int64_t> colsum_at{2, 9, 67, 529};
  CHECK(dyn_at("colsum", 7).dyn_thresholds.at("B") == colsum_at);
  for (std::int64_t b : {1, 2, 8, 9, 66, 67, 100, 528}) {
    CAPTURE(b);
    const auto d = dyn_at("colsum", b);
    const int klass = kiln::dyn_class(colsum_at, b);
    const std::int64_t low = kiln::dyn_class_low(colsum_at, klass), most = colsum_at.at(std::size_t(klass)) - 1;
    const auto s = static_at("colsum", low);
    REQUIRE(d.kernels.size() == 2);
    REQUIRE(s.kernels.size() == 2);
    const auto& dc = std::get<kiln::ReduceConfig>(d.kernels[0].config);
    const auto& sc = std::get<kiln::ReduceConfig>(s.kernels[0].config);
    CHECK(dc.splits == sc.splits);
    CHECK(dc.chunk == 0);   // the launch's
    CHECK(dc.split_sms == 132);
    CHECK(dc.splits > 1);
    for (const auto& buf : d.buffers)
      if (buf.kind == kiln::BufferKind::Workspace) CHECK(buf.bytes == dc.splits * most * 1000 * 4);
    CHECK(d.text().find(fmt::format("planned for {} rows, partial states for up to {}", low, most)) != std::string::npos);
    // Each launch: the specialized plan's blocks and splits at its rows (at most the class's); the
    // finish over its rows' outputs.
    const std::map<std::string, std::int64_t> at{{"B", b}, {"R", 64}, {"C", 1000}};
    const auto g = kiln::launch_for(d, 0, at);
    const auto exact = static_at("colsum", b);
    CHECK(g.grid.x == exact.kernels[0].grid.x);
    CHECK(g.grid.y == exact.kernels[0].grid.y);
    CHECK(g.grid.y <= dc.splits);
    CHECK(kiln::launch_value(d, d.kernels[1].args.back(), at) == g.grid.y);
  }
  CHECK(dyn_at("colsum", 529).kernels.size() == 1);
  CHECK(dyn_at("colsum", 5000).text().find("dyn rows, 529 or more (a full wave of blocks): unsplit") != std::string::npos);
  // With a dyn length too, never split (the same op with R dyn).
  const std::string both = "op colsum {\n  dims dyn B, dyn R, C = 1000\n  in  x: f32[B, R, C]\n  out y = sum(x, axis=1)\n}\n";
  auto spec = kiln::parse_spec(both, "rows.kiln");
  auto bound = std::make_shared<const kiln::ir::BoundIr>(
      kiln::ir::bind(kiln::check_op(spec, "colsum"), {{"B", {3, "test"}}, {"R", {4096, "test"}}}));
  const auto both_plan = kiln::make_plan(bound, kiln::Target::for_arch("sm_90a"));
  CHECK(both_plan.kernels.size() == 1);
  CHECK(both_plan.text().find("dyn rows and length: never split") != std::string::npos);
  // The rules of each class: dyn_class and its texts.
  const std::vector<std::int64_t> t{264, 1056};
  CHECK(kiln::dyn_class(t, 1) == 0);
  CHECK(kiln::dyn_class(t, 263) == 0);
  CHECK(kiln::dyn_class(t, 264) == 1);
  CHECK(kiln::dyn_class(t, 1056) == 2);
  CHECK(kiln::dyn_class_low(t, 0) == 1);
  CHECK(kiln::dyn_class_low(t, 2) == 1056);
  CHECK(kiln::dyn_class_text(t, 0) == "[1, 264)");
  CHECK(kiln::dyn_class_text(t, 2) == ">= 1056");
}

TEST_CASE("dyn rows: the launch is the family's rule at the launch's rows") {
  // For values in the class a plan was made in, launch_for equals the static plan's launch (at
  // row counts where the static plan does not split or chunk, which a dyn plan never does).
  const std::map<std::string, std::vector<std::int64_t>> values{
      {"sm", {300, 700, 1055}}, {"rsum", {400, 5000}}, {"csum", {1, 17, 4000}}, {"colsum", {2000, 3001}},
      {"cs_strided", {600, 999}}, {"sm_strided", {2, 333}}, {"layernorm", {5000, 9999}}, {"lsum", {1, 2}},
      {"lcs", {1, 2, 100}}};
  for (const auto& entry : values) {
    const std::string& op = entry.first;   // not a structured binding: CAPTURE's lambda reads it
    const auto& bs = entry.second;
    const auto plan = dyn_at(op, bs.front());
    for (std::int64_t b : bs) {
      CAPTURE(op);
      CAPTURE(b);
      const auto fixed = static_at(op, b);
      REQUIRE(fixed.kernels.size() == plan.kernels.size());
      std::map<std::string, std::int64_t> dims = plan.bound->dims;
      dims["B"] = b;
      for (std::size_t k = 0; k < plan.kernels.size(); ++k) {
        const auto g = kiln::launch_for(plan, k, dims);
        CHECK(g.grid.x == fixed.kernels[k].grid.x);
        CHECK(g.grid.y == fixed.kernels[k].grid.y);
        CHECK(g.block.x == fixed.kernels[k].block.x);
        // Intermediates (layernorm's mu and var) are sized by the launch.
        for (std::size_t i = 0; i < plan.buffers.size(); ++i)
          if (plan.buffers[i].kind == kiln::BufferKind::Intermediate)
            CHECK(plan.buffer_bytes(i, dims) == fixed.buffers[i].bytes);
      }
    }
  }
}

TEST_CASE("dyn rows: a split kernel's launch splits at least 2 ways, where the rule would not split") {
  // The whole-row sweep's split rule (reduce_outer_rows_split, against wave quantization) is not
  // monotone in the blocks: f16 rows of 10001 (3 tiles a row) split 4 ways at 128 rows and 2 at
  // 256, but not at 160 (480 blocks fill 91% of a wave of 528). 160 rows are in the class planned
  // at its lowest row count, which splits; the split kernel stores partial states only, so its
  // launch at 160 splits 2 ways (a count of 1 had it store finished values through the null
  // output pointer its unit passes).
  const char* text =
      "op hmax {\n  dims dyn B, R = 4096, C = 10001\n  in  x: f16[B, R, C]\n  out y = max(x, axis=1)\n}\n";
  const auto plan = plan_text_at(text, "hmax", 100);
  const auto& c = std::get<kiln::ReduceConfig>(plan.kernels.at(0).config);
  REQUIRE(c.variant == kiln::ReduceVariant::kOuterRows);
  REQUIRE(c.splits > 1);
  std::map<std::string, std::int64_t> dims = plan.bound->dims;
  dims["B"] = 160;
  REQUIRE(kiln::dyn_class(plan.dyn_thresholds.at("B"), 160) == kiln::dyn_class(plan.dyn_thresholds.at("B"), 100));
  kiln::ReduceConfig at = c;
  at.outer = 160;
  at.inner = 10001;
  CHECK(kiln::reduce_split_rule(at, 132).splits == 1);
  CHECK(kiln::launch_for(plan, 0, dims).grid.y == 2);
  CHECK(kiln::launch_value(plan, plan.kernels[0].args.back(), dims) == 2);   // launch_splits, as the finish reads it
}

TEST_CASE("dyn rows: other dyn dims are refused where they are declared") {
  auto refused = [](const std::string& op) {
    return refusal_of(kRefused, "rows.kiln", op, {{"B", 4}, {"N", 100}, {"C", 100}});
  };
  CHECK(refused("reduced") ==
        "rows.kiln:2:19: op reduced: dim 'N' is dyn, but the rownorm template (for line 4) takes a dyn dim after the "
        "axes it works along only where it sizes nothing else, and 'N' also sizes the axes it works along");
  CHECK(refused("inner") == "rows.kiln:7:26: op inner: dim 'C' is dyn, but the rownorm template (for line 9) takes "
                            "one dyn dim among the axes after those it works along");
  CHECK(refused("chain").find("rows.kiln:12:12: op chain: dim 'B' is dyn, but the reduce (a chain over non-adjacent "
                              "axes) template (for line 14)") == 0);
}

TEST_CASE("dyn rows: every unit compiles with NVRTC for sm_80 and sm_90a") {
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("skipped: NVRTC not loadable (" << why << ")");
    return;
  }
  int units = 0;
  for (const auto& op : kOps)
    for (const char* arch : {"sm_80", "sm_90a"})
      for (std::int64_t b : {7, 5000}) {
        CAPTURE(op);
        units += check_units_compile(dyn_at(op, b, arch), arch);
      }
  MESSAGE(units << " units compiled");
}
