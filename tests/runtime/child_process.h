// Runs one test case of this very test binary in a fresh process with extra
// environment. NVRTC and the driver are loaded once per process, so "the library
// is missing" can only be observed in a process that never loaded it; fork()
// would inherit the loaded state.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln_test {

struct ChildResult {
  int exit_code = -1;
  std::string output;   // stdout and stderr together
};

// The child runs only `test_case`; that case does its work only when
// KILN_TEST_CHILD=1 (set here), so in a normal run it is an empty pass.
inline ChildResult run_test_case_in_child(const std::string& env, const std::string& test_case) {
  std::string cmd = "env KILN_TEST_CHILD=1 " + env + " /proc/" + std::to_string(getpid()) +
                    "/exe --no-version --test-case='" + test_case + "' 2>&1";
  ChildResult result;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) result.output.append(buf, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline bool in_child() {
  const char* v = std::getenv("KILN_TEST_CHILD");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace kiln_test
