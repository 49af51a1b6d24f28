// dyn lengths for the memory-bound family ([Note: dyn lengths] in generator/plan/plan_memory.cpp):
// reductions, scans and row normalizations take a dyn dim among the axes they work along. Within a
// bucket and size class every value gives the same source, free of the value, and the kernel reads
// the length from its dim_ arguments; a softmax's classes hold every row of the class in registers;
// nothing is split or chunked along a dyn length; a norm composition over one is not fused; a dyn
// axis after the worked ones is a dyn inner extent (test_dyn_inner.cpp); a chain is refused where
// its dyn dim is declared; the units compile.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "golden.h"
#include "memory_plan_util.h"
#include "templates/kiln/config/reduce.h"
#include "templates/kiln/config/rownorm.h"

namespace {

using namespace memory_plan_test;

// Each op with `L` dyn and, for comparing launches, with L baked in (static_at).
std::string spec_text(const std::string& l_decl) {
  const std::string L = l_decl;
  return "op rs {\n  dims B = 64, " + L + "\n  in  x: f32[B, L]\n  out y = sum(x, axis=1)\n}\n" +
         "op rs_many {\n  dims B = 8192, " + L + "\n  in  x: f32[B, L]\n  out y = mean(x, axis=1)\n}\n" +
         "op rs_fused {\n  dims B = 64, " + L + "\n  in  x: f32[B, L]\n  in  w: f32[L]\n  in  g: f32[B]\n" +
         "  out y = sum(x * w, axis=1) * g\n}\n" +
         "op amax {\n  dims B = 300, " + L + "\n  in  x: f16[B, L]\n  out y = argmax(x, axis=1)\n}\n" +
         "op colmean {\n  dims B = 16, " + L + ", C = 7\n  in  x: f32[B, L, C]\n  out y = mean(x, axis=1)\n}\n" +
         "op colsum_v {\n  dims B = 4, " + L + ", C = 256\n  in  x: f32[B, L, C]\n  out y = sum(x, axis=1)\n}\n" +
         "op hw {\n  dims B = 32, " + L + ", W = 4\n  in  x: f32[B, L, W]\n  out y = max(x, axis=[1, 2])\n}\n" +
         "op sm {\n  dims B = 4096, " + L + "\n  in  x: f32[B, L]\n  out y = softmax(x, axis=-1)\n}\n" +
         "op sm_few {\n  dims B = 16, " + L + "\n  in  x: f16[B, L]\n  in  bias: f16[L]\n" +
         "  out y = log_softmax(x + bias, axis=-1)\n}\n" +
         "op sm_strided {\n  dims B = 8, " + L + ", C = 300\n  in  x: f32[B, L, C]\n  out y = softmax(x, axis=1)\n}\n" +
         "op cs {\n  dims B = 100, " + L + "\n  in  x: f32[B, L]\n  out y = cumsum(x, axis=1, exclusive=true)\n}\n" +
         "op cs_strided {\n  dims B = 4, " + L + ", C = 100\n  in  x: f32[B, L, C]\n  out y = cumsum(x, axis=1)\n}\n" +
         "op layernorm {\n  const eps: f32 = 1e-5\n  dims B = 64, " + L + "\n  in  x: f32[B, L]\n" +
         "  let mu = mean(x, axis=1, keepdims=true)\n  let d = x - mu\n" +
         "  let var = mean(d * d, axis=1, keepdims=true)\n  out y = d * rsqrt(var + eps)\n}\n" +
         "op ln_many {\n  dims B = 2048, " + L + "\n  in  x: f32[B, L]\n  in  g: f32[L]\n  in  b: f32[L]\n" +
         "  let d = x - mean(x, axis=1, keepdims=true)\n" +
         "  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5) * g + b\n}\n" +
         "op rms_many {\n  dims B = 300, " + L + "\n  in  x: f16[B, L]\n" +
         "  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)\n}\n";
}

// Both the rows and the length dyn.
const char* kBoth =
    "op both {\n"
    "  dims dyn B, dyn L\n"
    "  in  x: f32[B, L]\n"
    "  out y = softmax(x, axis=1)\n"
    "}\n";

const char* kRefused =
    "op after {\n"
    "  dims dyn C, L = 8\n"
    "  in  x: f32[L, C]\n"
    "  out y = log_softmax(x, axis=0)\n"
    "}\n"
    "op after_sm {\n"
    "  dims B = 4, L = 8, dyn C\n"
    "  in  x: f32[B, L, C]\n"
    "  out y = softmax(x, axis=1)\n"
    "}\n"
    "op chain {\n"
    "  dims B = 4, dyn L, C = 8\n"
    "  in  x: f32[B, L, C]\n"
    "  out y = sum(x, axis=[0, 2])\n"
    "}\n";

kiln::Plan dyn_at(const std::string& op, std::int64_t l, const std::string& arch = "sm_90a") {
  return plan_text_at(spec_text("dyn L"), "len.kiln", op, {{"L", l}}, arch);
}
kiln::Plan static_at(const std::string& op, std::int64_t l) {
  return plan_text_at(spec_text("L = " + std::to_string(l)), "len.kiln", op, {}, "sm_90a");
}

const std::vector<std::string> kOps{"rs",         "rs_many", "rs_fused",   "amax",      "colmean",
                                    "colsum_v",   "hw",      "sm",         "sm_few",    "sm_strided",
                                    "cs",         "cs_strided", "layernorm", "ln_many", "rms_many"};

template <class Config>
const Config& config_of(const kiln::Plan& plan, std::size_t k = 0) {
  return std::get<Config>(plan.kernels.at(k).config);
}

}  // namespace

