// The composition pass of generator/plan/fuse_norms.cpp ([Note: norm compositions]): which
// written forms become one Normalize node, which do not and what the plan says about them, that
// the rewritten graph means what the spec wrote (the float64 reference of both), and that every
// fused unit compiles with NVRTC for sm_80 and sm_90a.
#include <doctest/doctest.h>

#include <cmath>

#include "memory_plan_util.h"
#include "reference/reference.h"

namespace {

using memory_plan_test::contains;
using memory_plan_test::plan_of_text;
using memory_plan_test::sources_of;

// An op `a` over x: f32[B, N] (B = 64, N = 100 unless `dims` says otherwise) with `body`.
std::string spec(const std::string& body, const std::string& dims = "B = 64, N = 100",
                 const std::string& x = "f32[B, N]") {
  return "op a {\n  dims " + dims + "\n  in x: " + x + "\n" + body + "\n}\n";
}

// Batch norm in training mode, written out: x: f32[N, C, H, W] normalized over N, H and W.
std::string batch_norm_spec(const std::string& dims) {
  return spec("  let d = x - mean(x, axis=[0, 2, 3], keepdims=true)\n"
              "  out y = d * rsqrt(mean(d * d, axis=[0, 2, 3], keepdims=true) + 1e-5)",
              dims, "f32[N, C, H, W]");
}

int kernels_of(const kiln::Plan& plan, const char* template_name) {
  int n = 0;
  for (const auto& k : plan.kernels) n += k.template_name == template_name;
  return n;
}

// The plan is one rownorm kernel of `kind` and says so in its fusions.
void check_fused(const std::string& text, const char* kind, const char* fusion) {
  const kiln::Plan plan = plan_of_text(text, "a");
  CAPTURE(plan.text());
  CHECK(plan.kernels.size() == 1);
  CHECK(kernels_of(plan, "rownorm") == 1);
  REQUIRE(plan.fusions.size() == 1);
  CHECK(contains(plan.fusions[0], fusion));
  CHECK(contains(sources_of(plan).back().text, std::string("kiln::RowNormKind::") + kind));
}

}  // namespace

