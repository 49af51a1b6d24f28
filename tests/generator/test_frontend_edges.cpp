// Numeric and textual edges of the front end (issue 16): integer literals and int consts
// stay exact from the text to the emitted source; a constant out of its type's range is a
// located error (a warning where only f16/bf16 overflow); CR-only line ends; no unused-input
// warning after a failed statement; bind errors carry the dim's location; long lines are
// echoed as a window; unknown names get a did-you-mean.
#include <doctest/doctest.h>

#include "generator/support/diagnostics.h"
#include "generator/emit/expr_emitter.h"
#include "generator/frontend/frontend.h"

namespace {

using kiln::DType;

// Every error of a parse + check of all ops, rendered; "" when clean.
std::string errors_of(const std::string& text, const kiln::Consts& consts = {}) {
  try {
    kiln::check_all(kiln::parse_spec(text, "t.kiln"), consts);
  } catch (const kiln::SpecError& e) {
    return e.what();
  }
  return "";
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// `out y = x + LITERAL` on an x of `dtype`: the literal as the emitter spells it.
std::string emitted_literal(const std::string& dtype, const std::string& literal) {
  auto spec = kiln::parse_spec("op a {\n  dims N = 4\n  in x: " + dtype + "[N]\n  out y = x + " + literal + "\n}", "t.kiln");
  auto ir = kiln::check_op(spec, "a");
  for (const auto& n : ir->nodes)
    if (n.kind == kiln::ir::OpKind::Literal) return kiln::literal(n.dtype, n.literal);
  return "(no literal)";
}

}  // namespace

TEST_CASE("literals: integers are exact over the whole i64 and u64 ranges") {
  // Through a double these were -9223372036854775808LL, 9007199254740992LL and an error.
  CHECK(emitted_literal("i64", "9223372036854775807") == "9223372036854775807LL");
  CHECK(emitted_literal("i64", "9007199254740993") == "9007199254740993LL");
  CHECK(emitted_literal("u64", "18446744073709551615") == "18446744073709551615ULL");
  CHECK(emitted_literal("u64", "9223372036854775808") == "9223372036854775808ULL");
  // The most negative value has no literal of its own: spelled as a sum, never overflowing.
  CHECK(emitted_literal("i64", "-9223372036854775808") == "(-9223372036854775807LL - 1)");
  CHECK(emitted_literal("i32", "-2147483648") == "(-2147483647 - 1)");
  CHECK(emitted_literal("i32", "2147483647") == "2147483647");
  CHECK(emitted_literal("i64", "-5") == "-5LL");
  // Constant folding is exact too.
  CHECK(emitted_literal("i64", "(9223372036854775806 + 1)") == "9223372036854775807LL");
  CHECK(emitted_literal("u64", "(9223372036854775807 * 2 + 1)") == "18446744073709551615ULL");
}

TEST_CASE("literals: out of range for the type they meet is a located error") {
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: i64[N]\n  out y = x + 9223372036854775808\n}")) ==
        "t.kiln:4:15: error: 9223372036854775808 in '+' is out of range for i64 "
        "(-9223372036854775808 .. 9223372036854775807)");
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: i64[N]\n  out y = x + -9223372036854775809\n}")) ==
        "t.kiln:4:15: error: -9223372036854775809 in '+' is out of range for i64 "
        "(-9223372036854775808 .. 9223372036854775807)");
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: i32[N]\n  out y = x * 2147483648\n}")) ==
        "t.kiln:4:15: error: 2147483648 in '*' is out of range for i32 (-2147483648 .. 2147483647)");
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: u64[N]\n  out y = x + 18446744073709551616\n}")) ==
        "t.kiln:4:15: error: integer literal 18446744073709551616 is too large (the largest is 18446744073709551615)");
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: u64[N]\n  out y = x + (18446744073709551615 + 1)\n}")) ==
        "t.kiln:4:37: error: integer constant expression 18446744073709551615 + 1 overflows 64 bits");
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: i32[N]\n  out y = i32(3000000000) + x\n}")) ==
        "t.kiln:4:15: error: 3000000000 in i32() is out of range for i32 (-2147483648 .. 2147483647)");
}

