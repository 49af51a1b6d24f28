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
// wrote into it (v1/compilers, one per line) and the runtime tries each. That
// file is only an index: every entry's metadata names its compiler too, so when
// the file's ids all miss (deleted, damaged, or missing an id) the runtime reads
// the ids from the valid entries of the arch once per process, tries those, and
// rewrites the file. Lookup never depends on the file being intact.
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
// counted as rejected); it is never loaded, and the next store replaces it. So
// is anything at an entry's name that is not a regular file (a FIFO, a device,
// a directory): files are opened without blocking and read up to kMaxCubinBytes.
// Each damaged path is a warning once per process (KILN_LOG=info also says when
// it is replaced), never a silent recompile.
//
// Concurrency. Writers create a unique temp file in the entry's directory and
// rename() it over the entry: readers see a whole old or whole new file, and N
// processes storing one key leave one valid entry (identical content anyway).
// A writer killed between the two leaves its temp file behind; one older than
// kStaleTempSeconds is reported by `kiln cache verify` and removed by --fix.
#include "runtime/disk_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "generator/support/file_read.h"
#include "runtime/binary_io.h"
#include "runtime/env.h"
#include "runtime/hash.h"
#include "runtime/log.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMagic = "KILNCUBN";
// v1/compilers holds a few lines; anything much larger is not that file.
constexpr std::uint64_t kMaxCompilersBytes = 1 << 20;

// One warning per process, however many DiskCache objects fail.
std::atomic<bool> g_warned_unwritable{false};

std::string memory_key(const std::string& key, const std::string& arch) { return arch + "/" + key; }

std::string compilers_path(const std::string& dir) { return fmt::format("{}/{}/compilers", dir, kCacheVersionDir); }

// A compiler_id() is one printable line ("nvrtc 13.0 (libnvrtc.so.13, 109338064 bytes)").
bool is_compiler_id(std::string_view line) {
  if (line.empty() || line.size() > 512) return false;
  return std::none_of(line.begin(), line.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// v1/compilers: its ids, and what is wrong with it (empty when it is absent or intact).
struct CompilersFile {
  std::vector<std::string> ids;
  std::string problem;
};

CompilersFile read_compilers(const std::string& dir) {
  CompilersFile out;
  FileRead file = try_read_regular_file(compilers_path(dir), kMaxCompilersBytes);
  if (file.status == ReadStatus::missing) return out;
  if (!file.ok()) {
    out.problem = file.reason;
    return out;
  }
  std::size_t lines = 0, bad = 0, first_bad = 0;
  std::string_view text = file.data;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++lines;
    if (!is_compiler_id(line) || end == std::string_view::npos) {   // an unterminated line is a cut write
      if (bad++ == 0) first_bad = lines;
      continue;
    }
    if (std::find(out.ids.begin(), out.ids.end(), line) == out.ids.end()) out.ids.emplace_back(line);
  }
  if (bad != 0)
    out.problem = fmt::format("is damaged: {} of its {} lines {} not a whole compiler id (first: line {})", bad, lines,
                              bad == 1 ? "is" : "are", first_bad);
  return out;
}

bool write_compilers(const std::string& dir, const std::vector<std::string>& ids, std::string* error) {
  std::string text;
  for (const auto& id : ids) text += id + "\n";
  return write_file_atomic(compilers_path(dir), text.data(), text.size(), error);
}

// Reads one <key>.cubin name found by a walk, whatever it turns out to be.
CacheListing list_entry(const fs::path& path) {
  CacheListing item;
  item.path = path.string();
  item.arch = path.parent_path().parent_path().filename().string();
  item.key = path.stem().string();
  FileRead file = try_read_regular_file(item.path, kMaxCubinBytes);
  if (!file.ok()) {
    item.problem = file.reason;   // "is a FIFO, not a regular file", ...
    return item;
  }
  item.file_bytes = file.data.size();
  if (auto entry = decode_cache_entry(file.data, item.key, &item.problem)) {
    item.valid = true;
    item.metadata = std::move(entry->metadata);
  }
  return item;
}

// Walks `root` (a cache's v1 directory, or one arch under it) with an explicit
// stack, so that an unreadable directory is one problem and the walk goes on.
// Symbolic links to directories are not followed.
CacheScan scan_dir(const fs::path& root) {
  CacheScan scan;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(root, ec))) return scan;
  const auto now = fs::file_time_type::clock::now();
  std::vector<fs::path> pending{root};
  while (!pending.empty()) {
    const fs::path dir = std::move(pending.back());
    pending.pop_back();
    fs::directory_iterator it(dir, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      const fs::path& path = it->path();
      const std::string name = path.filename().string();
      std::error_code item_ec;
      const bool is_dir = fs::is_directory(it->symlink_status(item_ec));
      if (path.extension() == ".cubin" && !is_temp_file_name(name)) {
        scan.entries.push_back(list_entry(path));   // a directory or FIFO of that name too
      } else if (is_dir) {
        pending.push_back(path);
      } else if (is_temp_file_name(name)) {
        ++scan.temp_files;
        auto written = it->last_write_time(item_ec);
        auto age = std::chrono::duration_cast<std::chrono::seconds>(now - written).count();
        if (!item_ec && age > kStaleTempSeconds)
          scan.problems.push_back(
              {path.string(), fmt::format("stale temporary file ({} s old) left by a writer that was killed", age)});
      }
    }
    if (ec) {
      ++scan.unreadable_dirs;
      scan.problems.push_back({dir.string(), fmt::format("cannot read this directory ({}); the entries in it are not "
                                                         "checked",
                                                         ec.message())});
      ec.clear();
    }
  }
  std::sort(scan.entries.begin(), scan.entries.end(),
            [](const auto& a, const auto& b) { return std::tie(a.arch, a.key, a.path) < std::tie(b.arch, b.key, b.path); });
  return scan;
}

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

