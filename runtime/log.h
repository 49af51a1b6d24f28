// kiln's tiny logger: every diagnostic kiln prints (outside the CLI's own output)
// goes through here so that KILN_LOG controls all of it in one place.
//   KILN_LOG=quiet  nothing (warnings silenced too)
//   (unset)/warn    warnings only
//   info            warnings and info
//   debug           everything
// Lines are "kiln: warning: ...", "kiln: info: ...", "kiln: debug: ..." on stderr.
#pragma once

#include <string>

namespace kiln {

enum class LogLevel { quiet = 0, warning = 1, info = 2, debug = 3 };

// The level from KILN_LOG, read once per process (set_log_level overrides it).
LogLevel log_level();
void set_log_level(LogLevel level);

void log_warning(const std::string& message);
void log_info(const std::string& message);
void log_debug(const std::string& message);

}  // namespace kiln
