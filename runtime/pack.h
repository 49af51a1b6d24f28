// The .kilnpack bundle: every cubin `kiln build -o FILE.kilnpack` made, in one
// file, for deployments without NVRTC (Runtime::preload). Keys are the disk
// cache's keys (cache_key()); the pack records the compiler id that produced
// them, so a runtime that cannot load NVRTC forms its candidate keys with it.
//
//   PackWriter w(compiler_id());
//   w.add(key, "sm_90", entry);  ...;  w.write("kernels.kilnpack");
//   Pack pack = Pack::open("kernels.kilnpack");   // kiln::ArgumentError if corrupt
//   if (const CacheEntry* e = pack.find(key)) load_module(e->cubin);
//
// File format (little-endian), validated completely by Pack::open:
//   magic "KILNPACK" (8) | u32 version (2) | str compiler_id | tuned section | u32 entry count |
//   u64 index length L | u64 XXH64(index) | index (L bytes) | blobs
// where the tuned section (version 2; version 1 packs have none and still load) is
//   u64 length T | u64 XXH64(section) | section (T bytes) = u32 count | (str name | str text)...
// one record per tuned pick the build planned with: the .tune file's name and text
// ([Note: the tuned store] in runtime/tuner.cpp), so a runtime that preloads the pack plans
// the same configs, whose cubins the pack holds.
// where str = u32 length + bytes, and each index record is
//   str key | str arch | str metadata JSON | u64 blob offset | u64 blob length | u64 XXH64(blob)
// with blob offsets relative to the start of the blob region, which must end
// exactly at the end of the file. Op name and bindings live in the metadata.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/disk_cache.h"

namespace kiln {

inline constexpr std::uint32_t kPackFormatVersion = 2;
// What names a pack rather than a cache directory (kiln build -o, kiln cache --dir).
inline constexpr const char* kPackExtension = ".kilnpack";

struct PackItem {
  std::string key;
  std::string arch;
  std::uint64_t cubin_bytes = 0;
  CacheMetadata metadata;   // op_name, bindings, kernels, geometry, ...
};

class PackWriter {
 public:
  explicit PackWriter(std::string compiler_id);
  // A second add of the same key replaces the first (the same inputs gave it).
  void add(const std::string& key, const std::string& arch, const CacheEntry& entry);
  // A tuned pick's file (name "<hash>.tune", its text).
  void add_tuned(const std::string& name, const std::string& text) { tuned_[name] = text; }
  std::size_t size() const { return entries_.size(); }
  // Atomically (temp file + rename); throws kiln::Error naming the file.
  void write(const std::string& path) const;

 private:
  std::string compiler_id_;
  std::map<std::string, std::pair<std::string, CacheEntry>> entries_;   // key -> (arch, entry), sorted: stable files
  std::map<std::string, std::string> tuned_;
};

class Pack {
 public:
  // Reads and checks the whole file (magic, version, index and blob checksums,
  // bounds); throws kiln::ArgumentError "kiln: <path>: <what is wrong>" for a
  // missing, non-regular, oversized (kMaxPackBytes) or damaged file, IoError
  // when reading fails.
  static Pack open(const std::string& path);
  // The same checks on a pack's bytes in memory (open() reads the file, then parses);
  // `path` only names it in errors. (The fuzzer feeds it bytes.)
  static Pack parse(const std::string& bytes, const std::string& path);

  const std::string& path() const { return path_; }
  const std::string& compiler_id() const { return compiler_id_; }
  std::size_t size() const { return items_.size(); }

  // nullptr when the pack has no entry for key.
  const CacheEntry* find(const std::string& key) const;
  // Listing in key order.
  const std::vector<PackItem>& entries() const { return items_; }
  // The tuned picks' files, by name ("<hash>.tune").
  const std::map<std::string, std::string>& tuned() const { return tuned_; }
  // "op (bindings) arch" per entry, sorted, at most max_lines then "... and N more":
  // for an error saying what the pack holds when a wanted kernel is missing.
  std::string describe_contents(std::size_t max_lines = 20) const;

 private:
  std::string path_;
  std::string compiler_id_;
  std::vector<PackItem> items_;
  std::map<std::string, CacheEntry> by_key_;
  std::map<std::string, std::string> tuned_;
};

}  // namespace kiln