std::optional<CacheEntry> decode_cache_entry(std::string_view bytes, const std::string& expected_key,
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
  return fmt::format("{}/{}/{}/{}/{}.cubin", dir_, kCacheVersionDir, arch, key.substr(0, 2), key);
}

std::optional<CacheEntry> DiskCache::read_entry(const std::string& key, const std::string& arch, Outcome* outcome) {
  if (memory_used_) {
    std::lock_guard lock(mutex_);
    if (auto it = memory_.find(memory_key(key, arch)); it != memory_.end()) {
      *outcome = Outcome::hit;
      return it->second;
    }
  }
  const std::string path = entry_path(key, arch);
  FileRead file = try_read_regular_file(path, kMaxCubinBytes);
  if (file.status == ReadStatus::missing) {
    *outcome = Outcome::missing;
    return std::nullopt;
  }
  std::string why = file.reason;
  std::optional<CacheEntry> entry;
  if (file.ok()) entry = decode_cache_entry(file.data, key, &why);
  if (entry) {
    *outcome = Outcome::hit;
    return entry;
  }
  *outcome = Outcome::damaged;
  ++rejected_;
  {
    std::lock_guard lock(mutex_);
    damaged_paths_.insert(path);
  }
  if (warn_once_per_path(path))
    log_warning(fmt::format("ignoring the damaged cache entry {}: {}; the kernel is compiled again and the entry "
                            "replaced (`kiln cache verify` checks the whole directory)",
                            path, why));
  return std::nullopt;
}

void DiskCache::log_lookup(bool hit, const std::string& key, const std::string& arch, const std::string& label) const {
  if (log_level() < LogLevel::info) return;
  std::string what = label.empty() ? "key " + key : label;
  std::string message = fmt::format("disk cache {}: {} for {}", hit ? "hit" : "miss", what, arch);
  // An empty key: a runtime without NVRTC found no compiler id to form one with.
  if (log_level() >= LogLevel::debug && !key.empty()) message += fmt::format(" [key {}, {}]", key, entry_path(key, arch));
  log_info(message);
}

std::optional<CacheEntry> DiskCache::load(const std::string& key, const std::string& arch, const std::string& label) {
  Outcome outcome;
  auto entry = read_entry(key, arch, &outcome);
  ++(entry ? hits_ : misses_);
  log_lookup(entry.has_value(), key, arch, label);
  return entry;
}

