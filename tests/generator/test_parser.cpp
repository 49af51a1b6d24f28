#include <doctest/doctest.h>

#include "generator/frontend/frontend.h"

namespace {

using kiln::ast::ExprKind;

kiln::SpecFile parse_ok(const std::string& text) { return kiln::parse_spec(text, "t.kiln"); }

std::string parse_error(const std::string& text) {
  try {
    kiln::parse_spec(text, "t.kiln");
  } catch (const kiln::SpecError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("parser: every statement of an op") {
  auto spec = parse_ok(R"(# header
op demo {
  const axis: int = 1, p: f32 = 0.5 * 2, flag: bool = true, late: int
  dims B = 8, dyn S = 1024, K
  in  x: f32[B, S, 3]
  in  seed: u64
  let h = -x * 2.0 + (x - 1) / 3
  out y: f32[B, S, 3] = where(h >= 0, h, x)
  out z = sum(x, axis=[0, -1], keepdims=true,)
  out d: f32[B]
}
op second { out q = f(1) }
)");
  REQUIRE(spec.op_names() == std::vector<std::string>{"demo", "second"});
  const auto& op = spec.ast->ops[0];
  CHECK(op.loc.line == 2);
  CHECK(op.loc.column == 4);
  REQUIRE(op.consts.size() == 4);
  CHECK(op.consts[0].name == "axis");
  CHECK(op.consts[0].type == "int");
  CHECK(op.consts[1].default_value->kind == ExprKind::Binary);
  CHECK(op.consts[2].default_value->kind == ExprKind::Bool);
  CHECK(op.consts[3].default_value == nullptr);
  REQUIRE(op.dims.size() == 3);
  CHECK(!op.dims[0].dynamic);
  CHECK(op.dims[0].default_value == 8);
  CHECK(op.dims[1].dynamic);
  CHECK(op.dims[1].name == "S");
  CHECK(!op.dims[2].default_value);
  REQUIRE(op.inputs.size() == 2);
  CHECK(op.inputs[0].type.dtype == "f32");
  CHECK(op.inputs[0].type.has_shape);
  REQUIRE(op.inputs[0].type.shape.size() == 3);
  CHECK(op.inputs[0].type.shape[1].name == "S");
  CHECK(!op.inputs[0].type.shape[2].is_name);
  CHECK(op.inputs[0].type.shape[2].value == 3);
  CHECK(!op.inputs[1].type.has_shape);
  REQUIRE(op.bindings.size() == 4);
  CHECK(!op.bindings[0].is_output);
  // -x * 2.0 + (x - 1) / 3  parses as  ((-x) * 2.0) + ((x - 1) / 3)
  const auto& h = *op.bindings[0].value;
  REQUIRE(h.kind == ExprKind::Binary);
  CHECK(h.binary_op == kiln::ast::BinaryOp::Add);
  CHECK(h.args[0]->binary_op == kiln::ast::BinaryOp::Mul);
  CHECK(h.args[0]->args[0]->kind == ExprKind::Unary);
  CHECK(h.args[1]->binary_op == kiln::ast::BinaryOp::Div);
  CHECK(h.args[1]->args[0]->binary_op == kiln::ast::BinaryOp::Sub);
  const auto& y = op.bindings[1];
  CHECK(y.is_output);
  REQUIRE(y.type.has_value());
  CHECK(y.value->kind == ExprKind::Call);
  CHECK(y.value->text == "where");
  CHECK(y.value->args.size() == 3);
  CHECK(y.value->args[0]->binary_op == kiln::ast::BinaryOp::Ge);
  const auto& z = *op.bindings[2].value;
  REQUIRE(z.kwargs.size() == 2);
  CHECK(z.kwargs[0].name == "axis");
  CHECK(z.kwargs[0].value->kind == ExprKind::List);
  CHECK(z.kwargs[0].value->args.size() == 2);
  CHECK(z.kwargs[1].value->kind == ExprKind::Bool);
  CHECK(op.bindings[3].value == nullptr);   // declared only: the checker reports it
}

TEST_CASE("parser: strings, comparisons and nesting") {
  auto spec = parse_ok("op a { out y = conv2d(x, w, layout=\"NHWC\", precision=\"tf32\") == ((1)) }");
  const auto& e = *spec.ast->ops[0].bindings[0].value;
  CHECK(e.binary_op == kiln::ast::BinaryOp::Eq);
  CHECK(e.args[0]->kwargs[0].value->kind == ExprKind::String);
  CHECK(e.args[0]->kwargs[0].value->text == "NHWC");
  CHECK(e.args[1]->kind == ExprKind::Int);
}

TEST_CASE("parser: an empty file or a comment-only file has no ops") {
  CHECK(parse_ok("").op_names().empty());
  CHECK(parse_ok("# nothing here\n\n").op_names().empty());
}

TEST_CASE("parser: errors are rendered with the line and a caret") {
  CHECK(parse_error("op a {\n  in x: f32[N]\n  out y = exp(x\n  in z: f32[N]\n}\n") ==
        "t.kiln:4:3: error: expected ')' to close the call started at 3:11, found 'in'\n"
        "  in z: f32[N]\n"
        "  ^");
}

TEST_CASE("parser: several errors in one pass") {
  std::string msg = parse_error("op a {\n  let = 1\n  out y = )\n  in x f32\n}\n");
  CHECK(msg ==
        "t.kiln:2:7: error: expected a name after 'let', found '='\n"
        "  let = 1\n"
        "      ^\n"
        "t.kiln:3:11: error: expected an expression, found ')'\n"
        "  out y = )\n"
        "          ^\n"
        "t.kiln:4:8: error: expected ':' and a type after input x (e.g. `x: f32[N]`), found identifier 'f32'\n"
        "  in x f32\n"
        "       ^");
}

TEST_CASE("parser: the exception carries the first error's location") {
  try {
    kiln::parse_spec("\n\n  op 3", "f.kiln");
    FAIL("no error");
  } catch (const kiln::SpecError& e) {
    CHECK(e.file() == "f.kiln");
    CHECK(e.line() == 3);
    CHECK(e.column() == 6);
  }
}

TEST_CASE("parser: deep nesting is an error, not a crash") {
  std::string deep = "op a { out y = " + std::string(100000, '(') + "x" + std::string(100000, ')') + " }";
  CHECK(parse_error(deep).find("expression is nested too deeply (more than 200 levels)") != std::string::npos);
  std::string deep_neg = "op a { out y = " + std::string(100000, '-') + "x }";
  CHECK(parse_error(deep_neg).find("nested too deeply") != std::string::npos);
  std::string chain = "op a { out y = x";
  for (int i = 0; i < 100000; ++i) chain += " + x";
  // A flat chain is as deep as its operators: the message says how to split it.
  CHECK(parse_error(chain + " }").find("nested too deeply (more than 200 levels): a chain of operators counts one "
                                       "level per operator; split it with let") != std::string::npos);
  std::string calls;
  for (int i = 0; i < 50000; ++i) calls += "exp(";
  CHECK(parse_error("op a { out y = " + calls + " }").find("nested too deeply") != std::string::npos);
}

TEST_CASE("parser: unterminated blocks and garbage") {
  CHECK(parse_error("op a {\n  in x: f32[N]\n") ==
        "t.kiln:3:1: error: expected '}' to close op 'a' started at 1:1, found end of file\n\n^");
  CHECK(parse_error("op a { in x: f32[N").find("expected ']' to close the shape started at 1:17, found end of file") !=
        std::string::npos);
  CHECK(parse_error("\x7f" "ELF\x01\x02").find("t.kiln:1:1: error: unexpected control byte 0x7F") == 0);
  CHECK(parse_error("hello").find("expected 'op' to start an op declaration, found identifier 'hello'") !=
        std::string::npos);
}

TEST_CASE("parser: duplicate ops") {
  CHECK(parse_error("op a { }\nop a { }").find("t.kiln:2:4: error: duplicate op 'a': already declared at 1:4") == 0);
}

TEST_CASE("parser: a dim marked static, the word static as a name, and both marks refused") {
  auto spec = parse_ok("op a {\n  dims static B = 8, dyn N, static = 3, M\n  in x: f32[B, N, static, M]\n  out y = x\n}\n");
  const auto& dims = spec.ast->ops[0].dims;
  REQUIRE(dims.size() == 4);
  CHECK(dims[0].name == "B");
  CHECK(dims[0].fixed);
  CHECK(!dims[0].dynamic);
  CHECK(dims[1].dynamic);
  CHECK(!dims[1].fixed);
  CHECK(dims[2].name == "static");   // a dim may still be called static
  CHECK(!dims[2].fixed);
  CHECK(!dims[3].fixed);
  CHECK(parse_error("op a {\n  dims static dyn N\n  in x: f32[N]\n  out y = x\n}\n") ==
        "t.kiln:2:15: error: a dim is either dyn (a run-time value) or static (baked in), not both\n"
        "  dims static dyn N\n"
        "              ^");
  CHECK(parse_error("op a {\n  dims dyn static N\n  in x: f32[N]\n  out y = x\n}\n") ==
        "t.kiln:2:12: error: a dim is either dyn (a run-time value) or static (baked in), not both\n"
        "  dims dyn static N\n"
        "           ^");
}
