// Shared by the GPU suites: skipping without a GPU and spec discovery.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "runtime/device.h"
#include "runtime/driver.h"   // device_arch
#include "runtime/host_tensor.h"
#include "runtime/op_check.h"
#include "reference/reference.h"

namespace kiln::test {

// ctest marks a test skipped when its output contains this (SKIP_REGULAR_EXPRESSION).
inline constexpr const char* kSkipMarker = "[kiln gpu skipped]";

#define KILN_REQUIRE_GPU()                                                    \
  do {                                                                        \
    std::string why_;                                                         \
    if (!::kiln::gpu_available(&why_)) {                                      \
      std::printf("%s no usable GPU: %s\n", ::kiln::test::kSkipMarker, why_.c_str()); \
      return;                                                                 \
    }                                                                         \
  } while (0)

// Skips the test (returns from it, with the skip marker and `what`) unless the device is sm_90a.
#define KILN_REQUIRE_SM90A(what)                                                                  \
  do {                                                                                            \
    const std::string arch_ = ::kiln::device_arch(::kiln::current_device());                      \
    if (arch_ != "sm_90a") {                                                                      \
      std::printf("%s %s need an sm_90a device (this one is %s)\n", ::kiln::test::kSkipMarker, what, \
                  arch_.c_str());                                                                 \
      return;                                                                                     \
    }                                                                                             \
  } while (0)

// The repository root: $KILN_SOURCE_DIR (set by scripts/gpu_suite.sh on the GPU
// machine, where the build's compiled-in path does not exist), else the build's.
// Options with the disk cache off: every kernel a test needs is an NVRTC compile in stats().
inline Options without_disk_cache() {
  Options options;
  options.disk_cache = false;
  return options;
}

inline std::string source_dir() {
  if (const char* env = std::getenv("KILN_SOURCE_DIR")) return env;
  return KILN_SOURCE_DIR;
}

// The shipped specs, sorted; $KILN_GPU_SPECS (comma-separated stems, e.g. "norms,scans") keeps only
// those, to finish a matrix test's run over a time-limited GPU call in parts.
inline std::vector<std::string> spec_files() {
  std::vector<std::string> files;
  const char* only = std::getenv("KILN_GPU_SPECS");
  const std::string list = only && *only ? std::string(",") + only + "," : "";
  for (const auto& e : std::filesystem::directory_iterator(source_dir() + "/specs"))
    if (e.path().extension() == ".kiln" &&
        (list.empty() || list.find("," + e.path().stem().string() + ",") != std::string::npos))
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace kiln::test