std::optional<CacheEntry> DiskCache::load_any_compiler(const std::function<std::string(const std::string&)>& key_for,
                                                       const std::string& arch, const std::string& label) {
  std::vector<std::string> tried = known_compilers();
  std::string last_key;
  auto attempt = [&](const std::string& id) -> std::optional<CacheEntry> {
    last_key = key_for(id);
    Outcome outcome;
    return read_entry(last_key, arch, &outcome);
  };
  std::optional<CacheEntry> entry;
  for (const auto& id : tried)
    if ((entry = attempt(id))) break;
  if (!entry) {
    // v1/compilers missed: the entries name their compilers too.
    for (const auto& id : compilers_in_entries(arch)) {
      if (std::find(tried.begin(), tried.end(), id) != tried.end()) continue;
      if ((entry = attempt(id))) {
        std::string error;
        if (!record_compiler(id, &error))   // a read-only deployment cannot repair it, and need not
          log_debug(fmt::format("could not repair {}/{}/compilers: {}", dir_, kCacheVersionDir, error));
        break;
      }
    }
  }
  ++(entry ? hits_ : misses_);
  log_lookup(entry.has_value(), last_key, arch, label);
  return entry;
}

std::vector<std::string> DiskCache::compilers_in_entries(const std::string& arch) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = entry_compilers_.find(arch); it != entry_compilers_.end()) return it->second;
  }
  // Once per arch and object: a runtime without NVRTC that misses keeps missing
  // cheaply. Valid entries only, so a damaged one cannot name a bogus id.
  std::set<std::string> ids;
  for (const auto& item : scan_dir(fs::path(dir_) / kCacheVersionDir / arch).entries)
    if (item.valid) ids.insert(item.metadata.compiler_id);
  std::vector<std::string> out(ids.begin(), ids.end());
  std::lock_guard lock(mutex_);
  entry_compilers_[arch] = out;
  return out;
}

bool DiskCache::store(const std::string& key, const std::string& arch, const CacheEntry& entry) noexcept {
  try {
    const std::string path = entry_path(key, arch);
    std::error_code ec;
    // A directory where this entry belongs blocks only this entry, not the cache.
    const bool blocked = fs::is_directory(fs::symlink_status(path, ec));
    if (!memory_only_ && !blocked) {
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
      bool ok = write_file_atomic(path, bytes.data(), bytes.size(), &error) &&
                record_compiler(entry.metadata.compiler_id, &error);
      if (ok) {
        ++stores_;
        bool replaced = false;
        {
          std::lock_guard lock(mutex_);
          replaced = damaged_paths_.erase(path) != 0;
        }
        if (replaced) log_info(fmt::format("replaced the damaged cache entry {}", path));
        else log_debug(fmt::format("stored cache entry {}", path));
        return true;
      }
      ++store_failures_;
      memory_only_ = true;
      if (!g_warned_unwritable.exchange(true))
        log_warning(fmt::format("cache directory {} is not writable ({}); compiled kernels are kept in memory "
                                "only. Set KILN_CACHE_DIR to a writable directory to keep them.",
                                dir_, error));
    } else if (blocked) {
      ++store_failures_;
      if (warn_once_per_path(path))
        log_warning(fmt::format("cache entry {} is a directory, so the kernel is kept in memory only; remove it "
                                "(`kiln cache verify --fix` removes an empty one)",
                                path));
    }
    std::lock_guard lock(mutex_);
    memory_[memory_key(key, arch)] = entry;
    memory_used_ = true;
    return false;
  } catch (...) {
    return false;   // e.g. bad_alloc: the cache is an optimization, never a failure
  }
}

