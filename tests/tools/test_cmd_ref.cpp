// `kiln ref` end to end: exit codes and output. Needs the spec front end; until it is
// in the build the cases below are not compiled.
#include <doctest/doctest.h>

#if __has_include("generator/frontend/frontend.h")

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

struct Result {
  int rc = -1;
  std::string out;   // stdout and stderr together
};

Result run_ref(const std::string& args) {
  Result r;
  const std::string cmd = std::string(KILN_CLI) + " ref " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string write_spec(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("kiln_test_ref_" + name + ".kiln");
  std::ofstream(path) << text;
  return path.string();
}

const char* kSpec = R"(
op scan_it {
  dims B = 3, N = 5
  in  x: f32[B, N]
  out y = cumsum(x, axis=1, exclusive=true)
}

op big_matmul {
  dims M = 100000, N = 100000, K = 100000
  in  a: f32[M, K]
  in  b: f32[K, N]
  out c = matmul(a, b)
}
)";

}  // namespace

TEST_CASE("kiln ref prints shape, checksum and first values, the seed decides the inputs") {
  const std::string spec = write_spec("basic", kSpec);
  const Result a = run_ref(spec + " --op scan_it --seed 3");
  REQUIRE(a.rc == 0);
  CHECK(a.out.find("out y: f32[3, 5]") != std::string::npos);
  CHECK(a.out.find("sum   = ") != std::string::npos);
  CHECK(a.out.find("sumsq = ") != std::string::npos);
  CHECK(a.out.find("first: 0 ") != std::string::npos);   // an exclusive cumsum starts at 0
  CHECK(run_ref(spec + " --op scan_it --seed 3").out == a.out);
  CHECK(run_ref(spec + " --op scan_it --seed 4").out != a.out);
  const Result d = run_ref(spec + " --op scan_it -D N=7");
  REQUIRE(d.rc == 0);
  CHECK(d.out.find("out y: f32[3, 7]") != std::string::npos);
}

TEST_CASE("kiln ref refuses absurd work, suggesting -D, bad usage is exit 2") {
  const std::string spec = write_spec("errors", kSpec);
  const Result big = run_ref(spec + " --op big_matmul");
  CHECK(big.rc == 1);
  CHECK(big.out.find("-D") != std::string::npos);
  CHECK(run_ref(spec + " --op big_matmul -D M=8 -D N=8 -D K=8").rc == 0);
  CHECK(run_ref(spec + " --op no_such_op").rc == 1);
  CHECK(run_ref(spec + " --op scan_it -D N").rc == 2);
  CHECK(run_ref(spec + " --op scan_it -D N=1.5").rc == 2);
  CHECK(run_ref(spec).rc == 2);   // --op is required
}

#endif
