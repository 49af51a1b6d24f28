// The cubin disk cache: hits and misses, the key, every kind of bad file, an
// unwritable directory, many processes sharing one directory, maintenance.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "runtime/child_process.h"
#include "runtime/disk_cache.h"
#include "runtime/forked.h"

namespace fs = std::filesystem;

namespace {

// A fresh empty directory under the build tree for each test.
std::string fresh_dir(const std::string& name) {
  std::string dir = std::string(KILN_BINARY_DIR) + "/test_disk_cache/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

kiln::CacheEntry make_entry(const std::string& tag, std::size_t cubin_bytes = 3000) {
  kiln::CacheEntry e;
  e.cubin.resize(cubin_bytes);
  for (std::size_t i = 0; i < cubin_bytes; ++i) e.cubin[i] = static_cast<char>((i * 131 + tag.size()) & 0xff);
  e.cubin[0] = 0x7f;
  e.metadata.kernels = {"kiln_" + tag};
  e.metadata.template_name = "elementwise";
  e.metadata.grid = {132, 1, 1};
  e.metadata.block = {256, 1, 1};
  e.metadata.shared_bytes = 64;
  e.metadata.registers = 24;
  e.metadata.spill_stores = 0;
  e.metadata.spill_loads = 0;
  e.metadata.stack_bytes = 0;
  e.metadata.source_hash = "0123";
  e.metadata.arch = "sm_90";
  e.metadata.compiler_id = "nvrtc 13.0 (test)";
  e.metadata.op_name = "relu";
  e.metadata.bindings = "N=" + tag;
  e.metadata.created_unix = 1700000000;
  return e;
}

std::string key_of(const std::string& tag) { return kiln::cache_key("source " + tag, "digest", "nvrtc", "sm_90", {"-std=c++17"}); }

std::vector<char> read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("disk cache: miss, then hit with identical bytes and metadata") {
  kiln::DiskCache cache(fresh_dir("hit"));
  std::string key = key_of("a");
  CHECK_FALSE(cache.load(key, "sm_90").has_value());
  auto entry = make_entry("a");
  CHECK(cache.store(key, "sm_90", entry));
  auto hit = cache.load(key, "sm_90");
  REQUIRE(hit.has_value());
  CHECK(hit->cubin == entry.cubin);
  CHECK(hit->metadata == entry.metadata);
  CHECK_FALSE(cache.load(key, "sm_80").has_value());   // archs are separate
  auto c = cache.counters();
  CHECK(c.hits == 1);
  CHECK(c.misses == 2);
  CHECK(c.stores == 1);
  CHECK(c.rejected == 0);
  // The layout the design names: v1/sm_XX/ab/<hash>.cubin.
  CHECK(cache.entry_path(key, "sm_90") == cache.dir() + "/v1/sm_90/" + key.substr(0, 2) + "/" + key + ".cubin");
  CHECK(fs::exists(cache.entry_path(key, "sm_90")));
  CHECK(cache.known_compilers() == std::vector<std::string>{"nvrtc 13.0 (test)"});

  // An undated entry is stamped with the time of the store.
  auto undated = make_entry("u");
  undated.metadata.created_unix = 0;
  REQUIRE(cache.store(key_of("u"), "sm_90", undated));
  CHECK(cache.load(key_of("u"), "sm_90")->metadata.created_unix > 1700000000);
}

TEST_CASE("disk cache: the key changes with every input and is stable") {
  std::vector<std::string> options = {"--gpu-architecture=sm_90", "-std=c++17"};
  std::string base = kiln::cache_key("src", "tdigest", "nvrtc 13.0", "sm_90", options);
  CHECK(base.size() == 32);
  CHECK(base == kiln::cache_key("src", "tdigest", "nvrtc 13.0", "sm_90", options));
  std::set<std::string> keys = {
      base,
      kiln::cache_key("src2", "tdigest", "nvrtc 13.0", "sm_90", options),
      kiln::cache_key("src", "tdigest2", "nvrtc 13.0", "sm_90", options),
      kiln::cache_key("src", "tdigest", "nvrtc 13.1", "sm_90", options),
      kiln::cache_key("src", "tdigest", "nvrtc 13.0", "sm_90a", options),
      kiln::cache_key("src", "tdigest", "nvrtc 13.0", "sm_90", {"--gpu-architecture=sm_90"}),
      kiln::cache_key("src", "tdigest", "nvrtc 13.0", "sm_90", {"--gpu-architecture=sm_90", "-std=c++17", "-DX"}),
      // Field boundaries matter: moving a character from one field to the next is a different key.
      kiln::cache_key("sr", "ctdigest", "nvrtc 13.0", "sm_90", options),
  };
  CHECK(keys.size() == 8);
}

TEST_CASE("disk cache: truncated, corrupted, foreign and wrong-magic files are misses, then rebuilt") {
  kiln::DiskCache cache(fresh_dir("corrupt"));
  std::string key = key_of("good"), other = key_of("other");
  auto entry = make_entry("good");
  REQUIRE(cache.store(key, "sm_90", entry));
  REQUIRE(cache.store(other, "sm_90", make_entry("other")));
  std::string path = cache.entry_path(key, "sm_90");
  const std::vector<char> good = read(path);

  struct Damage {
    const char* what;
    std::vector<char> bytes;
  };
  std::vector<Damage> damages;
  damages.push_back({"truncated in the payload", {good.begin(), good.end() - 100}});
  damages.push_back({"truncated in the header", {good.begin(), good.begin() + 20}});
  damages.push_back({"empty", {}});
  auto flipped = good;
  flipped[good.size() - 7] ^= 0x10;   // inside the cubin
  damages.push_back({"one flipped cubin byte", flipped});
  auto flipped_meta = good;
  flipped_meta[70] ^= 0x01;           // inside the metadata JSON
  damages.push_back({"one flipped metadata byte", flipped_meta});
  damages.push_back({"another key's entry", read(cache.entry_path(other, "sm_90"))});
  auto magic = good;
  magic[0] = 'X';
  damages.push_back({"wrong magic", magic});
  auto version = good;
  version[8] = 9;
  damages.push_back({"wrong format version", version});
  auto padded = good;
  padded.push_back('\0');
  damages.push_back({"trailing garbage", padded});

  std::uint64_t rejected = cache.counters().rejected;
  for (const auto& d : damages) {
    CAPTURE(d.what);
    write(path, d.bytes);
    CHECK_FALSE(cache.load(key, "sm_90").has_value());
    CHECK(cache.counters().rejected == ++rejected);
    CHECK(cache.verify(false).problems.size() == 1);
    // The next store overwrites the bad file and it is served again.
    REQUIRE(cache.store(key, "sm_90", entry));
    auto hit = cache.load(key, "sm_90");
    REQUIRE(hit.has_value());
    CHECK(hit->cubin == entry.cubin);
  }
}

// Child half of the next test: runs only under run_test_case_in_child.
TEST_CASE("child: disk cache under an unwritable directory") {
  if (!kiln_test::in_child()) return;
  // Tests run as root, and root ignores permission bits (chmod 0555 would not
  // stop it), so the cache directory is placed *under a regular file*: no
  // process, root included, can create a directory there.
  std::string base = std::string(KILN_BINARY_DIR) + "/test_disk_cache/unwritable";
  fs::create_directories(base);
  std::string blocker = base + "/a_file";
  write(blocker, {'x'});
  for (int round = 0; round < 2; ++round) {   // two cache objects: still one warning per process
    kiln::DiskCache cache(blocker + "/cache");
    for (int i = 0; i < 3; ++i) {
      std::string tag = std::to_string(i);
      CHECK_FALSE(cache.store(key_of(tag), "sm_90", make_entry(tag)));
      CHECK(cache.memory_only());
      auto hit = cache.load(key_of(tag), "sm_90");   // kept in memory
      REQUIRE(hit.has_value());
      CHECK(hit->cubin == make_entry(tag).cubin);
    }
    CHECK(cache.counters().store_failures == 1);   // it stops trying the disk after the first failure
  }
}

TEST_CASE("disk cache: an unwritable directory falls back to memory with one warning") {
  auto child = kiln_test::run_test_case_in_child("KILN_LOG=warn", "child: disk cache under an unwritable directory");
  INFO(child.output);
  CHECK(child.exit_code == 0);
  CHECK(child.output.find("1 passed") != std::string::npos);
  std::size_t warnings = 0;
  for (std::size_t at = 0; (at = child.output.find("kiln: warning:", at)) != std::string::npos; ++at) ++warnings;
  CHECK(warnings == 1);
  CHECK(child.output.find("not writable") != std::string::npos);
}

TEST_CASE("disk cache: 8 processes storing the same and overlapping keys") {
  std::string dir = fresh_dir("processes");
  constexpr int kProcesses = 8, kKeys = 6, kRounds = 25;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      kiln::DiskCache cache(dir);
      int failures = 0;
      for (int round = 0; round < kRounds; ++round) {
        // Every process writes key 0; the others overlap by pairs.
        for (int k : {0, p % kKeys, (p + 1) % kKeys}) {
          std::string tag = std::to_string(k);
          if (!cache.store(key_of(tag), "sm_90", make_entry(tag, 2000 + 500 * k))) ++failures;
          auto hit = cache.load(key_of(tag), "sm_90");   // never a partial file
          if (!hit || hit->cubin != make_entry(tag, 2000 + 500 * k).cubin) ++failures;
        }
      }
      _exit(failures == 0 && cache.counters().rejected == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  kiln::DiskCache cache(dir);
  auto listing = cache.ls();
  CHECK(listing.size() == kKeys);
  for (const auto& item : listing) CHECK(item.valid);
  CHECK(cache.verify(false).ok());
  CHECK(cache.stats().temp_files == 0);
  CHECK(cache.known_compilers().size() == 1);
}

TEST_CASE("disk cache: ls, stats, verify, clear") {
  kiln::DiskCache cache(fresh_dir("maintenance"));
  CHECK(cache.ls().empty());
  CHECK(cache.stats().entries == 0);
  auto a = make_entry("a"), b = make_entry("b"), c = make_entry("c");
  c.metadata.arch = "sm_80";
  c.metadata.compiler_id = "nvrtc 12.9 (other)";
  REQUIRE(cache.store(key_of("a"), "sm_90", a));
  REQUIRE(cache.store(key_of("b"), "sm_90", b));
  REQUIRE(cache.store(key_of("c"), "sm_80", c));
  CHECK(cache.known_compilers() == std::vector<std::string>{"nvrtc 13.0 (test)", "nvrtc 12.9 (other)"});

  auto listing = cache.ls();
  REQUIRE(listing.size() == 3);
  CHECK(listing[0].arch == "sm_80");
  CHECK(listing[0].metadata.bindings == "N=c");
  CHECK(listing[1].arch == "sm_90");

  auto stats = cache.stats();
  CHECK(stats.entries == 3);
  CHECK(stats.per_arch.at("sm_90").first == 2);
  CHECK(stats.per_arch.at("sm_80").first == 1);
  CHECK(stats.bytes == fs::file_size(listing[0].path) + fs::file_size(listing[1].path) + fs::file_size(listing[2].path));

  auto bytes = read(cache.entry_path(key_of("b"), "sm_90"));
  bytes[bytes.size() / 2] ^= 0x55;
  write(cache.entry_path(key_of("b"), "sm_90"), bytes);
  auto bad = cache.verify(false).problems;
  REQUIRE(bad.size() == 1);
  CHECK(bad[0].path == cache.entry_path(key_of("b"), "sm_90"));
  CHECK(bad[0].problem.find("checksum") != std::string::npos);
  CHECK(cache.stats().invalid == 1);
  auto fixed = cache.verify(true).problems;   // removes it
  REQUIRE(fixed.size() == 1);
  CHECK(fixed[0].removed);
  CHECK(cache.verify(false).ok());
  CHECK(cache.ls().size() == 2);

  CHECK(cache.clear() == 3);   // two entries and the compilers file
  CHECK(cache.ls().empty());
  CHECK_FALSE(cache.load(key_of("a"), "sm_90").has_value());
}

TEST_CASE("default cache dir follows KILN_CACHE_DIR, XDG_CACHE_HOME, HOME") {
  auto saved = [](const char* n) { const char* v = std::getenv(n); return v ? std::optional<std::string>(v) : std::nullopt; };
  auto kiln_dir = saved("KILN_CACHE_DIR"), xdg = saved("XDG_CACHE_HOME"), home = saved("HOME");
  setenv("KILN_CACHE_DIR", "/k", 1);
  setenv("XDG_CACHE_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  CHECK(kiln::default_cache_dir() == "/k");
  unsetenv("KILN_CACHE_DIR");
  CHECK(kiln::default_cache_dir() == "/x/kiln");
  unsetenv("XDG_CACHE_HOME");
  CHECK(kiln::default_cache_dir() == "/h/.cache/kiln");
  auto restore = [](const char* n, const std::optional<std::string>& v) { v ? setenv(n, v->c_str(), 1) : unsetenv(n); };
  restore("KILN_CACHE_DIR", kiln_dir);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}

// ---------------------------------------------------------------- issue 16: blind spots

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

// The problem whose path is `path`, or nullptr.
const kiln::CacheProblem* problem_at(const kiln::CacheReport& report, const std::string& path) {
  for (const auto& p : report.problems)
    if (p.path == path) return &p;
  return nullptr;
}

std::string compilers_of(const std::string& dir) {
  const auto bytes = read(dir + "/v1/compilers");
  return {bytes.begin(), bytes.end()};
}

// A key formed like the runtime's: the compiler id is one of the key's inputs.
std::string key_with(const std::string& tag, const std::string& compiler) {
  return kiln::cache_key("source " + tag, "digest", compiler, "sm_90", {});
}

}  // namespace

TEST_CASE("disk cache: a FIFO, a device or a directory at an entry's name is a miss, not a hang") {
  const std::string dir = fresh_dir("non_regular");
  kiln::DiskCache cache(dir);
  struct Case {
    const char* what;
    std::function<void(const std::string&)> make;
    const char* problem;
  };
  const std::vector<Case> cases = {
      {"FIFO", [](const std::string& p) { REQUIRE(mkfifo(p.c_str(), 0644) == 0); }, "is a FIFO"},
      {"symlink to /dev/zero", [](const std::string& p) { fs::create_symlink("/dev/zero", p); }, "character device"},
      {"directory", [](const std::string& p) { fs::create_directories(p); }, "is a directory"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.what));
    const std::string key = key_of(c.what), path = cache.entry_path(key, "sm_90");
    fs::create_directories(fs::path(path).parent_path());
    c.make(path);
    // In a child with a time limit: before, the FIFO blocked open() forever and
    // /dev/zero was read until memory ran out.
    auto result = kiln_test::run_forked([&] {
      kiln::DiskCache child(dir);
      return child.load(key, "sm_90").has_value() ? std::string("hit") : "miss, rejected " + std::to_string(child.counters().rejected);
    });
    REQUIRE(result.has_value());
    CHECK(*result == "miss, rejected 1");
    auto report = cache.verify(false);
    const auto* problem = problem_at(report, path);
    REQUIRE(problem != nullptr);
    CHECK(problem->problem.find(c.problem) != std::string::npos);
    // A store replaces a FIFO or a link; a directory blocks only this entry, kept in memory.
    const bool stored = cache.store(key, "sm_90", make_entry("x"));
    CHECK(stored == (std::string(c.what) != "directory"));
    CHECK_FALSE(cache.memory_only());
    REQUIRE(cache.load(key, "sm_90").has_value());
  }
  // verify --fix removes an empty directory at an entry's name, and then it is stored on disk.
  auto fixed = cache.verify(true);
  const std::string blocked = cache.entry_path(key_of("directory"), "sm_90");
  REQUIRE(problem_at(fixed, blocked) != nullptr);
  CHECK(problem_at(fixed, blocked)->removed);
  CHECK_FALSE(fs::exists(blocked));
  CHECK(cache.verify(false).ok());
  CHECK(cache.store(key_of("directory"), "sm_90", make_entry("x")));
}

TEST_CASE("disk cache: verify walks past unreadable directories and reports each") {
  const std::string dir = fresh_dir("unreadable");
  {
    kiln::DiskCache cache(dir);
    REQUIRE(cache.store(key_of("a"), "sm_90", make_entry("a")));
  }
  // Sixteen unreadable directories beside the entry's: before, the walk stopped at
  // the first it met (most orders put one before the entry) and verify passed.
  std::vector<std::string> blocked;
  for (const char* name : {"00", "11", "22", "33", "44", "55", "66", "77", "88", "99", "aa", "bb", "cc", "dd", "ee", "ff"}) {
    blocked.push_back(dir + "/v1/sm_90/" + name);
    fs::create_directories(blocked.back());
    fs::permissions(blocked.back(), fs::perms::none);
  }
  auto result = kiln_test::run_forked([&] {
    kiln_test::drop_permission_override();
    std::error_code ec;
    fs::directory_iterator probe(blocked[0], ec);
    if (!ec) return std::string("skip");   // permissions do not bite here
    kiln::DiskCache cache(dir);
    auto report = cache.verify(false);
    std::string out = "checked " + std::to_string(report.entries_checked);
    for (const auto& p : report.problems) out += "\n" + p.path + ": " + p.problem;
    return out;
  });
  for (const auto& b : blocked) fs::permissions(b, fs::perms::owner_all);
  REQUIRE(result.has_value());
  if (*result == "skip") {
    MESSAGE("skipped: permission bits cannot be made to bite here");
    return;
  }
  INFO(*result);
  CHECK(result->rfind("checked 1\n", 0) == 0);   // the valid entry was still read
  for (const auto& b : blocked) CHECK(result->find(b + ": cannot read this directory") != std::string::npos);
}

TEST_CASE("disk cache: stale temporary files are reported, and --fix removes only those") {
  const std::string dir = fresh_dir("temps");
  kiln::DiskCache cache(dir);
  REQUIRE(cache.store(key_of("a"), "sm_90", make_entry("a")));
  const std::string entry = cache.entry_path(key_of("a"), "sm_90");
  const std::string stale = entry + ".tmp.4242.abc.0", fresh = entry + ".tmp.4243.abc.1";
  write(stale, {'x'});
  write(fresh, {'y'});
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
  CHECK(cache.stats().temp_files == 2);
  auto report = cache.verify(false);
  REQUIRE(report.problems.size() == 1);   // a fresh one may be a live writer's
  CHECK(report.problems[0].path == stale);
  CHECK(report.problems[0].problem.find("stale temporary file") != std::string::npos);
  CHECK(fs::exists(stale));
  auto fixed = cache.verify(true);
  REQUIRE(fixed.problems.size() == 1);
  CHECK(fixed.problems[0].removed);
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(fresh));
  CHECK(fs::exists(entry));
  CHECK(cache.verify(false).ok());
}

TEST_CASE("disk cache: a damaged, missing or incomplete v1/compilers is reported and --fix rebuilds it") {
  const std::string dir = fresh_dir("compilers");
  kiln::DiskCache cache(dir);
  auto other = make_entry("o");
  other.metadata.compiler_id = "nvrtc 12.9 (other)";
  REQUIRE(cache.store(key_of("a"), "sm_90", make_entry("a")));
  REQUIRE(cache.store(key_of("o"), "sm_90", other));
  const std::string path = dir + "/v1/compilers";
  const std::string intact = "nvrtc 13.0 (test)\nnvrtc 12.9 (other)\n";
  CHECK(compilers_of(dir) == intact);
  CHECK(cache.verify(false).ok());

  struct Case {
    const char* what;
    std::function<void()> damage;
    const char* problem;
  };
  const std::vector<Case> cases = {
      {"binary garbage", [&] { write(path, {'\x01', '\xff', '\n', 'n', 'v', '\x7f', '\n'}); }, "is damaged"},
      {"cut mid-line", [&] { write(path, {'n', 'v', 'r', 't', 'c', ' ', '1'}); }, "is damaged"},
      {"deleted", [&] { fs::remove(path); }, "is missing"},
      {"one id lost", [&] { std::ofstream(path, std::ios::trunc) << "nvrtc 13.0 (test)\n"; }, "does not name compiler 'nvrtc 12.9 (other)'"},
      {"a FIFO", [&] { fs::remove(path); REQUIRE(mkfifo(path.c_str(), 0644) == 0); }, "is a FIFO"},
      {"a directory", [&] { fs::remove(path); fs::create_directories(path); }, "is a directory"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.what));
    c.damage();
    auto result = kiln_test::run_forked([&] {   // a FIFO must not block the reader
      kiln::DiskCache child(dir);
      return std::to_string(child.known_compilers().size());
    });
    REQUIRE(result.has_value());
    auto report = cache.verify(false);
    REQUIRE(problem_at(report, path) != nullptr);
    CHECK(problem_at(report, path)->problem.find(c.problem) != std::string::npos);
    auto fixed = cache.verify(true);
    REQUIRE(problem_at(fixed, path) != nullptr);
    CHECK(problem_at(fixed, path)->removed);
    CHECK(cache.verify(false).ok());
    // Rebuilt from the valid entries (the legible lines first).
    std::string text = compilers_of(dir);
    CHECK(count_of(text, "nvrtc 13.0 (test)\n") == 1);
    CHECK(count_of(text, "nvrtc 12.9 (other)\n") == 1);
    CHECK(count_of(text, "\n") == 2);
  }
  // A store also drops the lines that are not ids.
  write(path, {'\x01', '\n', 'n', 'v', 'r', 't', 'c', ' ', 'x', '\n'});
  kiln::DiskCache fresh(dir);
  REQUIRE(fresh.store(key_of("b"), "sm_90", make_entry("b")));
  CHECK(compilers_of(dir) == "nvrtc x\nnvrtc 13.0 (test)\n");
}

