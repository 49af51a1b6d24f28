// `kiln cache` end to end through the real binary: output and exit codes.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/binary_io.h"
#include "runtime/disk_cache.h"

namespace fs = std::filesystem;

namespace {

struct Run {
  int exit_code = -1;
  std::string output;
};

Run kiln_cli(const std::string& args, const std::string& env = "") {
  std::string cmd = env + " " + KILN_CLI + " " + args + " 2>&1";
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
  auto bytes = *kiln::read_file_bytes(path);
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