TEST_CASE("dyn lengths: one source per bucket and class, the length read at run time") {
  // 1037 and 1077 are in the bucket "general", 1040 and 1056 in "multiple of 16"; for every op
  // each pair is in one class (rs: [1, 2049); sm: [1025, 2049); sm_few, f16: [1025, 2049); hw, 4
  // elements per L: [513, ...)).
  for (const auto& op : kOps)
    for (const auto& pair : std::vector<std::pair<std::int64_t, std::int64_t>>{{1037, 1077}, {1040, 1056}}) {
      CAPTURE(op);
      CAPTURE(pair.first);
      const auto a = dyn_at(op, pair.first), b = dyn_at(op, pair.second);
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(b)));
      for (const auto& src : sources_of(a)) {
        INFO(src.text);
        CHECK(src.text.find(std::to_string(pair.first)) == std::string::npos);
        CHECK(src.text.find("4148") == std::string::npos);   // hw's 1037 * 4
      }
      // Every memory-family kernel reads L, and computes its length from it.
      for (std::size_t k = 0; k < a.kernels.size(); ++k) {
        const auto& kn = a.kernels[k];
        if (kn.anchor < 0) continue;
        CHECK(!kn.dyn_len.empty());
        const std::string text = sources_of(a)[k].text;
        CHECK((text.find("const Index red = ") != std::string::npos ||
               text.find("const Index len = ") != std::string::npos));
      }
    }
  // The bucket one (a reduction over one element, its epilogue at the output's coordinates).
  for (const auto& op : kOps) {
    CAPTURE(op);
    CHECK(!sources_of(dyn_at(op, 1)).empty());
  }
  // Both the rows and the length dyn: one source over values of both in one class and bucket each.
  auto both = [](std::int64_t b, std::int64_t l) {
    return plan_text_at(kBoth, "both.kiln", "both", {{"B", b}, {"L", l}}, "sm_90a");
  };
  CHECK(all_sources(sources_of(both(3000, 1100))) == all_sources(sources_of(both(5001, 2001))));
  const std::string src = all_sources(sources_of(both(3000, 1100)));
  CHECK(src.find("const Index rows = static_cast<Index>(dim_B);  // dyn rows: this launch's") != std::string::npos);
  CHECK(src.find("const Index len = static_cast<Index>(dim_L);  // dyn length: this launch's") != std::string::npos);
  CHECK(src.find("3000") == std::string::npos);
  CHECK(src.find("1100") == std::string::npos);
}