TEST_CASE("disk cache: lookup without NVRTC does not depend on v1/compilers") {
  const std::string dir = fresh_dir("lookup_without_compilers");
  const std::string compiler = "nvrtc 13.0 (test)";
  auto key_for = [](const std::string& id) { return key_with("a", id); };
  {
    kiln::DiskCache cache(dir);
    REQUIRE(cache.store(key_for(compiler), "sm_90", make_entry("a")));
  }
  const std::string path = dir + "/v1/compilers";
  const std::vector<std::pair<const char*, std::function<void()>>> damages = {
      {"deleted", [&] { fs::remove(path); }},
      {"garbage", [&] { write(path, {'\xfe', '\x02', '\n'}); }},
      {"another compiler only", [&] { std::ofstream(path, std::ios::trunc) << "nvrtc 9.9 (gone)\n"; }},
  };
  for (const auto& [what, damage] : damages) {
    CAPTURE(std::string(what));
    damage();
    kiln::DiskCache cache(dir);
    auto hit = cache.load_any_compiler(key_for, "sm_90");
    REQUIRE(hit.has_value());
    CHECK(hit->cubin == make_entry("a").cubin);
    // ... and the file is repaired so the next process needs no scan.
    CHECK(count_of(compilers_of(dir), compiler + "\n") == 1);
    CHECK(cache.counters().hits == 1);
  }
  // A true miss stays a miss (and the scan is not repeated for it).
  kiln::DiskCache cache(dir);
  auto miss_key = [](const std::string& id) { return key_with("absent", id); };
  CHECK_FALSE(cache.load_any_compiler(miss_key, "sm_90").has_value());
  CHECK_FALSE(cache.load_any_compiler(miss_key, "sm_90").has_value());
  CHECK(cache.counters().misses == 2);
}

