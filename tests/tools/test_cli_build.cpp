// `kiln build --small`: every dim not given is capped at 64, the same rule as
// `kiln run --small`, so a pack built with it serves `kiln run --small --pack`
// (the GPU suite runs that with NVRTC unloadable).
#include <doctest/doctest.h>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <string>

#include "generator/frontend/frontend.h"
#include "generator/plan/plan.h"
#include "kiln/kiln.h"
#include "runtime/pack.h"
#include "runtime/tuner.h"
#include "tools/cli_run.h"

#include <unistd.h>

namespace {
// A scratch directory of this process: two test runs on one machine (a developer's and CI's)
// must not remove each other's files.
std::filesystem::path scratch(const std::string& name) {
  return std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
}
}  // namespace

TEST_CASE("kiln build --small builds the specialization at dims capped at 64") {
  const auto dir = scratch("kiln-test-build-small");
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

// Every op of every spec in specs/, at its default dims and at --small dims (other plans: short
// rows take the warp-per-row reductions, small products the split-K and GEMV paths), compiles
// with NVRTC for sm_80 and sm_90a. The one specialization without a template is NHWC conv on
// sm_80 (docs/semantics.md, "conv2d"); anything else skipped or failed fails the test.
TEST_CASE("kiln build: every spec op compiles for sm_80 and sm_90a at default and --small dims") {
  const auto dir = scratch("kiln-test-build-every-spec");
  std::filesystem::remove_all(dir);
  std::string specs;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(KILN_SOURCE_DIR) / "specs"))
    if (entry.path().extension() == ".kiln") specs += " " + entry.path().string();
  for (const char* dims : {"", " --small"}) {
    CAPTURE(dims);
    const auto out = dir / (*dims ? "small" : "default");
    auto built = kiln_test::run_kiln_with("env KILN_CACHE_DIR='" + (dir / "cache").string() + "'",
                                          "build" + specs + dims + " --arch sm_80,sm_90a --skip-unsupported -o " + out.string(), 900);
    INFO(built.output);
    REQUIRE(built.exit_code == 0);
    CHECK(built.output.find("kiln build: skipped conv2d_nhwc_bias_relu (") != std::string::npos);
    std::size_t skips = 0;
    for (std::size_t at = built.output.find("kiln build: skipped "); at != std::string::npos;
         at = built.output.find("kiln build: skipped ", at + 1))
      ++skips;
    CHECK(skips == 1);
  }
  std::filesystem::remove_all(dir);
}

// The planner's UnsupportedError ("no kernel template for these arguments") is caught by its
// type, not its text: without --skip-unsupported the build names the specialization and exits
// 1 (the user's input); with it the rest is built and the build succeeds. Were the error not
// recognised, --skip-unsupported could not turn it into a skip and the build would fail.
TEST_CASE("kiln build: an op the planner cannot cover is recognised by its error type") {
  const auto dir = scratch("kiln-test-build-unsupported");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto spec = (dir / "mixed.kiln").string();
  // NHWC with groups != C has no conv template (plan_contraction.cpp); relu is covered.
  std::ofstream(spec) << "op nhwc {\n  dims N = 1, H = 8, W = 8, C = 4, K = 4\n  in x: f32[N, H, W, C]\n"
                         "  in w: f32[K, C, 3, 3]\n  out y = conv2d(x, w, layout=\"NHWC\")\n}\n"
                         "op relu {\n  dims N = 64\n  in x: f32[N]\n  out y = relu(x)\n}\n";
  const std::string build = "build " + spec + " --arch sm_80 -o " + (dir / "cache").string();
  auto refused = kiln_test::run_kiln(build);
  INFO(refused.output);
  CHECK(refused.exit_code == 1);
  CHECK(refused.output.find("kiln build: cannot build nhwc (") != std::string::npos);
  CHECK(refused.output.find("1 specialization has no kernel template") != std::string::npos);
  auto skipped = kiln_test::run_kiln(build + " --skip-unsupported");
  INFO(skipped.output);
  CHECK(skipped.exit_code == 0);
  CHECK(skipped.output.find("kiln build: skipped nhwc (") != std::string::npos);
  CHECK(skipped.output.find("1 specializations, 1 kernels for sm_80") != std::string::npos);
  std::filesystem::remove_all(dir);
}