TEST_CASE("fuse_norms: the written forms of layer, RMS and L2 norms each plan as one rownorm kernel") {
  SUBCASE("layer norm with lets, rsqrt and a product") {
    check_fused(spec("  let d = x - mean(x, axis=1, keepdims=true)\n"
                     "  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5)"),
                "kLayerNorm", "line 5: layer norm of x over axes [1] (64 rows of 100): one normalize kernel");
  }
  SUBCASE("layer norm written inline twice, as a quotient of a sqrt, with pow(d, 2)") {
    // `x - mean(x)` twice is two nodes; same_value sees they are one value.
    check_fused(spec("  out y = (x - mean(x, axis=1, keepdims=true)) / sqrt(mean(pow(x - mean(x, axis=1, keepdims=true), "
                     "2), axis=1, keepdims=true) + 1e-5)"),
                "kLayerNorm", "layer norm of x over axes [1]");
  }
  SUBCASE("rsqrt first, eps first") {
    check_fused(spec("  let d = x - mean(x, axis=-1, keepdims=true)\n"
                     "  out y = rsqrt(1e-5 + mean(d * d, axis=-1, keepdims=true)) * d"),
                "kLayerNorm", "one normalize kernel");
  }
  SUBCASE("RMS norm") {
    check_fused(spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)"), "kRmsNorm",
                "RMS norm of x over axes [1]");
  }
  SUBCASE("L2 norm: a sum and no eps") {
    const std::string text = spec("  out y = x / sqrt(sum(x * x, axis=1, keepdims=true))");
    check_fused(text, "kRmsNorm", "L2 norm of x over axes [1]");
    // The Scale divides by nothing and adds nothing: 1 / sqrt(q), as written.
    CHECK(contains(sources_of(plan_of_text(text, "a"))[0].text, "return C(1) / sqrtf(q);"));
  }
  SUBCASE("several trailing axes, and x an expression (its prologue)") {
    check_fused(spec("  let h = relu(x) * 2.0\n  let d = h - mean(h, axis=[1, 2], keepdims=true)\n"
                     "  out y = d * rsqrt(mean(d * d, axis=[1, 2], keepdims=true) + 1e-5)",
                     "B = 8, H = 5, W = 30", "f32[B, H, W]"),
                "kLayerNorm", "layer norm of h over axes [1, 2] (8 rows of 150)");
  }
  SUBCASE("eps a scalar argument: a kernel argument the Scale reads") {
    const kiln::Plan plan = plan_of_text(
        "op a {\n  dims B = 64, N = 100\n  in x: f32[B, N]\n  in eps: f32\n"
        "  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + eps)\n}\n", "a");
    REQUIRE(plan.kernels.size() == 1);
    CHECK(contains(sources_of(plan)[0].text, "return rsqrtf(q / C(kCount) + static_cast<C>(eps));"));
  }
  SUBCASE("group_norm: the normalize stores through the reshape back to [N, C, H, W] and the affine") {
    const kiln::Plan plan = plan_of_text(
        "op a {\n  dims N = 4, C = 32, H = 9, W = 11\n  in x: f32[N, C, H, W]\n  in w: f32[C]\n  in b: f32[C]\n"
        "  out y = relu(group_norm(x, 8, weight=w, bias=b, eps=1e-5))\n}\n", "a");
    CAPTURE(plan.text());
    REQUIRE(plan.kernels.size() == 1);   // no store of the normalized [N, G, L] value
    CHECK(contains(plan.fusions.at(0), "layer norm of the reshape on line 6 over axes [2] (32 rows of 396)"));
    const std::string src = sources_of(plan)[0].text;
    CHECK(contains(src, "in_w[((o1 * 1 + 0) * 1 + 0)]"));   // the channel's weight at the output's coordinates
  }
  SUBCASE("f16 and bf16 compute in float") {
    const kiln::Plan plan =
        plan_of_text(spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)", "B = 64, N = 128", "bf16[B, N]"),
                     "a");
    REQUIRE(plan.kernels.size() == 1);
    CHECK(contains(sources_of(plan)[0].text, "using C = float;"));
  }
}

