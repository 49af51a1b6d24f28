// A small structured writer for generated CUDA C++ (nvFuser's CudaKernelGenerator
// idea): lines, indentation and blocks, instead of string soup.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace kiln {

class CodeWriter {
 public:
  template <class... Args>
  void line(fmt::format_string<Args...> format, Args&&... args) {
    raw_line(fmt::format(format, std::forward<Args>(args)...));
  }
  void raw_line(std::string_view text) {
    if (!text.empty()) out_.append(static_cast<std::size_t>(indent_) * 2, ' ');
    out_.append(text);
    out_.push_back('\n');
  }
  void blank() { out_.push_back('\n'); }
  // "header {" and one more level of indentation.
  void open_block(std::string_view header) {
    raw_line(std::string(header) + " {");
    ++indent_;
  }
  void close_block(std::string_view trailer = "") {
    --indent_;
    std::string line = "}";   // (not "}" + std::string: GCC 12 warns of an overlap there, PR 105329)
    line += trailer;
    raw_line(line);
  }
  // Appends lines written elsewhere, at this writer's indentation.
  void append(std::string_view text) {
    while (!text.empty()) {
      std::size_t end = text.find('\n');
      raw_line(text.substr(0, end));
      if (end == std::string_view::npos) break;
      text.remove_prefix(end + 1);
    }
  }
  void indent() { ++indent_; }
  void dedent() { --indent_; }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
  int indent_ = 0;
};

}  // namespace kiln
