// `kiln check` end to end: the real binary, exit codes and output.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

struct Run {
  int exit_code = -1;
  std::string out;   // stdout and stderr together
};

Run run_cli(const std::string& args) {
  std::string command = std::string(KILN_CLI) + " " + args + " 2>&1";
  Run run;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string temp_spec(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / ("kiln_cli_test_" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

const std::string kSpecs = std::string(KILN_SOURCE_DIR) + "/specs/";

}  // namespace

TEST_CASE("kiln check: every shipped spec is clean and lists at least 20 ops") {
  Run r = run_cli("check " + kSpecs + "*.kiln");
  CHECK(r.exit_code == 0);
  int ops = 0;
  for (std::size_t at = 0; (at = r.out.find("\n  ", at)) != std::string::npos; ++at) ++ops;
  CHECK(ops >= 20);
  for (const char* seed : {"cumsum_exclusive(x: f32[B, N]) -> y: f32[B, N]", "min_reduce(x: f32[B, M, N]) -> y: f32[B, N]",
                           "conv2d_3x3(x: f32[N, C, H, W], w: f32[K, C, 3, 3]) -> y: f32[N, K, (H - 2), (W - 2)]",
                           "linear_dropout_softmax(", "matmul_small_k(a: f32[M, K], b: f32[K, N]) -> c: f32[M, N]"})
    CHECK(r.out.find(seed) != std::string::npos);
}

TEST_CASE("kiln check --ir: bound IR at default dims, -D overrides dims and consts") {
  Run r = run_cli("check " + kSpecs + "conv2d_3x3.kiln --ir -D H=64 -D W=32 -D stride=2");
  CHECK(r.exit_code == 0);
  // The runtime's default shapes ("generic"): a conv's batch is a run-time value, the rest is baked in.
  CHECK(r.out.find("dims: N=8 (dyn) C=64 H=64 W=32 K=128") != std::string::npos);
  CHECK(r.out.find("stride=[2, 2]") != std::string::npos);
  CHECK(r.out.find("-> (y: f32[8, 128, 31, 15])") != std::string::npos);
}

TEST_CASE("kiln check: errors go to stderr rendered, exit code 1") {
  std::string bad = temp_spec("bad.kiln", "op a {\n  dims N = 4\n  in x: i32[N]\n  out y = x / x\n}\n");
  Run r = run_cli("check " + bad);
  CHECK(r.exit_code == 1);
  CHECK(r.out == bad + ":4:13: error: '/' on integer type i32 is not supported; cast to a float type first, e.g. f32(x)\n"
                       "  out y = x / x\n"
                       "            ^\n");
  // A clean file next to a bad one is still checked and listed.
  Run both = run_cli("check " + kSpecs + "min_reduce.kiln " + bad);
  CHECK(both.exit_code == 1);
  CHECK(both.out.find("min_reduce(x: f32[B, M, N])") != std::string::npos);
}

TEST_CASE("kiln check: warnings do not fail") {
  std::string warn = temp_spec("warn.kiln", "op a {\n  dims N = 4\n  in x: f32[N]\n  in z: f32[N]\n  out y = x\n}\n");
  Run r = run_cli("check " + warn);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find(warn + ":4:6: warning: input 'z' is never used") != std::string::npos);
}

TEST_CASE("kiln check: bad usage exits 2, unreadable files 1") {
  CHECK(run_cli("").exit_code == 2);   // no subcommand
  CHECK(run_cli("check").exit_code == 2);
  CHECK(run_cli("check " + kSpecs + "min_reduce.kiln -D N").exit_code == 2);
  CHECK(run_cli("check " + kSpecs + "min_reduce.kiln -D N=abc").exit_code == 2);
  CHECK(run_cli("check " + kSpecs + "min_reduce.kiln --ir -D N=2.5").exit_code == 2);
  Run missing = run_cli("check /nonexistent/x.kiln");
  CHECK(missing.exit_code == 1);
  CHECK(missing.out.find("cannot read spec file '/nonexistent/x.kiln'") != std::string::npos);
}

TEST_CASE("kiln check: a binding error at the requested dims exits 1") {
  Run r = run_cli("check " + kSpecs + "conv2d_3x3.kiln --ir -D H=2");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("would have size (H - 2) = 0 (< 1)") != std::string::npos);
}
