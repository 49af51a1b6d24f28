// [Note: the disk cache key and file format]
//
// Key. A cubin is a pure function of what NVRTC is given and of NVRTC itself, so
// the key is XXH3-128 over, each field length-prefixed:
//   "kiln-cubin", kCacheFormatVersion  -- bumping it orphans every old entry
//   the generated source               -- covers spec, bindings, plan, precision
//   the template library digest        -- the headers the source includes
//   compiler_id()                      -- NVRTC version and build: a new NVRTC
//                                         may generate different code
//   arch                               -- sm_90 and sm_90a cubins differ
//   the compile options                -- e.g. -D flags, -std
// and never on compiler output (a key must be computable before compiling). The
// machine-specific --include-path is not an option input: the headers it points
// at belong to the NVRTC build already in compiler_id(). A runtime without NVRTC
// does not know compiler_id(); the directory therefore records every id that
// wrote into it (v1/compilers, one per line) and the runtime tries each.
//
// Layout. <dir>/v1/<arch>/<ab>/<key>.cubin, ab = the key's first two hex digits
// (keeps directories small), <dir>/v1/compilers. The metadata travels inside the
// entry file, not in a sidecar, so one rename publishes cubin and metadata
// together; `kiln cache ls` prints it.
//
// Entry file, all integers little-endian:
//   offset  size  field
//        0     8  magic "KILNCUBN"
//        8     4  format version (kCacheFormatVersion)
//       12     4  key length K (32)
//       16     K  key (hex)
//     16+K     8  payload length P
//     24+K     8  XXH64(payload, seed 0)
//     32+K     P  payload:  u32 metadata length M, M bytes metadata JSON,
//                           then the cubin (P - 4 - M bytes)
// A file whose magic, version or key differ, whose length is not exactly
// 32+K+P, whose checksum fails or whose metadata does not parse is a miss (and
// counted as rejected); it is never loaded, and the next store replaces it.
//
// Concurrency. Writers create a unique temp file in the entry's directory and
// rename() it over the entry: readers see a whole old or whole new file, and N
// processes storing one key leave one valid entry (identical content anyway).
#include "runtime/disk_cache.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/binary_io.h"
#include "runtime/hash.h"
#include "runtime/log.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMagic = "KILNCUBN";
constexpr const char* kVersionDir = "v1";

// One warning per process, however many DiskCache objects fail.
std::atomic<bool> g_warned_unwritable{false};

std::string memory_key(const std::string& key, const std::string& arch) { return arch + "/" + key; }

}  // namespace

std::string cache_key(const std::string& source, const std::string& templates_digest,
                      const std::string& compiler_id, const std::string& arch,
                      const std::vector<std::string>& options) {
  KeyHasher h;
  h.field("kiln-cubin").field(std::uint64_t{kCacheFormatVersion});
  h.field(source).field(templates_digest).field(compiler_id).field(arch);
  h.field(std::uint64_t{options.size()});
  for (const auto& o : options) h.field(o);
  return h.digest();
}

std::string default_cache_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
  };
  if (auto d = env("KILN_CACHE_DIR"); !d.empty()) return d;
  if (auto d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/kiln";
  if (auto d = env("HOME"); !d.empty()) return d + "/.cache/kiln";
  return ".kiln-cache";
}

// ---------------------------------------------------------------- metadata
std::string metadata_to_json(const CacheMetadata& m) {
  nlohmann::ordered_json j;
  j["kernels"] = m.kernels;
  j["template"] = m.template_name;
  j["grid"] = {m.grid.x, m.grid.y, m.grid.z};
  j["block"] = {m.block.x, m.block.y, m.block.z};
  j["shared_bytes"] = m.shared_bytes;
  j["registers"] = m.registers;
  j["spill_stores"] = m.spill_stores;
  j["spill_loads"] = m.spill_loads;
  j["stack_bytes"] = m.stack_bytes;
  j["source_hash"] = m.source_hash;
  j["arch"] = m.arch;
  j["compiler_id"] = m.compiler_id;
  j["op"] = m.op_name;
  j["bindings"] = m.bindings;
  j["created_unix"] = m.created_unix;
  return j.dump();
}

bool operator==(const CacheMetadata& a, const CacheMetadata& b) {
  return metadata_to_json(a) == metadata_to_json(b);   // the JSON names every field once
}