TEST_CASE("fuse_norms: what does not fuse, and what the plan says") {
  SUBCASE("an eps per row is not a constant of the row: the composition plans as written") {
    const kiln::Plan plan = plan_of_text(
        "op a {\n  dims B = 64, N = 100\n  in x: f32[B, N]\n  in e: f32[B, 1]\n"
        "  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + e)\n}\n", "a");
    CHECK(plan.fusions.empty());
    CHECK(kernels_of(plan, "rownorm") == 0);
  }
  SUBCASE("the squares of another value") {
    const kiln::Plan plan = plan_of_text(spec("  in z: f32[B, N]\n  out y = x * rsqrt(mean(z * z, axis=1, keepdims=true))"), "a");
    CHECK(plan.fusions.empty());
  }
  SUBCASE("strided rows with too few columns for a thread each: said, not fused") {
    const kiln::Plan plan = plan_of_text(spec("  out y = x * rsqrt(mean(x * x, axis=0, keepdims=true) + 1e-6)"), "a");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "RMS norm of x over axes [0] (strided: 1 x 100 columns of 64): not fused, too few "
                                    "columns for a thread each (100: fewer than 2048 per SM)"));
    CHECK(kernels_of(plan, "rownorm") == 0);
  }
  SUBCASE("strided rows with columns for the whole GPU: one rownorm kernel, a thread per column") {
    const kiln::Plan plan = plan_of_text(
        spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)", "N = 8, C = 64, H = 256, W = 256",
             "f32[N, C, H, W]"),
        "a");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "RMS norm of x over axes [1] (strided: 8 x 65536 columns of 64): one normalize "
                                    "kernel (sum of squares, then the scale; a thread per column, two passes over it)"));
    REQUIRE(plan.kernels.size() == 1);
    CHECK(plan.kernels[0].template_name == "rownorm");
    CHECK(std::get<kiln::RownormConfig>(plan.kernels[0].config).variant == kiln::RownormVariant::kStrided);
  }
  SUBCASE("strided rows over a dyn dim: fused in the classes whose columns fill the GPU, one threshold list") {
    // [Note: strided norms over dyn rows] and [Note: thresholds of a fusion decision]: 65536
    // columns a row, 2048 x 132 threads: N >= 5 fuses. The reduce_outer plan below it has a class
    // edge of its own (2); the list is the same whatever value is planned first.
    const std::string text = spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)",
                                  "dyn N = 8, C = 64, H = 256, W = 256", "f32[N, C, H, W]");
    const auto ir = kiln::check_op(kiln::parse_spec(text, "a.kiln"), "a");
    for (std::int64_t n : {1, 2, 4, 5, 9, 16, 1000}) {
      CAPTURE(n);
      const auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(ir, {{"N", {n, "test"}}}));
      const kiln::Plan plan = kiln::make_plan(bound, kiln::Target::for_arch("sm_90"));
      CHECK(plan.dyn_thresholds.at("N") == std::vector<std::int64_t>{2, 5});
      REQUIRE(plan.fusions.size() == 1);
      // The composition passes alone, as the oracle of a fused 16-bit norm calls them (no
      // thresholds collected): the same decision.
      std::vector<std::string> fusions;
      kiln::fuse_compositions(bound, kiln::Target::for_arch("sm_90"), fusions);
      REQUIRE(fusions.size() == 1);
      CHECK(fusions[0] == plan.fusions[0]);
      if (n >= 5) {
        CHECK(contains(plan.fusions[0], "(strided: dyn x 65536 columns of 64), N >= 5: one normalize kernel"));
        REQUIRE(plan.kernels.size() == 1);
        CHECK(plan.kernels[0].template_name == "rownorm");
        CHECK(!plan.kernels[0].dyn_outer.empty());
      } else {
        CHECK(contains(plan.fusions[0], "not fused, N in [1, 5) gives too few columns for a thread each"));
        CHECK(kernels_of(plan, "rownorm") == 0);
      }
    }
    // Two dyn dims among the rows: not fused (no classes), the plan says why.
    const kiln::Plan two = plan_of_text(spec("  out y = x * rsqrt(mean(x * x, axis=2, keepdims=true) + 1e-6)",
                                             "dyn A = 2, dyn N = 8, C = 64, H = 256, W = 256", "f32[A, N, C, H, W]"),
                                        "a");
    REQUIRE(two.fusions.size() == 1);
    CHECK(contains(two.fusions[0], "not fused, dyn dims size the columns of a strided norm other than as one whole "
                                   "extent among the rows"));
  }
  SUBCASE("batch norm's axes 0, 2, 3 with short images: a split norm, chunks of whole segments") {
    const kiln::Plan plan = plan_of_text(batch_norm_spec("N = 20, C = 64, H = 32, W = 32"), "a");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "layer norm of x over axes [0, 2, 3] (64 rows of 20 segments of 1024): a split "
                                    "normalize, two kernels"));
    REQUIRE(plan.kernels.size() == 2);
    const auto& stats = std::get<kiln::RownormConfig>(plan.kernels[0].config);
    // 1.3M elements in one wave of 256-thread blocks (8 an SM) ask for 1242 a chunk: 2 segments a
    // chunk, 10 chunks a row, in blocks of 256.
    CHECK((stats.gang == 2 && stats.splits == 1 && stats.chunk == 1024 && stats.threads == 256));
    CHECK(plan.kernels[0].grid.x == 640);
    CHECK(contains(plan.kernels[0].reason, "short segments ganged: chunks of 2 whole segments (10 a row)"));
    CHECK(contains(plan.kernels[1].reason, "combining its row's 10 partial states in order"));
    CHECK(std::get<kiln::RownormConfig>(plan.kernels[1].config).gang == 2);
    CHECK(plan.buffers.back().bytes == 640 * 3 * 4);
  }
  SUBCASE("batch norm over 7x7 images: gangs evened out, the last gang shorter") {
    // 128 channels, under one a SM: not a block a row ([Note: a block per row of short segments]).
    const kiln::Plan plan = plan_of_text(batch_norm_spec("N = 101, C = 128, H = 7, W = 7"), "a");
    REQUIRE(plan.kernels.size() == 2);
    const auto& stats = std::get<kiln::RownormConfig>(plan.kernels[0].config);
    // 634K elements: one wave of 256-thread blocks asks for 600 a chunk, under the least (1024, 4
    // a thread): 21 segments of 49; 101 segments in 5 gangs of 21.
    CHECK((stats.gang == 21 && stats.chunk == 49));
    CHECK(contains(plan.kernels[0].reason, "chunks of 21 whole segments (5 a row, the last of 17)"));
  }
  SUBCASE("batch norm over rows many and short: one kernel, a block a row") {
    // [Note: a block per row of short segments]: rows >= SMs, at most 32K elements a row, the
    // fewest threads of 64 elements each.
    struct Case {
      const char* dims;
      bool whole;
      int threads;
    };
    for (const Case& k : {Case{"N = 128, C = 512, H = 7, W = 7", true, 256},      // 6272 a row
                          Case{"N = 128, C = 256, H = 14, W = 14", true, 512},    // 25088 a row
                          Case{"N = 128, C = 132, H = 14, W = 14", true, 512},    // a row a SM
                          Case{"N = 128, C = 160, H = 16, W = 16", true, 512},    // 32768 a row: the most
                          Case{"N = 128, C = 160, H = 16, W = 17", false, 256},   // 34816
                          Case{"N = 128, C = 131, H = 14, W = 14", false, 256},   // fewer rows than SMs
                          Case{"N = 128, C = 256, H = 28, W = 28", false, 256},   // 100352 a row
                          Case{"N = 16, C = 256, H = 64, W = 64", false, 512}}) {   // segments split
      CAPTURE(k.dims);
      const kiln::Plan plan = plan_of_text(batch_norm_spec(k.dims), "a");
      REQUIRE(plan.fusions.size() == 1);
      CHECK(contains(plan.fusions[0], ": a split normalize in one kernel, a block a row (the mean and squared "
                                      "deviations, then the scale, y;") == k.whole);
      const auto& c = std::get<kiln::RownormConfig>(plan.kernels[0].config);
      CHECK(c.threads == k.threads);
      if (!k.whole) {
        CHECK(plan.kernels.size() == 2);
        CHECK(c.variant == kiln::RownormVariant::kSplitStats);
        continue;
      }
      REQUIRE(plan.kernels.size() == 1);
      CHECK(c.variant == kiln::RownormVariant::kSplitWhole);
      CHECK((c.gang == c.lead && c.splits == 1 && c.chunk == c.len));
      CHECK(plan.kernels[0].grid.x == c.outer);
      CHECK(plan.kernels[0].block.x == k.threads);
      CHECK(contains(plan.kernels[0].reason, fmt::format("split norm in one kernel: {} rows of 128 segments of {}, a "
                                                         "block a row",
                                                         c.outer, c.len)));
      CHECK(plan.kernels[0].stores.size() == 1);
      for (const auto& b : plan.buffers) CHECK(b.kind != kiln::BufferKind::Workspace);   // no partial states
    }
  }
  SUBCASE("batch norm over segments under 32 elements: said, not fused") {
    const kiln::Plan plan = plan_of_text(batch_norm_spec("N = 8, C = 64, H = 4, W = 4"), "a");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "layer norm of x over axes [0, 2, 3] (64 rows of 8 segments of 16): not fused, "
                                    "the normalized axes are not adjacent and their trailing run is short (16 "
                                    "elements, under 32"));
    CHECK(kernels_of(plan, "rownorm") == 0);
  }
  SUBCASE("axes neither adjacent nor around the kept ones: said, not fused") {
    const kiln::Plan plan = plan_of_text(
        spec("  out y = x * rsqrt(mean(x * x, axis=[1, 3], keepdims=true) + 1e-5)", "N = 8, C = 64, H = 32, W = 64",
             "f32[N, C, H, W]"),
        "a");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "RMS norm of x over axes [1, 3]: not fused, the normalized axes are not adjacent, "
                                    "nor a leading and a trailing run around the kept ones"));
    CHECK(kernels_of(plan, "rownorm") == 0);
  }
  SUBCASE("batch norm's axes 0, 2, 3 with images of 2048 or more: a split norm, two kernels") {
    const kiln::Plan plan = plan_of_text(batch_norm_spec("N = 8, C = 64, H = 64, W = 64"), "a");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "layer norm of x over axes [0, 2, 3] (64 rows of 8 segments of 4096): a split "
                                    "normalize, two kernels"));
    REQUIRE(plan.kernels.size() == 2);
    const auto& stats = std::get<kiln::RownormConfig>(plan.kernels[0].config);
    const auto& apply = std::get<kiln::RownormConfig>(plan.kernels[1].config);
    CHECK(stats.variant == kiln::RownormVariant::kSplitStats);
    CHECK(apply.variant == kiln::RownormVariant::kSplitApply);
    CHECK((stats.lead == 8 && stats.outer == 64 && stats.len == 4096));
    // Every SM gets two waves of blocks: 512 segments in chunks of whole vectors.
    CHECK(stats.chunk % 4 == 0);
    CHECK(stats.splits == (4096 + stats.chunk - 1) / stats.chunk);
    CHECK(plan.kernels[0].stores.empty());
    CHECK(plan.kernels[1].stores.size() == 1);
    CHECK(std::get<kiln::RownormConfig>(plan.kernels[1].config).chunk == stats.chunk);
  }
  SUBCASE("centering over other axes: an RMS norm of the centered value") {
    const kiln::Plan plan = plan_of_text(spec("  let d = x - mean(x, axis=0, keepdims=true)\n"
                                              "  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5)"),
                                         "a");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "RMS norm of d over axes [1]"));
  }
  SUBCASE("few long rows: a split norm, two kernels over the same chunks") {
    const kiln::Plan plan =
        plan_of_text(spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)", "B = 16, N = 1048576"), "a");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "(16 rows of 1048576): a split normalize, two kernels over chunks of each row (the "
                                    "sum of squares of each chunk"));
    REQUIRE(plan.kernels.size() == 2);
    const auto& stats = std::get<kiln::RownormConfig>(plan.kernels[0].config);
    CHECK(stats.variant == kiln::RownormVariant::kSplitStats);
    CHECK((stats.lead == 1 && stats.outer == 16 && stats.len == 1048576));
    // 512 chunks of the most a block takes would be under two waves (2 x 4 blocks on each of 132 SMs):
    // 66 chunks a row.
    CHECK(stats.chunk == 15888);   // 66 chunks of 16M / 1056, evened out: ceil(2^20 / 66) in whole vectors
    CHECK(stats.splits == 66);
    CHECK(contains(plan.kernels[1].reason, "combining its row's 66 partial states in order"));
    const auto ws = plan.buffers.back();
    CHECK(ws.kind == kiln::BufferKind::Workspace);
    CHECK(ws.bytes == 16 * 66 * 3 * 4);
  }
  SUBCASE("few long dyn rows: not fused, the plan says why") {
    const kiln::Plan plan = plan_of_text(
        spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)", "dyn B = 16, N = 1048576"), "a");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "(dyn rows of 1048576): not fused, rows longer than a block's registers and a dyn "
                                    "dim sizes them"));
    CHECK(kernels_of(plan, "rownorm") == 0);
  }
  SUBCASE("many long rows: one kernel, a block per row streaming it twice") {
    const kiln::Plan plan =
        plan_of_text(spec("  let d = x - mean(x, axis=1, keepdims=true)\n"
                          "  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5)",
                          "B = 512, N = 100000"),
                     "a");
    REQUIRE(plan.kernels.size() == 1);
    CHECK(contains(plan.kernels[0].reason, "two passes (mean and squared deviations by chunks, combined as Chan's"));
  }
  SUBCASE("the mean also an output: its own reduction, and the norm still one kernel") {
    const kiln::Plan plan = plan_of_text(spec("  let mu = mean(x, axis=1, keepdims=true)\n  let d = x - mu\n"
                                              "  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5)\n"
                                              "  out m = mu"),
                                         "a");
    CHECK(kernels_of(plan, "rownorm") == 1);
    CHECK(kernels_of(plan, "reduce_inner") == 1);
    CHECK(plan.kernels.size() == 2);
  }
  SUBCASE("dyn rows fuse where the row fits registers whatever the row count") {
    const kiln::Plan plan = plan_of_text(spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)",
                                              "dyn B = 64, N = 100"),
                                         "a");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "(dyn rows of 100): one normalize kernel"));
    CHECK(!plan.kernels[0].dyn_outer.empty());
  }
  SUBCASE("a dyn dim among the normalized axes: not fused, the reductions over the dyn length") {
    const std::string text = spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)", "B = 64, dyn N = 100");
    const kiln::Plan plan = plan_of_text(text, "a");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "not fused, a dyn dim sizes the normalized axes"));
    CHECK(kernels_of(plan, "rownorm") == 0);
    REQUIRE(kernels_of(plan, "reduce_inner") == 1);
    for (const auto& kn : plan.kernels)
      if (kn.template_name == "reduce_inner") CHECK(!kn.dyn_len.empty());
    // A dyn dim after the normalized axes: not fused either; the strided reduction takes it as its
    // dyn inner extent ([Note: dyn inner extents] in plan_memory.cpp).
    const std::string after = spec("  out y = x * rsqrt(mean(x * x, axis=0, keepdims=true) + 1e-6)", "B = 64, dyn N = 100");
    const kiln::Plan strided = plan_of_text(after, "a");
    REQUIRE(strided.fusions.size() == 1);
    CHECK(contains(strided.fusions[0], "not fused, a dyn dim sizes the normalized or the trailing axes"));
    CHECK(kernels_of(strided, "rownorm") == 0);
    REQUIRE(kernels_of(strided, "reduce_outer") == 1);
    CHECK(!strided.kernels[0].dyn_inner.empty());
  }
  SUBCASE("a dyn length over many static rows: one kernel, as at every length") {
    const std::string text = spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)", "B = 4096, dyn N = 100");
    const kiln::Plan plan = plan_of_text(text, "a");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "(4096 rows of a dyn length): one normalize kernel"));
    REQUIRE(plan.kernels.size() == 1);
    CHECK(kernels_of(plan, "rownorm") == 1);
    CHECK(!plan.kernels[0].dyn_len.empty());
    // Dyn rows as well: as written.
    const kiln::Plan both =
        plan_of_text(spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)", "dyn B = 4096, dyn N = 100"),
                     "a");
    REQUIRE(both.fusions.size() == 1);
    CHECK(contains(both.fusions[0], "(dyn rows of a dyn length): not fused, a dyn dim sizes the normalized axes and "
                                    "a dyn dim the rows"));
    CHECK(kernels_of(both, "rownorm") == 0);
  }
}

