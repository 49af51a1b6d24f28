// The one pipeline (runtime/pipeline.h): each stop of run() yields its stage's type and
// nothing past it. `kiln gen` stops after emit and must run no NVRTC; a compile with a
// disk cache compiles once and hits the second time, from a fresh pipeline too.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "generator/frontend/frontend.h"
#include "kiln/kiln.h"
#include "runtime/child_process.h"
#include "runtime/nvrtc_skip.h"
#include "runtime/nvrtc.h"
#include "runtime/pipeline.h"

namespace fs = std::filesystem;

namespace {

using kiln_test::skip_without_nvrtc;

const char* kRelu = "op relu {\n  dims N = 1000\n  in x: f32[N]\n  out y = relu(x)\n}\n";

// NHWC with groups != C has no conv template: the planner throws UnsupportedError.
const char* kNhwc = "op nhwc {\n  dims N = 1, H = 8, W = 8, C = 4, K = 4\n  in x: f32[N, H, W, C]\n"
                    "  in w: f32[K, C, 3, 3]\n  out y = conv2d(x, w, layout=\"NHWC\")\n}\n";

kiln::PipelineRequest request_for(const kiln::SpecFile& spec, const std::string& op) {
  kiln::PipelineRequest r;
  r.spec = &spec;
  r.op = op;
  r.target = kiln::Target::for_arch("sm_90");
  return r;
}

std::string cache_dir(const std::string& name) {
  const std::string dir = std::string(KILN_BINARY_DIR) + "/test_pipeline/" + name;
  fs::remove_all(dir);
  return dir;
}

}  // namespace

TEST_CASE("pipeline: run stops after the stage asked for") {
  const kiln::SpecFile spec = kiln::parse_spec(kRelu, "relu.kiln");
  kiln::Pipeline pipeline;
  const auto request = request_for(spec, "relu");

  const auto checked = pipeline.run(request, kiln::Stage::check);
  REQUIRE(checked.ir != nullptr);
  CHECK(checked.bound == nullptr);

  const auto bound = pipeline.run(request, kiln::Stage::bind);
  REQUIRE(bound.bound != nullptr);
  CHECK(bound.bindings == "N=1000");
  CHECK(bound.plan.kernels.empty());

  const auto planned = pipeline.run(request, kiln::Stage::plan);
  CHECK(planned.plan.kernels.size() == 1);
  CHECK(planned.sources.empty());

  // Where `kiln gen` stops: the source is there, no binary and no compile.
  const auto emitted = pipeline.run(request, kiln::Stage::emit);
  REQUIRE(emitted.sources.size() == 1);
  CHECK(emitted.sources[0].text.find("extern \"C\"") != std::string::npos);
  CHECK(emitted.cubins.empty());
  CHECK(pipeline.counters().compiles == 0);
  CHECK(pipeline.counters().cache_hits == 0);
}

// Child half: NVRTC cannot be loaded, yet everything up to emit works.
TEST_CASE("child: the pipeline emits without NVRTC and compile says why it cannot") {
  if (!kiln_test::in_child()) return;
  REQUIRE_FALSE(kiln::nvrtc_available());
  const kiln::SpecFile spec = kiln::parse_spec(kRelu, "relu.kiln");
  kiln::Pipeline pipeline;
  const auto emitted = pipeline.run(request_for(spec, "relu"), kiln::Stage::emit);
  REQUIRE(emitted.sources.size() == 1);
  CHECK(pipeline.counters().compiles == 0);
  CHECK_THROWS_AS(pipeline.compile(emitted.sources[0], "sm_90", "relu", emitted.bindings), kiln::CompileError);
}

TEST_CASE("pipeline: a stop after emit needs no NVRTC at all") {
  const auto child = kiln_test::run_test_case_in_child(
      "KILN_NVRTC_LIB=/nonexistent/libnvrtc.so", "child: the pipeline emits without NVRTC and compile says why it cannot");
  INFO(child.output);
  CHECK(child.exit_code == 0);
}

TEST_CASE("pipeline: a compile with a disk cache stores, and hits the second time") {
  if (skip_without_nvrtc()) return;
  const kiln::SpecFile spec = kiln::parse_spec(kRelu, "relu.kiln");
  kiln::PipelineOptions options;
  options.cache_dir = cache_dir("hit");
  const auto request = request_for(spec, "relu");
  {
    kiln::Pipeline pipeline(options);
    const auto first = pipeline.run(request, kiln::Stage::compile);
    REQUIRE(first.cubins.size() == 1);
    CHECK(first.cubins[0].origin == kiln::CubinOrigin::nvrtc);
    CHECK(first.cubins[0].stored);
    CHECK_FALSE(first.cubins[0].entry.cubin.empty());
    CHECK(first.cubins[0].entry.metadata.op_name == "relu");
    CHECK(first.cubins[0].entry.metadata.bindings == "N=1000");
    CHECK(pipeline.counters().compiles == 1);
    // The pipeline keeps no memory tier: the same pipeline finds it on disk.
    const auto again = pipeline.run(request, kiln::Stage::compile);
    CHECK(again.cubins[0].origin == kiln::CubinOrigin::disk);
    CHECK(pipeline.counters().compiles == 1);
  }
  kiln::Pipeline fresh(options);
  const auto second = fresh.run(request, kiln::Stage::compile);
  REQUIRE(second.cubins.size() == 1);
  CHECK(second.cubins[0].origin == kiln::CubinOrigin::disk);
  CHECK(second.cubins[0].compile_ms < 0);
  CHECK(second.cubins[0].entry.cubin == fresh.run(request, kiln::Stage::compile).cubins[0].entry.cubin);
  CHECK(fresh.counters().compiles == 0);
  CHECK(fresh.counters().cache_hits == 2);
  fs::remove_all(options.cache_dir);
}

TEST_CASE("pipeline: an op with no template is an UnsupportedError from plan, after check and bind succeed") {
  const kiln::SpecFile spec = kiln::parse_spec(kNhwc, "nhwc.kiln");
  kiln::Pipeline pipeline;
  const auto request = request_for(spec, "nhwc");
  CHECK(pipeline.run(request, kiln::Stage::bind).bound != nullptr);
  CHECK_THROWS_AS(pipeline.run(request, kiln::Stage::plan), kiln::UnsupportedError);
  CHECK(pipeline.counters().compiles == 0);
}
