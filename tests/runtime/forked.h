// Test helpers that need a process of their own:
// - run_forked: runs a function in a forked child with a time limit, so that a
//   "does not hang" test fails instead of blocking the suite;
// - drop_permission_override: makes permission bits bite for root (tests run as
//   root in CI, and root reads a chmod 000 directory), in a child only.
#pragma once

#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

namespace kiln_test {

// fn's result, or nullopt when the child hung past `seconds` (it is killed) or died.
inline std::optional<std::string> run_forked(const std::function<std::string()>& fn, int seconds = 20) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  const pid_t pid = fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) {
    close(fds[0]);
    std::string result;
    try {
      result = fn();
    } catch (const std::exception& e) {
      result = std::string("exception: ") + e.what();
    }
    for (std::size_t done = 0; done < result.size();) {
      const ssize_t n = write(fds[1], result.data() + done, result.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  bool exited = false;
  // Read while waiting: a result larger than the pipe's buffer must not block the child.
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  for (;;) {
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    if (exited) break;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      continue;   // drain what is left
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      close(fds[0]);
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  close(fds[0]);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

// Drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from this process's effective set
// (a no-op for a user that never had them). Call it in a forked child only.
inline bool drop_permission_override() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  for (int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH}) data[cap / 32].effective &= ~(1u << (cap % 32));
  return syscall(SYS_capset, &header, data) == 0;
}

}  // namespace kiln_test
