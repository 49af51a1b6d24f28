#include "runtime/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "kiln/kiln.h"

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

// set_log_handler's handler, when one is set: shared so that a line being handled keeps the
// handler alive while another thread replaces it.
std::mutex g_handler_mutex;
std::shared_ptr<const LogHandler> g_handler;

std::shared_ptr<const LogHandler> current_handler() {
  std::lock_guard<std::mutex> lock(g_handler_mutex);
  return g_handler;
}

// To the handler if there is one (message without the "kiln: tag: " prefix), else stderr.
void deliver(LogLevel at, const std::string& message, const char* stderr_prefix_tag) {
  if (auto handler = current_handler()) {
    (*handler)(static_cast<int>(at), message);
    return;
  }
  // One fprintf per line so lines from several threads do not interleave.
  if (stderr_prefix_tag != nullptr) std::fprintf(stderr, "kiln: %s: %s\n", stderr_prefix_tag, message.c_str());
  else std::fprintf(stderr, "%s%s", message.c_str(), !message.empty() && message.back() == '\n' ? "" : "\n");
}

void emit(LogLevel at, const char* tag, const std::string& message) {
  if (static_cast<int>(at) > level_slot().load(std::memory_order_relaxed)) return;
  deliver(at, message, tag);
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
  deliver(LogLevel::warning, rendered, nullptr);
}
void log_info(const std::string& message) { emit(LogLevel::info, "info", message); }
void log_debug(const std::string& message) { emit(LogLevel::debug, "debug", message); }

void set_log_handler(LogHandler handler) {
  std::lock_guard<std::mutex> lock(g_handler_mutex);
  g_handler = handler ? std::make_shared<const LogHandler>(std::move(handler)) : nullptr;
}

bool set_log_level_name(std::string_view name) {
  const auto level = parse_log_level(name);
  if (level) set_log_level(*level);
  return level.has_value();
}

bool warn_once_per_path(const std::string& path) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard lock(mutex);
  return warned.insert(path).second;
}

}  // namespace kiln
