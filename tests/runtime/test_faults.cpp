// Faults in the disk cache's file system while a Runtime compiles: a write that
// fails part way (disk full) and a cache directory that disappears or becomes a
// regular file between two compiles. In each the kernel is still produced (the
// cubin is kept in memory), exactly one warning is printed, nothing partial or
// temporary is left behind, and a later run without the fault writes a valid entry.
//
// The faulty halves run in a child process (run_test_case_in_child): the
// one-warning-per-process latch and RLIMIT_FSIZE must not leak into this one, and
// the child's stderr is where the warnings are counted.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "kiln/kiln.h"
#include "runtime/child_process.h"
#include "runtime/nvrtc_skip.h"
#include "runtime/disk_cache.h"
#include "runtime/nvrtc.h"

namespace fs = std::filesystem;

namespace {

using kiln_test::skip_without_nvrtc;

std::string fault_dir(const std::string& name) { return std::string(KILN_BINARY_DIR) + "/test_faults/" + name; }

kiln::Runtime make_runtime(const std::string& cache_dir) {
  kiln::Options options;
  options.arch = "sm_90";
  options.cache_dir = cache_dir;
  options.use_environment = false;
  options.shapes = "declared";   // each size its own kernel: the cache cases count entries by size
  return kiln::Runtime(options);
}

// Compiles axpby (elementwise, x, y0: f32[N] -> y) at N and checks that NVRTC
// produced a usable kernel.
void compile_at(kiln::Runtime& rt, std::int64_t n) {
  auto kernels = rt.load_file(std::string(KILN_SOURCE_DIR) + "/specs/elementwise.kiln")
                     .op("axpby")
                     .specialize({{"N", n}})
                     .kernels();
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0].registers > 0);   // parsed from ptxas' log: the cubin really exists
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

// Every regular file under dir (none when dir is not a directory).
std::vector<std::string> files_under(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) out.push_back(it->path().string());
  return out;
}

// The cache directory holds exactly `entries` valid entries, the compilers file
// (when any entry was written) and nothing else: no temporary, no partial file.
void check_cache_holds(const std::string& dir, std::size_t entries) {
  kiln::DiskCache cache(dir);
  auto listing = cache.ls();
  CHECK(listing.size() == entries);
  for (const auto& item : listing) {
    CAPTURE(item.path);
    CHECK(item.valid);
  }
  CHECK(cache.stats().temp_files == 0);
  auto files = files_under(dir);
  CAPTURE(files.size());
  CHECK(files.size() == (entries == 0 ? 0 : entries + 1));   // + v1/compilers
}

// Runs the faulty child half with the cache in `dir`; it must pass and print
// exactly one warning. Returns its output for further checks.
std::string run_faulty_child(const std::string& dir, const std::string& test_case) {
  auto child = kiln_test::run_test_case_in_child("KILN_LOG=warn KILN_TEST_FAULT_DIR=" + dir, test_case);
  INFO(child.output);
  CHECK(child.exit_code == 0);
  CHECK(child.output.find("1 passed") != std::string::npos);
  CHECK(count(child.output, "kiln: warning:") == 1);
  return child.output;
}

}  // namespace

// ---------------------------------------------------------------- disk full

// Child half: writes larger than 1 KiB fail with EFBIG, as on a full disk.
TEST_CASE("child: compile while the cache write fails part way") {
  if (!kiln_test::in_child()) return;
  const char* dir = std::getenv("KILN_TEST_FAULT_DIR");
  REQUIRE(dir != nullptr);
  // SIGXFSZ would kill the process at the limit; ignored, write() returns a short
  // count and then fails with EFBIG, which is what a full disk looks like to kiln.
  std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit = {1024, 1024};   // a cubin entry is several KiB: the write stops midway
  REQUIRE(setrlimit(RLIMIT_FSIZE, &limit) == 0);
  kiln::Runtime rt = make_runtime(dir);
  compile_at(rt, 1000);
  compile_at(rt, 2000);   // a second failing store: still one warning
  compile_at(rt, 1000);   // served from memory
  CHECK(rt.stats().compiles == 2);
  CHECK(rt.stats().disk_hits == 0);
}

TEST_CASE("fault: a cache write failing midway (disk full) keeps the kernel in memory, one warning, no partial file") {
  if (skip_without_nvrtc()) return;
  const std::string dir = fault_dir("disk_full");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string output = run_faulty_child(dir, "child: compile while the cache write fails part way");
  CHECK(output.find("File too large") != std::string::npos);   // the reason is in the warning
  check_cache_holds(dir, 0);

  // Without the limit, the same compile writes a valid entry, and a new runtime uses it.
  {
    kiln::Runtime rt = make_runtime(dir);
    compile_at(rt, 1000);
    CHECK(rt.stats().compiles == 1);
  }
  check_cache_holds(dir, 1);
  kiln::Runtime again = make_runtime(dir);
  compile_at(again, 1000);
  CHECK(again.stats().compiles == 0);
  CHECK(again.stats().disk_hits == 1);
  fs::remove_all(dir);
}

// ---------------------------------------------------------------- directory lost

// Child half: the cache directory is removed and then replaced by a regular file
// between compiles. Root ignores permission bits, so a file where the directory
// was is how "permission lost" is made to bite in a test that runs as root.
TEST_CASE("child: compile while the cache directory disappears") {
  if (!kiln_test::in_child()) return;
  const char* env = std::getenv("KILN_TEST_FAULT_DIR");
  REQUIRE(env != nullptr);
  const std::string dir = env;
  kiln::Runtime rt = make_runtime(dir);
  compile_at(rt, 1000);
  check_cache_holds(dir, 1);

  // Removed: kiln recreates it on the next store, without a warning.
  fs::remove_all(dir);
  compile_at(rt, 2000);
  check_cache_holds(dir, 1);   // only the new entry: the old one went with the directory

  // Replaced by a regular file: no store can succeed any more.
  fs::remove_all(dir);
  std::ofstream(dir) << "not a directory";
  compile_at(rt, 3000);
  compile_at(rt, 4000);   // a second failing store: still one warning
  compile_at(rt, 3000);   // served from memory
  compile_at(rt, 1000);   // compiled before the fault, still in memory
  CHECK(rt.stats().compiles == 4);
  CHECK(rt.stats().disk_hits == 0);
  CHECK(fs::is_regular_file(dir));   // kiln left the file alone
}

TEST_CASE("fault: a cache directory removed or replaced by a file between compiles keeps kernels in memory, one warning") {
  if (skip_without_nvrtc()) return;
  const std::string dir = fault_dir("dir_lost") + "/cache";
  fs::remove_all(fault_dir("dir_lost"));
  fs::create_directories(fault_dir("dir_lost"));
  const std::string output = run_faulty_child(dir, "child: compile while the cache directory disappears");
  CHECK(output.find("Not a directory") != std::string::npos);   // the reason is in the warning
  // Nothing was written beside or instead of the file.
  REQUIRE(fs::is_regular_file(dir));
  std::ifstream in(dir);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "not a directory");
  CHECK(files_under(fault_dir("dir_lost")).size() == 1);

  // With the directory back, the same compile writes a valid entry.
  fs::remove(dir);
  {
    kiln::Runtime rt = make_runtime(dir);
    compile_at(rt, 3000);
    CHECK(rt.stats().compiles == 1);
  }
  check_cache_holds(dir, 1);
  fs::remove_all(fault_dir("dir_lost"));
}
