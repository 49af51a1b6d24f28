// Runs the real `kiln` binary (KILN_CLI) with arguments and captures its exit
// code and output (stdout and stderr together), for end-to-end CLI tests.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace kiln_test {

struct CliRun {
  int exit_code = -1;   // -1: killed by a signal (a crash)
  std::string output;
};

inline CliRun run_kiln(const std::string& args) {
  const std::string cmd = std::string(KILN_CLI) + " " + args + " 2>&1";
  CliRun r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace kiln_test
