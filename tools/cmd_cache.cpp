// `kiln cache ls|stats|verify|clear [--dir D]`: look after a cubin cache
// directory (default: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else
// ~/.cache/kiln) or read a .kilnpack (`--dir FILE.kilnpack`; no GPU needed).
//
// Exit codes: 0 ok; 1 the path is wrong (`--dir` names nothing, a regular file
// that is not a .kilnpack, a directory that is not a cache), `verify` found a
// problem, a pack is damaged, or `ls`/`stats` could not read every directory;
// 4 an I/O failure. `verify --fix` removes invalid entries, non-regular files at
// entry names (an empty directory too) and temporary files older than a minute,
// and rewrites a damaged or incomplete v1/compilers from the entries; it still
// exits 1 when it found something, and leaves unreadable directories alone.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "generator/support/assert.h"
#include "kiln/kiln.h"
#include "runtime/disk_cache.h"
#include "runtime/pack.h"
#include "tools/commands.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;

std::string human_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
}

struct CacheArgs {
  std::string dir;
  bool fix = false;
};

// What --dir names: a cache directory or a pack. Anything else is an error here,
// so that a typo cannot make `verify` pass on an empty listing.
struct Target {
  std::string path;
  bool pack = false;
  bool absent = false;   // the default directory, not created yet
};

Target resolve(const CacheArgs& args) {
  const bool given = !args.dir.empty();
  Target t{given ? args.dir : default_cache_dir()};
  std::error_code ec;
  const fs::file_status st = fs::status(t.path, ec);   // stat, never open: a FIFO cannot block it
  if (st.type() == fs::file_type::not_found) {
    KILN_CHECK(!given, ArgumentError, "kiln cache: {}: no such cache directory or .kilnpack", t.path);
    t.absent = true;
    return t;
  }
  if (ec) throw IoError(fmt::format("kiln cache: cannot access {}: {}", t.path, ec.message()));
  if (fs::is_regular_file(st) && fs::path(t.path).extension() == kPackExtension) {
    t.pack = true;
    return t;
  }
  KILN_CHECK(fs::is_directory(st), ArgumentError, "kiln cache: {}: not a cache directory or .kilnpack{}", t.path,
             fs::is_regular_file(st) ? "" : fs::is_fifo(st) ? " (it is a FIFO)" : " (it is a device or socket)");
  // A cache directory holds v1/ (once anything was stored) and nothing else kiln
  // reads; a non-empty directory without it is the wrong directory.
  const fs::path v1 = fs::path(t.path) / kCacheVersionDir;
  const bool empty = fs::is_empty(t.path, ec);
  KILN_CHECK(ec || empty || fs::is_directory(fs::symlink_status(v1, ec)), ArgumentError,
             "kiln cache: {}: not a cache directory or .kilnpack (it has no {}/ folder)", t.path, kCacheVersionDir);
  return t;
}

void print_listing(const std::string& arch, const std::string& key, std::uint64_t bytes, const CacheMetadata& m) {
  fmt::print("{:<6}  {}  {:>10}  {} ({})  {}  grid={}x{}x{} block={}x{}x{} smem={} regs={} spills={}/{}\n", arch, key,
             human_bytes(bytes), m.op_name, m.bindings, m.template_name, m.grid.x, m.grid.y, m.grid.z, m.block.x,
             m.block.y, m.block.z, m.shared_bytes, m.registers, m.spill_stores, m.spill_loads);
}

// The problems that make a listing incomplete go to stderr; 1 when there were any.
int report_unreadable(const CacheScan& scan) {
  for (const auto& p : scan.problems)
    if (p.problem.find("cannot read this directory") != std::string::npos)
      std::fprintf(stderr, "kiln cache: %s: %s\n", p.path.c_str(), p.problem.c_str());
  return scan.unreadable_dirs == 0 ? 0 : 1;
}

int run_ls(const CacheArgs& args) {
  const Target t = resolve(args);
  if (t.pack) {
    Pack pack = Pack::open(t.path);
    if (pack.size() == 0) fmt::print("no entries in {}\n", t.path);
    for (const auto& item : pack.entries()) print_listing(item.arch, item.key, item.cubin_bytes, item.metadata);
    return 0;
  }
  DiskCache cache(t.path);
  CacheScan scan = cache.scan();
  if (scan.entries.empty()) fmt::print("no entries in {}\n", cache.dir());
  for (const auto& item : scan.entries) {
    if (item.valid) print_listing(item.arch, item.key, item.file_bytes, item.metadata);
    else fmt::print("{:<6}  {}  {:>10}  INVALID: {}\n", item.arch, item.key, human_bytes(item.file_bytes), item.problem);
  }
  return report_unreadable(scan);
}

