// The gemm / conv template instantiation units in tests/templates (the code the emitter writes)
// compile with nvcc for sm_80 and sm_90 without spills, and the SASS (or, where cuobjdump is
// absent, the PTX) shows the instructions the templates exist for.
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cuda_tools.h"

namespace fs = std::filesystem;

namespace {

using kiln::test::CommandResult;
using kiln::test::find_tool;
using kiln::test::run_command;

std::vector<fs::path> template_units() {
  std::vector<fs::path> units;
  for (const auto& e : fs::directory_iterator(fs::path(KILN_SOURCE_DIR) / "tests" / "templates")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".cu" && (name.rfind("gemm_", 0) == 0 || name.rfind("conv_", 0) == 0))
      units.push_back(e.path());
  }
  std::sort(units.begin(), units.end());
  return units;
}

bool uses_tensor_cores(const std::string& name) {
  return name.find("tf32") != std::string::npos || name.find("bf16") != std::string::npos;
}

// Counts lines of `text` containing `needle`.
int count_lines(const std::string& text, const std::string& needle) {
  int n = 0;
  size_t pos = 0;
  while ((pos = text.find(needle, pos)) != std::string::npos) {
    ++n;
    pos += needle.size();
  }
  return n;
}

fs::path out_dir() {
  const fs::path d = fs::path(KILN_BINARY_DIR) / "template_compile";
  fs::create_directories(d);
  return d;
}

std::string nvcc_base(const std::string& nvcc, int arch) {
  const fs::path root(KILN_SOURCE_DIR);
  return nvcc + " -std=c++17 -arch=sm_" + std::to_string(arch) + " -I " +
         (root / "templates").string() + " -I " + (root / "tests" / "templates").string();
}

void compile_all(int arch) {
  const std::string nvcc = find_tool("nvcc");
  if (nvcc.empty()) {
    MESSAGE("nvcc not found: skipping the template compile checks");
    return;
  }
  const auto units = template_units();
  REQUIRE(units.size() >= 13);
  for (const fs::path& unit : units) {
    const std::string name = unit.stem().string();
    CAPTURE(name);
    const fs::path cubin = out_dir() / (name + ".sm_" + std::to_string(arch) + ".cubin");
    const CommandResult r = run_command(nvcc_base(nvcc, arch) + " -cubin -Xptxas -v " +
                                        unit.string() + " -o " + cubin.string());
    INFO(r.output);
    REQUIRE(r.status == 0);
    // Every kernel in the unit reports its spills; a spill means a register array went to memory.
    const int kernels = count_lines(r.output, "bytes spill stores");
    CHECK(kernels >= 1);
    CHECK(count_lines(r.output, " 0 bytes spill stores") == kernels);
    CHECK(count_lines(r.output, "0 bytes stack frame") == kernels);
  }
}

}  // namespace

TEST_CASE("gemm and conv template units compile for sm_80 without spills") { compile_all(80); }

TEST_CASE("gemm and conv template units compile for sm_90 without spills") { compile_all(90); }

