// iota(d0, ..., axis=k): checked with located errors, evaluated by the reference, and inlined by
// the ExprEmitter wherever it is read (an element's coordinate along the axis: no load, no
// kernel of its own). docs/adding-a-template.md walks through the iota template family it had
// before it was inlined.
#include <doctest/doctest.h>

#include <algorithm>

#include "golden.h"
#include "memory_plan_util.h"
#include "reference/reference.h"

namespace {

using memory_plan_test::all_sources;
using memory_plan_test::Case;
using memory_plan_test::plan_of;
using memory_plan_test::sources_of;

std::string check_error(const std::string& text) {
  try {
    auto spec = kiln::parse_spec(text, "t.kiln");
    kiln::check_op(spec, "a");
  } catch (const kiln::SpecError& e) {
    const std::string what = e.what();
    return what.substr(0, what.find('\n'));
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("iota: located errors for every misuse") {
  const std::string head = "op a {\n  dims M = 4, N = 8\n  in x: f32[M, N]\n";
  CHECK(check_error(head + "  out y = iota(x, axis=0)\n}") ==
        "t.kiln:4:16: error: 'x' in the shape of iota() is an input, not a dim");
  CHECK(check_error(head + "  out y = iota(M, 2.5)\n}") ==
        "t.kiln:4:19: error: iota() takes the shape of its result: dim names or integers >= 1 (iota(M, N, axis=1))");
  CHECK(check_error(head + "  out y = iota(M, 0)\n}") == "t.kiln:4:19: error: a dim in the shape of iota() must be >= 1, got 0");
  CHECK(check_error(head + "  out y = iota(M, N, axis=2)\n}") ==
        "t.kiln:4:27: error: axis 2 is out of range for iota() of a rank-2 tensor (expected -2..1)");
  CHECK(check_error(head + "  out y = iota(Q)\n}").rfind("t.kiln:4:16: error: unknown dim 'Q' in the shape of iota()", 0) == 0);
  CHECK(check_error(head + "  out y = iota(M, N, step=2)\n}") ==
        "t.kiln:4:22: error: iota() has no argument 'step'; expected one of: axis");
}

TEST_CASE("iota: the reference gives each element its coordinate along the axis") {
  auto spec = kiln::parse_spec("op a {\n  dims A = 2, B = 3, C = 4\n  out y = iota(A, B, C, axis=1)\n}", "t.kiln");
  auto bound = kiln::ir::bind(kiln::check_op(spec, "a"), {});
  const auto out = kiln::ref::evaluate(bound, {});
  REQUIRE(out.size() == 1);
  CHECK(out[0].dtype == kiln::DType::i64);
  REQUIRE(out[0].data.size() == 24);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) CHECK(out[0].data[static_cast<std::size_t>((a * 3 + b) * 4 + c)] == b);
}

TEST_CASE("iota: inlined where it is read (an element's coordinate), never stored, plan and source goldens") {
  const Case cases[] = {
      {"indices", "arange_rows", "default", {}, {}},
      {"indices", "arange_rows", "odd", {{"B", 3}, {"N", 7}}, {}},
      {"indices", "positions", "default", {}, {}},
      {"indices", "triu_mask", "odd", {{"N", 33}}, {}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.op);
    const kiln::Plan plan = plan_of(c);
    // One elementwise kernel: the iota is the coordinate itself, and nothing holds it in memory.
    REQUIRE(plan.kernels.size() == 1);
    CHECK(plan.kernels[0].template_name == "elementwise");
    CHECK(std::none_of(plan.buffers.begin(), plan.buffers.end(),
                       [](const kiln::Buffer& b) { return b.kind == kiln::BufferKind::Intermediate; }));
    check_golden("source/" + c.op + "_" + c.tag + ".cu", plan.text() + "\n" + all_sources(sources_of(plan)));
  }
  // triu: the mask is a comparison of the two coordinates, in the kernel that reads x.
  const auto triu = all_sources(sources_of(plan_of(Case{"indices", "triu_mask", "odd", {{"N", 33}}, {}})));
  CHECK(triu.find("(static_cast<long long>(c0) <= static_cast<long long>(c1))") != std::string::npos);
}
