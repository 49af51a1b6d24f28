// Dims given with `kiln gen -D` at the edges: over 2^31 they are accepted and the
// generated elementwise source indexes with 64 bits; zero, negative and
// non-numeric values exit 1 with a message naming the dim, never a crash.
#include <doctest/doctest.h>

#include <string>

#include "tools/cli_run.h"

namespace {

// axpby: x, y0: f32[N] -> y, elementwise.
const std::string kSpec = std::string(KILN_SOURCE_DIR) + "/specs/elementwise.kiln --op axpby";

}  // namespace

TEST_CASE("kiln gen -D N=3000000000: accepted, int64 indexing in the source") {
  auto r = kiln_test::run_kiln("gen " + kSpec + " -D N=3000000000");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("plan axpby [N=3000000000 (dyn, multiple of 16)]") != std::string::npos);   // generic by default
  CHECK(kiln_test::run_kiln_env("KILN_SHAPES=declared", "gen " + kSpec + " -D N=3000000000").output.find(
            "plan axpby [N=3000000000]") != std::string::npos);
  CHECK(r.output.find("x f32[3000000000]") != std::string::npos);
  CHECK(r.output.find("using Index = long long;") != std::string::npos);
  CHECK(r.output.find("using Index = int;") == std::string::npos);
  // Control: the default size stays 32-bit.
  auto small = kiln_test::run_kiln("gen " + kSpec);
  CHECK(small.exit_code == 0);
  CHECK(small.output.find("using Index = int;") != std::string::npos);
}

TEST_CASE("kiln gen: zero, negative and non-integer dims exit 1 naming the dim") {
  for (const char* value : {"0", "-5", "-3000000000", "12x", "99999999999999999999"}) {
    CAPTURE(value);
    auto r = kiln_test::run_kiln("gen " + kSpec + " -D N=" + value);
    CHECK(r.exit_code == 1);
    CHECK(r.output == "-D N=" + std::string(value) + ": a dim needs a positive integer\n");
  }
}
