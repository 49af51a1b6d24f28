// The pooling family: max_pool / avg_pool in 1-3 dims, evaluated by the reference (values
// computed by hand here; python/tests/test_pooling.py holds the reference to PyTorch over many
// random settings), planned as one kiln/pool.cuh kernel with the operand inlined and the epilogue
// fused, emitted with the config and the launch check, and compiled by NVRTC.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "golden.h"
#include "memory_plan_util.h"
#include "pool_cases.h"
#include "reference/reference.h"

namespace {

using memory_plan_test::all_sources;
using memory_plan_test::Case;
using memory_plan_test::plan_of;
using memory_plan_test::sources_of;

// The one kernel of `out y = <expr>` over x: f32[shape] for sm_90a (pointers 16-byte aligned or not).
kiln::PlannedKernel pool_kernel_of(const std::string& shape, const std::string& expr, bool aligned16 = true) {
  auto spec = kiln::parse_spec("op a {\n  in x: f32[" + shape + "]\n  out y = " + expr + "\n}\n", "t.kiln");
  auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, "a"), {}));
  kiln::Target target = kiln::Target::for_arch("sm_90a");
  target.aligned16 = aligned16;
  const kiln::Plan plan = kiln::make_plan(bound, target);
  REQUIRE(plan.kernels.size() == 1);
  return plan.kernels[0];
}

// Evaluates `out y = <expr>` over x: <dtype>[shape...] holding `values`.
std::vector<double> evaluate_pool(kiln::DType dtype, const std::string& shape, const std::string& expr,
                                  const std::vector<std::int64_t>& dims, const std::vector<double>& values,
                                  std::vector<std::int64_t>* out_shape = nullptr) {
  auto spec = kiln::parse_spec(fmt::format("op a {{\n  in x: {}[{}]\n  out y = {}\n}}\n", kiln::dtype_name(dtype), shape,
                                           expr), "t.kiln");
  auto bound = kiln::ir::bind(kiln::check_op(spec, "a"), {});
  const auto out = kiln::ref::evaluate(bound, {kiln::ref::make_tensor(dtype, dims, values)});
  if (out_shape) *out_shape = out.at(0).shape;
  return out.at(0).data;
}

std::vector<double> pool_ref(const std::string& shape, const std::string& expr, const std::vector<std::int64_t>& dims,
                             const std::vector<double>& values, std::vector<std::int64_t>* out_shape = nullptr) {
  return evaluate_pool(kiln::DType::f64, shape, expr, dims, values, out_shape);
}

}  // namespace

std::vector<double> pool_reference(const std::string& shape, const std::string& expr,
                                   const std::vector<std::int64_t>& dims, const std::vector<double>& values) {
  return evaluate_pool(kiln::DType::f32, shape, expr, dims, values);
}

TEST_CASE("pooling: the reference's windows, padding, divisors and ceil_mode") {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  std::vector<std::int64_t> shape;
  // Windows [-1, 1), [1, 3), [3, 5) of x padded by one on each side.
  CHECK(pool_ref("1, 5", "avg_pool1d(x, 2, padding=1)", {1, 5}, x, &shape) == std::vector<double>{0.5, 2.5, 4.5});
  CHECK(shape == std::vector<std::int64_t>{1, 3});
  CHECK(pool_ref("1, 5", "avg_pool1d(x, 2, padding=1, count_include_pad=false)", {1, 5}, x) ==
        std::vector<double>{1, 2.5, 4.5});
  CHECK(pool_ref("1, 5", "avg_pool1d(x, 2, padding=1, divisor_override=4)", {1, 5}, x) ==
        std::vector<double>{0.25, 1.25, 2.25});
  // ceil_mode keeps the last, partial window [4, 6) (clipped to the padded input, it counts 1).
  CHECK(pool_ref("1, 5", "avg_pool1d(x, 2, ceil_mode=true)", {1, 5}, x, &shape) == std::vector<double>{1.5, 3.5, 5});
  CHECK(shape == std::vector<std::int64_t>{1, 3});
  CHECK(pool_ref("1, 5", "avg_pool1d(x, 2)", {1, 5}, x, &shape) == std::vector<double>{1.5, 3.5});
  // ... but never a window that starts in the right padding: L = 4, k = 2, s = 2, p = 1 gives
  // ceil(4 / 2) + 1 = 3 windows, the last starting at 3 (inside), not 4.
  CHECK(pool_ref("1, 4", "max_pool1d(x, 2, padding=1, ceil_mode=true)", {1, 4}, {1, 2, 3, 4}, &shape) ==
        std::vector<double>{1, 3, 4});
  // A dilated max window (span 5, so (5 + 2 - 5) / 1 + 1 = 3 windows): positions {-1, 1, 3},
  // {0, 2, 4}, {1, 3, 5}, the padding and 5 outside.
  CHECK(pool_ref("1, 5", "max_pool1d(x, 3, stride=1, padding=1, dilation=2)", {1, 5}, {5, 1, 4, 2, 3}) ==
        std::vector<double>{2, 5, 2});
  // NaN propagates through max; a 2-d window over [2, 3] rows.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto m = pool_ref("1, 2, 3", "max_pool2d(x, [2, 2], stride=1)", {1, 2, 3}, {1, nan, 3, 4, 5, 6});
  REQUIRE(m.size() == 2);
  CHECK(std::isnan(m[0]));
  CHECK(std::isnan(m[1]));
  CHECK(pool_ref("1, 2, 3", "avg_pool2d(x, [2, 2], stride=1)", {1, 2, 3}, {1, 2, 3, 4, 5, 6}) ==
        std::vector<double>{3, 4});
  // 3-d: one window over a 2x2x2 cube, and the ceil_mode symbolic size's two bounds.
  CHECK(pool_ref("1, 2, 2, 2", "avg_pool3d(x, 2)", {1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}) == std::vector<double>{4.5});
}

