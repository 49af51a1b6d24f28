// Plans and generated sources of the memory-bound anchors (reductions, scans,
// softmax/log_softmax): plan-text and source goldens at the default dims and at a
// small awkward shape, FileCheck-style asserts on what each choice must produce,
// and every generated unit compiled by NVRTC for sm_80 and sm_90 (skipped with a
// message when NVRTC cannot be loaded).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <map>
#include <string>
#include <vector>

#include "generator/emit/emit.h"
#include "generator/frontend/frontend.h"
#include "generator/plan/plan.h"
#include "generator/emit/templates.h"
#include "golden.h"
#include "memory_plan_util.h"
#include "runtime/nvrtc.h"

namespace {

using namespace memory_plan_test;

// Defaults plus a small awkward shape (odd sizes, extents of 1) for every memory-bound spec.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"cumsum_exclusive", "cumsum_exclusive", "default", {}, {}},
      {"cumsum_exclusive", "cumsum_exclusive", "odd", {{"B", 3}, {"N", 4095}}, {}},
      {"min_reduce", "min_reduce", "axis1", {}, {}},
      {"min_reduce", "min_reduce", "axis2", {}, {{"axis", 2}}},
      {"min_reduce", "min_reduce", "axis1_odd", {{"B", 1}, {"M", 7}, {"N", 5}}, {}},
      {"min_reduce", "min_reduce", "axis1_wide", {{"B", 3}, {"M", 1001}, {"N", 4097}}, {}},   // two row tiles
      {"min_reduce", "min_reduce", "axis2_odd", {{"B", 3}, {"M", 1}, {"N", 4095}}, {{"axis", 2}}},
      {"reductions", "sum_rows", "default", {}, {}},
      {"reductions", "sum_rows", "odd", {{"B", 1}, {"N", 100003}}, {}},
      {"reductions", "mean_keepdims", "default", {}, {}},
      {"reductions", "mean_keepdims", "odd", {{"B", 3}, {"M", 5}, {"N", 7}}, {}},
      {"reductions", "max_cols", "default", {}, {}},
      {"reductions", "max_cols", "odd", {{"B", 32767}, {"N", 3}}, {}},
      {"reductions", "sum_cols", "default", {}, {}},
      {"reductions", "sum_cols", "odd", {{"B", 4095}, {"N", 1}}, {}},
      {"reductions", "argmax_rows", "default", {}, {}},
      {"reductions", "argmax_rows", "odd", {{"B", 1}, {"N", 1}}, {}},
      {"reductions", "logsumexp_rows", "default", {}, {}},
      {"reductions", "logsumexp_rows", "odd", {{"B", 5}, {"N", 33}}, {}},
      {"scans", "cumprod_rows", "default", {}, {}},
      {"scans", "cumprod_rows", "odd", {{"B", 1}, {"N", 3}}, {}},
      {"scans", "cumsum_reverse", "default", {}, {}},
      {"scans", "cumsum_reverse", "odd", {{"B", 7}, {"N", 4097}}, {}},
      {"scans", "cummax_rows", "default", {}, {}},
      {"scans", "cummax_rows", "odd", {{"B", 3}, {"N", 1}}, {}},
      {"norms", "softmax", "default", {}, {}},
      {"norms", "softmax", "odd", {{"B", 3}, {"N", 100003}}, {}},
      {"norms", "softmax", "bench", {{"B", 32768}, {"N", 8192}}, {}},   // the issue-4 benchmark row
      {"norms", "log_softmax", "default", {}, {}},
      {"norms", "log_softmax", "odd", {{"B", 1}, {"N", 1}}, {}},
      {"norms", "layernorm", "default", {}, {}},
      {"norms", "layernorm", "odd", {{"B", 3}, {"N", 4095}}, {}},
      {"norms", "rmsnorm", "default", {}, {}},
      {"norms", "rmsnorm", "odd", {{"B", 1}, {"N", 7}}, {}},
      {"norms", "rmsnorm_channels", "default", {}, {}},     // strided rows: one rownorm kernel
      {"norms", "layernorm_mid_f16", "default", {}, {}},
      {"norms", "layernorm_long", "default", {}, {}},          // split norms: two kernels
      {"norms", "rmsnorm_long_bf16", "default", {}, {}},
      {"norms", "batchnorm_train", "default", {}, {}},
      {"norms", "batchnorm_short_f16", "default", {}, {}},   // short segments in gangs
      {"norms", "batchnorm_relu_7x7", "default", {}, {}},
      {"norms", "batchnorm_14x14", "default", {}, {}},          // a block a row: one kernel
      {"norms", "batchnorm_relu_7x7_wide", "default", {}, {}},
  };
  return all;
}

}  // namespace

