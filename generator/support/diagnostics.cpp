#include "generator/support/diagnostics.h"

#include <fmt/format.h>

#include <algorithm>

#include "generator/support/assert.h"

namespace kiln {

namespace {

// Length of a valid UTF-8 sequence at s[i], 0 when invalid.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

std::string render(const Diagnostic& d, const SourceFile* source) {
  const char* severity = d.severity == Severity::error ? "error" : "warning";
  if (d.line <= 0) return fmt::format("{}: {}: {}\n", d.file, severity, d.message);
  std::string out = fmt::format("{}:{}:{}: {}: {}\n", d.file, d.line, d.column, severity, d.message);
  if (source == nullptr) return out;
  std::string_view line = source->line(d.line);
  // Very long lines (minified garbage) are cut to a window around the column, marked
  // "..." at a cut end, so a message stays readable; the caret stays under the column.
  constexpr std::size_t kMaxEcho = 200;
  const std::size_t col = static_cast<std::size_t>(d.column > 0 ? d.column - 1 : 0);
  std::size_t begin = col > kMaxEcho / 2 && line.size() > kMaxEcho ? col - kMaxEcho / 2 : 0;
  while (begin > 0 && begin < col && (static_cast<unsigned char>(line[begin]) & 0xC0) == 0x80) ++begin;   // not mid-character
  const std::size_t end = std::min(line.size(), begin + kMaxEcho);
  std::string echo = begin > 0 ? "..." : "";
  std::string caret = begin > 0 ? "   " : "";
  std::size_t i = begin;
  while (i < end) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    std::size_t n = 1;
    if (c == '\t' || (c >= 0x20 && c < 0x7F)) {
      echo += static_cast<char>(c);
    } else if (c >= 0x80 && (n = utf8_length(line, i)) > 0) {
      echo.append(line.substr(i, n));
    } else {
      n = 1;
      echo += '?';
    }
    if (i < col) caret += c == '\t' ? '\t' : ' ';
    i += n;
  }
  if (i < line.size()) echo += "...";
  if (col > i) caret.append(std::min(col - i, kMaxEcho), ' ');   // a column past the line's end
  out += fmt::format("{}\n{}^\n", echo, caret);
  return out;
}

namespace {

// Optimal string alignment distance (Levenshtein plus adjacent swaps), or limit + 1 once
// it must exceed `limit`: rows stop early, so a large symbol table stays cheap.
std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t limit) {
  const std::size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > limit) return limit + 1;
  std::vector<std::size_t> before(m + 1), previous(m + 1), row(m + 1);
  for (std::size_t j = 0; j <= m; ++j) previous[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    row[0] = i;
    std::size_t best = row[0];
    for (std::size_t j = 1; j <= m; ++j) {
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
      best = std::min(best, row[j]);
    }
    if (best > limit) return limit + 1;
    std::swap(before, previous);
    std::swap(previous, row);
  }
  return std::min(previous[m], limit + 1);
}

}  // namespace

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  // A typo is a few edits in a name of ordinary length: allow 1 edit up to 4 characters,
  // 2 up to 8, then 3; never as many edits as the name has characters.
  constexpr std::size_t kMaxLength = 64;
  if (name.empty() || name.size() > kMaxLength) return "";
  const std::size_t allowed = std::min<std::size_t>(name.size() <= 4 ? 1 : name.size() <= 8 ? 2 : 3, name.size() - 1);
  const std::string* best = nullptr;
  std::size_t best_distance = allowed + 1;
  for (const auto& candidate : candidates) {
    if (candidate == name || candidate.size() > kMaxLength) continue;
    const std::size_t d = edit_distance(name, candidate, best_distance);
    // The closest wins; among equals, the first in sorted order (the result does not
    // depend on the order the candidates came in).
    if (d < best_distance || (d == best_distance && best != nullptr && candidate < *best)) {
      best_distance = d;
      best = &candidate;
    }
  }
  return best ? fmt::format("; did you mean '{}'?", *best) : "";
}

void Diagnostics::error(SourceLoc loc, std::string message) {
  if (too_many()) return;
  ++error_count_;
  list_.push_back({Severity::error, source_->name, loc.line, loc.column, std::move(message)});
  if (too_many())
    list_.push_back({Severity::error, source_->name, 0, 0,
                     fmt::format("too many errors ({}); stopping", kMaxErrors)});
}

void Diagnostics::warning(SourceLoc loc, std::string message) {
  list_.push_back({Severity::warning, source_->name, loc.line, loc.column, std::move(message)});
}

std::vector<std::string> Diagnostics::rendered_warnings() const {
  std::vector<std::string> out;
  for (const auto& d : list_)
    if (d.severity == Severity::warning) out.push_back(render(d, source_.get()));
  return out;
}

void Diagnostics::throw_errors() const { throw_spec_error(list_, source_.get()); }

void throw_spec_error(const std::vector<Diagnostic>& diagnostics, const SourceFile* source) {
  const Diagnostic* first = nullptr;
  std::string text;
  for (const auto& d : diagnostics) {
    if (d.severity != Severity::error) continue;
    if (first == nullptr) first = &d;
    text += render(d, source);
  }
  KILN_ASSERT(first != nullptr, "throw_spec_error without an error");
  if (!text.empty() && text.back() == '\n') text.pop_back();
  throw SpecError(text, first->file, first->line, first->column);
}

}  // namespace kiln