TEST_CASE("pooling: PoolConfig's text, equality, hash and literal follow its fields") {
  kiln::PoolConfig a;
  a.kernel_h = 3;
  kiln::PoolConfig b = a;
  CHECK(a == b);
  CHECK(a.hash() == b.hash());
  b.divisor = 5;
  CHECK_FALSE(a == b);
  CHECK(a.hash() != b.hash());
  CHECK(a.to_string().rfind("PoolConfig{threads=256 max=1 planes=1 in_d=1", 0) == 0);
  CHECK(a.literal().find("/*kernel_h=*/3") != std::string::npos);
}

TEST_CASE("pooling: one kernel per pool, operand inlined and epilogue fused, plan and source goldens") {
  const Case cases[] = {
      {"pooling", "max_pool2d_relu", "default", {}, {}},
      {"pooling", "avg_pool2d_pads", "odd", {{"N", 3}, {"C", 5}, {"H", 7}, {"W", 9}}, {}},
      {"pooling", "pool1d", "default", {}, {}},
      {"pooling", "pool3d", "default", {}, {}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.op);
    const kiln::Plan plan = plan_of(c);
    for (const auto& k : plan.kernels) {
      CHECK(k.template_name == "pool");
      CHECK(std::holds_alternative<kiln::PoolConfig>(k.config));
    }
    for (const auto& src : sources_of(plan))
      CHECK(src.text.find("static_assert(kiln::launch::same_launch(kiln::pool_geometry(kConfig") != std::string::npos);
    check_golden("source/" + c.op + "_" + c.tag + ".cu", plan.text() + "\n" + all_sources(sources_of(plan)));
  }
  // max_pool2d_relu: the scale (a broadcast input) in the Load, the relu in the Store: one kernel.
  const kiln::Plan fused = plan_of(Case{"pooling", "max_pool2d_relu", "default", {}, {}});
  REQUIRE(fused.kernels.size() == 1);
  const auto& config = std::get<kiln::PoolConfig>(fused.kernels[0].config);
  CHECK(config.max);
  CHECK(config.planes == 16 * 32);
  CHECK(config.in_d == 1);
  CHECK(config.out_h == 64);
  CHECK(config.kernel_h == 3);
  CHECK(config.padding_w == 1);
  // pool3d: three spatial axes right-aligned into (d, h, w).
  const kiln::Plan three = plan_of(Case{"pooling", "pool3d", "default", {}, {}});
  REQUIRE(three.kernels.size() == 2);
  const auto& avg = std::get<kiln::PoolConfig>(three.kernels[1].config);
  CHECK_FALSE(avg.max);
  CHECK(avg.in_d == 17);
  CHECK(avg.kernel_d == 2);
  CHECK(avg.stride_w == 1);
  CHECK_FALSE(avg.include_pad);
}

