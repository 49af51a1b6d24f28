// Fuzzes the .kilnpack reader (Pack::parse, what Pack::open runs on a file's bytes): any
// bytes must give a Pack or a kiln::ArgumentError saying what is wrong, never a crash, a
// sanitizer report, an allocation sized by a corrupt length, or another exception.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/pack.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const kiln::Pack pack = kiln::Pack::parse(bytes, "fuzz.kilnpack");
    for (const auto& item : pack.entries())
      if (pack.find(item.key) == nullptr) std::abort();   // every listed key is found
    (void)pack.describe_contents();
  } catch (const kiln::InternalError&) {
    std::abort();
  } catch (const kiln::ArgumentError&) {
  }
  return 0;
}
