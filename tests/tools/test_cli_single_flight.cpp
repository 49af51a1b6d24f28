// One compile per kernel across processes sharing a cache directory ([Note: one compile per key
// across processes] in runtime/disk_cache.cpp), end to end through concurrent `kiln build`s:
// the NVRTC count, a lock left by a killed compiler, and a live holder that outlasts the timeout.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "runtime/nvrtc.h"

namespace fs = std::filesystem;

namespace {

std::string shell(const std::string& cmd) {
  std::string out;
  FILE* pipe = popen(("(" + cmd + ") 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  pclose(pipe);
  return out;
}

// The sum of every "N compiled" that `kiln build` printed: NVRTC runs.
int compiled(const std::string& output) {
  int total = 0;
  const std::regex re("([0-9]+) compiled");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), re); it != std::sregex_iterator(); ++it)
    total += std::stoi((*it)[1]);
  return total;
}

std::string build_line(const fs::path& cache, const std::string& env = "") {
  return env + " timeout 120 " + std::string(KILN_CLI) + " build " + KILN_SOURCE_DIR +
         "/specs/views.kiln --arch sm_90a -j1 -o " + cache.string();
}

// Every entry's lock path of a filled cache, relative to it.
std::vector<fs::path> lock_paths(const fs::path& cache) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(cache))
    if (e.path().extension() == ".cubin") out.push_back(fs::relative(e.path(), cache).string() + ".lock");
  return out;
}

std::string host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// A scratch directory with one process's build in <root>/one: the kernel count and their keys.
struct Scratch {
  fs::path root;
  int kernels = 0;
  explicit Scratch(const std::string& name) : root(fs::temp_directory_path() / (name + "_" + std::to_string(getpid()))) {
    fs::remove_all(root);
    kernels = compiled(shell(build_line(root / "one")));
  }
  ~Scratch() { fs::remove_all(root); }
};

bool skip_without_nvrtc() {
  std::string why;
  if (kiln::nvrtc_available(&why)) return false;
  MESSAGE("skipped: NVRTC not loadable (" << why << ")");
  return true;
}

}  // namespace

TEST_CASE("kiln build: processes sharing a cold cache compile each kernel once") {
  if (skip_without_nvrtc()) return;
  const Scratch s("kiln_single_flight");
  const fs::path& root = s.root;
  const int kernels = s.kernels;
  REQUIRE(kernels >= 10);   // enough keys for the processes to contend on
  for (int processes : {2, 8}) {
    CAPTURE(processes);
    const fs::path cache = root / std::to_string(processes);
    std::string line = "(";
    for (int i = 0; i < processes; ++i) line += build_line(cache) + " & ";
    line += "wait)";
    const std::string out = shell(line);
    CHECK(compiled(out) == kernels);   // each kernel compiled by one process, loaded by the others
    CHECK(out.find("error") == std::string::npos);
    CHECK(lock_paths(cache).size() == static_cast<std::size_t>(kernels));
    for (const auto& lock : lock_paths(cache)) CHECK(!fs::exists(cache / lock));   // every lock released
  }
}

TEST_CASE("kiln build: a compile lock whose process is gone (kill -9 mid-compile) is broken at once") {
  if (skip_without_nvrtc()) return;
  const Scratch s("kiln_lock_dead");
  const fs::path& root = s.root;
  const int kernels = s.kernels;
  {
    // Half the locks name a reaped process, half a killed one its parent has not reaped yet
    // (a zombie, which still answers kill(pid, 0)).
    const pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, nullptr, 0);
    const pid_t zombie = fork();
    if (zombie == 0) _exit(0);
    const fs::path cache = root / "dead";
    bool odd = false;
    for (const auto& lock : lock_paths(root / "one")) {
      fs::create_directories((cache / lock).parent_path());
      std::ofstream(cache / lock) << ((odd = !odd) ? dead : zombie) << " " << host() << "\n";
    }
    const auto start = std::chrono::steady_clock::now();
    const std::string out = shell(build_line(cache, "KILN_CACHE_LOCK_TIMEOUT_S=600"));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(60));
    CHECK(compiled(out) == kernels);
    CHECK(out.find("its process is gone") != std::string::npos);
    waitpid(zombie, nullptr, 0);
    CHECK(shell(std::string(KILN_CLI) + " cache --dir " + cache.string() + " verify; echo rc=$?").find("rc=0") != std::string::npos);
  }
}

TEST_CASE("kiln build: a live lock holder is waited for up to KILN_CACHE_LOCK_TIMEOUT_S, then its lock is broken") {
  if (skip_without_nvrtc()) return;
  const Scratch s("kiln_lock_live");
  const fs::path& root = s.root;
  const int kernels = s.kernels;
  {
    const fs::path cache = root / "live";
    const auto locks = lock_paths(root / "one");
    for (const auto& lock : locks) {
      fs::create_directories((cache / lock).parent_path());
      std::ofstream(cache / lock) << getpid() << " " << host() << "\n";   // this test process: alive
    }
    const auto start = std::chrono::steady_clock::now();
    const std::string out = shell(build_line(cache, "KILN_CACHE_LOCK_TIMEOUT_S=1"));
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::seconds(1));
    CHECK(compiled(out) == kernels);
    CHECK(out.find("removed the stale compile lock") != std::string::npos);
  }
}

TEST_CASE("kiln build: a bad KILN_CACHE_LOCK_TIMEOUT_S is an error naming it") {
  if (skip_without_nvrtc()) return;
  const fs::path cache = fs::temp_directory_path() / ("kiln_lock_bad_" + std::to_string(getpid()));
  const std::string out = shell(build_line(cache, "KILN_CACHE_LOCK_TIMEOUT_S=soon") + "; echo rc=$?");
  CHECK(out.find("KILN_CACHE_LOCK_TIMEOUT_S: expected whole seconds from 0 to 86400, got 'soon'") != std::string::npos);
  CHECK(out.find("rc=0") == std::string::npos);
  fs::remove_all(cache);
}