// [Note: one compile per key across processes]
// N processes that miss the same key at once (the eight ranks of a node starting together) would
// each compile it and replace the entry in turn. Instead the first to create `<entry>.lock`
// (O_CREAT | O_EXCL) compiles and stores, and the others poll for the entry, then load it. The
// lock file holds "pid host". A waiter breaks a lock whose process is gone from this host (a
// compiler killed by kill -9) at once, and any lock older than KILN_CACHE_LOCK_TIMEOUT_S (another
// host's, or a hung compiler) once it is that old; a waiter that has waited that long compiles
// itself, as without a lock. Breaking is a rename to a name of the breaker's own, so of several
// waiters one wins. The lock is an optimization only: an entry is still published by one rename,
// so a lock broken too early costs a second compile, never a torn entry. Where no lock file can
// be made (a read-only cache directory) each process compiles; store() keeps the kernel in memory
// and warns once per process. `kiln cache` ignores `.lock` files.
DiskCache::CompileLock& DiskCache::CompileLock::operator=(CompileLock&& other) noexcept {
  if (this != &other) {
    if (held()) ::unlink(path_.c_str());
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

DiskCache::CompileLock::~CompileLock() {
  if (held()) ::unlink(path_.c_str());
}

namespace {

// This machine's name, read once per process (a waiter asks on every poll).
const std::string& host_name() {
  static const std::string name = [] {
    char buf[256] = {};
    return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("?");
  }();
  return name;
}

// Whether a lock file holding `text` ("pid host") was left by a process that no longer runs here.
bool holder_is_gone(const std::string& text) {
  std::istringstream in(text);
  long pid = 0;
  std::string host;
  if (!(in >> pid >> host) || pid <= 0) return false;   // half written: judged by its age instead
  if (host != host_name()) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  // A killed process its parent has not reaped yet (a zombie) still answers kill(pid, 0).
  const FileRead stat = try_read_regular_file(fmt::format("/proc/{}/stat", pid), 4096);
  if (!stat.ok()) return false;
  const std::string line(stat.data.begin(), stat.data.end());
  const auto paren = line.rfind(')');   // "pid (name) S ...": the state follows the name
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

}  // namespace

DiskCache::CompileTurn DiskCache::await_compile_turn(const std::string& key, const std::string& arch,
                                                     const std::string& label) {
  CompileTurn turn;
  if (memory_only_) return turn;
  const std::string path = entry_path(key, arch) + ".lock";
  const std::string what = label.empty() ? "key " + key : label;
  const auto timeout = std::chrono::seconds(cache_lock_timeout_s());
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  auto sleep_ms = std::chrono::milliseconds(10);
  bool announced = false;
  for (;;) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      const std::string mine = fmt::format("{} {}\n", static_cast<long>(::getpid()), host_name());
      const bool written = ::write(fd, mine.data(), mine.size()) == static_cast<ssize_t>(mine.size());
      ::close(fd);
      turn.lock = CompileLock(path);
      if (!written) return turn;
      // A compile that finished between our miss and our lock: use it.
      Outcome outcome;
      if (auto entry = read_entry(key, arch, &outcome)) {
        turn.lock = CompileLock();
        turn.entry = std::move(entry);
      }
      return turn;
    }
    if (errno != EEXIST) return turn;   // read-only or otherwise unusable: compile without a lock
    Outcome outcome;
    if (auto entry = read_entry(key, arch, &outcome)) {
      log_info(fmt::format("disk cache: {} for {} compiled by another process", what, arch));
      turn.entry = std::move(entry);
      return turn;
    }
    const FileRead held = try_read_regular_file(path, 4096);
    const auto age = std::chrono::duration_cast<std::chrono::seconds>(
        fs::file_time_type::clock::now() - fs::last_write_time(path, ec));
    const bool gone = held.ok() && holder_is_gone(std::string(held.data.begin(), held.data.end()));
    if (gone || (!ec && age >= timeout)) {
      const std::string broken = fmt::format("{}.broken.{}", path, static_cast<long>(::getpid()));
      if (::rename(path.c_str(), broken.c_str()) == 0) {
        ::unlink(broken.c_str());
        log_warning(fmt::format("removed the stale compile lock {} ({}); compiling {} here", path,
                                gone ? "its process is gone" : fmt::format("{} s old", age.count()), what));
      }
      continue;
    }
    if (std::chrono::steady_clock::now() - start >= timeout) {
      log_warning(fmt::format("waited {} s for another process to compile {} for {} (lock {}); compiling it here",
                              timeout.count(), what, arch, path));
      return turn;
    }
    if (!announced) {
      log_info(fmt::format("disk cache: waiting for another process to compile {} for {}", what, arch));
      announced = true;
    }
    std::this_thread::sleep_for(sleep_ms);
    sleep_ms = std::min(sleep_ms * 2, std::chrono::milliseconds(200));
  }
}

bool DiskCache::record_compiler(const std::string& id, std::string* error) {
  if (id.empty()) return true;
  std::string path = compilers_path(dir_);
  {
    // Recorded once is not enough: the cache directory may have been removed
    // since, and an entry without its compiler id costs a runtime that has no
    // NVRTC a scan of the entries. One stat per store (after a compile) is cheap.
    std::error_code ec;
    std::lock_guard lock(mutex_);
    if (recorded_compilers_.count(id) != 0 && fs::exists(path, ec)) return true;
  }
  // Read-modify-rename: two processes adding different ids at once may drop one,
  // so re-read after writing and retry until ours is there. Lines that are not
  // ids (a damaged file) are dropped by the rewrite.
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto ids = known_compilers();
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
      std::lock_guard lock(mutex_);
      recorded_compilers_.insert(id);
      return true;
    }
    ids.push_back(id);
    if (!write_compilers(dir_, ids, error)) return false;
  }
  if (error != nullptr) *error = "could not record the compiler id in " + path;
  return false;
}