TEST_CASE("dyn lengths: size classes where the plan changes with the length") {
  // A sum over contiguous rows, 64 of them (< 32 an SM): a warp per row up to 2048 elements, a
  // block per row above, split as the specialized sum at the class's lowest length is (classes at
  // the powers of two where reduce_inner_split's count changes: 2, 4, then 5 ways, 2 blocks an SM),
  // the chunks cut at each launch, then reduce_finish (which divides a mean by the launch's length).
  const auto short_rows = dyn_at("rs", 2048), long_rows = dyn_at("rs", 2049), huge = dyn_at("rs", 1 << 22);
  CHECK(short_rows.dyn_thresholds.at("L") ==
        std::vector<std::int64_t>{kiln::launch::kReduceInnerWarpLen + 1, 16384, 32768, 65536});
  CHECK(config_of<kiln::ReduceConfig>(short_rows).variant == kiln::ReduceVariant::kInnerWarp);
  CHECK(config_of<kiln::ReduceConfig>(short_rows).red == 0);
  REQUIRE(long_rows.kernels.size() == 1);   // [2049, 16384): as the specialized sum of 2049
  CHECK(config_of<kiln::ReduceConfig>(long_rows).variant == kiln::ReduceVariant::kInnerBlock);
  CHECK(config_of<kiln::ReduceConfig>(long_rows).splits == 1);
  CHECK(config_of<kiln::ReduceConfig>(long_rows).chunk == 0);   // the body's `red`
  REQUIRE(huge.kernels.size() == 2);
  CHECK(config_of<kiln::ReduceConfig>(huge).splits == 5);
  CHECK(config_of<kiln::ReduceConfig>(huge).chunk == 0);   // the body's, from its length
  CHECK(huge.kernels[0].reason.find("each launch cuts its length into that many chunks") != std::string::npos);
  CHECK(!huge.kernels[1].dyn_len.empty());   // reduce_finish: the count
  for (const auto& b : huge.buffers)
    if (b.kind == kiln::BufferKind::Workspace) CHECK(b.bytes == 5 * 64 * 4);
  CHECK(all_sources(sources_of(huge)) == all_sources(sources_of(dyn_at("rs", 65536))));
  CHECK(sources_of(huge)[0].text.find("const Index chunk = Index(kiln::launch::reduce_dyn_chunk(red, kSplits, "
                                      "kiln::launch::vec_elems(int(sizeof(float)))));") != std::string::npos);
  CHECK(long_rows.text().find("L=2049 (dyn, general, class [2049, 16384))") != std::string::npos);
  // The specialized sum of 64 rows of 2^22 splits each row as many ways.
  CHECK(config_of<kiln::ReduceConfig>(static_at("rs", 1 << 22)).splits == 5);
  // Rows that fill every SM with warps: no class at all.
  CHECK(dyn_at("rs_many", 100000).dyn_thresholds.empty());
  CHECK(config_of<kiln::ReduceConfig>(dyn_at("rs_many", 100000)).variant == kiln::ReduceVariant::kInnerWarp);
  // Two axes, H dyn times 4: the step in H is ceil(2049 / 4).
  CHECK(dyn_at("hw", 100).dyn_thresholds.at("L").front() == 513);

  // Softmax: a class wherever the rules' pick changes, up to 16384 elements, each planned at its
  // longest row: the items a thread holds cover every row of the class, and every length of it
  // gets the specialized plan of that row. 4096 rows (sm, f32) take a warp a row up to 1024, whose
  // items step by 4 every 128; then a block of 256 with 8, 12, 16 items, of 512 with 12, 16, of
  // 1024 with 12, 16. 16 rows (sm_few, f16): a block of 256, 512, 1024 threads with 8 items, then
  // 16 items.
  const std::vector<std::int64_t> f32_steps{129,  257,  385,  513,  641,  769,   897,   1025,
                                            2049, 3073, 4097, 6145, 8193, 12289, 16385};
  CHECK(dyn_at("sm", 100).dyn_thresholds.at("L") == f32_steps);
  CHECK(dyn_at("sm_few", 100).dyn_thresholds.at("L") == std::vector<std::int64_t>{1025, 2049, 8193, 16385});
  for (const std::string op : {"sm", "sm_few"})
    for (std::int64_t l : {1, 100, 128, 129, 640, 1000, 1024, 1025, 2000, 2049, 3000, 3072, 5000, 9000, 16384}) {
      CAPTURE(op);
      CAPTURE(l);
      const auto plan = dyn_at(op, l);
      const auto& c = config_of<kiln::RownormConfig>(plan);
      const auto& steps = plan.dyn_thresholds.at("L");
      const int klass = kiln::dyn_class(steps, l);
      const std::int64_t longest = steps[static_cast<std::size_t>(klass)] - 1;
      CHECK(kiln::launch::rownorm_row_in_registers(longest, c.group, c.items));
      CHECK(c.len == 0);
      // And it is the static plan at that longest row.
      const auto fixed = static_at(op, longest);
      CHECK(config_of<kiln::RownormConfig>(fixed).variant == c.variant);
      CHECK(config_of<kiln::RownormConfig>(fixed).items == c.items);
      CHECK(config_of<kiln::RownormConfig>(fixed).threads == c.threads);
      // And at this length (the class holds one pick of the rules).
      const auto here_plan = static_at(op, l);
      const auto& here = config_of<kiln::RownormConfig>(here_plan);
      CHECK(here.variant == c.variant);
      CHECK(here.items == c.items);
      CHECK(here.threads == c.threads);
    }
  // Past 16384: one class, a block of 1024, rows read twice.
  const auto past = dyn_at("sm", 16385);
  CHECK(config_of<kiln::RownormConfig>(past).variant == kiln::RownormVariant::kBlockRows);
  CHECK(config_of<kiln::RownormConfig>(past).threads == 1024);
  CHECK(config_of<kiln::RownormConfig>(past).items == 0);   // no register path compiled
  CHECK(past.kernels[0].reason.find("two passes") != std::string::npos);
  CHECK(all_sources(sources_of(past)) == all_sources(sources_of(dyn_at("sm", (1 << 18) + 1))));
  // A length in the bucket `multiple of 16`: its rows known whole aligned vectors ([Note: rows
  // known vectorizable]), only the vector path compiled; a general one checks each row.
  CHECK(config_of<kiln::RownormConfig>(dyn_at("sm", 1 << 18)).aligned);
  CHECK(!config_of<kiln::RownormConfig>(past).aligned);
  // Strided softmax and scans have no classes in L (strided sums: their splits, below).
  for (const std::string op : {"sm_strided", "cs_strided"}) {
    CAPTURE(op);
    CHECK(dyn_at(op, 100).dyn_thresholds.empty());
  }

  // Scans: the strided scan in one pass (the specialized one of 4 x 100 columns is chunked); the
  // look-back over contiguous rows: below.
  const auto cs_strided = dyn_at("cs_strided", 100000);
  REQUIRE(cs_strided.kernels.size() == 1);
  CHECK(config_of<kiln::ScanConfig>(cs_strided).chunks == 1);
  CHECK(config_of<kiln::ScanConfig>(cs_strided).chunk == 0);
  CHECK(static_at("cs_strided", 100000).kernels.size() == 2);
  // Strided reductions over few columns: split as the specialized reduction at the class's lowest
  // length, the chunks cut at each launch; short lengths unsplit.
  for (const std::string op : {"colmean", "colsum_v"}) {
    CAPTURE(op);
    CHECK(dyn_at(op, 7).kernels.size() == 1);
    const auto plan = dyn_at(op, 100000);
    const auto& steps = plan.dyn_thresholds.at("L");
    const std::int64_t low = kiln::dyn_class_low(steps, kiln::dyn_class(steps, 100000));
    const auto fixed = static_at(op, low);
    REQUIRE(plan.kernels.size() == 2);
    REQUIRE(fixed.kernels.size() == 2);
    CHECK(config_of<kiln::ReduceConfig>(plan).splits == config_of<kiln::ReduceConfig>(fixed).splits);
    CHECK(config_of<kiln::ReduceConfig>(plan).variant == config_of<kiln::ReduceConfig>(fixed).variant);
    CHECK(config_of<kiln::ReduceConfig>(plan).red == 0);
    CHECK(config_of<kiln::ReduceConfig>(plan).chunk == 0);
  }
}

