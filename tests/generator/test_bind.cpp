#include <doctest/doctest.h>

#include "generator/frontend/frontend.h"

namespace {

std::shared_ptr<const kiln::ir::Ir> checked(const std::string& text, const std::string& op) {
  return kiln::check_op(kiln::parse_spec(text, "t.kiln"), op);
}

const char* kAdd = R"(op add {
  dims B = 8, dyn N
  in  x: f32[B, N]
  in  y: f32[N]
  in  s: f32
  out z = x + y * s
})";

const char* kConv = R"(op conv {
  const g: int = 2
  dims N = 2, C = 8, H = 16, W = 16, K = 4, CG = 4
  in x: f32[N, C, H, W]
  in w: f32[K, CG, 3, 3]
  out y = conv2d(x, w, stride=2, padding=1, groups=g)
})";

}  // namespace

TEST_CASE("bind: given values win over defaults, missing dims are errors") {
  auto ir = checked(kAdd, "add");
  // Rendered like a spec error: file:line:col at the dim's declaration, the line and a caret.
  CHECK_THROWS_WITH_AS(kiln::ir::bind(ir, {}),
                       "t.kiln:2:19: error: op add: dim N has no value; pass a tensor with that dim or -D N=VALUE\n"
                       "  dims B = 8, dyn N\n"
                       "                  ^",
                       kiln::ArgumentError);
  auto bound = kiln::ir::bind(ir, {{"N", {100, "-D N=100"}}});
  CHECK(bound.dims.at("B") == 8);
  CHECK(bound.dims.at("N") == 100);
  CHECK(bound.shape(ir->outputs[0].node) == std::vector<std::int64_t>{8, 100});
  CHECK(bound.numel(ir->outputs[0].node) == 800);
  CHECK(bound.shape(2).empty());   // the scalar
  CHECK(bound.is_dynamic("N"));
  CHECK(!bound.is_dynamic("B"));
  CHECK_THROWS_WITH_AS(kiln::ir::bind(ir, {{"N", {0, "-D N=0"}}}),
                       doctest::Contains("t.kiln:2:19: error: op add: dim N is 0 from -D N=0; dims must be >= 1 (empty "
                                         "tensors are not supported)"),
                       kiln::ArgumentError);
}

TEST_CASE("bind: dims over 2^31 are fine (int64)") {
  auto ir = checked(kAdd, "add");
  auto bound = kiln::ir::bind(ir, {{"N", {std::int64_t{1} << 33, "-D"}}});
  CHECK(bound.numel(0) == (std::int64_t{8} << 33));
}

TEST_CASE("bind: element counts that overflow int64 are errors") {
  auto ir = checked(kAdd, "add");
  CHECK_THROWS_WITH_AS(kiln::ir::bind(ir, {{"B", {std::int64_t{1} << 40, "-D"}}, {"N", {std::int64_t{1} << 40, "-D"}}}),
                       doctest::Contains("has more than 2^63 elements"), kiln::ArgumentError);
}

TEST_CASE("bind_from_shapes: dims come from tensor shapes, conflicts name both sources") {
  auto ir = checked(kAdd, "add");
  auto bound = kiln::ir::bind_from_shapes(ir, {{3, 5}, {5}, {}}, {});
  CHECK(bound.dims.at("B") == 3);
  CHECK(bound.dims.at("N") == 5);
  CHECK_THROWS_WITH_AS(kiln::ir::bind_from_shapes(ir, {{3, 4096}, {4095}, {}}, {}),
                       "dim N is 4096 from x.shape[1] but 4095 from y.shape[0]", kiln::ArgumentError);
  CHECK_THROWS_WITH_AS(kiln::ir::bind_from_shapes(ir, {{3, 5}, {5}, {}}, {{3, 6}}),
                       "dim N is 5 from x.shape[1] but 6 from z.shape[1]", kiln::ArgumentError);
  CHECK_THROWS_WITH_AS(kiln::ir::bind_from_shapes(ir, {{3, 5, 1}, {5}, {}}, {}),
                       "x must have rank 2 (f32[B, N]) but has shape [3, 5, 1]", kiln::ArgumentError);
  CHECK_THROWS_WITH_AS(kiln::ir::bind_from_shapes(ir, {{3, 5}, {5}}, {}), "op add takes 3 inputs, got 2 shapes",
                       kiln::ArgumentError);
}

TEST_CASE("bind_from_shapes: expression dims of outputs are checked after binding") {
  auto ir = checked(kConv, "conv");
  auto bound = kiln::ir::bind_from_shapes(ir, {{2, 8, 16, 16}, {4, 4, 3, 3}}, {{2, 4, 8, 8}});
  CHECK(bound.shape(ir->outputs[0].node) == std::vector<std::int64_t>{2, 4, 8, 8});
  CHECK_THROWS_WITH_AS(kiln::ir::bind_from_shapes(ir, {{2, 8, 16, 16}, {4, 4, 3, 3}}, {{2, 4, 8, 9}}),
                       "y.shape[3] must be (((W - 1) / 2) + 1) = 8, got 9", kiln::ArgumentError);
  CHECK_THROWS_WITH_AS(kiln::ir::bind_from_shapes(ir, {{2, 8, 16, 16}, {4, 4, 5, 3}}, {}),
                       "w.shape[2] must be 3, got 5", kiln::ArgumentError);
}