TEST_CASE("fuse_norms: the rewritten graph means what the spec wrote (float64 reference of both)") {
  const std::string texts[] = {
      spec("  let d = x - mean(x, axis=1, keepdims=true)\n"
           "  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5)",
           "B = 7, N = 33"),
      spec("  out y = x / sqrt(sum(x * x, axis=[1, 2], keepdims=true))", "B = 3, H = 4, W = 9", "f32[B, H, W]"),
      spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 0.5) * 3.0", "B = 5, N = 17"),
      // split norms: few long rows; batch norm's leading and trailing axes
      spec("  let d = x - mean(x, axis=1, keepdims=true)\n"
           "  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5)",
           "B = 2, N = 40000"),
      batch_norm_spec("N = 3, C = 2, H = 32, W = 65"),
      // short segments in gangs (scalar: 7 x 7 is not whole vectors)
      batch_norm_spec("N = 9, C = 3, H = 7, W = 7"),
      // a block a row (rows >= SMs)
      batch_norm_spec("N = 3, C = 140, H = 7, W = 7"),
      // strided rows (the middle axis: 280000 columns of 3, enough to fuse)
      spec("  let d = x - mean(x, axis=1, keepdims=true)\n"
           "  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5)",
           "B = 2, M = 3, N = 140000", "f32[B, M, N]"),
  };
  for (const auto& text : texts) {
    CAPTURE(text);
    auto parsed = kiln::parse_spec(text, "t.kiln");
    auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(parsed, "a"), {}));
    const kiln::Plan plan = kiln::make_plan(bound, kiln::Target::for_arch("sm_90"));
    REQUIRE(plan.fusions.size() == 1);
    bool has_normalize = false;
    for (const auto& n : plan.bound->ir->nodes) has_normalize |= n.kind == kiln::ir::OpKind::Normalize;
    REQUIRE(has_normalize);
    CHECK(plan.bound->ir->nodes.size() < bound->ir->nodes.size());   // the statistics' nodes are gone
    const auto inputs = kiln::ref::random_inputs(*bound, 5);
    const auto want = kiln::ref::evaluate(*bound, inputs);
    const auto got = kiln::ref::evaluate(*plan.bound, inputs);
    REQUIRE(want.size() == got.size());
    double worst = 0;
    for (std::size_t i = 0; i < want[0].data.size(); ++i)
      worst = std::max(worst, std::fabs(want[0].data[i] - got[0].data[i]) / std::max(1.0, std::fabs(want[0].data[i])));
    CHECK(worst < 1e-5);   // the composition rounds each step to f32; the node rounds once
  }
}