CacheMetadata metadata_from_json(std::string_view text) {
  try {
    auto j = nlohmann::json::parse(text);
    CacheMetadata m;
    m.kernels = j.at("kernels").get<std::vector<std::string>>();
    m.template_name = j.at("template").get<std::string>();
    auto dim = [&](const char* name) {
      auto v = j.at(name).get<std::vector<unsigned>>();
      if (v.size() != 3) throw Error(fmt::format("{} has {} components, not 3", name, v.size()));
      return Dim3{v[0], v[1], v[2]};
    };
    m.grid = dim("grid");
    m.block = dim("block");
    m.shared_bytes = j.at("shared_bytes").get<unsigned>();
    m.registers = j.at("registers").get<int>();
    m.spill_stores = j.at("spill_stores").get<int>();
    m.spill_loads = j.at("spill_loads").get<int>();
    m.stack_bytes = j.at("stack_bytes").get<int>();
    m.source_hash = j.at("source_hash").get<std::string>();
    m.arch = j.at("arch").get<std::string>();
    m.compiler_id = j.at("compiler_id").get<std::string>();
    m.op_name = j.at("op").get<std::string>();
    m.bindings = j.at("bindings").get<std::string>();
    m.created_unix = j.at("created_unix").get<std::int64_t>();
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("kiln: bad cache metadata: {}", e.what()));
  }
}

// ---------------------------------------------------------------- entry files
std::vector<char> encode_cache_entry(const std::string& key, const CacheEntry& entry) {
  std::string meta = metadata_to_json(entry.metadata);
  ByteWriter payload;
  payload.str(meta);
  payload.bytes(entry.cubin);
  ByteWriter out;
  out.bytes(kMagic);
  out.u32(kCacheFormatVersion);
  out.str(key);
  out.u64(payload.size());
  out.u64(checksum64(payload.buffer().data(), payload.size()));
  out.bytes(payload.buffer());
  return std::move(out.buffer());
}

std::optional<CacheEntry> decode_cache_entry(const std::vector<char>& bytes, const std::string& expected_key,
                                             std::string* why, std::string* key_out) {
  auto reject = [&](const std::string& reason) -> std::optional<CacheEntry> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  ByteReader in(bytes.data(), bytes.size());
  if (in.bytes(kMagic.size()) != kMagic) return reject("not a kiln cache entry (bad magic)");
  std::uint32_t version = in.u32();
  if (!in.ok()) return reject("truncated header");
  if (version != kCacheFormatVersion) return reject(fmt::format("format version {} (expected {})", version, kCacheFormatVersion));
  std::string key = in.str();
  std::uint64_t length = in.u64();
  std::uint64_t checksum = in.u64();
  if (!in.ok()) return reject("truncated header");
  if (!expected_key.empty() && key != expected_key) return reject(fmt::format("holds key {}, not {}", key, expected_key));
  if (key_out != nullptr) *key_out = key;
  if (in.remaining() != length)
    return reject(fmt::format("payload is {} bytes, header says {} (truncated or padded)", in.remaining(), length));
  std::string_view payload = in.bytes(length);
  if (checksum64(payload.data(), payload.size()) != checksum) return reject("checksum mismatch (corrupted)");
  ByteReader body(payload.data(), payload.size());
  std::string meta = body.str();
  if (!body.ok()) return reject("truncated metadata");
  CacheEntry entry;
  try {
    entry.metadata = metadata_from_json(meta);
  } catch (const Error& e) {
    return reject(e.what());
  }
  std::string_view cubin = body.bytes(body.remaining());
  entry.cubin.assign(cubin.begin(), cubin.end());
  return entry;
}

// ---------------------------------------------------------------- DiskCache
DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {}

std::string DiskCache::entry_path(const std::string& key, const std::string& arch) const {
  return fmt::format("{}/{}/{}/{}/{}.cubin", dir_, kVersionDir, arch, key.substr(0, 2), key);
}

std::optional<CacheEntry> DiskCache::load(const std::string& key, const std::string& arch) {
  if (memory_only_) {
    std::lock_guard lock(mutex_);
    if (auto it = memory_.find(memory_key(key, arch)); it != memory_.end()) {
      ++hits_;
      return it->second;
    }
  }
  auto bytes = read_file_bytes(entry_path(key, arch));
  if (!bytes) {
    ++misses_;
    return std::nullopt;
  }
  std::string why;
  auto entry = decode_cache_entry(*bytes, key, &why);
  if (!entry) {
    ++rejected_;
    ++misses_;
    log_debug(fmt::format("ignoring cache entry {}: {}", entry_path(key, arch), why));
    return std::nullopt;
  }
  ++hits_;
  return entry;
}

