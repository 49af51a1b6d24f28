#include "runtime/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace kiln {

namespace {

LogLevel level_from_env() {
  const char* env = std::getenv("KILN_LOG");
  return env == nullptr ? LogLevel::warning : parse_log_level(env).value_or(LogLevel::warning);
}

std::atomic<int>& level_slot() {
  static std::atomic<int> slot{static_cast<int>(level_from_env())};
  return slot;
}

void emit(LogLevel at, const char* tag, const std::string& message) {
  if (static_cast<int>(at) > level_slot().load(std::memory_order_relaxed)) return;
  // One fprintf per line so lines from several threads do not interleave.
  std::fprintf(stderr, "kiln: %s: %s\n", tag, message.c_str());
}

}  // namespace

std::optional<LogLevel> parse_log_level(std::string_view v) {
  if (v == "quiet" || v == "off" || v == "none") return LogLevel::quiet;
  if (v == "warning" || v == "warn") return LogLevel::warning;
  if (v == "info") return LogLevel::info;
  if (v == "debug") return LogLevel::debug;
  return std::nullopt;
}

LogLevel log_level() { return static_cast<LogLevel>(level_slot().load()); }
void set_log_level(LogLevel level) { level_slot().store(static_cast<int>(level)); }

void log_warning(const std::string& message) { emit(LogLevel::warning, "warning", message); }
void log_spec_warning(const std::string& rendered) {
  if (static_cast<int>(LogLevel::warning) > level_slot().load(std::memory_order_relaxed)) return;
  const bool ends_line = !rendered.empty() && rendered.back() == '\n';
  std::fprintf(stderr, "%s%s", rendered.c_str(), ends_line ? "" : "\n");
}
void log_info(const std::string& message) { emit(LogLevel::info, "info", message); }
void log_debug(const std::string& message) { emit(LogLevel::debug, "debug", message); }

}  // namespace kiln
