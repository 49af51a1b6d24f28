// -D values end to end (issue 16): a name given twice is a usage error; a value must fit the
// const it names (true/false only for bool consts, integers only for int consts, finite numbers
// in the type's range for float consts) and an error names the -D; int values stay exact into
// the generated source; bind errors of `kiln check --ir` are located once, not doubled.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.h"

namespace {

using kiln_test::run_kiln;

std::string spec_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("kiln_defines_" + name + ".kiln");
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

const char* kConsts =
    "op f {\n"
    "  const alpha: f32 = 1.0, c: int = 1, flag: bool = false\n"
    "  dims N = 4\n"
    "  in x: f32[N]\n"
    "  in i: i64[N]\n"
    "  out y = where(x > 0, x * alpha, x)\n"
    "  out j = i + c\n"
    "}\n";

bool has(const kiln_test::CliRun& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

}  // namespace

TEST_CASE("-D: a name given twice is a usage error, not the last one silently") {
  const std::string spec = spec_file("twice", kConsts);
  auto r = run_kiln("check --ir " + spec + " -D N=5 -D N=6");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r, "N is given twice (-D N=5 and -D N=6); give each name once"));
}

TEST_CASE("-D: a value must fit the const's type, and the error names the -D") {
  const std::string spec = spec_file("fit", kConsts);
  struct Case {
    const char* define;
    int exit_code;
    const char* message;
  };
  const Case cases[] = {
      // Well-formed values that do not fit the const: input errors (1), located at the const.
      {"alpha=true", 1, ":2:9: error: const alpha is f32 but was given the bool true (from -D alpha=true); only a bool const takes true or false"},
      {"c=true", 1, ":2:27: error: const c is int but was given the bool true (from -D c=true)"},
      {"c=1.5", 1, ":2:27: error: const c is int but was given 1.5 (from -D c=1.5), which is not an integer"},
      {"c=1e3", 1, "const c is int but was given the float 1000 (from -D c=1e3); an int const takes an integer, e.g. 1000"},
      {"c=9223372036854775808", 1,
       "const c = 9223372036854775808 (from -D c=9223372036854775808) is out of range for int (i64: "},
      {"alpha=1e39", 1, ":2:9: error: const alpha = 1e+39 (from -D alpha=1e39) is out of range for f32 (largest finite 3.4028235e+38)"},
      {"flag=2", 1, "const flag is bool but was given 2 (from -D flag=2); pass true or false"},
      // Malformed values: usage errors (2).
      {"alpha=nan", 2, "-D alpha=nan: the value must be a finite number"},
      {"alpha=inf", 2, "-D alpha=inf: the value must be a finite number"},
      {"alpha=1e999", 2, "-D alpha=1e999: the value must be a finite number"},
      {"flag=yes", 2, "-D flag=yes: a const needs a number (e.g. 3 or 0.5) or true/false"},
      {"alpha=+-2", 2, "-D alpha=+-2: a const needs a number"},
      {"c=99999999999999999999", 2, "-D c=99999999999999999999: the integer is out of range (at most 64 bits)"},
  };
  for (const auto& c : cases) {
    auto r = run_kiln("check --ir " + spec + " -D " + c.define);
    INFO(c.define, "\n", r.output);
    CHECK(r.exit_code == c.exit_code);
    CHECK(has(r, c.message));
  }
  // What fits: a bool const takes true/false or 0/1; an int const the whole i64 range, exactly.
  auto ok = run_kiln("check --ir " + spec + " -D flag=1 -D c=-9223372036854775808 -D alpha=+2");
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
  CHECK(has(ok, "const flag: bool = true"));
  CHECK(has(ok, "const c: int = -9223372036854775808"));
  CHECK(has(ok, "const alpha: f32 = 2"));
}

TEST_CASE("-D and literals: integers reach the generated source exactly") {
  const std::string spec = spec_file("exact", kConsts);
  auto r = run_kiln("gen " + spec + " -D c=9007199254740993");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r, "9007199254740993LL"));   // through a double it was ...992
  const std::string lit = spec_file("literal",
                                    "op f {\n  dims N = 4\n  in x: i64[N]\n  in u: u64[N]\n"
                                    "  out y = x + 9223372036854775807 + -9223372036854775808\n"
                                    "  out z = u + 18446744073709551615\n}\n");
  r = run_kiln("gen " + lit);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r, "9223372036854775807LL"));
  CHECK(has(r, "(-9223372036854775807LL - 1)"));
  CHECK(has(r, "18446744073709551615ULL"));
  CHECK(!has(r, "inf.0f"));
  const std::string big = spec_file("big", "op f {\n  dims N = 4\n  in x: f32[N]\n  out y = x * 3.5e38\n}\n");
  r = run_kiln("gen " + big);
  INFO(r.output);
  CHECK(r.exit_code == 1);   // was accepted, then NVRTC rejected inf.0f
  CHECK(has(r, ":4:15: error: 3.5e38 in '*' is out of range for f32"));
}

TEST_CASE("check --ir: a bind error is located at the dim, said once") {
  const std::string spec = spec_file("bind", "op f {\n  dims N\n  in x: f32[N]\n  out y = x\n}\n");
  auto r = run_kiln("check --ir " + spec);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(has(r, spec + ":2:8: error: op f: dim N has no value; pass a tensor with that dim or -D N=VALUE\n  dims N\n       ^\n"));
  CHECK(!has(r, "op f: op f"));
  r = run_kiln("check --ir " + spec + " -D N=3");
  CHECK(r.exit_code == 0);
}
