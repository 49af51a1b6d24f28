#include "generator/support/source.h"

#include <algorithm>

namespace kiln {

SourceFile::SourceFile(std::string file_name, std::string file_text)
    : name(std::move(file_name)), text(std::move(file_text)) {
  // A line ends at "\n", "\r\n" or a lone "\r" (classic Mac files), as the lexer counts them.
  line_starts.push_back(0);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    if (text[i] == '\n' || text[i] == '\r') line_starts.push_back(i + 1);
  }
}

std::string_view SourceFile::line(int n) const {
  if (n < 1 || n > line_count()) return {};
  std::size_t begin = line_starts[static_cast<std::size_t>(n - 1)];
  std::size_t end = n < line_count() ? line_starts[static_cast<std::size_t>(n)] : text.size();
  std::string_view view(text.data() + begin, end - begin);
  if (!view.empty() && view.back() == '\n') view.remove_suffix(1);
  if (!view.empty() && view.back() == '\r') view.remove_suffix(1);
  return view;
}

std::pair<int, int> SourceFile::position(std::size_t offset) const {
  auto it = std::upper_bound(line_starts.begin(), line_starts.end(), offset);
  std::size_t line_index = static_cast<std::size_t>(it - line_starts.begin()) - 1;
  return {static_cast<int>(line_index) + 1, static_cast<int>(offset - line_starts[line_index]) + 1};
}

}  // namespace kiln
