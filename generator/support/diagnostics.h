// Located messages about a spec: `file:line:col: error: message`, the source
// line, and a caret under the column.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "generator/support/source.h"

namespace kiln {

enum class Severity : std::uint8_t { error, warning };

struct Diagnostic {
  Severity severity = Severity::error;
  std::string file;
  int line = 0;      // 1-based; 0 = no location
  int column = 0;    // 1-based byte column
  std::string message;
};

// The three-line form. Bytes that would garble a terminal (control bytes,
// invalid UTF-8) are shown as '?' in the echoed line; tabs are kept so the
// caret lines up.
std::string render(const Diagnostic& diagnostic, const SourceFile* source);

// Collects diagnostics for one file. Past kMaxErrors errors further ones are
// dropped (a 10 MB file of garbage must not produce 10 MB of messages).
class Diagnostics {
 public:
  static constexpr int kMaxErrors = 50;

  explicit Diagnostics(std::shared_ptr<const SourceFile> source) : source_(std::move(source)) {}

  void error(SourceLoc loc, std::string message);
  void warning(SourceLoc loc, std::string message);
  bool has_errors() const { return error_count_ > 0; }
  bool too_many() const { return error_count_ >= kMaxErrors; }
  int error_count() const { return error_count_; }
  const std::vector<Diagnostic>& all() const { return list_; }
  const SourceFile& source() const { return *source_; }

  std::vector<std::string> rendered_warnings() const;
  // Throws kiln::SpecError holding every diagnostic rendered (warnings too),
  // located at the first error. Only call when has_errors().
  [[noreturn]] void throw_errors() const;

 private:
  std::shared_ptr<const SourceFile> source_;
  std::vector<Diagnostic> list_;
  int error_count_ = 0;
};

// Throws a SpecError for these diagnostics (at least one an error).
[[noreturn]] void throw_spec_error(const std::vector<Diagnostic>& diagnostics, const SourceFile* source);

// Did-you-mean for an unknown name: "; did you mean 'softmax'?" naming the candidate
// closest to `name` (edit distance, an adjacent swap counting one), or "" when none is
// close enough to be a likely typo. Ties go to the first candidate in sorted order.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace kiln
