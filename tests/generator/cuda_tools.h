// Running the CUDA toolkit's command-line tools from the generator's tests (nvcc, ptxas,
// cuobjdump): a shell command's status and output, and where a tool is.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::test {

struct CommandResult {
  int status = -1;      // the exit code; -1 when it could not run or did not exit
  std::string output;   // stdout and stderr together
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A CUDA tool from $CUDA_HOME/bin, /usr/local/cuda/bin or PATH (where `make test` puts the build
// venv's cuobjdump and nvdisasm); "" when absent.
inline std::string find_tool(const std::string& name) {
  std::vector<std::string> candidates = {"/usr/local/cuda/bin/" + name};
  if (const char* home = std::getenv("CUDA_HOME")) candidates.insert(candidates.begin(), std::string(home) + "/bin/" + name);
  for (const auto& c : candidates)
    if (std::filesystem::exists(c)) return c;
  const CommandResult r = run_command("command -v " + name);
  if (r.status == 0 && !r.output.empty()) return r.output.substr(0, r.output.find('\n'));
  return "";
}

}  // namespace kiln::test
