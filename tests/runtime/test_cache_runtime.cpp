// The Runtime over the disk cache (issue 16): a runtime without NVRTC finds cached
// kernels whatever state v1/compilers is in, and KILN_LOG=info / debug tell each
// compile, disk hit and miss. The halves that need their own environment
// (KILN_NVRTC_LIB, KILN_LOG) run in a child process.
#include <doctest/doctest.h>

#include <grp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kiln/kiln.h"
#include "runtime/child_process.h"
#include "runtime/nvrtc_skip.h"
#include "runtime/nvrtc.h"

namespace fs = std::filesystem;

namespace {

using kiln_test::skip_without_nvrtc;

std::string cache_dir(const std::string& name) {
  const std::string dir = std::string(KILN_BINARY_DIR) + "/test_cache_runtime/" + name;
  return dir;
}

kiln::Runtime make_runtime(const std::string& dir) {
  kiln::Options options;
  options.arch = "sm_90";
  options.cache_dir = dir;
  options.use_environment = false;
  options.shapes = "declared";   // each size its own kernel: the cache cases count entries by size
  return kiln::Runtime(options);
}

// Specializes axpby (one elementwise kernel) at N; the cubin's metadata must be real.
void specialize_axpby(kiln::Runtime& rt, std::int64_t n) {
  auto kernels = rt.load_file(std::string(KILN_SOURCE_DIR) + "/specs/elementwise.kiln")
                     .op("axpby")
                     .specialize({{"N", n}})
                     .kernels();
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0].registers > 0);
}

std::string child_dir() {
  const char* dir = std::getenv("KILN_TEST_CACHE_DIR");
  REQUIRE(dir != nullptr);
  return dir;
}

}  // namespace

// Child half: NVRTC cannot be loaded (KILN_NVRTC_LIB points nowhere).
TEST_CASE("child: a runtime without NVRTC uses the cached kernel") {
  if (!kiln_test::in_child()) return;
  kiln::Runtime rt = make_runtime(child_dir());
  specialize_axpby(rt, 1000);
  CHECK(rt.stats().compiles == 0);
  CHECK(rt.stats().disk_hits == 1);
}

TEST_CASE("runtime: without NVRTC a cached kernel is found with v1/compilers deleted, damaged or wrong") {
  if (skip_without_nvrtc()) return;
  const std::string dir = cache_dir("no_nvrtc");
  fs::remove_all(dir);
  {
    // The cache is filled by a child, so this process never loads NVRTC (the children below
    // must not find it). Under `make sanitize`, LeakSanitizer's scan of NVRTC's dynamic TLS
    // is off (scripts/sanitize.sh says why).
    auto fill = kiln_test::run_test_case_in_child("KILN_TEST_CACHE_DIR=" + dir, "child: compile then hit the disk cache");
    INFO(fill.output);
    REQUIRE(fill.exit_code == 0);
    REQUIRE(fill.output.find("1 passed") != std::string::npos);
  }
  const std::string compilers = dir + "/v1/compilers";
  std::string intact;
  std::getline(std::ifstream(compilers), intact);
  REQUIRE_FALSE(intact.empty());
  // Before: with the file deleted, the runtime said the kernel was in no cache.
  const std::vector<std::pair<const char*, std::string>> states = {
      {"intact", intact + "\n"}, {"deleted", ""}, {"garbage", "\x01\xfe\x7f\n"}, {"another compiler", "nvrtc 1.0 (old)\n"}};
  for (const auto& [what, text] : states) {
    CAPTURE(std::string(what));
    fs::remove(compilers);
    if (std::string(what) != "deleted") std::ofstream(compilers, std::ios::trunc) << text;
    auto child = kiln_test::run_test_case_in_child("KILN_NVRTC_LIB=/nonexistent/libnvrtc.so KILN_TEST_CACHE_DIR=" + dir,
                                                   "child: a runtime without NVRTC uses the cached kernel");
    INFO(child.output);
    CHECK(child.exit_code == 0);
    CHECK(child.output.find("1 passed") != std::string::npos);
    // The file names the entry's compiler again, for the next process.
    std::ifstream in(compilers);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(all.find(intact + "\n") != std::string::npos);
  }
  fs::remove_all(dir);
}