TEST_CASE("memory plans: plan text and generated source goldens") {
  for (const auto& c : cases()) {
    CAPTURE(c.op);
    CAPTURE(c.tag);
    const kiln::Plan plan = plan_of(c);
    const std::string text = plan.text() + "\n" + all_sources(sources_of(plan));
    check_golden("source/" + c.op + "_" + c.tag + ".cu", text);
    // Generation is a pure function of the plan: twice gives the same bytes.
    CHECK(all_sources(sources_of(plan_of(c))) == all_sources(sources_of(plan)));
  }
}

TEST_CASE("memory plans: an elementwise dropout of the element's own index draws a Philox block per four elements") {
  // (philox.cuh's DropoutWords, made before the vector step's loop.) f32: 4 elements a step, one
  // block; f16: 8, two blocks; a dropout of a broadcast row vector draws its own words from its
  // index at the step's first element (the row's column), one of a column vector per element;
  // two dropouts of the output's shape with one seed share the words.
  const auto unit = [](const std::string& op) {
    const auto sources = sources_of(plan_of({"elementwise", op, "", {}, {}}));
    REQUIRE(sources.size() == 1);
    return sources[0].text;
  };
  const auto unit_of_text = [](const std::string& text, const std::string& op) {
    const auto sources = sources_of(plan_of_text(text, op));
    REQUIRE(sources.size() == 1);
    return sources[0].text;
  };
  const std::string f32 = unit("dropout_scale");
  CHECK(contains(f32, "const kiln::DropoutWords<N> words_0(seed, static_cast<unsigned long long>(i));"));
  CHECK(contains(f32, "kiln::dropout_keep_bits(words_0.bits(j), 5033165u)"));
  CHECK(!contains(f32, "kiln::dropout_keep("));
  const std::string f16 = unit("dropout_f16_bias");
  CHECK(contains(f16, "kiln::dropout_keep_bits(words_0.bits(j), 8388608u)"));
  CHECK(contains(f16, "const kiln::DropoutWords<N> words_1(seed, static_cast<unsigned long long>(b1));"));
  CHECK(contains(f16, "kiln::dropout_keep_bits(words_1.bits(j), 4194304u)"));
  CHECK(!contains(f16, "kiln::dropout_keep("));
  // [B, 1, N] in a [B, M, N] loop: a row vector whose index at the step's first element reads the
  // batch and column of i's base; [B, M, 1]: its index does not advance along a row, per element.
  const std::string views = unit_of_text(
      "op v {\n  dims B = 4, M = 8, N = 64\n  in x: f32[B, M, N]\n  in r: f32[B, 1, N]\n  in c: f32[B, M, 1]\n"
      "  in s: u64\n  out y = x + dropout(r, p=0.5, seed=s) + dropout(c, p=0.25, seed=s)\n}\n",
      "v");
  CHECK(contains(views, "kiln::dropout_keep_bits(words_0.bits(j), 8388608u)"));
  CHECK(contains(views, "kiln::dropout_keep(s, static_cast<unsigned long long>("));
  CHECK(!contains(views, "words_1"));
  const std::string twice = unit_of_text("op t {\n  dims N = 4096\n  in x: f32[N]\n  in g: f32[N]\n  in s: u64\n"
                                         "  out y = dropout(x, p=0.5, seed=s) + dropout(g, p=0.1, seed=s)\n}\n",
                                         "t");
  CHECK(contains(twice, "kiln::dropout_keep_bits(words_0.bits(j), 8388608u)"));
  CHECK(contains(twice, "kiln::dropout_keep_bits(words_0.bits(j), 1677722u)"));
  CHECK(!contains(twice, "words_1"));
}

