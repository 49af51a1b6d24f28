#include "generator/support/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "kiln/kiln.h"

namespace kiln {

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

FileRead failed(ReadStatus status, std::string reason) {
  FileRead r;
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

}  // namespace

FileRead try_read_regular_file(const std::string& path, std::uint64_t max_bytes) {
  if (path.empty()) return failed(ReadStatus::missing, "an empty path names no file");
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever. fstat on the open
  // descriptor (not stat on the name) so a file swapped between the check and the read is seen.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return failed(ReadStatus::missing, "no such file");
    if (err == EISDIR) return failed(ReadStatus::not_regular, "is a directory, not a regular file");
    return failed(ReadStatus::io_error, std::strerror(err));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return failed(ReadStatus::io_error, std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return failed(ReadStatus::not_regular, fmt::format("is {}, not a regular file", file_kind(st.st_mode)));
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    return failed(ReadStatus::too_large, fmt::format("is {} bytes, over the limit of {} bytes", st.st_size, max_bytes));
  FileRead r;
  r.data.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  // A regular file may still grow while it is read: read at most max_bytes + 1 in all.
  for (;;) {
    if (got == r.data.size()) {
      if (r.data.size() > max_bytes) return failed(ReadStatus::too_large, fmt::format("grew over the limit of {} bytes", max_bytes));
      r.data.resize(r.data.size() + 4096);
    }
    const ssize_t n = ::read(fd, r.data.data() + got, r.data.size() - got);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return failed(ReadStatus::io_error, std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  r.data.resize(got);
  if (got > max_bytes) return failed(ReadStatus::too_large, fmt::format("grew over the limit of {} bytes", max_bytes));
  return r;
}

std::string read_regular_file(const std::string& path, std::uint64_t max_bytes, const char* what) {
  FileRead r = try_read_regular_file(path, max_bytes);
  switch (r.status) {
    case ReadStatus::ok: return std::move(r.data);
    case ReadStatus::io_error: throw IoError(fmt::format("cannot read {} '{}': {}", what, path, r.reason));
    default: throw ArgumentError(fmt::format("cannot read {} '{}': {}", what, path, r.reason));
  }
}

}  // namespace kiln