// Child half: compiles axpby, then a second runtime finds it on disk.
TEST_CASE("child: compile then hit the disk cache") {
  if (!kiln_test::in_child()) return;
  {
    kiln::Runtime rt = make_runtime(child_dir());
    specialize_axpby(rt, 1000);
    CHECK(rt.stats().compiles == 1);
  }
  kiln::Runtime again = make_runtime(child_dir());
  specialize_axpby(again, 1000);
  CHECK(again.stats().disk_hits == 1);
}

TEST_CASE("KILN_LOG=info logs each compile, disk miss and hit, debug adds keys and paths, the default neither") {
  if (skip_without_nvrtc()) return;
  const std::string kernel = "axpby (N=1000) kernel kiln_axpby_k0_elementwise for sm_90";
  auto run = [&](const std::string& level) {
    const std::string dir = cache_dir("log_" + level);
    fs::remove_all(dir);
    auto child = kiln_test::run_test_case_in_child("KILN_LOG=" + level + " KILN_TEST_CACHE_DIR=" + dir,
                                                   "child: compile then hit the disk cache");
    CHECK(child.exit_code == 0);
    fs::remove_all(dir);
    return child.output;
  };
  const std::string info = run("info");
  INFO(info);
  CHECK(info.find("kiln: info: disk cache miss: " + kernel + "\n") != std::string::npos);
  CHECK(info.find("kiln: info: compiled " + kernel + " in ") != std::string::npos);
  CHECK(info.find(" ms\n", info.find("kiln: info: compiled ")) != std::string::npos);
  CHECK(info.find("kiln: info: disk cache hit: " + kernel + "\n") != std::string::npos);
  CHECK(info.find("[key") == std::string::npos);

  const std::string debug = run("debug");
  INFO(debug);
  CHECK(debug.find("kiln: info: disk cache miss: " + kernel + " [key ") != std::string::npos);
  CHECK(debug.find(cache_dir("log_debug") + "/v1/sm_90/") != std::string::npos);
  CHECK(debug.find(" ms [key ") != std::string::npos);
  CHECK(debug.find("kiln: info: disk cache hit: " + kernel + " [key ") != std::string::npos);

  const std::string quiet = run("");   // empty: the default level (warnings only)
  INFO(quiet);
  CHECK(quiet.find("kiln: info:") == std::string::npos);
  CHECK(quiet.find("kiln: debug:") == std::string::npos);
}

// Child half: the same compile with a log handler set and the level raised through the API.
TEST_CASE("child: a log handler gets the lines instead of stderr") {
  if (!kiln_test::in_child()) return;
  std::vector<std::pair<int, std::string>> lines;
  kiln::set_log_handler([&](int level, const std::string& message) { lines.emplace_back(level, message); });
  CHECK(kiln::set_log_level_name("info"));
  CHECK_FALSE(kiln::set_log_level_name("loud"));
  {
    kiln::Runtime rt = make_runtime(child_dir());
    specialize_axpby(rt, 1000);
  }
  kiln::set_log_handler({});
  bool compiled = false;
  for (const auto& [level, message] : lines) compiled |= level == 2 && message.rfind("compiled axpby (N=1000)", 0) == 0;
  CHECK(compiled);
  std::fprintf(stderr, "handler lines: %zu\n", lines.size());
}