// A dyn dim is an argument of the kernel, so its value must not reach the source (comments, the
// launch check's grid): every value of one bucket is one source, one compile, one cache entry.
// Buckets ([Note: dyn buckets]): 1000, 1001, 7 are "general" (scalar loop); 2000 and 4096 are
// "% 16 == 0" (16-byte vectors); past 2^31 elements the index width changes the source too.
TEST_CASE("kiln build: values of a dyn dim in one bucket share one kernel") {
  const auto dir = scratch("kiln-test-build-dyn");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto spec = dir / "dyn.kiln";
  std::ofstream(spec) << "op scale {\n  dims dyn N = 1024\n  in  x: f32[N]\n  out y = x * 2.0\n}\n";
  const std::string build = "build " + spec.string() + " --arch sm_90a -o " + (dir / "cache").string() + " -D N=";
  auto first = kiln_test::run_kiln(build + "1000");
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  CHECK(first.output.find("1 compiled") != std::string::npos);
  auto shared = [&](const char* n) {
    auto again = kiln_test::run_kiln(build + n);
    INFO(n << ": " << again.output);
    CHECK(again.exit_code == 0);
    CHECK(again.output.find("0 compiled (0 ms of NVRTC), 1 already in") != std::string::npos);
  };
  for (const char* n : {"1001", "7"}) shared(n);
  auto vectors = kiln_test::run_kiln(build + "2000");
  INFO(vectors.output);
  CHECK(vectors.exit_code == 0);
  CHECK(vectors.output.find("1 compiled") != std::string::npos);
  shared("4096");
  auto wide = kiln_test::run_kiln(build + "3000000000");
  INFO(wide.output);
  CHECK(wide.exit_code == 0);
  CHECK(wide.output.find("1 compiled") != std::string::npos);
  std::filesystem::remove_all(dir);
}

// Tuned picks travel with a build (docs/api.md, "Tuning"): `kiln build` plans with the picks
// stored for the device KILN_TUNING_DEVICE names, the .kilnpack carries them, and a runtime that
// preloads the pack (with an empty cache of its own) plans the same tuned config.
TEST_CASE("kiln build: a pack carries the tuned picks it planned with") {
  namespace fs = std::filesystem;
  const auto dir = scratch("kiln-test-build-tuned");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string text =
      "op mm16 {\n  dims M = 1000, N = 1000, K = 1000\n  in  a: bf16[M, K]\n  in  b: bf16[K, N]\n"
      "  out c = matmul(a, b)\n}\n";
  const std::string spec = (dir / "mm.kiln").string();
  std::ofstream(spec) << text;
  auto parsed = kiln::parse_spec(text, spec);
  auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(parsed, "mm16"), {}));
  const kiln::Plan plan = kiln::make_plan(bound, kiln::Target::for_arch("sm_90a"));
  const auto& t = plan.tunables.at(0);
  const kiln::Pick pick = t.candidates.back() == t.heuristic ? t.candidates.front() : t.candidates.back();
  const std::string key = kiln::tuning_key_text(plan, "Test GPU");
  std::string error;
  REQUIRE(kiln::store_tuned(kiln::tuned_path((dir / "store").string(), key), key, {{t.anchor, {pick, "tuned (test)"}}},
                            &error));
  const std::string env = "env 'KILN_CACHE_DIR=" + (dir / "store").string() + "' 'KILN_TUNING_DEVICE=Test GPU'";
  auto built = kiln_test::run_kiln_with(env, "build " + spec + " --arch sm_90a -o " + (dir / "p.kilnpack").string(), 300);
  INFO(built.output);
  REQUIRE(built.exit_code == 0);
  CHECK(built.output.find("; 1 with tuned picks for Test GPU") != std::string::npos);
  const kiln::Pack pack = kiln::Pack::open((dir / "p.kilnpack").string());
  CHECK(pack.tuned().size() == 1);
  // kiln gen (no disk tier of cubins) reads the store too and says where the config came from.
  auto gen = kiln_test::run_kiln_with(env, "gen " + spec + " --op mm16 --arch sm_90a", 120);
  REQUIRE(gen.exit_code == 0);
  CHECK(gen.output.find("config: tuned (test)") != std::string::npos);
  // Into a cache directory: the pick's file goes with the kernels.
  auto into_dir = kiln_test::run_kiln_with(env, "build " + spec + " --arch sm_90a -o " + (dir / "out").string(), 300);
  REQUIRE(into_dir.exit_code == 0);
  CHECK(fs::exists(fs::path(kiln::tuned_path((dir / "out").string(), key))));
  // Without the device name (and no GPU here) the build plans the heuristic: no picks in the pack.
  auto plain = kiln_test::run_kiln_with("env 'KILN_CACHE_DIR=" + (dir / "store").string() + "'",
                                        "build " + spec + " --arch sm_90a -o " + (dir / "q.kilnpack").string(), 300);
  REQUIRE(plain.exit_code == 0);
  if (plain.output.find("tuned picks") == std::string::npos)   // a GPU of another name would find none either
    CHECK(kiln::Pack::open((dir / "q.kilnpack").string()).tuned().empty());

  kiln::Options o;
  o.arch = "sm_90a";
  o.cache_dir = (dir / "empty-cache").string();
  ::setenv("KILN_TUNING_DEVICE", "Test GPU", 1);
  kiln::Runtime rt(o);
  rt.preload((dir / "p.kilnpack").string());
  const std::string planned = rt.load_file(spec).op("mm16").specialize(kiln::Bindings{}).plan_text();
  ::unsetenv("KILN_TUNING_DEVICE");
  CHECK(planned.find("config: tuned (test)") != std::string::npos);
  fs::remove_all(dir);
}
