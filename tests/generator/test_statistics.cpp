// var, std, any and all (written by the checker with mean, sum and comparisons, as torch.var,
// torch.std, torch.any and torch.all): the float64 reference on hand values (correction 1 and 0,
// keepdims, several axes, f16), located errors for each misuse, and every unit through NVRTC for
// sm_80 and sm_90a.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "generator/frontend/frontend.h"
#include "generator/ir/ir.h"
#include "memory_plan_util.h"
#include "reference/reference.h"
#include "runtime/nvrtc.h"

namespace {

const std::string kHead = "op a {\n  dims M = 2, N = 4\n  in x: f32[M, N]\n";

// The op's first output from the float64 reference on `inputs`, and its shape.
std::vector<double> eval(const std::string& body, const std::vector<kiln::ref::HostValue>& inputs,
                         std::vector<std::int64_t>* shape = nullptr, const std::string& head = kHead) {
  auto spec = kiln::parse_spec(head + body + "\n}", "t.kiln");
  auto bound = kiln::ir::bind(kiln::check_op(spec, "a"), {});
  auto out = kiln::ref::evaluate(bound, inputs);
  if (shape) *shape = out.at(0).shape;
  return out.at(0).data;
}

std::string error_of(const std::string& body, const std::string& head = kHead) {
  try {
    auto spec = kiln::parse_spec(head + body + "\n}", "t.kiln");
    kiln::check_op(spec, "a");
  } catch (const kiln::SpecError& e) {
    const std::string what = e.what();
    return what.substr(0, what.find('\n'));
  }
  return "(no error)";
}

// x = [[1 2 3 4] [2 4 6 8]]
kiln::ref::HostValue x_values() {
  return kiln::ref::make_tensor(kiln::DType::f32, {2, 4}, {1, 2, 3, 4, 2, 4, 6, 8});
}

}  // namespace

TEST_CASE("statistics: var and std follow torch.var and torch.std") {
  const auto x = x_values();
  std::vector<std::int64_t> shape;
  // Row 0: mean 2.5, squared deviations 5; row 1: mean 5, squared deviations 20.
  auto v = eval("  out y = var(x, axis=1)", {x}, &shape);
  CHECK(shape == std::vector<std::int64_t>{2});
  CHECK(v[0] == doctest::Approx(5.0 / 3));
  CHECK(v[1] == doctest::Approx(20.0 / 3));
  v = eval("  out y = var(x, axis=1, correction=0, keepdims=true)", {x}, &shape);
  CHECK(shape == std::vector<std::int64_t>{2, 1});
  CHECK(v[0] == doctest::Approx(1.25));
  CHECK(v[1] == doctest::Approx(5.0));
  v = eval("  out y = std(x, axis=1)", {x});
  CHECK(v[0] == doctest::Approx(std::sqrt(5.0 / 3)));
  // Every axis: mean 3.75 of the 8 values, squared deviations 37.5.
  v = eval("  out y = var(x)", {x}, &shape);
  CHECK(shape.empty());
  CHECK(v[0] == doctest::Approx(37.5 / 7));
  v = eval("  out y = std(x, axis=[0, 1], correction=2)", {x});
  CHECK(v[0] == doctest::Approx(2.5));
  // One element and correction 1: 0 / 0, NaN as in PyTorch.
  v = eval("  out y = var(x, axis=0)", {kiln::ref::make_tensor(kiln::DType::f32, {1, 4}, {1, 2, 3, 4})}, nullptr,
           "op a {\n  dims M = 1, N = 4\n  in x: f32[M, N]\n");
  CHECK(std::isnan(v[0]));
  // f16 computes in f32 and returns f16, as torch.var of a half tensor.
  auto spec = kiln::parse_spec("op a {\n  dims N = 4\n  in x: f16[N]\n  out y = var(x)\n}", "t.kiln");
  const auto ir = kiln::check_op(spec, "a");
  CHECK(ir->nodes[static_cast<std::size_t>(ir->outputs.at(0).node)].dtype == kiln::DType::f16);
}

TEST_CASE("statistics: any and all follow torch.any and torch.all") {
  const auto x = x_values();
  std::vector<std::int64_t> shape;
  CHECK(eval("  out y = any(x > 3, axis=1)", {x}, &shape) == std::vector<double>{1, 1});
  CHECK(shape == std::vector<std::int64_t>{2});
  CHECK(eval("  out y = all(x > 1, axis=1)", {x}) == std::vector<double>{0, 1});
  CHECK(eval("  out y = all(x > 0)", {x}) == std::vector<double>{1});
  CHECK(eval("  out y = any(x > 8)", {x}) == std::vector<double>{0});
  // Numbers: nonzero is true.
  const auto z = kiln::ref::make_tensor(kiln::DType::f32, {2, 4}, {0, 0, 0, 0, 0, 1, 0, 0});
  CHECK(eval("  out y = any(x, axis=1, keepdims=true)", {z}, &shape) == std::vector<double>{0, 1});
  CHECK(shape == std::vector<std::int64_t>{2, 1});
  CHECK(eval("  out y = all(x, axis=0)", {z}) == std::vector<double>{0, 0, 0, 0});
  auto spec = kiln::parse_spec(kHead + "  out y = any(x > 0)\n}", "t.kiln");
  const auto ir = kiln::check_op(spec, "a");
  CHECK(ir->nodes[static_cast<std::size_t>(ir->outputs.at(0).node)].dtype == kiln::DType::boolean);
}

TEST_CASE("statistics: located errors") {
  CHECK(error_of("  out y = var(i32(x))") ==
        "t.kiln:4:11: error: var() needs a float type (f32, f16, bf16, f64), got i32; cast first, e.g. f32(x)");
  CHECK(error_of("  out y = std(x, axis=2)") == "t.kiln:4:23: error: axis 2 is out of range for std() of a rank-2 tensor (expected -2..1)");
  CHECK(error_of("  out y = var(x, unbiased=false)") ==
        "t.kiln:4:18: error: var() has no argument 'unbiased'; expected one of: axis, correction, keepdims");
  CHECK(error_of("  out y = var(x, axis=1)", "op a {\n  dims M = 2, dyn N = 4\n  in x: f32[M, N]\n") ==
        "t.kiln:4:11: error: var() with correction=1 needs each reduced extent to be a number or a specialized dim, "
        "got N (a dyn dim or an expression); write sum((x - mean(x))^2) / (count - 1) with the count as a value, or "
        "pass correction=0");
  CHECK(error_of("  out y = var(x, axis=1, correction=0)", "op a {\n  dims M = 2, dyn N = 4\n  in x: f32[M, N]\n") ==
        "(no error)");
  CHECK(error_of("  out y = any(x, 1)") ==
        "t.kiln:4:11: error: any() takes 1 positional argument (x), got 2; the others are given by name: axis=, keepdims=");
}

TEST_CASE("statistics: every unit compiles with NVRTC for sm_80 and sm_90a") {
  if (!memory_plan_test::nvrtc_or_skip()) return;
  const std::string spec = "op stats {\n  dims B = 300, N = 1000\n  in x: f32[B, N]\n"
                           "  out v = var(x, axis=1)\n  out s = std(x, axis=0, keepdims=true)\n"
                           "  out a = any(x > 0.5, axis=1)\n  out l = all(x > -2)\n}\n";
  int units = 0;
  for (const char* arch : {"sm_80", "sm_90a"})
    units += memory_plan_test::check_units_compile(memory_plan_test::plan_text_at(spec, "stats.kiln", "stats", {}, arch),
                                                   arch);
  CHECK(units >= 4);
}