TEST_CASE("consts: int consts are exact over i64 and checked against it") {
  auto spec = kiln::parse_spec(
      "op a {\n  const c: int = 9007199254740993\n  dims N = 4\n  in x: i64[N]\n  out y = x + c\n}", "t.kiln");
  auto ir = kiln::check_op(spec, "a");
  CHECK(ir->consts[0].value.str() == "9007199254740993");   // was rounded to ...992
  CHECK(kiln::literal(DType::i64, ir->node(1).literal) == "9007199254740993LL");
  // Given by the caller: exact, and out of range named as such.
  ir = kiln::check_op(spec, "a", {{"c", std::int64_t{-9223372036854775807 - 1}}});
  CHECK(kiln::literal(DType::i64, ir->node(1).literal) == "(-9223372036854775807LL - 1)");
  CHECK_THROWS_WITH_AS(kiln::check_op(spec, "a", {{"c", std::uint64_t{9223372036854775808ULL}}}),
                       doctest::Contains("t.kiln:2:9: error: const c = 9223372036854775808 (given by the caller) is out "
                                         "of range for int (i64: -9223372036854775808 .. 9223372036854775807)"),
                       kiln::SpecError);
  CHECK(first_line(errors_of("op a {\n  const c: int = 9223372036854775807 + 1\n  dims N = 4\n  in x: i64[N]\n  out y = x + c\n}")) ==
        "t.kiln:2:38: error: const c = 9223372036854775808 is out of range for int "
        "(i64: -9223372036854775808 .. 9223372036854775807)");
  // Once the range was |value| <= 2^53; now -2^63 is fine.
  CHECK(errors_of("op a {\n  const c: int = -9223372036854775807 - 1\n  dims N = 4\n  in x: i64[N]\n  out y = x + c\n}") == "");
  // A float given for an int const is refused, even a whole one (the C interface converts).
  CHECK_THROWS_WITH_AS(kiln::check_op(spec, "a", {{"c", 3.0}}),
                       doctest::Contains("const c is int but was given the float 3 (given by the caller); an int const "
                                         "takes an integer, e.g. 3"),
                       kiln::SpecError);
  CHECK_THROWS_WITH_AS(kiln::check_op(spec, "a", {{"c", true}}),
                       doctest::Contains("const c is int but was given the bool true (given by the caller); only a bool "
                                         "const takes true or false"),
                       kiln::SpecError);
}

TEST_CASE("consts: given values name their source, bools take true/false or 0/1") {
  auto spec = kiln::parse_spec(
      "op a {\n  const alpha: f32 = 1.0, flag: bool = false\n  dims N = 4\n  in x: f32[N]\n"
      "  out y = where(x > 0, x * alpha, x)\n}",
      "t.kiln");
  kiln::ConstValue huge(1e39);
  huge.set_source("-D alpha=1e39");
  CHECK_THROWS_WITH_AS(kiln::check_op(spec, "a", {{"alpha", huge}}),
                       doctest::Contains("t.kiln:2:9: error: const alpha = 1e+39 (from -D alpha=1e39) is out of range "
                                         "for f32 (largest finite 3.4028235e+38)"),
                       kiln::SpecError);
  CHECK_THROWS_WITH_AS(kiln::check_op(spec, "a", {{"alpha", std::nan("")}}),
                       doctest::Contains("const alpha = nan (given by the caller) is not finite"), kiln::SpecError);
  CHECK(kiln::check_op(spec, "a", {{"alpha", 2}})->consts[0].value.str() == "2");   // an integer for a float const
  CHECK(kiln::check_op(spec, "a", {{"flag", 1}})->consts[1].value.str() == "true");
  CHECK(kiln::check_op(spec, "a", {{"flag", true}})->consts[1].value.str() == "true");
  CHECK_THROWS_WITH_AS(kiln::check_op(spec, "a", {{"flag", 2}}),
                       doctest::Contains("t.kiln:2:27: error: const flag is bool but was given 2 (given by the caller); "
                                         "pass true or false"),
                       kiln::SpecError);
}