TEST_CASE("memory plans: a row norm's store draws a dropout's Philox block per four adjacent outputs") {
  // [Note: flat lanes] (kiln/common.cuh): Store::lanes<N>, called by the row norm templates where
  // they hold N adjacent outputs of whole vectors; the element form stays for the other paths.
  const auto sources = sources_of(plan_of({"norms", "softmax_dropout", "", {}, {}}));
  REQUIRE(sources.size() == 1);
  const std::string& text = sources[0].text;
  CHECK(contains(text, "kiln::rownorm_rows<"));
  CHECK(contains(text, "static constexpr bool kFlatLanes = true;"));
  CHECK(contains(text, "void lanes(const C (&result)[N], Index first, float (&y)[N]) const"));
  CHECK(contains(text, "const kiln::DropoutWords<N> words_0(seed, static_cast<unsigned long long>(first));"));
  CHECK(contains(text, "kiln::dropout_keep_bits(words_0.bits(j), 1677722u)"));
  CHECK(contains(text, "kiln::dropout_keep(seed, "));   // operator(): the element form
  // Without a dropout the store has no lanes form.
  CHECK(!contains(all_sources(sources_of(plan_of({"norms", "softmax", "", {}, {}}))), "kFlatLanes"));
}

TEST_CASE("memory plans: an elementwise kernel runs a persistent grid only when it re-reads a large broadcast operand") {
  // [Note: one step a thread, or a persistent grid] (templates/kiln/config/elementwise.h).
  const auto elementwise = [](const kiln::Plan& plan) {
    for (const auto& k : plan.kernels)
      if (k.template_name == "elementwise") return k;
    FAIL("no elementwise kernel");
    return plan.kernels[0];
  };
  const long long sms = kiln::Target::for_arch("sm_90").sm_count;
  SUBCASE("a bias of 4096 elements stays in cache either way: one step a thread") {
    const auto k = elementwise(plan_of({"elementwise", "relu_add", "", {}, {}}));
    CHECK(!std::get<kiln::ElementwiseConfig>(k.config).persistent);
    CHECK(k.grid.x == 4096LL * 4096 / 4 / 256);
  }
  // An affine tail over rows (a norm's, unfused): x [B, N] times gamma plus beta, both [N].
  const auto affine = [](long long b, long long n) {
    return plan_of_text("op a {\n  dims B = " + std::to_string(b) + ", N = " + std::to_string(n) +
                            "\n  in x: f32[B, N]\n  in g: f32[N]\n  in b: f32[N]\n  out y = x * g + b\n}\n",
                        "a");
  };
  SUBCASE("gamma and beta of 2^16 elements stay in L2 between rows: one step a thread") {
    const auto k = elementwise(affine(256, 1 << 16));
    CHECK(!std::get<kiln::ElementwiseConfig>(k.config).persistent);
  }
  SUBCASE("per-pixel statistics over the channels [N, 1, H, W], re-read every 2^18 outputs: one step a thread") {
    // (An RMS norm over the channels computes such statistics; it plans as one strided rownorm now.)
    const auto k = elementwise(plan_of_text("op a {\n  dims N = 4, C = 64, H = 512, W = 512\n  in x: f32[N, C, H, W]\n"
                                            "  in s: f32[N, 1, H, W]\n  out y = x * s\n}\n",
                                            "a"));
    CHECK(!std::get<kiln::ElementwiseConfig>(k.config).persistent);
  }
  SUBCASE("gamma and beta of 2^22 elements, re-read for each of 16 rows: persistent") {
    const auto k = elementwise(affine(16, 1 << 22));
    CHECK(std::get<kiln::ElementwiseConfig>(k.config).persistent);
    CHECK(k.grid.x == sms * kiln::kElementwiseBlocksPerSm);
    CHECK(contains(k.reason, "persistent grid"));
  }
  SUBCASE("every operand of the output's size: one step a thread however large") {
    const auto k = elementwise(plan_of({"elementwise", "axpby", "", {}, {}}));
    CHECK(!std::get<kiln::ElementwiseConfig>(k.config).persistent);
    CHECK(k.grid.x > sms * kiln::kElementwiseBlocksPerSm);
  }
}

