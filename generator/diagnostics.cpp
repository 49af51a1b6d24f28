#include "generator/diagnostics.h"

#include <fmt/format.h>

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
  // Very long lines (minified garbage) are cut so a message stays readable.
  constexpr std::size_t kMaxEcho = 200;
  std::size_t col = static_cast<std::size_t>(d.column > 0 ? d.column - 1 : 0);
  std::size_t begin = col > kMaxEcho / 2 && line.size() > kMaxEcho ? col - kMaxEcho / 2 : 0;
  std::size_t end = std::min(line.size(), begin + kMaxEcho);
  std::string echo, caret;
  for (std::size_t i = begin; i < end;) {
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
  while (begin + caret.size() < col && caret.size() < kMaxEcho + 1) caret += ' ';
  out += fmt::format("{}\n{}^\n", echo, caret);
  return out;
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