TEST_CASE("set_log_handler: kiln's lines go to the handler (level and message), not to stderr, an empty one restores stderr") {
  if (skip_without_nvrtc()) return;
  const std::string dir = cache_dir("log_handler");
  fs::remove_all(dir);
  auto child = kiln_test::run_test_case_in_child("KILN_TEST_CACHE_DIR=" + dir, "child: a log handler gets the lines instead of stderr");
  fs::remove_all(dir);
  INFO(child.output);
  CHECK(child.exit_code == 0);
  CHECK(child.output.find("kiln: info:") == std::string::npos);   // nothing printed by kiln itself
  CHECK(child.output.find("handler lines: 2\n") != std::string::npos);   // the disk miss and the compile
}

// Child half: a process that is not root (root ignores permission bits: a root child drops to
// nobody first) opens a read-only cache that holds axpby at N=1000 but not at N=1001.
TEST_CASE("child: a read-only cache serves hits and compiles misses in memory") {
  if (!kiln_test::in_child()) return;
  if (::geteuid() == 0) {
    REQUIRE_MESSAGE(::setgroups(0, nullptr) == 0, "dropping root's groups failed");
    REQUIRE_MESSAGE(::setgid(65534) == 0, "setgid(nobody) failed");
    REQUIRE_MESSAGE(::setuid(65534) == 0, "setuid(nobody) failed");
  }
  REQUIRE(::access(child_dir().c_str(), W_OK) != 0);   // really read-only for this process
  kiln::Runtime rt = make_runtime(child_dir());
  specialize_axpby(rt, 1000);
  CHECK(rt.stats().disk_hits == 1);
  CHECK(rt.stats().compiles == 0);
  for (int i = 0; i < 2; ++i) {   // compiled once, then served from memory; one warning in all
    specialize_axpby(rt, 1001);
    specialize_axpby(rt, 1002);
  }
  kiln::Runtime second = make_runtime(child_dir());   // another runtime of the process: no second warning
  specialize_axpby(second, 1003);
  CHECK(rt.stats().compiles == 2);
  CHECK(second.stats().compiles == 1);
}

TEST_CASE("runtime: processes sharing a read-only cache directory serve its hits and compile misses in memory, "
          "with one warning each") {
  if (skip_without_nvrtc()) return;
  const std::string dir = cache_dir("read_only");
  fs::remove_all(dir);
  {
    kiln::Runtime rt = make_runtime(dir);
    specialize_axpby(rt, 1000);
    REQUIRE(rt.stats().compiles == 1);
  }
  auto set_writable = [&](bool writable) {   // directories 0755 / 0555, files 0644 / 0444
    const auto dirs = writable ? fs::perms(0755) : fs::perms(0555);
    const auto files = writable ? fs::perms(0644) : fs::perms(0444);
    for (const auto& e : fs::recursive_directory_iterator(dir)) fs::permissions(e.path(), e.is_directory() ? dirs : files);
    fs::permissions(dir, dirs);
  };
  set_writable(false);
  std::size_t files_before = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) files_before += e.is_regular_file();
  // Two processes at once, as the ranks of a job would open it.
  std::vector<kiln_test::ChildResult> children(2);
  std::vector<std::thread> threads;
  for (auto& child : children)
    threads.emplace_back([&child, &dir] {
      child = kiln_test::run_test_case_in_child("KILN_LOG=warning KILN_TEST_CACHE_DIR=" + dir,
                                                "child: a read-only cache serves hits and compiles misses in memory");
    });
  for (auto& t : threads) t.join();
  std::size_t files_after = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) files_after += e.is_regular_file();
  set_writable(true);
  for (const auto& child : children) {
    INFO(child.output);
    CHECK(child.exit_code == 0);
    CHECK(child.output.find("1 passed") != std::string::npos);
    std::size_t warnings = 0;
    for (std::size_t at = 0; (at = child.output.find("kiln: warning:", at)) != std::string::npos; ++at) ++warnings;
    CHECK(warnings == 1);
    CHECK(child.output.find("not writable") != std::string::npos);
  }
  CHECK(files_after == files_before);   // no lock file, no entry, no temporary left behind
  fs::remove_all(dir);
}