TEST_CASE("memory plans: template choices") {
  SUBCASE("min over axis 1 of 128x4096x4095: reduce_outer_rows_v4, 16-byte aligned loads over misaligned rows") {
    const auto plan = plan_of({"min_reduce", "min_reduce", "", {}, {}});
    // 4 splits of 1024 rows (about 4 blocks of 1024 threads per SM), then reduce_finish.
    REQUIRE(plan.kernels.size() == 2);
    CHECK(plan.kernels[1].template_name == "reduce_finish");
    CHECK(plan.kernels[0].template_name == "reduce_outer");
    // 4095 % 4 != 0: rows start at every residue mod 4, yet 16-byte aligned vectors + lane shuffles
    // (4-byte loads measured 3.5-3.9 ms on an H100 against 2.84 ms for a copy).
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).variant == kiln::ReduceVariant::kOuterV4);
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).vec == 4);
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).cols == 1);
    // A block owns all 4095 columns (1024 threads x 4) of its slice.
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).threads == 1024);
    CHECK(plan.kernels[0].block.x == 1024);
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).splits == 4);
    CHECK(plan.kernels[0].grid.x * plan.kernels[0].grid.y == 512);
    // 128*4096*4095 = 2146959360 = 2^31 - 2^19 < kIndex32Limit (2^31 - 2^18 - 1): int32 indices still suffice.
    CHECK(!plan.kernels[0].index64);
    const auto src = sources_of(plan)[0].text;
    CHECK(contains(src, "using Index = int;"));
    CHECK(contains(src, "kiln::reduce_outer_rows_v4<kThreads, kUnroll, Op>(in_x, static_cast<float*>(nullptr), reinterpret_cast<Op::Acc*>(ws_y_partials),"));
    CHECK(contains(plan.kernels[0].reason, "16-byte aligned loads + lane shuffles"));
  }
  SUBCASE("min over axis 1 without a 16-byte aligned base keeps 4-byte whole-row sweeps") {
    auto target = kiln::Target::for_arch("sm_90");
    target.aligned16 = false;   // e.g. a view at an odd offset: 16-byte vectors are not allowed
    const auto plan = plan_of({"min_reduce", "min_reduce", "", {}, {}}, target);
    REQUIRE(!plan.kernels.empty());
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).variant == kiln::ReduceVariant::kOuterRows);
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).cols == 16);
    CHECK(contains(sources_of(plan)[0].text, "kiln::reduce_outer_rows<kThreads, kCols, kUnroll, Op>"));
  }
  SUBCASE("min over axis 1 of 3x1001x4097: v4 in two balanced tiles of 544 threads") {
    const auto plan = plan_of({"min_reduce", "min_reduce", "", {{"B", 3}, {"M", 1001}, {"N", 4097}}, {}});
    REQUIRE(!plan.kernels.empty());
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).variant == kiln::ReduceVariant::kOuterV4);
    CHECK(plan.kernels[0].block.x == 544);
    CHECK(plan.kernels[0].grid.x == 3 * 2);
  }
  SUBCASE("min over axis 2 (via the const) is reduce_inner, a warp per row") {
    const auto plan = plan_of({"min_reduce", "min_reduce", "", {}, {{"axis", 2}}});
    REQUIRE(plan.kernels.size() == 1);
    CHECK(plan.kernels[0].template_name == "reduce_inner");
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).variant == kiln::ReduceVariant::kInnerWarp);   // 524288 rows: a warp each fills the GPU
    CHECK(contains(sources_of(plan)[0].text, "kiln::reduce_inner_warp<kThreads, kUnroll, Op>"));
  }
  SUBCASE("max over axis 0 of 4096x4096: the outer reduction loads 16 bytes") {
    const auto plan = plan_of({"reductions", "max_cols", "", {}, {}});
    REQUIRE(!plan.kernels.empty());
    CHECK(plan.kernels[0].template_name == "reduce_outer");
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).vec == 4);   // 4096 % 4 == 0: 16-byte vectors of columns
    // 4 column tiles cannot fill 132 SMs: the reduced axis is split and reduce_finish follows.
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).splits > 1);
    REQUIRE(plan.kernels.size() == 2);
    CHECK(plan.kernels[1].template_name == "reduce_finish");
    const auto srcs = sources_of(plan);
    CHECK(contains(srcs[0].text, "reinterpret_cast<Op::Acc*>(ws_y_partials)"));
    CHECK(contains(srcs[1].text, "kiln::reduce_finish<kFinishThreads, kLanes, Op>"));
  }
  SUBCASE("argmax stores i64 from the Index result") {
    const auto plan = plan_of({"reductions", "argmax_rows", "", {}, {}});
    const auto src = sources_of(plan)[0].text;
    CHECK(contains(src, "kiln::ArgMaxOp<float, Index>"));
    CHECK(contains(src, "long long operator()(Index result, Index flat)"));
  }
  SUBCASE("mean over two adjacent axes with keepdims is one reduce_inner over rows of M*N") {
    const auto plan = plan_of({"reductions", "mean_keepdims", "", {}, {}});
    REQUIRE(!plan.kernels.empty());
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).red == 512 * 512);
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).inner == 1);
    CHECK(contains(sources_of(plan)[0].text, "kiln::MeanOp<float>"));
  }
  SUBCASE("exclusive cumsum of 32768 rows: a block per row") {
    const auto plan = plan_of({"cumsum_exclusive", "cumsum_exclusive", "", {}, {}});
    REQUIRE(plan.kernels.size() == 1);
    CHECK(plan.kernels[0].template_name == "scan_rows");
    CHECK(plan.kernels[0].grid.x == 32768);
    CHECK(contains(sources_of(plan)[0].text, "constexpr bool kExclusive = true, kReverse = false;"));
  }
  SUBCASE("rmsnorm as written is one rownorm kernel: x read once, the scale and gamma in its store") {
    const auto plan = plan_of({"norms", "rmsnorm", "", {}, {}});
    REQUIRE(plan.kernels.size() == 1);
    CHECK(plan.kernels[0].template_name == "rownorm");
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "RMS norm of x over axes [1] (4096 rows of 4096): one normalize kernel"));
    const auto src = sources_of(plan)[0].text;
    CHECK(contains(src, "kiln::RowNormKind::kRmsNorm"));
    // x is the element the template loaded: no second load of x.
    CHECK(contains(src, "= elem;"));
    CHECK(!contains(src, "in_x["));
    CHECK(contains(src, "return rsqrtf(q / C(kCount) + static_cast<C>(1e-06f));"));   // the Scale, as written
    CHECK(contains(src, "in_gamma[o1]"));                                            // the epilogue
  }
  SUBCASE("layernorm as written is one rownorm kernel; too few long rows make a split norm") {
    const auto plan = plan_of({"norms", "layernorm", "", {}, {}});
    REQUIRE(plan.kernels.size() == 1);
    CHECK(plan.kernels[0].template_name == "rownorm");
    CHECK(contains(sources_of(plan)[0].text, "kiln::RowNormKind::kLayerNorm"));
    const auto few = plan_of({"norms", "layernorm", "", {{"B", 16}, {"N", 1 << 22}}, {}});
    REQUIRE(few.kernels.size() == 2);
    REQUIRE(few.fusions.size() == 1);
    CHECK(contains(few.fusions[0], "(16 rows of 4194304): a split normalize"));
    const auto sources = sources_of(few);
    REQUIRE(sources.size() == 2);
    CHECK(contains(sources[0].text, "kiln::rownorm_split_stats<kThreads, kKind, C, kConfig.aligned, kConfig.rows_fastest>("));
    CHECK(contains(sources[1].text, "kiln::rownorm_split_apply<kThreads, kKind, C, kConfig.aligned, kConfig.rows_fastest>("));
    CHECK(contains(sources[1].text, "return rsqrtf(q / C(kCount) + static_cast<C>(1e-05f));"));
    CHECK(contains(sources[1].text, "constexpr Index kCount = kLead * kLen;"));
    CHECK(contains(sources[1].text, "in_gamma["));   // the affine in the apply pass's epilogue
  }
  SUBCASE("a split norm takes the rows fastest where its epilogue reads 16 MiB or more that every row reads alike") {
    // [Note: split norm block order]: gamma and beta broadcast over the kept axes (B; C of NCHW
    // for a layer norm over H, W) count; an operand that varies along a kept axis does not.
    const auto order = [](const std::string& dims, const std::string& affine, const std::string& axes) {
      const auto plan = plan_of_text("op n {\n  dims " + dims + "\n  in x: f32[" +
                                         (dims[0] == 'B' ? std::string("B, N") : std::string("N, C, H, W")) + "]\n" +
                                         affine + "  let mu = mean(x, axis=" + axes + ", keepdims=true)\n" +
                                         "  let d = x - mu\n  let var = mean(d * d, axis=" + axes +
                                         ", keepdims=true)\n  out y = d * rsqrt(var + 1e-5) * g\n}\n",
                                     "n");
      REQUIRE(plan.kernels.size() == 2);
      const auto& c = std::get<kiln::RownormConfig>(plan.kernels[0].config);
      CHECK(c.rows_fastest == std::get<kiln::RownormConfig>(plan.kernels[1].config).rows_fastest);
      CHECK(contains(plan.kernels[0].reason, ", the rows fastest (the epilogue reads") == c.rows_fastest);
      return c.rows_fastest;
    };
    CHECK(order("B = 16, N = 4194304", "  in g: f32[N]\n", "1"));          // 16 MiB shared
    CHECK(!order("B = 16, N = 2097152", "  in g: f32[N]\n", "1"));         // 8 MiB
    CHECK(!order("B = 16, N = 4194304", "  in g: f32[B, N]\n", "1"));      // varies with the row
    CHECK(!order("B = 16, N = 4194304", "  in g: f32[B, 1]\n", "1"));      // one value a row
    CHECK(order("N = 16, C = 64, H = 256, W = 256", "  in g: f32[C, H, W]\n", "[1, 2, 3]"));
    CHECK(order("N = 2, C = 16, H = 2048, W = 2048", "  in g: f32[H, W]\n", "[2, 3]"));     // C kept, g shared
    CHECK(!order("N = 2, C = 16, H = 2048, W = 2048", "  in g: f32[C, 1, 1]\n", "[2, 3]"));
    CHECK(!order("N = 16, C = 64, H = 256, W = 256", "  in g: f32[C, 1, 1]\n", "[0, 2, 3]"));   // a batch norm
  }
  SUBCASE("softmax(dropout(x)) is one kernel") {
    const auto plan = plan_of_text(
        "op sd {\n  dims B = 128, N = 16384\n  in x: f32[B, N]\n  in seed: u64\n"
        "  out y = softmax(dropout(x, p=0.2, seed=seed), axis=1)\n}\n",
        "sd");
    REQUIRE(plan.kernels.size() == 1);
    CHECK(plan.kernels[0].template_name == "rownorm");
    const auto src = sources_of(plan)[0].text;
    CHECK(contains(src, "kiln/philox.cuh"));   // the mask is computed in the Load functor
    CHECK(contains(src, "kiln::rownorm_rows<"));
  }
  SUBCASE("sqrt(mean(x*x)) * 2 over all axes: prologue and epilogue fused into one kernel") {
    const auto plan = plan_of_text("op a {\n  dims B = 33, N = 7\n  in x: f32[B, N]\n  out y = sqrt(mean(x * x)) * 2.0\n}\n", "a");
    REQUIRE(plan.kernels.size() == 1);
    CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).red == 33 * 7);   // every axis: one row of 231
    const auto src = sources_of(plan)[0].text;
    CHECK(contains(src, "sqrtf(anchor_value)"));   // the epilogue reads the reduced value, not a buffer
  }
  SUBCASE("softmax along a strided axis uses rownorm_strided") {
    const auto plan = plan_of_text("op s0 {\n  dims B = 64, N = 1000\n  in x: f32[B, N]\n  out y = softmax(x, axis=0)\n}\n", "s0");
    REQUIRE(plan.kernels.size() == 1);
    CHECK(contains(sources_of(plan)[0].text, "kiln::rownorm_strided<"));
  }
}