TEST_CASE("floats: constants beyond the target type's range are located errors, never inf.0f") {
  CHECK(first_line(errors_of("op a {\n  const c: f32 = 1e39\n  dims N = 4\n  in x: f32[N]\n  out y = x * c\n}")) ==
        "t.kiln:2:18: error: const c = 1e+39 is out of range for f32 (largest finite 3.4028235e+38)");
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: f32[N]\n  out y = x * 3.5e38\n}")) ==
        "t.kiln:4:15: error: 3.5e38 in '*' is out of range for f32 (largest finite 3.4028235e+38)");
  // An f64 const is fine until it meets an f32 tensor.
  CHECK(first_line(errors_of("op a {\n  const c: f64 = 1e300\n  dims N = 4\n  in x: f32[N]\n  out y = x * c\n}")) ==
        "t.kiln:5:15: error: c in '*' is out of range for f32 (largest finite 3.4028235e+38)");
  CHECK(errors_of("op a {\n  const c: f64 = 1e300\n  dims N = 4\n  in x: f64[N]\n  out y = x * c\n}") == "");
  // f16/bf16 literals are f32 constants: beyond f32 an error, beyond f16 (bf16) a warning.
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: f16[N]\n  out y = x * 1e39\n}")) ==
        "t.kiln:4:15: error: 1e39 in '*' is out of range for f16 (largest finite 3.4028235e+38)");
  auto spec = kiln::parse_spec("op a {\n  dims N = 4\n  in x: f16[N]\n  in b: bf16[N]\n  out y = x * 70000.0 + x * 65504.0\n"
                               "  out z = b * 3.3e38 + b * 3.4e38\n}",
                               "t.kiln");
  std::vector<std::string> warnings;
  kiln::check_op(spec, "a", {}, &warnings);
  REQUIRE(warnings.size() == 2);
  INFO(warnings[1]);
  CHECK(first_line(warnings[0]) ==
        "t.kiln:5:15: warning: 70000.0 in '*' overflows f16 (largest finite 65504); it is used as an f32 constant, "
        "but a result near it stored as f16 becomes inf");
  CHECK(first_line(warnings[1]).rfind("t.kiln:6:28: warning: 3.4e38 in '*' overflows bf16 (largest finite 3.3895314e+38)", 0) == 0);
  // The emitter's own guard: a finite double beyond float spells infinity, not "inf.0f".
  CHECK(kiln::literal(DType::f32, 1e39) == "__int_as_float(0x7f800000)");
  CHECK(kiln::literal(DType::f32, -1e39) == "__int_as_float(0xff800000)");
  CHECK(kiln::literal(DType::f32, 3.4028235e38) == "3.4028235e+38f");   // FLT_MAX itself
}

TEST_CASE("axes: values at the ends of int64 are reported, not wrapped") {
  // A double -> int64 cast of 2^63 used to print this as -9223372036854775808.
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: f32[N]\n  out y = sum(x, axis=9223372036854775807)\n}")) ==
        "t.kiln:4:23: error: axis 9223372036854775807 is out of range for sum() of a rank-1 tensor (expected -1..0)");
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: f32[N]\n  out y = sum(x, axis=18446744073709551615)\n}")) ==
        "t.kiln:4:23: error: axis= 18446744073709551615 is out of range (a 64-bit signed integer)");
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: f32[N]\n  out y = cumsum(x, axis=-9223372036854775807 - 1)\n}")) ==
        "t.kiln:4:47: error: axis -9223372036854775808 is out of range for cumsum() of a rank-1 tensor (expected -1..0)");
  CHECK(first_line(errors_of("op a {\n  dims N = 9223372036854775808\n  in x: f32[N]\n  out y = x\n}")) ==
        "t.kiln:2:12: error: the default of dim N is too large (the largest is 9223372036854775807)");
}

TEST_CASE("source: CR, LF and CRLF all end a line") {
  const char* expected = "t.kiln:4:15: error: unknown name 'zz'\n  out y = x + zz\n              ^";
  CHECK(errors_of("op a {\r  dims N = 4\r  in x: f32[N]\r  out y = x + zz\r}\r") == expected);
  CHECK(errors_of("op a {\r\n  dims N = 4\r\n  in x: f32[N]\r\n  out y = x + zz\r\n}\r\n") == expected);
  CHECK(errors_of("op a {\n  dims N = 4\r\n  in x: f32[N]\r  out y = x + zz\n}") == expected);
  // A comment ends at a lone CR too (it used to swallow the rest of the file).
  CHECK(errors_of("# note\rop a {\r  # more\r  dims N = 4\r  in x: f32[N]\r  out y = x + zz\r}") ==
        "t.kiln:6:15: error: unknown name 'zz'\n  out y = x + zz\n              ^");
  kiln::SourceFile file("t", "a\rb\r\nc\nd");
  CHECK(file.line_count() == 4);
  CHECK(file.line(2) == "b");
  CHECK(file.position(5) == std::pair<int, int>{3, 1});
}

TEST_CASE("checker: no unused-input warning after a failed statement") {
  auto spec = kiln::parse_spec("op a {\n  dims N = 4\n  in x: f32[N]\n  out y = frob(x)\n}", "t.kiln");
  std::vector<std::string> warnings;
  CHECK_THROWS_AS(kiln::check_op(spec, "a", {}, &warnings), kiln::SpecError);
  CHECK(warnings.empty());
}

