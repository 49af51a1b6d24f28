// The NVRTC compiler, loaded with dlopen on first use (never linked), so kiln links
// and its CPU-side tests run without it, and a deployment that ships pre-built
// cubins (a .kilnpack or a filled cache) never needs it.
//
// Library search order: $KILN_NVRTC_LIB (exactly that file, for tests), else
// libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so. The templates reach NVRTC as
// in-memory headers ("kiln/common.cuh", ...). NVRTC 13.0 does NOT find
// cuda_fp16.h / cuda_bf16.h by itself (tested), so compile() adds
// --include-path=<toolkit include dir>: the one beside the loaded libnvrtc, else
// $CUDA_HOME/include, $CUDA_PATH/include, /usr/local/cuda/include.
//
//   CompileResult r = compile({source, "kernel.cu", "sm_90", {}, &templates});
//   r.cubin          // ELF image for cuModuleLoadData
//   r.resources      // registers, smem, spills, stack per entry from ptxas -v
#pragma once

#include <string>
#include <vector>

#include "generator/emit/templates.h"
#include "kiln/kiln.h"

namespace kiln {

// Identifies the compiler build: part of the disk-cache key. Loads NVRTC.
// e.g. "nvrtc 13.0 (libnvrtc.so.13, 109338064 bytes)": version, the real file
// loaded (dladdr + realpath) and its size, which stands in for the build.
std::string compiler_id();

// True when NVRTC can be loaded; never throws. `why` gets the reason otherwise.
bool nvrtc_available(std::string* why = nullptr);

struct CompileRequest {
  std::string source;
  std::string file_name = "kernel.cu";
  std::string arch;                       // sm_80 sm_86 sm_89 sm_90 sm_90a
  std::vector<std::string> extra_options;
  const TemplateLibrary* templates = nullptr;   // in-memory headers; may be null
  bool want_ptx = false;
};

// What ptxas reported for one entry function (-1: not reported).
struct KernelResources {
  std::string kernel;
  int registers = -1;
  int shared_bytes = -1;   // static shared memory
  int spill_stores = -1, spill_loads = -1;   // bytes
  int stack_bytes = -1;
};

struct CompileResult {
  std::vector<char> cubin;
  std::string ptx;                 // only when want_ptx
  std::string log;                 // NVRTC's log, ptxas' verbose report included
  std::vector<std::string> options;   // as passed: compile_options() + --include-path=... (+ -minimal)
  std::vector<KernelResources> resources;
  double compile_ms = 0;           // wall time of the cubin compile
};

// The option list for `arch` (a disk-cache key input): cubin for the arch,
// -std=c++17, -default-device, ptxas -v, no fast-math, then `extra`. compile()
// appends the machine-specific --include-path and -minimal (NVRTC 12.4 on), which are
// deliberately not here.
// Throws kiln::Error for an arch outside sm_XX / sm_XXa.
std::vector<std::string> compile_options(const std::string& arch, const std::vector<std::string>& extra);

// Compiles one translation unit; throws kiln::CompileError(summary, log, options,
// source) when NVRTC rejects it, kiln::Error when NVRTC cannot be loaded.
CompileResult compile(const CompileRequest& req);

// Compiles independent requests on up to `jobs` threads (<= 0: hardware
// concurrency); results in request order. The first failure (by request order)
// is rethrown after every worker finished.
std::vector<CompileResult> compile_all(const std::vector<CompileRequest>& reqs, int jobs);

// Parses a ptxas -v report into one entry per "Compiling entry function".
std::vector<KernelResources> parse_ptxas_report(const std::string& log);

}  // namespace kiln