TEST_CASE("pooling: the planner gives the configs the emulated template runs with (their run, vector and stores aside)") {
  for (const auto& c : emulated_pool_cases()) {
    CAPTURE(c.expr);
    kiln::PoolConfig planned = std::get<kiln::PoolConfig>(pool_kernel_of(c.shape, c.expr).config);
    CHECK(planned.vec == kiln::pool_vec(4, true, planned.in_w, planned.out_w, planned.kernel_w, planned.stride_w,
                                        planned.dilation_w, planned.padding_w));
    CHECK(planned.run == kiln::pool_run(planned.vec, planned.out_w, planned.kernel_w, planned.stride_w,
                                        planned.dilation_w));
    CHECK(planned.rows == kiln::pool_rows(planned.max, planned.out_h, planned.kernel_h, planned.stride_h,
                                          planned.dilation_h, kiln::pool_run_span(planned)));
    CHECK(planned.wide_stores == kiln::pool_wide_stores(planned.max, true, planned.run));
    // The emulation also runs pools in runs and stores the planner would not give them (and its
    // blocks are 64 threads).
    planned.run = c.config->run;
    planned.vec = c.config->vec;
    planned.threads = c.config->threads;
    planned.wide_stores = c.config->wide_stores;
    CHECK(planned.to_string() == c.config->to_string());
  }
}

// [Note: pool wide stores] in config/pool.h, on KernelBench's pools.
TEST_CASE("pooling: a whole run stored as aligned vectors where pointers are aligned") {
  auto config_of = [](const std::string& shape, const std::string& expr, bool aligned16 = true) {
    const kiln::PlannedKernel k = pool_kernel_of(shape, expr, aligned16);
    return std::make_pair(std::get<kiln::PoolConfig>(k.config), k.reason);
  };
  // KernelBench 42 (vector runs of 4 rows) and 41 (vector runs): rows of 511 and 65523 outputs.
  const auto [kb42, why42] = config_of("32, 64, 512, 512", "max_pool2d(x, 4, stride=1, padding=1)");
  CHECK(kb42.rows == 4);
  CHECK(kb42.wide_stores);
  CHECK(why42.find("in aligned 16-byte vectors, each run stored as aligned vectors") != std::string::npos);
  CHECK(config_of("64, 192, 65536", "max_pool1d(x, 8, stride=1, padding=4, dilation=3)").first.wide_stores);
  // Runs by element (stride 1 along rows of 71) too; avg pools, a run of 1 or unaligned pointers: none.
  CHECK(config_of("2, 9, 71", "max_pool2d(x, 3, stride=1, padding=1)").first.wide_stores);
  const auto [kb46, why46] = config_of("16, 32, 128, 128, 256", "avg_pool3d(x, 3, stride=2, padding=1)");
  CHECK(kb46.vec == 4);
  CHECK_FALSE(kb46.wide_stores);
  CHECK_FALSE(config_of("4, 64, 256", "max_pool2d(x, 11)").first.wide_stores);
  const auto [unaligned, why_unaligned] = config_of("32, 64, 512, 512", "max_pool2d(x, 4, stride=1, padding=1)", false);
  CHECK_FALSE(unaligned.wide_stores);
  CHECK(why_unaligned.find("stored as aligned vectors") == std::string::npos);
  // The wide stores' pieces: 4 (a run at 0 mod 4), 2 + 2 (at 2), 1 + 2 + 1 (at 1 or 3); halves: 8.
  CHECK(kiln::pool_store_piece(0, 4, 4) == 4);
  CHECK(kiln::pool_store_piece(2, 4, 4) == 2);
  CHECK(kiln::pool_store_piece(1, 4, 4) == 1);
  CHECK(kiln::pool_store_piece(2, 3, 4) == 2);
  CHECK(kiln::pool_store_piece(4, 1, 4) == 1);
  CHECK(kiln::pool_store_piece(0, 8, 2) == 8);
  CHECK(kiln::pool_store_piece(0, 4, 8) == 2);   // f64: 16 bytes at most
}

