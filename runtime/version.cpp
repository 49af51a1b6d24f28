#include "kiln/kiln.h"

namespace kiln {
// The library's version, for the disk-cache key and `kiln --version`.
const char* library_version() { return KILN_VERSION; }
}  // namespace kiln
