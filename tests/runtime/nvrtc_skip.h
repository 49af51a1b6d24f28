// Tests that compile through NVRTC skip, with the reason, where it cannot be loaded.
#pragma once

#include <string>

#include <doctest/doctest.h>

#include "runtime/nvrtc.h"

namespace kiln_test {

inline bool skip_without_nvrtc() {
  std::string why;
  if (kiln::nvrtc_available(&why)) return false;
  MESSAGE("skipped: NVRTC is not available: " << why);
  return true;
}

}  // namespace kiln_test