std::vector<std::string> DiskCache::known_compilers() const { return read_compilers(dir_).ids; }

CacheCounters DiskCache::counters() const {
  return {hits_.load(), misses_.load(), stores_.load(), rejected_.load(), store_failures_.load()};
}

CacheScan DiskCache::scan() const {
  CacheScan scan = scan_dir(fs::path(dir_) / kCacheVersionDir);
  // v1/compilers: intact, and naming the compiler of every valid entry.
  std::error_code ec;
  const std::string path = compilers_path(dir_);
  const bool present = fs::symlink_status(path, ec).type() != fs::file_type::not_found;
  std::set<std::string> in_entries;
  for (const auto& item : scan.entries)
    if (item.valid && !item.metadata.compiler_id.empty()) in_entries.insert(item.metadata.compiler_id);
  if (present) {
    CompilersFile file = read_compilers(dir_);
    if (!file.problem.empty()) scan.problems.push_back({path, file.problem});
    for (const auto& id : in_entries)
      if (file.problem.empty() && std::find(file.ids.begin(), file.ids.end(), id) == file.ids.end())
        scan.problems.push_back({path, fmt::format("does not name compiler '{}' of valid entries", id)});
  } else if (!in_entries.empty()) {
    scan.problems.push_back({path, "is missing (it names the compilers of the entries)"});
  }
  std::sort(scan.problems.begin(), scan.problems.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return scan;
}

CacheStats DiskCache::stats() const { return summarize(scan()); }

CacheStats DiskCache::summarize(const CacheScan& scan) {
  CacheStats s;
  for (const auto& item : scan.entries) {
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
  s.temp_files = scan.temp_files;
  s.problems = scan.problems.size();
  return s;
}

CacheReport DiskCache::verify(bool fix) {
  CacheScan scan = this->scan();
  CacheReport report;
  report.entries_checked = scan.entries.size();
  for (auto& item : scan.entries) {
    if (item.valid) continue;
    CacheProblem problem{item.path, item.problem};
    // remove() unlinks a file, FIFO or symlink (never its target) and only an empty directory.
    std::error_code ec;
    if (fix) problem.removed = fs::remove(item.path, ec) && !ec;
    report.problems.push_back(std::move(problem));
  }
  const std::string compilers = compilers_path(dir_);
  for (auto& problem : scan.problems) {
    std::error_code ec;
    if (fix && problem.path == compilers) {
      // Rebuilt from what is still legible in it and what the valid entries name.
      std::vector<std::string> ids = read_compilers(dir_).ids;
      for (const auto& item : scan.entries)
        if (item.valid && !item.metadata.compiler_id.empty() &&
            std::find(ids.begin(), ids.end(), item.metadata.compiler_id) == ids.end())
          ids.push_back(item.metadata.compiler_id);
      fs::remove(compilers, ec);   // a FIFO or an empty directory in its place, too
      problem.removed = !ec && (ids.empty() || write_compilers(dir_, ids, nullptr));
    } else if (fix && is_temp_file_name(fs::path(problem.path).filename().string())) {
      problem.removed = fs::remove(problem.path, ec) && !ec;
    }
    report.problems.push_back(std::move(problem));
  }
  if (fix) {
    std::lock_guard lock(mutex_);
    recorded_compilers_.clear();
    entry_compilers_.clear();
  }
  return report;
}

std::uint64_t DiskCache::clear() {
  std::error_code ec;
  fs::path root = fs::path(dir_) / kCacheVersionDir;
  if (!fs::is_directory(fs::symlink_status(root, ec))) return 0;
  std::uint64_t files = 0;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (!fs::is_directory(it->symlink_status(ec))) ++files;
  fs::remove_all(root, ec);
  if (ec) throw IoError(fmt::format("kiln: cannot remove everything under {}: {}", root.string(), ec.message()));
  std::lock_guard lock(mutex_);
  memory_.clear();
  memory_used_ = false;
  recorded_compilers_.clear();
  entry_compilers_.clear();
  damaged_paths_.clear();
  return files;
}

}  // namespace kiln
