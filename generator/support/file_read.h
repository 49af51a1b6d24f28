// Reading a file a user named (a spec, a shapes list, a pack, a cache entry, an override):
// only regular files, opened without blocking and capped in size, so a FIFO, a device such
// as /dev/zero or a directory is a clear error instead of a hang or an exhausted memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

// Size caps, one per kind of file: each is far above any real file of that kind.
inline constexpr std::uint64_t kMaxSpecBytes = 8ull << 20;      // a spec or a --shapes list
inline constexpr std::uint64_t kMaxSourceBytes = 64ull << 20;   // an override .cu, a template
inline constexpr std::uint64_t kMaxCubinBytes = 256ull << 20;   // one cache entry
inline constexpr std::uint64_t kMaxPackBytes = 16ull << 30;     // a .kilnpack bundle

enum class ReadStatus { ok, missing, not_regular, too_large, io_error };

struct FileRead {
  ReadStatus status = ReadStatus::ok;
  std::string data;    // the whole file when ok
  std::string reason;  // what went wrong, for a message ("is a FIFO, not a regular file")
  bool ok() const { return status == ReadStatus::ok; }
};

// Never throws for a file-system condition: the status says what happened.
FileRead try_read_regular_file(const std::string& path, std::uint64_t max_bytes);

// Throws: ArgumentError for a missing, non-regular or oversized file (the user named the
// wrong thing), IoError for a read failure. `what` names the file's role in messages.
std::string read_regular_file(const std::string& path, std::uint64_t max_bytes, const char* what);

}  // namespace kiln
