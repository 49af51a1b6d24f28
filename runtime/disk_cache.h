// The disk tier of kiln's kernel cache: cubins keyed by everything that
// determines them, shared safely by any number of processes.
//
//   std::string key = cache_key(source, templates.digest(), compiler_id(), "sm_90", compile_options("sm_90", {}));
//   DiskCache cache(default_cache_dir());
//   if (auto hit = cache.load(key, "sm_90")) use(hit->cubin, hit->metadata);
//   else cache.store(key, "sm_90", {cubin, metadata});
//
// See the [Note] at the top of disk_cache.cpp for the key and the file format.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/kiln.h"

namespace kiln {

inline constexpr std::uint32_t kCacheFormatVersion = 1;
// The folder of this format under a cache directory: <dir>/v1/sm_XX/ab/<key>.cubin.
inline constexpr const char* kCacheVersionDir = "v1";

// XXH3-128 hex of (format version, source, template digest, compiler id, arch,
// options). Never of compiler output.
std::string cache_key(const std::string& source, const std::string& templates_digest,
                      const std::string& compiler_id, const std::string& arch,
                      const std::vector<std::string>& options);

// $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln
// (else ./.kiln-cache when HOME is unset too).
std::string default_cache_dir();

// What kiln knows about a cached module besides its bytes.
struct CacheMetadata {
  std::vector<std::string> kernels;   // entry symbols in the module
  std::string template_name;          // "elementwise", ...
  Dim3 grid, block;
  unsigned shared_bytes = 0;          // dynamic shared memory per block
  int registers = -1;
  int spill_stores = -1, spill_loads = -1;
  int stack_bytes = -1;
  std::string source_hash;            // XXH3-128 of the generated source
  std::string arch;                   // "sm_90"
  std::string compiler_id;            // compiler_id() of the writer
  std::string op_name;
  std::string bindings;               // "M=1024 N=512", as the facade describes them
  std::int64_t created_unix = 0;      // seconds since the epoch; store() fills in 0
};
// Field-wise equality (Dim3 has no operator== of its own).
bool operator==(const CacheMetadata& a, const CacheMetadata& b);

std::string metadata_to_json(const CacheMetadata& m);
// Throws kiln::Error when `text` is not a metadata object.
CacheMetadata metadata_from_json(std::string_view text);

struct CacheEntry {
  std::vector<char> cubin;
  CacheMetadata metadata;
};

// Decodes one entry file's bytes. nullopt, with the reason in *why, for a
// truncated, corrupted (checksum), foreign (magic, version, key) file. An empty
// expected_key accepts any key (for listing) and returns it in *key.
std::optional<CacheEntry> decode_cache_entry(std::string_view bytes, const std::string& expected_key,
                                             std::string* why, std::string* key = nullptr);
inline std::optional<CacheEntry> decode_cache_entry(const std::vector<char>& bytes, const std::string& expected_key,
                                                    std::string* why, std::string* key = nullptr) {
  return decode_cache_entry(std::string_view(bytes.data(), bytes.size()), expected_key, why, key);
}
std::vector<char> encode_cache_entry(const std::string& key, const CacheEntry& entry);

struct CacheListing {
  std::string path;
  std::string arch;
  std::string key;
  std::uint64_t file_bytes = 0;
  bool valid = false;
  std::string problem;      // why it is not valid
  CacheMetadata metadata;   // when valid
};

// Something wrong in a cache directory that is not one entry's content: an
// unreadable directory, a stale temporary file, a damaged v1/compilers file.
struct CacheProblem {
  std::string path;
  std::string problem;
  bool removed = false;   // by verify(fix = true)
};

// One walk of <dir>/v1. The walk never stops at an error: an unreadable directory
// is a problem and its siblings are still walked.
struct CacheScan {
  std::vector<CacheListing> entries;     // every <key>.cubin name (valid or not), by arch then key
  std::vector<CacheProblem> problems;    // unreadable directories, stale temporary files, v1/compilers
  std::uint64_t temp_files = 0;          // temporary files, stale or in progress
  std::uint64_t unreadable_dirs = 0;     // of the problems: the listing is incomplete
};

struct CacheStats {
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> per_arch;   // arch -> (entries, bytes)
  std::uint64_t invalid = 0;
  std::uint64_t temp_files = 0;   // left by crashed writers, or being written
  std::uint64_t problems = 0;     // CacheScan::problems (unreadable directories, ...)
};

// What verify() found: every invalid entry and every other problem, one line each.
struct CacheReport {
  std::uint64_t entries_checked = 0;
  std::vector<CacheProblem> problems;
  bool ok() const { return problems.empty(); }
};

// A temporary file older than this is left by a killed writer (a live write takes
// milliseconds); verify reports it and verify(fix) removes it.
inline constexpr int kStaleTempSeconds = 60;

// Counters of one DiskCache object (this process).
struct CacheCounters {
  std::uint64_t hits = 0, misses = 0, stores = 0, rejected = 0, store_failures = 0;
};

class DiskCache {
 public:
  explicit DiskCache(std::string dir);
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  const std::string& dir() const { return dir_; }
  std::string entry_path(const std::string& key, const std::string& arch) const;