TEST_CASE("memory plans: scans over a non-last axis and reductions over non-adjacent axes are planned") {
  // Both were located "not supported yet" errors; see tests/generator/test_scan_reduce_plan.cpp.
  auto spec = kiln::parse_spec(
      "op s {\n  dims B = 4, N = 8\n  in x: f32[B, N]\n  out y = cumsum(x, axis=0)\n}\n"
      "op r {\n  dims B = 4, M = 5, N = 8\n  in x: f32[B, M, N]\n  out y = sum(x, axis=[0, 2])\n}\n",
      "formerly_unsupported.kiln");
  for (const char* op : {"s", "r"}) {
    CAPTURE(op);
    auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, op), {}));
    const auto plan = kiln::make_plan(bound, kiln::Target::for_arch("sm_90"));
    CHECK(!plan.kernels.empty());
    CHECK(!sources_of(plan).empty());
  }
}

TEST_CASE("memory plans: every generated unit compiles with NVRTC for sm_80 and sm_90") {
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("skipped: NVRTC not loadable (" << why << ")");
    return;
  }
  std::vector<kiln::CompileRequest> requests;
  std::vector<std::string> names;
  auto add_units = [&](const kiln::Plan& plan, const std::string& arch, const std::string& name) {
    for (const auto& src : sources_of(plan)) {
      requests.push_back(compile_request(src, arch));
      names.push_back(name + " " + arch + " " + src.file_name);
    }
  };
  for (const auto& c : cases())
    for (const char* arch : {"sm_80", "sm_90"}) add_units(plan_of(c, arch), arch, c.op + "_" + c.tag);
  // Strided-axis reductions over rows of 4095 floats take reduce_outer_rows_v4: an argmin (index
  // result, ArgMinOp state) and a fused prologue reading a second input by flat index must compile too.
  const std::string v4_specs =
      "op argmin_ax1 {\n  dims B = 4, M = 33, N = 4095\n  in  x: f32[B, M, N]\n  out i = argmin(x, axis=1)\n}\n"
      "op sum_prod_ax1 {\n  dims B = 2, M = 9, N = 1001\n  in  x: f32[B, M, N]\n  in  w: f32[B, M, N]\n"
      "  out y = sum(x * w, axis=1)\n}\n";
  for (const char* op : {"argmin_ax1", "sum_prod_ax1"})
    for (const char* arch : {"sm_80", "sm_90"}) {
      auto spec = kiln::parse_spec(v4_specs, "v4_specs.kiln");
      auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, op), {}));
      const kiln::Plan plan = kiln::make_plan(bound, kiln::Target::for_arch(arch));
      CHECK(std::get<kiln::ReduceConfig>(plan.kernels[0].config).variant == kiln::ReduceVariant::kOuterV4);
      add_units(plan, arch, op);
    }
  int failures = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    CAPTURE(names[i]);
    try {
      const auto result = kiln::compile(requests[i]);
      CHECK(!result.cubin.empty());
      // Local-memory use is a property of the templates (an 8-byte stack frame in the sm_80
      // block reductions, say): reported, not failed, so the templates' own test owns it.
      for (const auto& res : result.resources)
        if (res.spill_stores > 0 || res.stack_bytes > 0)
          MESSAGE(names[i] << ": " << res.spill_stores << " bytes spilled, " << res.stack_bytes << " bytes of stack");
    } catch (const kiln::Error& e) {
      ++failures;
      FAIL_CHECK(e.what());
    }
  }
  MESSAGE(requests.size() << " units compiled, " << failures << " failed");
}