TEST_CASE("fuse_norms: every fused unit compiles with NVRTC for sm_80 and sm_90a") {
  const std::string texts[] = {
      spec("  let d = x - mean(x, axis=1, keepdims=true)\n"
           "  out y = d / sqrt(mean(d * d, axis=1, keepdims=true) + 1e-5)",
           "B = 512, N = 100000"),   // two passes
      spec("  in eps: f16\n  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + eps)", "B = 4096, N = 1000",
           "f16[B, N]"),             // a warp per row, f16
      spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)", "dyn B = 64, N = 3000", "bf16[B, N]"),
      // strided rows: an RMS norm over the channels with a per-channel gain; a centered f16 one
      spec("  in g: f32[C, 1, 1]\n  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-5) * g",
           "N = 8, C = 64, H = 256, W = 256", "f32[N, C, H, W]"),
      spec("  let d = x - mean(x, axis=[1, 2], keepdims=true)\n"
           "  out y = d / sqrt(mean(d * d, axis=[1, 2], keepdims=true) + 1e-5)",
           "A = 3, B = 7, C = 5, D = 300, E = 347", "f16[A, B, C, D, E]"),
      // strided rows over a dyn batch (fused from 5 images of 65536 columns)
      spec("  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-5)", "dyn N = 8, C = 64, H = 256, W = 256",
           "f32[N, C, H, W]"),
  };
  for (const auto& text : texts)
    for (const char* arch : {"sm_80", "sm_90a"}) {
      CAPTURE(text);
      const kiln::Plan plan = plan_of_text(text, "a");
      REQUIRE(plan.fusions.size() == 1);
      CHECK(memory_plan_test::check_units_compile(plan, arch) == 1);
    }
}
