#include "tools/cli_util.h"

#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "generator/assert.h"
#include "generator/ir.h"

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
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

Bindings bindings_for(const std::vector<std::string>& dims, const std::vector<std::string>& consts,
                      const std::map<std::string, std::string>& defines, std::map<std::string, bool>* used) {
  Bindings b;
  for (const auto& [name, text] : defines) {
    const bool is_dim = std::find(dims.begin(), dims.end(), name) != dims.end();
    const bool is_const = std::find(consts.begin(), consts.end(), name) != consts.end();
    if (!is_dim && !is_const) continue;
    if (used) (*used)[name] = true;
    std::size_t end = 0;
    if (is_dim) {
      long long v = 0;
      try {
        v = std::stoll(text, &end);
      } catch (const std::exception&) {
        end = 0;
      }
      KILN_CHECK(end == text.size() && v >= 1, ArgumentError, "-D {}={}: a dim needs a positive integer", name, text);
      b.dims[name] = v;
    } else if (text == "true" || text == "false") {
      b.consts[name] = text == "true" ? 1 : 0;
    } else {
      double v = 0;
      try {
        v = std::stod(text, &end);
      } catch (const std::exception&) {
        end = 0;
      }
      KILN_CHECK(end == text.size(), ArgumentError, "-D {}={}: a const needs a number or true/false", name, text);
      b.consts[name] = v;
    }
  }
  return b;
}

void check_all_used(const std::map<std::string, std::string>& defines, const std::map<std::string, bool>& used) {
  std::vector<std::string> unused;
  for (const auto& [name, value] : defines)
    if (!used.count(name)) unused.push_back(name);
  KILN_CHECK(unused.empty(), ArgumentError, "-D {}: no selected op has a dim or const of that name",
             fmt::join(unused, ", -D "));
}

Precision parse_precision(const std::string& text) {
  if (text == "ieee") return Precision::ieee;
  if (text == "tf32") return Precision::tf32;
  if (text == "3xtf32" || text == "tf32x3") return Precision::tf32x3;
  if (text == "fp32" || text == "fp32-accurate" || text.empty()) return Precision::fp32_accurate;
  throw CLI::ValidationError("--precision", fmt::format("'{}' is not one of ieee, tf32, 3xtf32, fp32", text));
}

}  // namespace kiln::cli
