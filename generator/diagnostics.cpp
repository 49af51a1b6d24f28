#include "generator/diagnostics.h"

#include <fmt/format.h>

#include <algorithm>

#include "generator/assert.h"

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

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  // A typo is a few edits in a name of ordinary length: allow 1 edit up to 4 characters,
  // 2 up to 8, then 3; never as many edits as the name has characters.
  constexpr std::size_t kMaxLength = 64;
  if (name.empty() || name.size() > kMaxLength) return "";
  const std::size_t allowed = std::min<std::size_t>(name.size() <= 4 ? 1 : name.size() <= 8 ? 2 : 3, name.size() - 1);
  std::vector<std::string> sorted(candidates);
  std::sort(sorted.begin(), sorted.end());
  const std::string* best = nullptr;
  std::size_t best_distance = allowed + 1;
  for (const auto& candidate : sorted) {
    if (candidate == name || candidate.size() > kMaxLength) continue;
    const std::size_t diff = candidate.size() > name.size() ? candidate.size() - name.size() : name.size() - candidate.size();
    if (diff >= best_distance) continue;
    // Optimal string alignment distance (Damerau-Levenshtein without repeated edits).
    const std::size_t n = name.size(), m = candidate.size();
    std::vector<std::vector<std::size_t>> dist(n + 1, std::vector<std::size_t>(m + 1));
    for (std::size_t a = 0; a <= n; ++a) dist[a][0] = a;
    for (std::size_t b = 0; b <= m; ++b) dist[0][b] = b;
    for (std::size_t a = 1; a <= n; ++a)
      for (std::size_t b = 1; b <= m; ++b) {
        const std::size_t cost = name[a - 1] == candidate[b - 1] ? 0 : 1;
        dist[a][b] = std::min({dist[a - 1][b] + 1, dist[a][b - 1] + 1, dist[a - 1][b - 1] + cost});
        if (a > 1 && b > 1 && name[a - 1] == candidate[b - 2] && name[a - 2] == candidate[b - 1])
          dist[a][b] = std::min(dist[a][b], dist[a - 2][b - 2] + 1);
      }
    if (dist[n][m] < best_distance) {
      best_distance = dist[n][m];
      best = &candidate;
    }
  }
  return best ? fmt::format("; did you mean '{}'?", *best) : "";
}

void Diagnostics::error(ir::SourceLoc loc, std::string message) {
  if (too_many()) return;
  ++error_count_;
  list_.push_back({Severity::error, source_->name, loc.line, loc.column, std::move(message)});
  if (too_many())
    list_.push_back({Severity::error, source_->name, 0, 0,
                     fmt::format("too many errors ({}); stopping", kMaxErrors)});
}

void Diagnostics::warning(ir::SourceLoc loc, std::string message) {
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
