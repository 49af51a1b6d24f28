#include "runtime/binary_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

namespace kiln {

bool is_temp_file_name(std::string_view file_name) { return file_name.find(".tmp.") != std::string_view::npos; }

bool write_file_atomic(const std::string& path, const char* data, std::size_t size, std::string* error) {
  namespace fs = std::filesystem;
  auto fail = [&](const std::string& what) {
    if (error != nullptr) *error = what;
    return false;
  };
  std::error_code ec;
  fs::path target(path);
  fs::create_directories(target.parent_path(), ec);
  if (ec) return fail(fmt::format("cannot create directory {}: {}", target.parent_path().string(), ec.message()));

  // pid + thread + a process-wide counter: unique across processes and threads.
  static std::atomic<unsigned> counter{0};
  std::string temp = fmt::format("{}.tmp.{}.{:x}.{}", path, static_cast<long>(::getpid()),
                                 std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0xffffff, counter++);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return fail(fmt::format("cannot create {}: {}", temp, std::strerror(errno)));
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string reason = std::strerror(errno);
      ::close(fd);
      ::unlink(temp.c_str());
      return fail(fmt::format("cannot write {}: {}", temp, reason));
    }
    done += static_cast<std::size_t>(n);
  }
  // No fsync: a crash can leave an empty or short file, which readers reject
  // by its header and checksum; the cost of fsync per kernel is not worth it.
  if (::close(fd) != 0) {
    std::string reason = std::strerror(errno);
    ::unlink(temp.c_str());
    return fail(fmt::format("cannot write {}: {}", temp, reason));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    ::unlink(temp.c_str());
    return fail(fmt::format("cannot rename {} to {}: {}", temp, path, reason));
  }
  return true;
}

}  // namespace kiln
