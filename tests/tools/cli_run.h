// Runs the real `kiln` binary (KILN_CLI) with arguments and captures its exit
// code and output (stdout and stderr together), for end-to-end CLI tests.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace kiln_test {

struct CliRun {
  int exit_code = -1;   // -1: killed by a signal (a crash)
  bool timed_out = false;   // still running after the time limit (a hang), then killed
  std::string output;
};

// Every run is bounded (`timeout`), so a command that hangs fails its test instead of
// blocking the suite.
// `prefix` goes before the command in the shell line: "cd DIR &&" or "env NAME=VALUE".
inline CliRun run_kiln_with(const std::string& prefix, const std::string& args, int seconds) {
  const std::string cmd = prefix + " timeout -k 5 " + std::to_string(seconds) + " " + std::string(KILN_CLI) + " " +
                          args + " 2>&1";
  CliRun r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (r.exit_code == 124 || r.exit_code == 137) {   // timeout's own codes: kiln never uses them
    r.timed_out = true;
    r.exit_code = -1;
  } else if (r.exit_code > 128) {   // the shell's code for a child killed by a signal
    r.exit_code = -1;
  }
  return r;
}

inline CliRun run_kiln(const std::string& args, int seconds = 120) { return run_kiln_with("", args, seconds); }
// With one environment assignment, e.g. "KILN_ARCH=sm_80".
inline CliRun run_kiln_env(const std::string& assignment, const std::string& args, int seconds = 120) {
  return run_kiln_with("env '" + assignment + "'", args, seconds);
}
// In another working directory.
inline CliRun run_kiln_in(const std::string& dir, const std::string& args, int seconds = 120) {
  return run_kiln_with("cd '" + dir + "' &&", args, seconds);
}

}  // namespace kiln_test