TEST_CASE("dyn lengths: a norm composition over a dyn length fuses where every length would") {
  // Many static rows: one rownorm at every length, with the softmax's classes (registers up to
  // 16384, a block streaming the row twice above), and the specialized pick of the class's row.
  for (const std::string op : {"ln_many", "rms_many"})
    for (std::int64_t l : {1, 7, 1000, 3000, 16384, 16385, 100000}) {
      CAPTURE(op);
      CAPTURE(l);
      const auto plan = dyn_at(op, l);
      CHECK(plan.text().find("a dyn length): one normalize kernel") != std::string::npos);
      REQUIRE(plan.kernels.size() == 1);
      CHECK(!plan.kernels[0].dyn_len.empty());
      const auto& c = config_of<kiln::RownormConfig>(plan);
      const auto fixed = static_at(op, l);
      REQUIRE(fixed.kernels.size() == 1);
      if (l <= 16384) {
        CHECK(config_of<kiln::RownormConfig>(fixed).items == c.items);
        CHECK(config_of<kiln::RownormConfig>(fixed).threads == c.threads);
      }
      CHECK(config_of<kiln::RownormConfig>(fixed).variant == c.variant);
      // The count is this launch's: no kCount, Scale divides by the dyn dim.
      const std::string text = sources_of(plan)[0].text;
      CHECK(text.find("kCount") == std::string::npos);
      if (op == "ln_many") CHECK(text.find("q / C(static_cast<Index>(dim_L))") != std::string::npos);
    }
  CHECK(dyn_at("ln_many", 100).dyn_thresholds.at("L") == dyn_at("sm", 100).dyn_thresholds.at("L"));
}