bool DiskCache::store(const std::string& key, const std::string& arch, const CacheEntry& entry) noexcept {
  try {
    if (!memory_only_) {
      std::string error;
      std::vector<char> bytes;
      if (entry.metadata.created_unix == 0) {   // stamp entries the caller did not date
        CacheEntry dated = entry;
        dated.metadata.created_unix =
            std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
        bytes = encode_cache_entry(key, dated);
      } else {
        bytes = encode_cache_entry(key, entry);
      }
      bool ok = write_file_atomic(entry_path(key, arch), bytes.data(), bytes.size(), &error) &&
                record_compiler(entry.metadata.compiler_id, &error);
      if (ok) {
        ++stores_;
        return true;
      }
      ++store_failures_;
      memory_only_ = true;
      if (!g_warned_unwritable.exchange(true))
        log_warning(fmt::format("cache directory {} is not writable ({}); compiled kernels are kept in memory "
                                "only. Set KILN_CACHE_DIR to a writable directory to keep them.",
                                dir_, error));
    }
    std::lock_guard lock(mutex_);
    memory_[memory_key(key, arch)] = entry;
    return false;
  } catch (...) {
    return false;   // e.g. bad_alloc: the cache is an optimization, never a failure
  }
}

bool DiskCache::record_compiler(const std::string& id, std::string* error) {
  if (id.empty()) return true;
  std::string path = dir_ + "/" + kVersionDir + "/compilers";
  {
    // Recorded once is not enough: the cache directory may have been removed
    // since, and an entry without its compiler id is invisible to a runtime
    // that has no NVRTC. One stat per store (after a compile) is cheap.
    std::error_code ec;
    std::lock_guard lock(mutex_);
    if (recorded_compilers_.count(id) != 0 && fs::exists(path, ec)) return true;
  }
  // Read-modify-rename: two processes adding different ids at once may drop one,
  // so re-read after writing and retry until ours is there.
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto ids = known_compilers();
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
      std::lock_guard lock(mutex_);
      recorded_compilers_.insert(id);
      return true;
    }
    std::string text;
    for (const auto& known : ids) text += known + "\n";
    text += id + "\n";
    if (!write_file_atomic(path, text.data(), text.size(), error)) return false;
  }
  if (error != nullptr) *error = "could not record the compiler id in " + path;
  return false;
}

std::vector<std::string> DiskCache::known_compilers() const {
  std::vector<std::string> ids;
  std::ifstream in(dir_ + "/" + kVersionDir + "/compilers");
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && std::find(ids.begin(), ids.end(), line) == ids.end()) ids.push_back(line);
  return ids;
}

CacheCounters DiskCache::counters() const {
  return {hits_.load(), misses_.load(), stores_.load(), rejected_.load(), store_failures_.load()};
}

std::vector<CacheListing> DiskCache::ls() const {
  std::vector<CacheListing> out;
  std::error_code ec;
  fs::path root = fs::path(dir_) / kVersionDir;
  if (!fs::is_directory(root, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const fs::path& p = it->path();
    std::string name = p.filename().string();
    if (p.extension() != ".cubin" || is_temp_file_name(name)) continue;
    CacheListing item;
    item.path = p.string();
    item.arch = p.parent_path().parent_path().filename().string();
    item.file_bytes = it->file_size(ec);
    std::string expected = p.stem().string();
    auto bytes = read_file_bytes(item.path);
    if (!bytes) {
      item.problem = "unreadable";
    } else if (auto entry = decode_cache_entry(*bytes, expected, &item.problem)) {
      item.valid = true;
      item.key = expected;
      item.metadata = std::move(entry->metadata);
    }
    if (item.key.empty()) item.key = expected;
    out.push_back(std::move(item));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return std::tie(a.arch, a.key) < std::tie(b.arch, b.key); });
  return out;
}

CacheStats DiskCache::stats() const {
  CacheStats s;
  for (const auto& item : ls()) {
    if (!item.valid) {
      ++s.invalid;
      continue;
    }
    ++s.entries;
    s.bytes += item.file_bytes;
    auto& [count, bytes] = s.per_arch[item.arch];
    ++count;
    bytes += item.file_bytes;
  }
  std::error_code ec;
  fs::path root = fs::path(dir_) / kVersionDir;
  if (fs::is_directory(root, ec))
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (is_temp_file_name(it->path().filename().string())) ++s.temp_files;
  return s;
}

std::vector<CacheListing> DiskCache::verify(bool remove_bad) {
  std::vector<CacheListing> bad;
  for (auto& item : ls()) {
    if (item.valid) continue;
    if (remove_bad) {
      std::error_code ec;
      fs::remove(item.path, ec);
    }
    bad.push_back(std::move(item));
  }
  return bad;
}

std::uint64_t DiskCache::clear() {
  std::error_code ec;
  fs::path root = fs::path(dir_) / kVersionDir;
  std::uint64_t removed = 0;
  if (!fs::is_directory(root, ec)) return 0;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) ++removed;
  fs::remove_all(root, ec);
  std::lock_guard lock(mutex_);
  memory_.clear();
  recorded_compilers_.clear();
  return removed;
}

}  // namespace kiln