// Child half: a damaged entry is loaded through two cache objects and stored again.
TEST_CASE("child: a damaged entry warns once with its path") {
  if (!kiln_test::in_child()) return;
  const std::string dir = std::string(KILN_BINARY_DIR) + "/test_disk_cache/damaged_warning";
  const std::string key = key_of("d");
  for (int round = 0; round < 2; ++round) {
    kiln::DiskCache cache(dir);
    CHECK_FALSE(cache.load(key, "sm_90", "relu (N=d) kernel kiln_relu").has_value());
    CHECK_FALSE(cache.load(key, "sm_90").has_value());
  }
  kiln::DiskCache cache(dir);
  CHECK_FALSE(cache.load(key, "sm_90").has_value());
  REQUIRE(cache.store(key, "sm_90", make_entry("d")));
  REQUIRE(cache.load(key, "sm_90", "relu (N=d) kernel kiln_relu").has_value());
}

TEST_CASE("disk cache: a damaged entry is a warning once per path at the default level, info and debug say more") {
  const std::string dir = fresh_dir("damaged_warning");
  std::string path;
  auto damage = [&] {
    kiln::DiskCache cache(dir);
    REQUIRE(cache.store(key_of("d"), "sm_90", make_entry("d")));
    path = cache.entry_path(key_of("d"), "sm_90");
    auto bytes = read(path);
    bytes[bytes.size() - 3] ^= 0x20;
    write(path, bytes);
  };
  const std::string test = "child: a damaged entry warns once with its path";

  damage();
  auto warn = kiln_test::run_test_case_in_child("KILN_LOG=", test);   // empty: the default level
  INFO(warn.output);
  CHECK(warn.exit_code == 0);
  CHECK(count_of(warn.output, "kiln: warning:") == 1);
  CHECK(warn.output.find("kiln: warning: ignoring the damaged cache entry " + path + ": checksum mismatch") !=
        std::string::npos);
  CHECK(warn.output.find("kiln: info:") == std::string::npos);

  damage();
  auto info = kiln_test::run_test_case_in_child("KILN_LOG=info", test);
  INFO(info.output);
  CHECK(count_of(info.output, "kiln: warning:") == 1);
  CHECK(count_of(info.output, "kiln: info: disk cache miss: relu (N=d) kernel kiln_relu for sm_90\n") == 2);
  CHECK(count_of(info.output, "kiln: info: disk cache miss: key " + key_of("d") + " for sm_90\n") == 3);
  CHECK(count_of(info.output, "kiln: info: replaced the damaged cache entry " + path + "\n") == 1);
  CHECK(count_of(info.output, "kiln: info: disk cache hit: relu (N=d) kernel kiln_relu for sm_90\n") == 1);
  CHECK(info.output.find(" [key ") == std::string::npos);   // keys and paths are debug's

  damage();
  auto debug = kiln_test::run_test_case_in_child("KILN_LOG=debug", test);
  INFO(debug.output);
  CHECK(debug.output.find("kiln: info: disk cache hit: relu (N=d) kernel kiln_relu for sm_90 [key " + key_of("d") +
                          ", " + path + "]") != std::string::npos);

  damage();
  auto quiet = kiln_test::run_test_case_in_child("KILN_LOG=quiet", test);
  INFO(quiet.output);
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.output.find("kiln:") == std::string::npos);
}
