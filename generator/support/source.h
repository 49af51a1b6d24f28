// One spec file's text with a line index, shared by every stage that reports
// locations (diagnostics, IR printing, spec-line comments in generated source).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// A position in a spec file (1-based; 0 = unknown).
struct SourceLoc {
  int line = 0;
  int column = 0;
};

struct SourceFile {
  SourceFile(std::string name, std::string text);

  std::string name;
  std::string text;
  std::vector<std::size_t> line_starts;   // byte offset of each line's first byte

  int line_count() const { return static_cast<int>(line_starts.size()); }
  // Line n (1-based) without its terminator; empty when out of range.
  std::string_view line(int n) const;
  // 1-based line and column of a byte offset.
  std::pair<int, int> position(std::size_t offset) const;
};

}  // namespace kiln
