// kiln's tiny logger: every diagnostic kiln prints (outside the CLI's own output)
// goes through here so that KILN_LOG controls all of it in one place.
//   KILN_LOG=quiet  nothing (warnings silenced too; also "off", "none")
//   (unset)/warning warnings only ("warn" too): a damaged cache entry ignored,
//                   an unwritable cache directory, an override in use, ...
//   info            + one line per kernel compiled (op, bindings, kernel, arch, ms),
//                   per disk-cache or pack hit and disk-cache miss, and per
//                   damaged cache entry replaced
//   debug           + the cache key and entry path on those lines, every store,
//                   the libraries loaded
// Lines are "kiln: warning: ...", "kiln: info: ...", "kiln: debug: ..." on stderr.
// docs/api.md ("Logging") lists the lines.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kiln {

enum class LogLevel { quiet = 0, warning = 1, info = 2, debug = 3 };

// The level a KILN_LOG value names, or nullopt when it names none.
std::optional<LogLevel> parse_log_level(std::string_view text);

// The level from KILN_LOG, read once per process (set_log_level overrides it).
LogLevel log_level();
void set_log_level(LogLevel level);

void log_warning(const std::string& message);
// A diagnostic already rendered as "file:line:col: warning: ..." with its source line and
// caret: printed as it is (no "kiln: warning:" prefix) at the warning level.
void log_spec_warning(const std::string& rendered);
void log_info(const std::string& message);
void log_debug(const std::string& message);
// True the first time a path is named in this process: one warning per damaged file (cache
// entries, tuned picks), however often it is read.
bool warn_once_per_path(const std::string& path);

}  // namespace kiln