int run_stats(const CacheArgs& args) {
  const Target t = resolve(args);
  if (t.pack) {
    Pack pack = Pack::open(t.path);
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> per_arch;
    std::uint64_t bytes = 0;
    for (const auto& item : pack.entries()) {
      per_arch[item.arch].first += 1;
      per_arch[item.arch].second += item.cubin_bytes;
      bytes += item.cubin_bytes;
    }
    fmt::print("pack: {}\n", t.path);
    fmt::print("entries: {} ({} of cubins)\n", pack.size(), human_bytes(bytes));
    for (const auto& [arch, count_bytes] : per_arch)
      fmt::print("  {}: {} ({})\n", arch, count_bytes.first, human_bytes(count_bytes.second));
    fmt::print("compiler: {}\n", pack.compiler_id());
    return 0;
  }
  DiskCache cache(t.path);
  CacheScan scan = cache.scan();
  CacheStats s = DiskCache::summarize(scan);
  fmt::print("cache: {}\n", cache.dir());
  fmt::print("entries: {} ({})\n", s.entries, human_bytes(s.bytes));
  for (const auto& [arch, count_bytes] : s.per_arch)
    fmt::print("  {}: {} ({})\n", arch, count_bytes.first, human_bytes(count_bytes.second));
  fmt::print("invalid: {}\n", s.invalid);
  fmt::print("temporary files: {}\n", s.temp_files);
  if (s.problems != 0) fmt::print("other problems: {} (run `kiln cache verify`)\n", s.problems);
  for (const auto& id : cache.known_compilers()) fmt::print("compiler: {}\n", id);
  return report_unreadable(scan);
}

int verify_pack(const CacheArgs& args, const std::string& path) {
  try {
    Pack pack = Pack::open(path);   // checks every entry's checksum and metadata
    fmt::print("{} entries checked in {}, 0 bad\n", pack.size(), path);
    return 0;
  } catch (const ArgumentError& e) {   // damaged; an I/O failure propagates (exit 4)
    fmt::print("bad: {}\n", e.what());
    fmt::print("pack {} is damaged; rebuild it with `kiln build ... -o {}`{}\n", path, path,
               args.fix ? " (--fix does not change a pack)" : "");
    return 1;
  }
}

int run_verify(const CacheArgs& args) {
  const Target t = resolve(args);
  if (t.pack) return verify_pack(args, t.path);
  DiskCache cache(t.path);
  CacheReport report = cache.verify(args.fix);
  for (const auto& p : report.problems) {
    const char* outcome = !args.fix ? ""
                          : !p.removed ? " (not fixed)"
                          : fs::path(p.path).filename() == "compilers" ? " (rewritten)"
                                                                       : " (removed)";
    fmt::print("bad: {}: {}{}\n", p.path, p.problem, outcome);
  }
  fmt::print("{} entries checked in {}, {} bad\n", report.entries_checked, cache.dir(), report.problems.size());
  if (!report.ok() && !args.fix) fmt::print("run `kiln cache verify --fix` to remove or repair them\n");
  return report.ok() ? 0 : 1;
}

int run_clear(const CacheArgs& args) {
  const Target t = resolve(args);
  KILN_CHECK(!t.pack, ArgumentError, "kiln cache clear: {} is a .kilnpack; delete the file to remove it", t.path);
  DiskCache cache(t.path);
  std::uint64_t removed = cache.clear();
  fmt::print("removed {} files from {}\n", removed, cache.dir());
  return 0;
}

}  // namespace

void add_cache_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CacheArgs>();
  auto* cmd = app.add_subcommand("cache", "Inspect and maintain the cubin cache directory, or read a .kilnpack");
  cmd->require_subcommand(1);
  cmd->add_option("--dir", args->dir,
                  "cache directory or FILE.kilnpack (default: $KILN_CACHE_DIR, $XDG_CACHE_HOME/kiln, ~/.cache/kiln)");

  auto add = [&](const char* name, const char* help, int (*run)(const CacheArgs&)) {
    auto* sub = cmd->add_subcommand(name, help);
    sub->fallthrough();   // `kiln cache ls --dir D` as well as `kiln cache --dir D ls`
    sub->callback([args, run, &exit_code] { exit_code = run(*args); });
    return sub;
  };
  add("ls", "List entries: arch, key, size, op, bindings, geometry, resources", run_ls);
  add("stats", "Entry count and bytes per arch", run_stats);
  auto* verify = add("verify",
                     "Check every entry, temporary file and v1/compilers (or every entry of a .kilnpack); exit 1 on "
                     "any problem",
                     run_verify);
  verify->add_flag("--fix",
                   args->fix,
                   "remove invalid entries and stale temporary files, rewrite a damaged v1/compilers");
  add("clear", "Remove every entry", run_clear);
}

}  // namespace kiln::cli
