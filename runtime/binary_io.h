// Little-endian byte encoding for kiln's on-disk formats (cache entries, packs),
// so a file written on one machine reads the same on another, plus the atomic
// write (unique temp file in the same directory, then rename). Reading goes
// through generator/support/file_read.h (regular files only, capped).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

class ByteWriter {
 public:
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void bytes(std::string_view b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void bytes(const std::vector<char>& b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void str(std::string_view s) { u32(static_cast<std::uint32_t>(s.size())); bytes(s); }   // u32 length + bytes
  std::vector<char>& buffer() { return out_; }
  std::size_t size() const { return out_.size(); }
  // Overwrites 8 bytes at `at` (for fields known only after the payload).
  void patch_u64(std::size_t at, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  }

 private:
  void put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::vector<char> out_;
};

// Reads from a byte range; every read checks bounds and sets ok() false (and
// returns zero / empty) instead of running past the end of a truncated file.
class ByteReader {
 public:
  ByteReader(const char* data, std::size_t size) : data_(data), size_(size) {}
  std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
  std::uint64_t u64() { return get(8); }
  std::string_view bytes(std::uint64_t n) {
    if (!ok_ || n > size_ - pos_) { ok_ = false; return {}; }
    std::string_view v(data_ + pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return v;
  }
  std::string str() { return std::string(bytes(u32())); }
  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return size_ - pos_; }
  bool ok() const { return ok_; }

 private:
  std::uint64_t get(int n) {
    if (!ok_ || static_cast<std::size_t>(n) > size_ - pos_) { ok_ = false; return 0; }
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(data_[pos_ + i])) << (8 * i);
    pos_ += static_cast<std::size_t>(n);
    return v;
  }
  const char* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

// Writes `data` to a uniquely named temporary file beside `path`, then renames it
// over `path`: readers see the old file or the new one, never a partial one, and
// concurrent writers of one path each rename a complete file (the last wins).
// Creates missing parent directories. On failure returns false, removes the
// temporary file and puts the reason in *error.
bool write_file_atomic(const std::string& path, const char* data, std::size_t size, std::string* error);

// True for the temporary files write_file_atomic creates (".tmp." in the name).
bool is_temp_file_name(std::string_view file_name);

}  // namespace kiln
