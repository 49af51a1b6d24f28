// NVRTC wrapper: real compiles for sm_80 and sm_90 with an in-memory template
// header, the ptxas resource report, PTX, errors, and parallel determinism.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/binary_io.h"
#include "runtime/nvrtc.h"
#include "runtime/child_process.h"

namespace {

const char* kSource = R"(#include "kiln/common.cuh"
#include "kiln/test_scale.cuh"
extern "C" __global__ void scale(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float tile[256];
  tile[threadIdx.x] = in[i < n ? i : 0];
  __syncthreads();
  if (i < n) out[i] = kiln::to_float(__float2half(tile[threadIdx.x])) * kiln_test::kScale;
}
)";

// The built-in templates plus a test header, the way a user template dir adds one.
kiln::TemplateLibrary library_with_test_header() {
  // Written atomically: ctest -j may run several of these cases at once.
  static const std::string dir = [] {
    std::string d = std::string(KILN_BINARY_DIR) + "/test_nvrtc_templates";
    std::string text = "#pragma once\nnamespace kiln_test { constexpr float kScale = 3.0f; }\n";
    REQUIRE(kiln::write_file_atomic(d + "/kiln/test_scale.cuh", text.data(), text.size(), nullptr));
    return d;
  }();
  return kiln::TemplateLibrary(dir);
}

bool is_elf(const std::vector<char>& bytes) {
  return bytes.size() > 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F';
}

// Whether the loaded NVRTC is 12.4 or newer, read from compiler_id() ("nvrtc 13.0 (...)").
bool nvrtc_takes_minimal() {
  int major = 0, minor = 0;
  REQUIRE(std::sscanf(kiln::compiler_id().c_str(), "nvrtc %d.%d", &major, &minor) == 2);
  return major > 12 || (major == 12 && minor >= 4);
}

}  // namespace

TEST_CASE("nvrtc compiles a kernel with in-memory headers for sm_80 and sm_90") {
  auto templates = library_with_test_header();
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}) {
    CAPTURE(arch);
    kiln::CompileResult r = kiln::compile({kSource, "scale.cu", arch, {}, &templates});
    CHECK(is_elf(r.cubin));
    CHECK(r.ptx.empty());
    REQUIRE(r.resources.size() == 1);
    CHECK(r.resources[0].kernel == "scale");
    CHECK(r.resources[0].registers > 0);
    CHECK(r.resources[0].shared_bytes == 1024);   // the 256-float tile
    CHECK(r.resources[0].spill_stores == 0);
    CHECK(r.resources[0].stack_bytes >= 0);
    // The key's options, then the machine's include path and, from NVRTC 12.4 on, -minimal
    // (nvrtc.cpp's [Note: -minimal]): neither is in the cache key.
    auto key_options = kiln::compile_options(arch, {});
    const std::size_t added = 1 + (nvrtc_takes_minimal() ? 1 : 0);
    REQUIRE(r.options.size() == key_options.size() + added);
    CHECK(std::equal(key_options.begin(), key_options.end(), r.options.begin()));
    CHECK(r.options[key_options.size()].rfind("--include-path=", 0) == 0);   // cuda_fp16.h lives there
    if (added == 2) CHECK(r.options.back() == "-minimal");
    CHECK(r.compile_ms > 0);
  }
  CHECK(kiln::compiler_id().rfind("nvrtc 1", 0) == 0);
  CHECK(kiln::compiler_id().find("libnvrtc.so") != std::string::npos);
}

TEST_CASE("nvrtc gives PTX on request") {
  auto templates = library_with_test_header();
  kiln::CompileRequest req{kSource, "scale.cu", "sm_90", {}, &templates, true};
  kiln::CompileResult r = kiln::compile(req);
  CHECK(is_elf(r.cubin));
  CHECK(r.ptx.find(".target sm_90") != std::string::npos);
  CHECK(r.ptx.find(".entry scale") != std::string::npos);
  req.arch = "sm_90a";
  CHECK(kiln::compile(req).ptx.find(".target sm_90a") != std::string::npos);
}