// [Note: dyn pooled axes] in plan_pool.cpp.
TEST_CASE("pooling: dyn pooled axes read their extents per launch, in size classes of the output extent") {
  const Case at224{"pooling", "max_pool_any_size", "dyn", {}, {}};
  const kiln::Plan plan = plan_of(at224, "sm_90a");
  REQUIRE(plan.kernels.size() == 1);
  const auto& k = plan.kernels[0];
  const auto& config = std::get<kiln::PoolConfig>(k.config);
  CHECK(config.in_h == 0);
  CHECK(config.in_w == 0);
  CHECK(config.out_h == 0);
  CHECK(config.out_w == 0);
  CHECK(config.planes == 8 * 64);
  std::vector<std::string> values;
  for (const auto& a : k.args)
    if (a.kind == kiln::KernelArg::Kind::DynValue)
      values.push_back(a.name + " = " + a.value.str());
  // Runs of 4 outputs along w (16-byte vectors), one output row a step.
  CHECK(config.run == 4);
  CHECK(config.rows == 1);
  CHECK(values == std::vector<std::string>{"pool_in_h = H", "pool_out_h = (((H - 1) / 2) + 1)", "pool_in_w = W",
                                           "pool_out_w = (((W - 1) / 2) + 1)",
                                           "pool_runs_w = ((((W - 1) / 2) + 4) / 4)",
                                           "pool_rows_h = (((H - 1) / 2) + 1)"});
  // out = (H - 1) / 2 + 1 reaches 2 at H = 3, 4 at 7, 8 at 15.
  CHECK(plan.dyn_thresholds.at("H") == std::vector<std::int64_t>{3, 7, 15});
  CHECK(plan.dyn_thresholds.at("W") == std::vector<std::int64_t>{3, 7, 15});
  // The launch at other values of the class: the grid over that launch's outputs.
  const auto g = kiln::launch_for(plan, 0, {{"N", 8}, {"C", 64}, {"H", 100}, {"W", 36}});
  CHECK(g.grid.x == kiln::launch::ceil_div(8LL * 64 * 50 * 5, 256));   // 18 outputs a row: 5 runs
  // One source for every value of a bucket and class; the fused bias reads the output's channel
  // through the extents' expressions.
  const std::string source = all_sources(sources_of(plan));
  for (std::int64_t v : {240, 32, 16})
    CHECK(all_sources(sources_of(plan_of(Case{"pooling", "max_pool_any_size", "dyn", {{"H", v}, {"W", v}}, {}},
                                         "sm_90a"))) == source);
  CHECK(source.find("kiln::PoolDyn{{}, pool_in_h, pool_in_w, {}, pool_out_h, pool_out_w, pool_runs_w, pool_rows_h}") !=
        std::string::npos);
  CHECK(source.find("224") == std::string::npos);
  check_golden("source/max_pool_any_size_dyn.cu", plan.text() + "\n" + all_sources(sources_of(plan)));
  // Another class of W (W = 5: 3 outputs a row, fewer than a vector) plans its own kernel; one of
  // H (H = 5: 3 output rows) plans the same kernel here (no runs of rows at stride 2), one source.
  CHECK(all_sources(sources_of(plan_of(Case{"pooling", "max_pool_any_size", "dyn", {{"W", 5}}, {}}, "sm_90a"))) !=
        source);
  CHECK(all_sources(sources_of(plan_of(Case{"pooling", "max_pool_any_size", "dyn", {{"H", 5}}, {}}, "sm_90a"))) ==
        source);
}

TEST_CASE("pooling: a dyn pooled extent reaches no kernel but the pool's own, located") {
  const std::string text = R"(op pp {
  dims N = 2, C = 3, dyn H, W = 64
  in x: f32[N, C, H, W]
  out y = max_pool2d(max_pool2d(x, 2), 2)
}
op after {
  dims N = 2, C = 3, dyn H, W = 64
  in x: f32[N, C, H, W]
  out y = max_pool2d(x, 2)
  out z = exp(y)
}
)";
  CHECK(memory_plan_test::refusal_of(text, "t.kiln", "pp", {{"H", 32}}) ==
        "t.kiln:2:26: op pp: dim 'H' is dyn, but the pool template (for line 4) takes a dyn pooled axis only as a "
        "whole dim, not inside (((H - 2) / 2) + 1) (axis 2)");
  CHECK(memory_plan_test::refusal_of(text, "t.kiln", "after", {{"H", 32}}) ==
        "t.kiln:7:26: op after: dim 'H' is dyn, but the elementwise template (for line 10) reads the extent "
        "(((H - 2) / 2) + 1) of its dyn dims, and only a pool's or conv's own kernel reads such a quotient (a dyn "
        "pooled axis or conv spatial extent: that template and its fused epilogue)");
}