TEST_CASE("dyn lengths: a norm composition over a dyn length and few rows plans as written") {
  const auto plan = dyn_at("layernorm", 1000);
  CHECK(plan.text().find("not fused, a dyn dim sizes the normalized axes and the rows are few (64") !=
        std::string::npos);
  int reductions = 0;
  for (const auto& kn : plan.kernels) {
    CHECK(!std::holds_alternative<kiln::RownormConfig>(kn.config));
    if (std::holds_alternative<kiln::ReduceConfig>(kn.config)) {
      ++reductions;
      CHECK(!kn.dyn_len.empty());
    }
  }
  CHECK(reductions == 2);   // the mean, then the variance
  // The specialized layer norm is one kernel.
  CHECK(static_at("layernorm", 1000).kernels.size() == 1);
}

TEST_CASE("dyn lengths: the launch is the specialized plan's where that one is not split") {
  const std::map<std::string, std::vector<std::int64_t>> values{
      {"rs", {1, 100, 2048}}, {"rs_many", {1, 5000}}, {"amax", {7, 3000}}, {"sm", {1, 100, 1000, 2000, 5000, 20000}},
      {"sm_few", {3, 300, 3000}}, {"cs", {1, 3000, 7000, 100000}}, {"sm_strided", {10, 1000}}};
  for (const auto& entry : values) {
    const std::string& op = entry.first;   // not a structured binding: CAPTURE's lambda reads it
    for (std::int64_t l : entry.second) {
      CAPTURE(op);
      CAPTURE(l);
      const auto plan = dyn_at(op, l), fixed = static_at(op, l);
      REQUIRE(plan.kernels.size() == fixed.kernels.size());
      std::map<std::string, std::int64_t> dims = plan.bound->dims;
      for (std::size_t k = 0; k < plan.kernels.size(); ++k) {
        const auto g = kiln::launch_for(plan, k, dims);
        CHECK(g.grid.x == fixed.kernels[k].grid.x);
        CHECK(g.grid.y == fixed.kernels[k].grid.y);
        CHECK(g.block.x == fixed.kernels[k].block.x);
      }
    }
  }
}

