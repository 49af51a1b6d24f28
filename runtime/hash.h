// Hashing helpers for the cache and packs (xxHash, inlined): a streaming
// XXH3-128 hasher that length-prefixes every field, so ("ab","c") and ("a","bc")
// never collide, and XXH64 checksums of payloads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

// Fields are hashed as (u64 length, bytes); digest() is 32 lowercase hex chars.
class KeyHasher {
 public:
  KeyHasher();
  ~KeyHasher();
  KeyHasher(const KeyHasher&) = delete;
  KeyHasher& operator=(const KeyHasher&) = delete;
  KeyHasher& field(std::string_view bytes);
  KeyHasher& field(std::uint64_t value);
  std::string digest() const;

 private:
  void* state_;   // XXH3_state_t, kept opaque so xxhash.h stays out of headers
};

std::uint64_t checksum64(const void* data, std::size_t size);
std::string hex128(std::string_view bytes);   // XXH3-128 of bytes, as hex

}  // namespace kiln
