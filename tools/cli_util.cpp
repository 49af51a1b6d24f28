#include "tools/cli_util.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "generator/support/assert.h"
#include "generator/ir/ir.h"
#include "generator/support/file_read.h"
#include "generator/frontend/frontend.h"

namespace kiln::cli {

void cap_small_dims(const ir::Ir& ir, std::map<std::string, std::int64_t>& dims) {
  for (const auto& d : ir.dims)
    if (!dims.count(d.name)) dims[d.name] = std::min<std::int64_t>(d.default_value.value_or(kSmallDim), kSmallDim);
}

std::map<std::string, std::string> parse_defines(const std::vector<std::string>& items) {
  std::map<std::string, std::string> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw CLI::ValidationError("-D", fmt::format("'{}' is not NAME=VALUE", item));
    auto [it, inserted] = out.emplace(item.substr(0, eq), item.substr(eq + 1));
    if (!inserted)
      throw CLI::ValidationError("-D", fmt::format("{} is given twice (-D {}={} and -D {}); give each name once",
                                                   it->first, it->first, it->second, item));
  }
  return out;
}

namespace {

// Where the number's text starts: after one '+' that a digit or '.' follows (from_chars
// takes no '+'; "+-5" stays malformed).
const char* number_start(const std::string& text) {
  const bool plus = text.size() > 1 && text[0] == '+' && (std::isdigit(static_cast<unsigned char>(text[1])) || text[1] == '.');
  return text.data() + (plus ? 1 : 0);
}

// An optional sign and decimal digits: the whole text, nothing else.
bool is_integer_text(const std::string& text) {
  std::size_t i = text[0] == '-' || text[0] == '+' ? 1 : 0;
  return i < text.size() && text.find_first_not_of("0123456789", i) == std::string::npos;
}

// A const's -D value, by its spelling (the checker then matches it to the const's type):
// true/false a bool; an integer exact (any value of i64 or u64); anything else a finite
// decimal float. nan and inf are refused: no const needs one, and a typo should not pass.
ConstValue parse_const_value(const std::string& name, const std::string& text) {
  const std::string source = fmt::format("-D {}={}", name, text);
  if (text == "true" || text == "false") return ConstValue(text == "true").set_source(source);
  if (is_integer_text(text)) {
    const bool negative = text[0] == '-';
    const std::size_t digits = text[0] == '-' || text[0] == '+' ? 1 : 0;
    std::uint64_t magnitude = 0;
    auto [ptr, ec] = std::from_chars(text.data() + digits, text.data() + text.size(), magnitude);
    KILN_CHECK(ec == std::errc() && ptr == text.data() + text.size(), ArgumentError,
               "{}: the integer is out of range (at most 64 bits)", source);
    return ConstValue::integer(negative, magnitude).set_source(source);
  }
  double v = 0;
  auto [ptr, ec] = std::from_chars(number_start(text), text.data() + text.size(), v);
  KILN_CHECK(ec != std::errc::invalid_argument && ptr == text.data() + text.size(), ArgumentError,
             "{}: a const needs a number (e.g. 3 or 0.5) or true/false", source);
  KILN_CHECK(ec == std::errc() && std::isfinite(v), ArgumentError, "{}: the value must be a finite number", source);
  return ConstValue(v).set_source(source);
}

}  // namespace

Bindings bindings_for(const std::vector<std::string>& dims, const std::vector<std::string>& consts,
                      const std::map<std::string, std::string>& defines, std::map<std::string, bool>* used) {
  Bindings b;
  for (const auto& [name, text] : defines) {
    const bool is_dim = std::find(dims.begin(), dims.end(), name) != dims.end();
    const bool is_const = std::find(consts.begin(), consts.end(), name) != consts.end();
    if (!is_dim && !is_const) continue;
    if (used) (*used)[name] = true;
    if (is_dim) {
      std::int64_t v = 0;
      auto [ptr, ec] = std::from_chars(number_start(text), text.data() + text.size(), v);
      KILN_CHECK(ec == std::errc() && ptr == text.data() + text.size() && v >= 1, ArgumentError,
                 "-D {}={}: a dim needs a positive integer", name, text);
      b.dims[name] = v;
    } else {
      b.consts[name] = parse_const_value(name, text);
    }
  }
  return b;
}

void check_all_used(const std::map<std::string, std::string>& defines, const std::map<std::string, bool>& used) {
  std::vector<std::string> unused;
  for (const auto& [name, value] : defines)
    if (!used.count(name)) unused.push_back(name);
  if (!unused.empty())   // bad usage (exit 2), as a malformed -D is: the README's exit codes
    throw CLI::ValidationError("-D", fmt::format("no selected op has a dim or const named {}", fmt::join(unused, ", ")));
}

Precision parse_precision(const std::string& text) {
  if (text == "ieee") return Precision::ieee;
  if (text == "tf32") return Precision::tf32;
  if (text == "3xtf32" || text == "tf32x3") return Precision::tf32x3;
  if (text == "fp32" || text == "fp32-accurate" || text.empty()) return Precision::fp32_accurate;
  throw CLI::ValidationError("--precision", fmt::format("'{}' is not one of ieee, tf32, 3xtf32, fp32", text));
}

std::vector<ShapeLine> read_shapes(const std::string& path) {
  const std::string file = read_regular_file(path, kMaxSpecBytes, "--shapes file");
  std::vector<ShapeLine> out;
  std::size_t begin = 0;
  for (int n = 1; begin < file.size(); ++n) {
    // A line ends at \n, \r\n or a lone \r.
    std::size_t end = file.find_first_of("\r\n", begin);
    if (end == std::string::npos) end = file.size();
    std::string text = file.substr(begin, end - begin);
    begin = end + (file.compare(end, 2, "\r\n") == 0 ? 2 : 1);
    if (auto hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    ShapeLine line;
    line.line = n;
    if (!(words >> line.op)) continue;
    std::vector<std::string> items;
    for (std::string w; words >> w;) items.push_back(w);
    try {
      line.values = parse_defines(items);
    } catch (const CLI::ValidationError& e) {
      throw ArgumentError(fmt::format("{}:{}: {}", path, n, e.what()));
    }
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace kiln::cli
