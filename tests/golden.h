// Golden-file checks: compare text with tests/golden/<rel_path>; on mismatch
// fail with a line diff; with KILN_UPDATE_GOLDENS=1 rewrite the file instead.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::testing {

inline std::vector<std::string> golden_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A compact diff: every differing line (by position) with both versions, up to 20.
inline std::string golden_diff(const std::string& expected, const std::string& actual) {
  auto e = golden_lines(expected), a = golden_lines(actual);
  std::ostringstream out;
  int shown = 0;
  for (std::size_t i = 0; i < std::max(e.size(), a.size()) && shown < 20; ++i) {
    const std::string* le = i < e.size() ? &e[i] : nullptr;
    const std::string* la = i < a.size() ? &a[i] : nullptr;
    if (le && la && *le == *la) continue;
    ++shown;
    out << "line " << i + 1 << ":\n";
    out << "  - " << (le ? *le : "<missing>") << "\n";
    out << "  + " << (la ? *la : "<missing>") << "\n";
  }
  if (shown == 0 && expected != actual) out << "(differs in line endings or the final newline)\n";
  return out.str();
}

inline void check_golden(const std::string& rel_path, const std::string& actual) {
  std::filesystem::path path = std::filesystem::path(KILN_SOURCE_DIR) / "tests" / "golden" / rel_path;
  const char* update = std::getenv("KILN_UPDATE_GOLDENS");
  if (update != nullptr && std::string(update) == "1") {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    MESSAGE("updated golden " << path.string());
    return;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    FAIL("golden file " << path.string() << " is missing; run with KILN_UPDATE_GOLDENS=1 to create it");
    return;
  }
  std::ostringstream expected;
  expected << in.rdbuf();
  if (expected.str() != actual)
    FAIL("output differs from golden " << path.string() << " (- golden, + actual; KILN_UPDATE_GOLDENS=1 rewrites it)\n"
                                       << golden_diff(expected.str(), actual));
}

}  // namespace kiln::testing

using kiln::testing::check_golden;
