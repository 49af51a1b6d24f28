// `kiln build --small`: every dim not given is capped at 64, the same rule as
// `kiln run --small`, so a pack built with it serves `kiln run --small --pack`
// (the GPU suite runs that with NVRTC unloadable).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tools/cli_run.h"

TEST_CASE("kiln build --small builds the specialization at dims capped at 64") {
  const auto dir = std::filesystem::temp_directory_path() / "kiln-test-build-small";
  std::filesystem::remove_all(dir);
  const std::string spec = std::string(KILN_SOURCE_DIR) + "/specs/elementwise.kiln --op relu_add --arch sm_90";
  auto small = kiln_test::run_kiln("build " + spec + " --small -o " + dir.string());
  INFO(small.output);
  REQUIRE(small.exit_code == 0);
  CHECK(small.output.find("1 specializations, 1 kernels for sm_90: 1 compiled") != std::string::npos);
  // relu_add's defaults are B = N = 4096: the same kernel at B = N = 64 is already there.
  auto explicit_dims = kiln_test::run_kiln("build " + spec + " -D B=64 -D N=64 -o " + dir.string());
  INFO(explicit_dims.output);
  CHECK(explicit_dims.exit_code == 0);
  CHECK(explicit_dims.output.find("0 compiled (0 ms of NVRTC), 1 already in") != std::string::npos);
  // A dim given with -D is kept, not capped.
  auto given = kiln_test::run_kiln("build " + spec + " --small -D N=100 -o " + dir.string());
  INFO(given.output);
  CHECK(given.exit_code == 0);
  CHECK(given.output.find("1 compiled") != std::string::npos);
  std::filesystem::remove_all(dir);
}