  // A valid entry, or nullopt (a miss) for an absent, unreadable, non-regular,
  // truncated, corrupted or foreign file, which the next store() overwrites. A
  // damaged file is reported once per path and process (a warning). `label`
  // names the kernel in the KILN_LOG=info lines ("relu (N=4) kernel kiln_relu_k0").
  std::optional<CacheEntry> load(const std::string& key, const std::string& arch, const std::string& label = "");
  // For a runtime without NVRTC, which cannot compute its own compiler id: tries
  // the key of every compiler that wrote into this directory. Their ids come from
  // v1/compilers and, when those all miss (the file deleted, damaged or
  // incomplete), from the entries' own metadata, which also repairs the file.
  std::optional<CacheEntry> load_any_compiler(const std::function<std::string(const std::string&)>& key_for,
                                              const std::string& arch, const std::string& label = "");
  // Writes atomically and records entry.metadata.compiler_id in v1/compilers.
  // Never throws. Where the directory cannot be written, keeps the entry in
  // memory instead (load() finds it), warns once per process, and stops trying
  // the disk for this object; returns false then. Where only this entry's path
  // is blocked (a directory of that name), keeps just this entry in memory.
  bool store(const std::string& key, const std::string& arch, const CacheEntry& entry) noexcept;

  // [Note: one compile per key across processes] (disk_cache.cpp). The right to compile `key`:
  // the lock file it holds is removed when it goes out of scope (after store()).
  class CompileLock {
   public:
    CompileLock() = default;
    explicit CompileLock(std::string path) : path_(std::move(path)) {}
    CompileLock(CompileLock&& other) noexcept : path_(std::exchange(other.path_, {})) {}
    CompileLock& operator=(CompileLock&& other) noexcept;
    CompileLock(const CompileLock&) = delete;
    CompileLock& operator=(const CompileLock&) = delete;
    ~CompileLock();
    bool held() const { return !path_.empty(); }

   private:
    std::string path_;
  };
  struct CompileTurn {
    std::optional<CacheEntry> entry;   // another process compiled and stored it meanwhile
    CompileLock lock;                  // else this process compiles (held when a lock file could be made)
  };
  // Called after a miss, before compiling: waits while another live process compiles the same
  // key (up to KILN_CACHE_LOCK_TIMEOUT_S), and returns its entry, or the turn to compile.
  CompileTurn await_compile_turn(const std::string& key, const std::string& arch, const std::string& label);
  bool memory_only() const { return memory_only_.load(); }

  // The compiler ids recorded in v1/compilers (lines that are not ids are skipped).
  std::vector<std::string> known_compilers() const;

  CacheCounters counters() const;

  // Maintenance (`kiln cache`). Not meant to race with writers of the same keys,
  // but harmless if it does: a removed entry is just a later miss.
  CacheScan scan() const;
  std::vector<CacheListing> ls() const { return scan().entries; }
  CacheStats stats() const;
  static CacheStats summarize(const CacheScan& scan);
  // Every problem; with fix, removes invalid entries, non-regular files at entry
  // names (an empty directory too) and stale temporary files, and rewrites
  // v1/compilers from its valid lines and the ids the valid entries name.
  // Unreadable directories are reported, never changed.
  CacheReport verify(bool fix);
  std::uint64_t clear();   // files removed

 private:
  enum class Outcome { hit, missing, damaged };
  std::optional<CacheEntry> read_entry(const std::string& key, const std::string& arch, Outcome* outcome);
  void log_lookup(bool hit, const std::string& key, const std::string& arch, const std::string& label) const;
  bool record_compiler(const std::string& id, std::string* error);
  std::vector<std::string> compilers_in_entries(const std::string& arch);

  std::string dir_;
  std::atomic<bool> memory_only_{false};
  std::atomic<bool> memory_used_{false};   // memory_ has entries
  mutable std::mutex mutex_;
  std::map<std::string, CacheEntry> memory_;   // arch/key -> entry kept off the disk
  std::set<std::string> recorded_compilers_;
  std::set<std::string> damaged_paths_;        // rejected by load(), for "replaced" on the next store
  std::map<std::string, std::vector<std::string>> entry_compilers_;   // arch -> ids, scanned once
  std::atomic<std::uint64_t> hits_{0}, misses_{0}, stores_{0}, rejected_{0}, store_failures_{0};
};

}  // namespace kiln
