#include "generator/emit/substitute.h"

#include <set>

#include "generator/support/assert.h"

namespace kiln {

namespace {
bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
}  // namespace

std::string substitute(std::string_view template_name, std::string_view text,
                       const std::map<std::string, std::string>& values) {
  std::string out;
  out.reserve(text.size() * 2);
  std::set<std::string> used;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '$') {
      out.push_back('$');
      ++i;
      continue;
    }
    std::size_t close = text.find('}', i);
    bool well_formed = i + 1 < text.size() && text[i + 1] == '{' && close != std::string_view::npos &&
                       close > i + 2 && is_name_start(text[i + 2]);
    for (std::size_t k = i + 2; well_formed && k < close; ++k) well_formed = is_name_char(text[k]);
    if (!well_formed)
      throw Error(fmt::format("template {}: malformed placeholder at offset {} (expected ${{name}})",
                              template_name, i));
    std::string key(text.substr(i + 2, close - i - 2));
    auto it = values.find(key);
    if (it == values.end())
      throw Error(fmt::format("template {}: placeholder ${{{}}} has no value", template_name, key));
    out += it->second;
    used.insert(key);
    i = close;
  }
  for (const auto& [key, value] : values)
    if (!used.count(key))
      throw Error(fmt::format("template {}: value '{}' is given but no placeholder uses it", template_name, key));
  return out;
}

}  // namespace kiln
