// Shared by the GPU suites: skipping without a GPU, spec discovery, and one
// correctness check (random inputs, poisoned outputs, float64 reference).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/reference.h"

namespace kiln::test {

// ctest marks a test skipped when its output contains this (SKIP_REGULAR_EXPRESSION).
inline constexpr const char* kSkipMarker = "[kiln gpu skipped]";

#define KILN_REQUIRE_GPU()                                                    \
  do {                                                                        \
    std::string why_;                                                         \
    if (!::kiln::gpu_available(&why_)) {                                      \
      MESSAGE(::kiln::test::kSkipMarker << " no usable GPU: " << why_);       \
      return;                                                                 \
    }                                                                         \
  } while (0)

// The repository root: $KILN_SOURCE_DIR (set by scripts/gpu_suite.sh on the GPU
// machine, where the build's compiled-in path does not exist), else the build's.
inline std::string source_dir() {
  if (const char* env = std::getenv("KILN_SOURCE_DIR")) return env;
  return KILN_SOURCE_DIR;
}

inline std::vector<std::string> spec_files() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(source_dir() + "/specs"))
    if (e.path().extension() == ".kiln") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

struct CheckResult {
  bool ran = false;          // false: no template covers the op yet (reason in `note`)
  bool ok = false;
  std::string note;
  std::vector<Comparison> outputs;
  double ms = -1;            // one timed launch after the check
};

// Runs `op` at `bindings` on random inputs (seed), compares every output with
// the float64 reference. Outputs are poisoned with 0xFF bytes first.
CheckResult check_op(Runtime& rt, const std::string& spec_path, const std::string& op_name, const Bindings& bindings,
                     std::uint64_t seed);

}  // namespace kiln::test