TEST_CASE("tensor-core units issue mma and the small-K kernels store 16 bytes at a time") {
  const std::string nvcc = find_tool("nvcc");
  if (nvcc.empty()) {
    MESSAGE("nvcc not found: skipping");
    return;
  }
  const std::string cuobjdump = find_tool("cuobjdump");
  if (cuobjdump.empty())
    MESSAGE("cuobjdump not found: checking the PTX instead of the SASS");
  for (const fs::path& unit : template_units()) {
    const std::string name = unit.stem().string();
    CAPTURE(name);
    const bool small_k = name.rfind("gemm_small_k_", 0) == 0;
    if (!uses_tensor_cores(name) && !small_k) continue;
    std::string text;
    if (!cuobjdump.empty()) {
      const fs::path cubin = out_dir() / (name + ".sass.cubin");
      const CommandResult c =
          run_command(nvcc_base(nvcc, 90) + " -cubin " + unit.string() + " -o " + cubin.string());
      REQUIRE(c.status == 0);
      const CommandResult d = run_command(cuobjdump + " -sass " + cubin.string());
      REQUIRE(d.status == 0);
      text = d.output;
      // mma.sync lowers to HMMA; 3xTF32 and tf32 both use the tf32 form.
      if (uses_tensor_cores(name)) CHECK(count_lines(text, "HMMA") > 0);
      if (small_k) {
        // C (4 GB) leaves as 128-bit stores only: no narrower STG in the kernel.
        const int wide = count_lines(text, "STG.E.EF.128") + count_lines(text, "STG.E.128");
        CHECK(wide > 0);
        CHECK(count_lines(text, "STG") == wide);
      }
    } else {
      const fs::path ptx = out_dir() / (name + ".ptx");
      const CommandResult c =
          run_command(nvcc_base(nvcc, 90) + " -ptx " + unit.string() + " -o " + ptx.string());
      REQUIRE(c.status == 0);
      const CommandResult d = run_command("cat " + ptx.string());
      text = d.output;
      if (uses_tensor_cores(name)) CHECK(count_lines(text, "mma.sync.aligned") > 0);
      if (small_k) {
        // st.global.cs.v4.f32 assembles to STG.E.EF.128.
        const int wide = count_lines(text, "st.global.cs.v4.f32");
        CHECK(wide > 0);
        CHECK(count_lines(text, "st.global") == wide);
      }
    }
  }
}

// The emitter hands these units to NVRTC, not nvcc: no host headers, no INFINITY, etc. NVRTC is
// loaded with dlopen (as the runtime does), so the test binary needs no link dependency on it.
TEST_CASE("gemm and conv template units compile with NVRTC (cold compile time reported)") {
  void* lib = dlopen("libnvrtc.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("/usr/local/cuda/lib64/libnvrtc.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    MESSAGE("libnvrtc not found: skipping the NVRTC compile checks");
    return;
  }
  using Program = void*;
  using CreateFn = int (*)(Program*, const char*, const char*, int, const char* const*,
                           const char* const*);
  using CompileFn = int (*)(Program, int, const char* const*);
  using LogSizeFn = int (*)(Program, size_t*);
  using LogFn = int (*)(Program, char*);
  using DestroyFn = int (*)(Program*);
  auto create = reinterpret_cast<CreateFn>(dlsym(lib, "nvrtcCreateProgram"));
  auto compile = reinterpret_cast<CompileFn>(dlsym(lib, "nvrtcCompileProgram"));
  auto log_size = reinterpret_cast<LogSizeFn>(dlsym(lib, "nvrtcGetProgramLogSize"));
  auto get_log = reinterpret_cast<LogFn>(dlsym(lib, "nvrtcGetProgramLog"));
  auto destroy = reinterpret_cast<DestroyFn>(dlsym(lib, "nvrtcDestroyProgram"));
  REQUIRE((create && compile && log_size && get_log && destroy));

  const fs::path root(KILN_SOURCE_DIR);
  const std::string inc_templates = "-I" + (root / "templates").string();
  const std::string inc_units = "-I" + (root / "tests" / "templates").string();
  const std::string inc_cuda = "-I/usr/local/cuda/include";  // cuda_fp16.h / cuda_bf16.h
  const std::vector<const char*> opts = {"--std=c++17", "-arch=sm_90", inc_templates.c_str(),
                                         inc_units.c_str(), inc_cuda.c_str()};
  for (const fs::path& unit : template_units()) {
    const std::string name = unit.stem().string();
    CAPTURE(name);
    std::ifstream in(unit);
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    Program prog = nullptr;
    REQUIRE(create(&prog, source.c_str(), unit.filename().string().c_str(), 0, nullptr, nullptr) == 0);
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = compile(prog, int(opts.size()), opts.data());
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    size_t n = 0;
    log_size(prog, &n);
    std::string log(n, '\0');
    if (n) get_log(prog, log.data());
    INFO(log);
    CHECK(rc == 0);
    MESSAGE(name << ": NVRTC sm_90 compile " << int(ms) << " ms");
    destroy(&prog);
  }
}