TEST_CASE("a syntax error raises CompileError with log, options and source") {
  std::string bad = "extern \"C\" __global__ void k(float* p) {\n  p[0] = 1.0f\n}\n";
  try {
    kiln::compile({bad, "bad.cu", "sm_90", {"-DKILN_TEST=1"}});
    FAIL("expected a CompileError");
  } catch (const kiln::CompileError& e) {
    CHECK(std::string(e.what()).find("bad.cu") != std::string::npos);
    CHECK(e.log().find("bad.cu(3)") != std::string::npos);   // the missing ';' is reported at the '}'
    CHECK(e.source() == bad);
    CHECK(std::find(e.options().begin(), e.options().end(), "-DKILN_TEST=1") != e.options().end());
  }
}

TEST_CASE("an unknown arch is a clear error") {
  CHECK_THROWS_WITH_AS(kiln::compile_options("sm90", {}), doctest::Contains("unknown GPU architecture"),
                       kiln::Error);
}

TEST_CASE("ptxas report parsing") {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'a' for 'sm_90'\n"
      "ptxas info    : Function properties for helper\n"
      "    99 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Function properties for a\n"
      "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 368 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'b' for 'sm_90'\n"
      "ptxas info    : Function properties for b\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 8 registers, 360 bytes cmem[0]\n";
  auto r = kiln::parse_ptxas_report(log);
  REQUIRE(r.size() == 2);
  CHECK(r[0].kernel == "a");
  CHECK(r[0].registers == 40);
  CHECK(r[0].shared_bytes == 2048);
  CHECK(r[0].stack_bytes == 16);   // not the helper's 99
  CHECK(r[0].spill_stores == 8);
  CHECK(r[0].spill_loads == 4);
  CHECK(r[1].kernel == "b");
  CHECK(r[1].registers == 8);
  CHECK(r[1].shared_bytes == 0);
}

TEST_CASE("compile_all in parallel gives the same bytes as serial") {
  auto templates = library_with_test_header();
  std::vector<kiln::CompileRequest> reqs;
  for (int i = 0; i < 4; ++i)
    reqs.push_back({kSource, "scale.cu", i % 2 ? "sm_80" : "sm_90", {"-DVARIANT=" + std::to_string(i)}, &templates});
  auto parallel = kiln::compile_all(reqs, 4);
  auto serial = kiln::compile_all(reqs, 1);
  REQUIRE(parallel.size() == reqs.size());
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    CAPTURE(i);
    CHECK(parallel[i].cubin == serial[i].cubin);
    CHECK(parallel[i].options == serial[i].options);
  }
  reqs[2].source = "this is not C++";
  CHECK_THROWS_AS(kiln::compile_all(reqs, 3), kiln::CompileError);
}

// Child half of the next test: runs only under run_test_case_in_child.
TEST_CASE("child: nvrtc with KILN_NVRTC_LIB pointing nowhere") {
  if (!kiln_test::in_child()) return;
  std::string why;
  CHECK_FALSE(kiln::nvrtc_available(&why));
  CHECK_THROWS_WITH_AS(kiln::compiler_id(), why.c_str(), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::compile({"", "x.cu", "sm_90"}), why.c_str(), kiln::Error);
  // Says what was searched, and that pre-built cubins need no NVRTC.
  CHECK(why.find("/nonexistent/libnvrtc.so") != std::string::npos);
  CHECK(why.find(".kilnpack") != std::string::npos);
}

TEST_CASE("a missing NVRTC library is a clear error") {
  auto child = kiln_test::run_test_case_in_child("KILN_NVRTC_LIB=/nonexistent/libnvrtc.so",
                                                 "child: nvrtc with KILN_NVRTC_LIB pointing nowhere");
  INFO(child.output);
  CHECK(child.exit_code == 0);
  CHECK(child.output.find("1 passed") != std::string::npos);   // the child case really ran
}
