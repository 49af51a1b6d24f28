#include "runtime/hash.h"

#include <cstdio>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace kiln {

namespace {
std::string to_hex(XXH128_hash_t h) {
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return hex;
}
}  // namespace

KeyHasher::KeyHasher() : state_(XXH3_createState()) {
  XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
}

KeyHasher::~KeyHasher() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

KeyHasher& KeyHasher::field(std::string_view bytes) {
  auto* s = static_cast<XXH3_state_t*>(state_);
  std::uint64_t size = bytes.size();
  XXH3_128bits_update(s, &size, sizeof size);
  XXH3_128bits_update(s, bytes.data(), bytes.size());
  return *this;
}

KeyHasher& KeyHasher::field(std::uint64_t value) {
  return field(std::string_view(reinterpret_cast<const char*>(&value), sizeof value));
}

std::string KeyHasher::digest() const {
  return to_hex(XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_)));
}

std::uint64_t checksum64(const void* data, std::size_t size) { return XXH64(data, size, 0); }

std::string hex128(std::string_view bytes) { return to_hex(XXH3_128bits(bytes.data(), bytes.size())); }

}  // namespace kiln
