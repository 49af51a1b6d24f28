// Fuzzes the disk cache's entry decoder (decode_cache_entry, what DiskCache::load runs on
// an entry file's bytes): any bytes decode or are rejected with a reason; a decoded entry
// encodes back to bytes that decode to the same entry. A crash, a sanitizer report or an
// exception escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "runtime/disk_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    std::string why, key;
    auto entry = kiln::decode_cache_entry(bytes, "", &why, &key);
    if (!entry) {
      if (why.empty()) std::abort();   // a rejection says why
      return 0;
    }
    // As DiskCache::load checks it: against the key the file claims.
    if (!kiln::decode_cache_entry(bytes, key, &why)) std::abort();
    const auto again = kiln::encode_cache_entry(key, *entry);
    auto round = kiln::decode_cache_entry(again, key, &why);
    if (!round || round->cubin != entry->cubin || !(round->metadata == entry->metadata)) std::abort();
  } catch (...) {
    std::abort();
  }
  return 0;
}