TEST_CASE("dyn lengths: few long rows scan with the look-back, its grid and zeroed part the launch's") {
  // 100 rows (under 2 per SM): the look-back from 4 of the block's tiles (3 x 2048 + 1 floats) on,
  // as specialized, in classes up to twice their lowest, its workspace for the class's longest row.
  const std::vector<std::int64_t> steps = dyn_at("cs", 100).dyn_thresholds.at("L");
  REQUIRE(steps.size() > 3);
  CHECK(steps[0] == 6145);
  CHECK(steps[1] == 12289);
  CHECK(steps[2] == 24577);
  CHECK(config_of<kiln::ScanConfig>(dyn_at("cs", 6144)).variant == kiln::ScanVariant::kRowsBlock);
  CHECK(config_of<kiln::ScanConfig>(static_at("cs", 6144)).variant == kiln::ScanVariant::kRowsBlock);
  auto workspace_bytes = [](const kiln::Plan& plan) {
    REQUIRE(plan.kernels[0].zero_before.size() == 1);
    return plan.buffers.at(static_cast<std::size_t>(plan.kernels[0].zero_before[0])).bytes;
  };
  for (std::int64_t l : {6145, 9000, 12288, 100000, 1 << 20, (1 << 20) + 3}) {
    CAPTURE(l);
    const auto plan = dyn_at("cs", l), fixed = static_at("cs", l);
    REQUIRE(plan.kernels.size() == 1);
    CHECK(config_of<kiln::ScanConfig>(plan).variant == kiln::ScanVariant::kRowsLookback);
    CHECK(config_of<kiln::ScanConfig>(fixed).variant == kiln::ScanVariant::kRowsLookback);
    CHECK(config_of<kiln::ScanConfig>(plan).len == 0);
    // This launch: the specialized grid, and the bytes it lays out (which the runtime zeroes).
    const auto g = kiln::launch_for(plan, 0, plan.bound->dims);
    CHECK(g.grid.x == fixed.kernels[0].grid.x);
    CHECK(g.block.x == fixed.kernels[0].block.x);
    CHECK(g.shared_bytes == fixed.kernels[0].shared_bytes);
    CHECK(g.zero_workspace);
    CHECK(g.workspace_bytes == workspace_bytes(fixed));
    // The buffer: the class's longest row's.
    const std::int64_t longest = steps[static_cast<std::size_t>(kiln::dyn_class(steps, l))] - 1;
    CHECK(workspace_bytes(plan) == workspace_bytes(static_at("cs", longest)));
    CHECK(longest < 2 * kiln::dyn_class_low(steps, kiln::dyn_class(steps, l)));
  }
  // One source a class and bucket, the length read at run time.
  CHECK(all_sources(sources_of(dyn_at("cs", 98305))) == all_sources(sources_of(dyn_at("cs", 196607))));
  CHECK(all_sources(sources_of(dyn_at("cs", 98320))) == all_sources(sources_of(dyn_at("cs", 196592))));
  const std::string src = all_sources(sources_of(dyn_at("cs", 100000)));
  CHECK(src.find("const Index len = static_cast<Index>(dim_L);  // dyn length: this launch's") != std::string::npos);
  CHECK(src.find("kiln::scan_rows_lookback<") != std::string::npos);
  CHECK(src.find("100000") == std::string::npos);
  // Dyn rows as well: a block per row.
  CHECK(config_of<kiln::ScanConfig>(plan_text_at("op c {\n  dims dyn B, dyn L\n  in  x: f32[B, L]\n  out y = "
                                                 "cumsum(x, axis=1)\n}\n",
                                                 "c.kiln", "c", {{"B", 3}, {"L", 1 << 20}}, "sm_90a"))
            .variant == kiln::ScanVariant::kRowsBlock);
}

TEST_CASE("dyn lengths: a dyn axis after the worked ones is a dyn inner extent, a chain is refused where declared") {
  auto refused = [](const std::string& op) { return refusal_of(kRefused, "len.kiln", op, {{"C", 100}, {"L", 100}}); };
  CHECK(refused("after") == "planned");      // test_dyn_inner.cpp
  CHECK(refused("after_sm") == "planned");
  CHECK(refused("chain").find("len.kiln:12:19: op chain: dim 'L' is dyn, but the reduce (a chain over non-adjacent "
                              "axes) template (for line 14)") == 0);
}

TEST_CASE("dyn lengths: goldens of a softmax and a fused sum") {
  check_golden("source/dyn_len_softmax.cu", [] {
    const auto plan = dyn_at("sm_few", 1000);
    return plan.text() + "\n" + all_sources(sources_of(plan));
  }());
  check_golden("source/dyn_len_layernorm.cu", [] {
    const auto plan = dyn_at("ln_many", 3000);
    return plan.text() + "\n" + all_sources(sources_of(plan));
  }());
  check_golden("source/dyn_len_fused_sum.cu", [] {
    const auto plan = dyn_at("rs_fused", 5000);
    return plan.text() + "\n" + all_sources(sources_of(plan));
  }());
}

TEST_CASE("dyn lengths: every unit compiles with NVRTC for sm_80 and sm_90a") {
  if (!nvrtc_or_skip()) return;
  int units = 0;
  for (const auto& op : kOps)
    for (const char* arch : {"sm_80", "sm_90a"})
      for (std::int64_t l : {100, 5000, 20000}) {
        CAPTURE(op);
        units += check_units_compile(dyn_at(op, l, arch), arch);
      }
  for (const char* arch : {"sm_80", "sm_90a"})
    units += check_units_compile(plan_text_at(kBoth, "both.kiln", "both", {{"B", 7}, {"L", 3000}}, arch), arch);
  MESSAGE(units << " units compiled");
}