TEST_CASE("bind_from_shapes: an input extent written as arithmetic of dims is checked after binding") {
  // A transposed conv's output ((D - 1) * 2 + 2) folds to the declared 2 * D, so the sum checks.
  auto ir = checked(R"(op m {
  dims N = 2, C = 4, K = 8, D = 5, H = 6
  in x: f32[N, C, D, H]
  in skip: f32[N, K, 2 * D, (H - 1) * 2 + 2]
  in w: f32[C, K, 3, 3]
  out y = conv_transpose2d(x, w, stride=2, padding=1, output_padding=1) + skip
})",
                    "m");
  CHECK(ir->params[1].shape[2].str() == "(D * 2)");
  CHECK(ir->params[1].shape[3] == kiln::ir::DimExpr::dim("H") * kiln::ir::DimExpr::constant(2));
  auto bound = kiln::ir::bind_from_shapes(ir, {{2, 4, 5, 6}, {2, 8, 10, 12}, {4, 8, 3, 3}}, {});
  CHECK(bound.shape(ir->outputs[0].node) == std::vector<std::int64_t>{2, 8, 10, 12});
  CHECK_THROWS_WITH_AS(kiln::ir::bind_from_shapes(ir, {{2, 4, 5, 6}, {2, 8, 9, 12}, {4, 8, 3, 3}}, {}),
                       "skip.shape[2] must be (D * 2) = 10, got 9", kiln::ArgumentError);
}

TEST_CASE("bind: undecidable conv relations become constraints checked with values") {
  auto ir = checked(kConv, "conv");
  REQUIRE(ir->constraints.size() == 2);   // C == CG * 2, K divisible by 2
  CHECK_THROWS_WITH_AS(kiln::ir::bind(ir, {{"C", {6, "-D C=6"}}}),
                       doctest::Contains("t.kiln:6:11: error: op conv: conv2d() at 6:11 needs x's channels to equal "
                                         "w.shape[1] * groups (C = 6 but (CG * 2) = 8)"),
                       kiln::ArgumentError);
  CHECK_THROWS_WITH_AS(kiln::ir::bind(ir, {{"K", {5, "-D K=5"}}}),
                       doctest::Contains("needs w.shape[0] divisible by groups = 2"), kiln::ArgumentError);
}

TEST_CASE("bind: a conv output smaller than 1 is reported with the node") {
  auto ir = checked("op c {\n dims H = 8\n in x: f32[1, 1, H, H]\n in w: f32[1, 1, 5, 5]\n out y = conv2d(x, w)\n}", "c");
  CHECK_THROWS_WITH_AS(kiln::ir::bind(ir, {{"H", {3, "x.shape[2]"}}}),
                       doctest::Contains("t.kiln:5:10: error: op c: the conv2d 'y' at 5:10 would have size (H - 4) = -1 "
                                         "(< 1); its input is too small"),
                       kiln::ArgumentError);
}

TEST_CASE("print(BoundIr): concrete shapes and a dims line") {
  auto ir = checked(kAdd, "add");
  CHECK(kiln::ir::print(kiln::ir::bind(ir, {{"N", {5, "-D N=5"}}})) ==
        "op add(x: f32[8, 5], y: f32[5], s: f32) -> (z: f32[8, 5])\n"
        "  dims: B=8 N=5 (dyn)\n"
        "  %0 = input x : f32[8, 5]  # line 3\n"
        "  %1 = input y : f32[5]  # line 4\n"
        "  %2 = scalar s : f32  # line 5\n"
        "  %3 = mul(%1, %2) : f32[5]  # line 6\n"
        "  %4 = add(%0, %3) : f32[8, 5]  # z, line 6\n"
        "  out z = %4\n");
}

TEST_CASE("bind: a tensor over 2^63 bytes is a located error, never a wrapped size") {
  // 2^63 - 1 f32 elements fit an int64 count, but not their 4-byte size: the plan once printed
  // "(-4 B)" for it and generated code with wrapped offsets.
  auto ir = checked("op f {\n  dims N = 9223372036854775807\n  in x: f32[N]\n  out y = x\n}", "f");
  CHECK_THROWS_WITH_AS(kiln::ir::bind(ir, {}),
                       doctest::Contains("t.kiln:3:6: error: op f: the input 'x' at 3:6 has 9223372036854775807 "
                                         "elements of f32: more than 2^63 bytes"),
                       kiln::ArgumentError);
  auto wide = checked("op f {\n  dims N = 4294967296\n  in x: f32[N, N]\n  out y = x\n}", "f");
  CHECK_THROWS_WITH_AS(kiln::ir::bind(wide, {}), doctest::Contains("t.kiln:3:6: error: op f: the input 'x' at 3:6 has more than 2^63 elements"),
                       kiln::ArgumentError);
}

TEST_CASE("bind: a dim's value is the bound extent, and one that does not fit the i32 it met is a located error") {
  // [Note: dims as values]: `i + N` beside an i32 tensor makes N an i32, as PyTorch's Python int.
  auto ir = checked("op f {\n  dims N = 4\n  in i: i32[N]\n  in x: f32[N]\n  out y = i + N\n  out z = x / N\n}", "f");
  auto bound = kiln::ir::bind(ir, {{"N", {7, "-D N=7"}}});
  for (kiln::ir::NodeId id = 0; id < static_cast<kiln::ir::NodeId>(ir->nodes.size()); ++id)
    if (ir->node(id).kind == kiln::ir::OpKind::DimValue) CHECK(bound.dim_value(id) == 7);
  CHECK_THROWS_WITH_AS(kiln::ir::bind(ir, {{"N", {std::int64_t{1} << 31, "-D N=2147483648"}}}),
                       "t.kiln:5:15: error: op f: dim N = 2147483648 is used as a value beside an i32 tensor, but does "
                       "not fit i32; cast the tensor to i64 first\n"
                       "  out y = i + N\n"
                       "              ^",
                       kiln::ArgumentError);
  CHECK_NOTHROW(kiln::ir::bind(ir, {{"N", {INT32_MAX, "-D"}}}));
}
