// `kiln cache` end to end through the real binary: output and exit codes.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/disk_cache.h"
#include "runtime/nvrtc.h"
#include "runtime/pack.h"

namespace fs = std::filesystem;

namespace {

struct Run {
  int exit_code = -1;
  std::string output;
};

Run kiln_cli(const std::string& args, const std::string& env = "") {
  // timeout: a command that hangs (a FIFO opened for reading) fails with 124 instead of blocking.
  std::string cmd = env + " timeout 60 " + KILN_CLI + " " + args + " 2>&1";
  Run r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.output.append(buf, n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

kiln::CacheEntry entry(const std::string& op, const std::string& arch) {
  kiln::CacheEntry e;
  e.cubin.assign(4096, static_cast<char>(op.size()));
  e.metadata.kernels = {"kiln_" + op};
  e.metadata.template_name = "elementwise";
  e.metadata.grid = {264, 1, 1};
  e.metadata.block = {256, 1, 1};
  e.metadata.registers = 18;
  e.metadata.spill_stores = 0;
  e.metadata.spill_loads = 0;
  e.metadata.arch = arch;
  e.metadata.compiler_id = "nvrtc 13.0 (cli test)";
  e.metadata.op_name = op;
  e.metadata.bindings = "N=4096";
  return e;
}

}  // namespace

TEST_CASE("kiln cache ls / stats / verify / clear") {
  std::string dir = std::string(KILN_BINARY_DIR) + "/test_cli_cache";
  fs::remove_all(dir);
  std::string relu_key = kiln::cache_key("relu", "t", "c", "sm_90", {});
  std::string gelu_key = kiln::cache_key("gelu", "t", "c", "sm_80", {});
  {
    kiln::DiskCache cache(dir);
    REQUIRE(cache.store(relu_key, "sm_90", entry("relu", "sm_90")));
    REQUIRE(cache.store(gelu_key, "sm_80", entry("gelu", "sm_80")));
  }

  auto ls = kiln_cli("cache ls --dir " + dir);
  INFO(ls.output);
  CHECK(ls.exit_code == 0);
  CHECK(ls.output.find(relu_key) != std::string::npos);
  CHECK(ls.output.find("relu (N=4096)  elementwise  grid=264x1x1 block=256x1x1") != std::string::npos);
  CHECK(ls.output.find("gelu (N=4096)") != std::string::npos);
  CHECK(ls.output.find("sm_80") < ls.output.find("sm_90"));   // sorted by arch

  // --dir before the subcommand works too.
  auto stats = kiln_cli("cache --dir " + dir + " stats");
  INFO(stats.output);
  CHECK(stats.exit_code == 0);
  CHECK(stats.output.find("entries: 2") != std::string::npos);
  CHECK(stats.output.find("  sm_80: 1") != std::string::npos);
  CHECK(stats.output.find("  sm_90: 1") != std::string::npos);
  CHECK(stats.output.find("compiler: nvrtc 13.0 (cli test)") != std::string::npos);

  auto verify = kiln_cli("cache verify --dir " + dir);
  CHECK(verify.exit_code == 0);
  CHECK(verify.output.find("2 entries checked") != std::string::npos);
  CHECK(verify.output.find(", 0 bad") != std::string::npos);

  // Corrupt one entry: verify finds it (exit 1), --fix removes it.
  std::string path = kiln::DiskCache(dir).entry_path(gelu_key, "sm_80");
  std::vector<char> bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  bytes[bytes.size() - 1] ^= 0x01;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  auto bad = kiln_cli("cache verify --dir " + dir);
  INFO(bad.output);
  CHECK(bad.exit_code == 1);
  CHECK(bad.output.find("bad: " + path + ": checksum mismatch") != std::string::npos);
  CHECK(kiln_cli("cache ls --dir " + dir).output.find("INVALID: checksum mismatch") != std::string::npos);
  auto fixed = kiln_cli("cache verify --fix --dir " + dir);
  CHECK(fixed.exit_code == 1);   // it found a bad entry, even though it removed it
  CHECK(fixed.output.find("(removed)") != std::string::npos);
  CHECK_FALSE(fs::exists(path));
  CHECK(kiln_cli("cache verify --dir " + dir).exit_code == 0);

  // The default directory comes from KILN_CACHE_DIR.
  auto env_stats = kiln_cli("cache stats", "KILN_CACHE_DIR=" + dir);
  CHECK(env_stats.output.find("cache: " + dir) != std::string::npos);
  CHECK(env_stats.output.find("entries: 1") != std::string::npos);

  auto clear = kiln_cli("cache clear --dir " + dir);
  CHECK(clear.exit_code == 0);
  CHECK(clear.output.find("removed 2 files") != std::string::npos);   // relu's entry and the compilers list
  CHECK(kiln_cli("cache ls --dir " + dir).output.find("no entries in " + dir) != std::string::npos);
}

TEST_CASE("kiln cache without a subcommand is bad usage") {
  CHECK(kiln_cli("cache").exit_code == 2);
  CHECK(kiln_cli("cache frobnicate").exit_code == 2);
}

// ---------------------------------------------------------------- issue 16

namespace {

std::string scratch(const std::string& name) {
  std::string dir = std::string(KILN_BINARY_DIR) + "/test_cli_cache_16/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("kiln cache: a path that is not a cache is an error, not an empty listing") {
  // Before: each of these printed "0 entries checked, 0 bad" (or "no entries") and exited 0.
  const std::string dir = scratch("not_a_cache");
  const std::string absent = dir + "/typo", text = dir + "/notes.txt", fifo = dir + "/fifo.kilnpack";
  const std::string other = dir + "/specs";   // a directory with files but no v1/
  write_bytes(text, "hello\n");
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  fs::create_directories(other);
  write_bytes(other + "/a.kiln", "op a {}\n");
  for (const char* sub : {"ls", "stats", "verify", "clear"}) {
    CAPTURE(sub);
    auto missing = kiln_cli(std::string("cache ") + sub + " --dir " + absent);
    INFO(missing.output);
    CHECK(missing.exit_code == 1);
    CHECK(contains(missing.output, "kiln cache: " + absent + ": no such cache directory or .kilnpack"));
    for (const auto& path : {text, fifo, other}) {
      auto wrong = kiln_cli(std::string("cache ") + sub + " --dir " + path);
      INFO(wrong.output);
      CHECK(wrong.exit_code == 1);   // and promptly: the FIFO is never opened
      CHECK(contains(wrong.output, "kiln cache: " + path + ": not a cache directory or .kilnpack"));
    }
  }
  // An empty directory is an empty cache.
  fs::create_directories(dir + "/empty");
  CHECK(kiln_cli("cache verify --dir " + dir + "/empty").exit_code == 0);
}

TEST_CASE("kiln cache ls / verify / stats read a .kilnpack, a damaged one fails verify") {
  const std::string dir = scratch("pack");
  const std::string pack = dir + "/kernels.kilnpack";
  kiln::PackWriter writer("nvrtc 13.0 (cli test)");
  const std::string relu_key = kiln::cache_key("relu", "t", "c", "sm_90", {});
  const std::string gelu_key = kiln::cache_key("gelu", "t", "c", "sm_80", {});
  writer.add(relu_key, "sm_90", entry("relu", "sm_90"));
  writer.add(gelu_key, "sm_80", entry("gelu", "sm_80"));
  writer.write(pack);

  auto ls = kiln_cli("cache ls --dir " + pack);
  INFO(ls.output);
  CHECK(ls.exit_code == 0);
  CHECK(contains(ls.output, relu_key));
  CHECK(contains(ls.output, "relu (N=4096)  elementwise  grid=264x1x1 block=256x1x1"));
  CHECK(contains(ls.output, "gelu (N=4096)"));
  auto verify = kiln_cli("cache verify --dir " + pack);
  INFO(verify.output);
  CHECK(verify.exit_code == 0);
  CHECK(contains(verify.output, "2 entries checked in " + pack + ", 0 bad"));
  auto stats = kiln_cli("cache stats --dir " + pack);
  INFO(stats.output);
  CHECK(stats.exit_code == 0);
  CHECK(contains(stats.output, "entries: 2"));
  CHECK(contains(stats.output, "compiler: nvrtc 13.0 (cli test)"));
  auto clear = kiln_cli("cache clear --dir " + pack);
  CHECK(clear.exit_code == 1);
  CHECK(fs::exists(pack));

  // One flipped byte in the last cubin: verify names the entry and the problem.
  std::string bytes;
  {
    std::ifstream in(pack, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  bytes[bytes.size() - 5] ^= 0x40;
  write_bytes(pack, bytes);
  auto bad = kiln_cli("cache verify --dir " + pack);
  INFO(bad.output);
  CHECK(bad.exit_code == 1);
  CHECK(contains(bad.output, "bad: kiln: " + pack + ": entry "));
  CHECK(contains(bad.output, "checksum mismatch (corrupted)"));
  auto bad_ls = kiln_cli("cache ls --dir " + pack);
  CHECK(bad_ls.exit_code == 1);
  CHECK(contains(bad_ls.output, "checksum mismatch"));
  // Not a pack at all, though named like one.
  write_bytes(pack, std::string(1000, 'z'));
  auto garbage = kiln_cli("cache verify --dir " + pack);
  CHECK(garbage.exit_code == 1);
  CHECK(contains(garbage.output, "not a kiln pack (bad magic)"));
}

TEST_CASE("kiln cache verify sees non-regular entries, stale temporary files and a damaged v1/compilers, --fix") {
  const std::string dir = scratch("blind_spots");
  const std::string key = kiln::cache_key("relu", "t", "c", "sm_90", {});
  std::string good;
  {
    kiln::DiskCache cache(dir);
    REQUIRE(cache.store(key, "sm_90", entry("relu", "sm_90")));
    good = cache.entry_path(key, "sm_90");
  }
  const std::string sub = fs::path(good).parent_path().string();
  const std::string fifo = sub + "/" + std::string(32, 'a') + ".cubin";
  const std::string zero = sub + "/" + std::string(32, 'b') + ".cubin";
  const std::string folder = sub + "/" + std::string(32, 'c') + ".cubin";
  const std::string stale = good + ".tmp.999.abc.0";
  const std::string compilers = dir + "/v1/compilers";
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  fs::create_symlink("/dev/zero", zero);
  fs::create_directories(folder);
  write_bytes(stale, "half a cubin");
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(1));
  write_bytes(compilers, "\x03\x04garbage\n");

  // Before: "1 entries checked, 0 bad", exit 0.
  auto verify = kiln_cli("cache verify --dir " + dir);
  INFO(verify.output);
  CHECK(verify.exit_code == 1);
  CHECK(contains(verify.output, "bad: " + fifo + ": is a FIFO, not a regular file"));
  CHECK(contains(verify.output, "bad: " + zero + ": is a character device, not a regular file"));
  CHECK(contains(verify.output, "bad: " + folder + ": is a directory, not a regular file"));
  CHECK(contains(verify.output, "bad: " + stale + ": stale temporary file ("));
  CHECK(contains(verify.output, "bad: " + compilers + ": is damaged"));
  CHECK(contains(verify.output, "4 entries checked in " + dir + ", 5 bad"));
  auto ls = kiln_cli("cache ls --dir " + dir);
  CHECK(ls.exit_code == 0);
  CHECK(contains(ls.output, "INVALID: is a FIFO"));

  auto fixed = kiln_cli("cache verify --fix --dir " + dir);
  INFO(fixed.output);
  CHECK(fixed.exit_code == 1);   // it found problems, even though it fixed them
  CHECK(contains(fixed.output, fifo + ": is a FIFO, not a regular file (removed)"));
  CHECK(contains(fixed.output, compilers + ": is damaged"));
  CHECK(contains(fixed.output, "(rewritten)"));
  CHECK_FALSE(contains(fixed.output, "(not fixed)"));
  for (const auto& p : {fifo, zero, folder, stale}) CHECK_FALSE(fs::exists(fs::symlink_status(p)));
  CHECK(fs::exists("/dev/zero"));   // the link went, never its target
  CHECK(fs::exists(good));
  auto clean = kiln_cli("cache verify --dir " + dir);
  INFO(clean.output);
  CHECK(clean.exit_code == 0);
  CHECK(contains(clean.output, "1 entries checked in " + dir + ", 0 bad"));
}

TEST_CASE("kiln cache verify reports every unreadable directory and fails") {
  const std::string dir = scratch("unreadable");
  const std::string key = kiln::cache_key("relu", "t", "c", "sm_90", {});
  {
    kiln::DiskCache cache(dir);
    REQUIRE(cache.store(key, "sm_90", entry("relu", "sm_90")));
  }
  // Root reads a chmod 000 directory: take that power away from the kiln process.
  std::string as_user;
  if (geteuid() == 0) {
    if (std::system("setpriv --help >/dev/null 2>&1") != 0) {
      MESSAGE("skipped: running as root without setpriv, permission bits cannot be made to bite");
      return;
    }
    as_user = "setpriv --bounding-set=-dac_override,-dac_read_search";
  }
  std::vector<std::string> blocked;
  for (const char* name : {"00", "3f", "7e", "c1", "ff"}) {
    blocked.push_back(dir + "/v1/sm_90/" + name);
    fs::create_directories(blocked.back());
    fs::permissions(blocked.back(), fs::perms::none);
  }
  auto verify = kiln_cli("cache verify --dir " + dir, as_user);
  auto ls = kiln_cli("cache ls --dir " + dir, as_user);
  for (const auto& b : blocked) fs::permissions(b, fs::perms::owner_all);
  INFO(verify.output);
  // Before: the walk stopped at the first unreadable directory: "0 entries checked, 0 bad", exit 0.
  CHECK(verify.exit_code == 1);
  CHECK(contains(verify.output, "1 entries checked in " + dir + ", 5 bad"));
  for (const auto& b : blocked) CHECK(contains(verify.output, "bad: " + b + ": cannot read this directory (Permission denied)"));
  INFO(ls.output);
  CHECK(ls.exit_code == 1);   // the listing is incomplete
  CHECK(contains(ls.output, key));
  CHECK(contains(ls.output, "kiln cache: " + blocked[0] + ": cannot read this directory"));
}

TEST_CASE("KILN_LOG=info: kiln build logs its compiles and disk cache lookups too") {
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("skipped: NVRTC is not available: " << why);
    return;
  }
  const std::string dir = scratch("build_log");
  const std::string build = "build " + std::string(KILN_SOURCE_DIR) + "/specs/elementwise.kiln --op axpby -D N=1000 --arch sm_80 -o " + dir;
  auto first = kiln_cli(build, "KILN_LOG=info");
  INFO(first.output);
  CHECK(first.exit_code == 0);
  CHECK(contains(first.output, "kiln: info: disk cache miss: "));
  CHECK(contains(first.output, "kiln: info: compiled axpby (N=1000) kernel kiln_axpby_k0_elementwise for sm_80 in "));
  auto second = kiln_cli(build, "KILN_LOG=info");
  INFO(second.output);
  CHECK(contains(second.output, "kiln: info: disk cache hit: "));
  CHECK_FALSE(contains(second.output, "kiln: info: compiled"));
  auto quiet = kiln_cli(build, "KILN_LOG=");
  CHECK_FALSE(contains(quiet.output, "kiln: info:"));
}
