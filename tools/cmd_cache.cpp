// `kiln cache ls|stats|verify|clear [--dir D]`: look after a cubin cache
// directory (default: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else
// ~/.cache/kiln). `verify` exits 1 when it finds bad entries (`--fix` removes them).
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "runtime/disk_cache.h"
#include "tools/commands.h"

namespace kiln::cli {

namespace {

std::string human_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
}

struct CacheArgs {
  std::string dir;
  bool fix = false;
  std::string resolved() const { return dir.empty() ? default_cache_dir() : dir; }
};

int run_ls(const CacheArgs& args) {
  DiskCache cache(args.resolved());
  auto listing = cache.ls();
  if (listing.empty()) {
    fmt::print("no entries in {}\n", cache.dir());
    return 0;
  }
  for (const auto& item : listing) {
    if (!item.valid) {
      fmt::print("{:<6}  {}  {:>10}  INVALID: {}\n", item.arch, item.key, human_bytes(item.file_bytes), item.problem);
      continue;
    }
    const auto& m = item.metadata;
    fmt::print("{:<6}  {}  {:>10}  {} ({})  {}  grid={}x{}x{} block={}x{}x{} smem={} regs={} spills={}/{}\n",
               item.arch, item.key, human_bytes(item.file_bytes), m.op_name, m.bindings, m.template_name, m.grid.x,
               m.grid.y, m.grid.z, m.block.x, m.block.y, m.block.z, m.shared_bytes, m.registers, m.spill_stores,
               m.spill_loads);
  }
  return 0;
}

int run_stats(const CacheArgs& args) {
  DiskCache cache(args.resolved());
  CacheStats s = cache.stats();
  fmt::print("cache: {}\n", cache.dir());
  fmt::print("entries: {} ({})\n", s.entries, human_bytes(s.bytes));
  for (const auto& [arch, count_bytes] : s.per_arch)
    fmt::print("  {}: {} ({})\n", arch, count_bytes.first, human_bytes(count_bytes.second));
  fmt::print("invalid: {}\n", s.invalid);
  fmt::print("temporary files: {}\n", s.temp_files);
  for (const auto& id : cache.known_compilers()) fmt::print("compiler: {}\n", id);
  return 0;
}

int run_verify(const CacheArgs& args) {
  DiskCache cache(args.resolved());
  std::size_t total = cache.ls().size();
  auto bad = cache.verify(args.fix);
  for (const auto& item : bad) fmt::print("bad: {}: {}{}\n", item.path, item.problem, args.fix ? " (removed)" : "");
  fmt::print("{} entries checked in {}, {} bad\n", total, cache.dir(), bad.size());
  if (!bad.empty() && !args.fix) fmt::print("run `kiln cache verify --fix` to remove them\n");
  return bad.empty() ? 0 : 1;
}

int run_clear(const CacheArgs& args) {
  DiskCache cache(args.resolved());
  std::uint64_t removed = cache.clear();
  fmt::print("removed {} files from {}\n", removed, cache.dir());
  return 0;
}

}  // namespace

void add_cache_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CacheArgs>();
  auto* cmd = app.add_subcommand("cache", "Inspect and maintain the cubin cache directory");
  cmd->require_subcommand(1);
  cmd->add_option("--dir", args->dir, "cache directory (default: $KILN_CACHE_DIR, $XDG_CACHE_HOME/kiln, ~/.cache/kiln)");

  auto add = [&](const char* name, const char* help, int (*run)(const CacheArgs&)) {
    auto* sub = cmd->add_subcommand(name, help);
    sub->fallthrough();   // `kiln cache ls --dir D` as well as `kiln cache --dir D ls`
    sub->callback([args, run, &exit_code] { exit_code = run(*args); });
    return sub;
  };
  add("ls", "List entries: arch, key, size, op, bindings, geometry, resources", run_ls);
  add("stats", "Entry count and bytes per arch", run_stats);
  auto* verify = add("verify", "Check every entry's header and checksum; exit 1 if any is bad", run_verify);
  verify->add_flag("--fix", args->fix, "remove the bad entries");
  add("clear", "Remove every entry", run_clear);
}

}  // namespace kiln::cli