TEST_CASE("bind: errors about the spec's dims carry the dim's location") {
  auto spec = kiln::parse_spec("op f {\n  dims N, M = 3\n  in x: f32[N, M]\n  out y = x\n}", "t.kiln");
  auto ir = kiln::check_op(spec, "f");
  try {
    kiln::ir::bind(ir, {});
    FAIL("no error");
  } catch (const kiln::ir::BindError& e) {
    CHECK(std::string(e.what()) ==
          "t.kiln:2:8: error: op f: dim N has no value; pass a tensor with that dim or -D N=VALUE\n  dims N, M = 3\n       ^");
    CHECK(e.loc().line == 2);
    CHECK(e.loc().column == 8);
  }
  try {
    kiln::ir::bind(ir, {{"N", {3, "-D N=3"}}, {"M", {0, "-D M=0"}}});
    FAIL("no error");
  } catch (const kiln::ir::BindError& e) {
    CHECK(std::string(e.what()).find("t.kiln:2:11: error: op f: dim M is 0 from -D M=0; dims must be >= 1 (empty "
                                     "tensors are not supported)") == 0);
    CHECK(e.loc().column == 11);   // M
  }
}

TEST_CASE("diagnostics: a very long line is echoed as a window around the caret") {
  std::string line = "  out y = x" + std::string(50000, ' ') + "+ zz" + std::string(50000, ' ') + "+ x";
  std::string text = errors_of("op a {\n  dims N = 4\n  in x: f32[N]\n" + line + "\n}");
  const std::size_t first_end = text.find('\n'), echo_end = text.find('\n', first_end + 1);
  CHECK(text.substr(0, first_end) == "t.kiln:4:50014: error: unknown name 'zz'");
  const std::string echo = text.substr(first_end + 1, echo_end - first_end - 1);
  const std::string caret = text.substr(echo_end + 1);
  CHECK(echo.size() == 206);   // "..." + 200 bytes + "..."
  CHECK(echo.rfind("...", 0) == 0);
  CHECK(echo.substr(echo.size() - 3) == "...");
  REQUIRE(caret.size() == caret.find('^') + 1);
  CHECK(echo.substr(caret.size() - 1, 2) == "zz");   // the caret is under the name
}

TEST_CASE("did you mean: close names are suggested, far ones are not") {
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: f32[N]\n  out y = sofmax(x)\n}")) ==
        "t.kiln:4:11: error: unknown function 'sofmax'; did you mean 'softmax'?");
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: f32[N]\n  out y = softmax(x, axsi=0)\n}")) ==
        "t.kiln:4:22: error: softmax() has no argument 'axsi'; did you mean 'axis'?");
  CHECK(first_line(errors_of("op a {\n  dims BATCH = 4\n  in x: f32[BATHC]\n  out y = x\n}")) ==
        "t.kiln:3:13: error: unknown dim 'BATHC' in the shape of input x; did you mean 'BATCH'?");
  CHECK(first_line(errors_of("op a {\n  const axis: int = 0, k: int = axsi\n  dims N = 4\n  in x: f32[N]\n  out y = x\n}")) ==
        "t.kiln:2:33: error: unknown name 'axsi' in the default of const k; did you mean 'axis'?");
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in input: f32[N]\n  out y = inptu + 1\n}")) ==
        "t.kiln:4:11: error: unknown name 'inptu'; did you mean 'input'?");
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: f3[N]\n  out y = x\n}")) ==
        "t.kiln:3:9: error: unknown type 'f3'; did you mean 'f32'?");
  CHECK(first_line(errors_of("op a {\n  dims N = 4\n  in x: f32[N]\n  out y = frob(x)\n}")) ==
        "t.kiln:4:11: error: unknown function 'frob'");
  auto spec = kiln::parse_spec("op softmax_rows {\n  dims N = 4\n  in x: f32[N]\n  out y = x\n}", "t.kiln");
  CHECK_THROWS_WITH_AS(kiln::check_op(spec, "softmax_row"),
                       "no op named 'softmax_row' in t.kiln; did you mean 'softmax_rows'? (it has: softmax_rows)",
                       kiln::ArgumentError);
  CHECK(kiln::did_you_mean("x", {"y"}) == "");          // one letter is no typo
  CHECK(kiln::did_you_mean("mx", {"max", "min"}) == "; did you mean 'max'?");
  CHECK(kiln::did_you_mean(std::string(100, 'a'), {std::string(99, 'a')}) == "");   // long names are not compared
}
