#include "runtime/env.h"

#include <cstdlib>
#include <sstream>

#include "generator/support/assert.h"
#include "runtime/disk_cache.h"
#include "runtime/log.h"

namespace kiln {

namespace {
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}
}  // namespace

DumpFlags parse_dump_flags(const std::string& text) {
  DumpFlags flags;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty()) continue;
    if (item == "plan") flags.plan = true;
    else if (item == "source") flags.source = true;
    else if (item == "ptx") flags.ptx = true;
    else if (item == "sass") flags.sass = true;
    else if (item == "all") flags = {true, true, true, true};
    else throw ArgumentError(fmt::format("KILN_DUMP: unknown item '{}' (expected plan, source, ptx, sass or all)", item));
  }
  return flags;
}

int cache_lock_timeout_s() {
  const std::string v = env("KILN_CACHE_LOCK_TIMEOUT_S");
  if (v.empty()) return 300;
  char* end = nullptr;
  const long s = std::strtol(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0' || s < 0 || s > 86400)
    throw ArgumentError(fmt::format("KILN_CACHE_LOCK_TIMEOUT_S: expected whole seconds from 0 to 86400, got '{}'", v));
  return static_cast<int>(s);
}

Options resolve_options(Options o) {
  if (o.use_environment) {
    if (o.cache_dir.empty()) o.cache_dir = env("KILN_CACHE_DIR");
    if (o.arch.empty()) o.arch = env("KILN_ARCH");
    if (o.dump.empty()) o.dump = env("KILN_DUMP");
    if (o.dump_dir.empty()) o.dump_dir = env("KILN_DUMP_DIR");
    if (o.override_dir.empty()) o.override_dir = env("KILN_OVERRIDE_DIR");
    if (o.template_dir.empty()) o.template_dir = env("KILN_TEMPLATE_PATH");
    if (o.shapes.empty()) o.shapes = env("KILN_SHAPES");
    if (o.tuning.empty()) o.tuning = env("KILN_TUNING");
    const std::string level = env("KILN_LOG");
    if (!level.empty()) {
      if (auto parsed = parse_log_level(level)) set_log_level(*parsed);
      else log_warning(fmt::format("KILN_LOG='{}' is not one of quiet, warning, info, debug; ignored", level));
    }
  }
  // [Note: generic by default]
  // Options::shapes defaults to "generic": a dim that sizes only elementwise kernels, the rows of
  // reductions, scans and row norms, the batch of a conv or the planes of a pool (generic_dims) is a run-time
  // value, so one compile serves every size of its bucket and size class. Those are the dims whose
  // generic kernels measured within 3% of the specialized ones on the GPU (docs/language.md, "dyn",
  // lists the runs; the last gaps were a split sum over few rows, 1.31x, closed by splits per
  // launch, and a broadcast row over a dyn extent in the bucket "general", 1.052x, closed by row
  // vectors checked at launch). A matmul's dims, a pool's channels and the axes a reduction, scan
  // or row norm works along stay as the spec declares them. "declared" runs the spec's marks
  // alone (a dim without `dyn` is baked in), and "specialized" bakes every dim in.
  if (o.shapes.empty()) o.shapes = "generic";
  KILN_CHECK(o.shapes == "declared" || o.shapes == "generic" || o.shapes == "specialized", ArgumentError,
             "shapes '{}' (Options::shapes or KILN_SHAPES) is not one of declared, generic, specialized", o.shapes);
  if (o.tuning.empty()) o.tuning = "stored";
  KILN_CHECK(o.tuning == "off" || o.tuning == "stored" || o.tuning == "on-first-call", ArgumentError,
             "tuning '{}' (Options::tuning or KILN_TUNING) is not one of off, stored, on-first-call", o.tuning);
  if (o.cache_dir.empty()) o.cache_dir = default_cache_dir();
  if (o.dump_dir.empty()) o.dump_dir = "kiln_dump";
  return o;
}

std::string tuning_device_override(const Options& options) {
  return options.use_environment ? env("KILN_TUNING_DEVICE") : std::string();
}

}  // namespace kiln