// Input extents written as arithmetic of dims (docs/language.md, "in"): an explicitly dyn N whose
// N + 1 an input declares (a launch checks it, DynAxis::Computed), a reduction over 2 * N, and a
// strided conv's output size declared by the residual it is added to.
TEST_CASE("memory plans: input extents written as arithmetic of dims plan, emit and compile for sm_80 and sm_90a") {
  const char* text = R"(op padded {
  dims dyn N = 1000
  in a: f32[N]
  in b: f32[N + 1]
  out y = pad(a, [0, 1]) * b
}
op halves {
  dims B = 4, N = 64
  in x: f32[B, 2 * N]
  in g: f32[N]
  out y = sum(x, axis=1) + sum(g)
}
op strided_out {
  dims N = 2, C = 8, H = 17, W = 16, K = 4
  in x: f32[N, C, H, W]
  in w: f32[K, C, 3, 3]
  in r: f32[N, K, (H - 1) / 2 + 1, (W - 1) / 2 + 1]
  out y = conv2d(x, w, stride=2, padding=1) + r
})";
  const std::vector<std::pair<std::string, std::map<std::string, std::int64_t>>> cases = {
      {"padded", {{"N", 1000}}}, {"padded", {{"N", 4095}}}, {"halves", {}}, {"halves", {{"B", 7}, {"N", 1001}}},
      {"strided_out", {}}, {"strided_out", {{"H", 9}, {"W", 31}}}};
  const bool compile = nvrtc_or_skip();
  int units = 0;
  for (const auto& [op, dims] : cases)
    for (const char* arch : {"sm_80", "sm_90a"}) {
      CAPTURE(op);
      CAPTURE(arch);
      const kiln::Plan plan = plan_text_at(text, "extents.kiln", op, dims, arch);
      CHECK(!sources_of(plan).empty());
      if (compile) units += check_units_compile(plan, arch);
    }
  MESSAGE(units << " units compiled");
}
