// Every KILN_* environment variable is read here and nowhere else.
//
//   KILN_CACHE_DIR      disk cache directory (default $XDG_CACHE_HOME/kiln, else ~/.cache/kiln)
//   KILN_ARCH           target arch when Options::arch is empty (sm_80 ... sm_90a)
//   KILN_DUMP           comma list of plan,source,ptx,sass: written for every new specialization
//   KILN_DUMP_DIR       where dumps go (default ./kiln_dump)
//   KILN_OVERRIDE_DIR   <dir>/<op>_k<i>.cu replaces the generated source of that kernel
//   KILN_TEMPLATE_PATH  a directory of .cuh / .cu.in files adding to or overriding the built-in templates
//   KILN_LOG            quiet | warning (default) | info | debug
//   KILN_SHAPES         Options::shapes: generic (default) | declared | specialized
//   KILN_TUNING         Options::tuning: off | stored (default) | on-first-call
//   KILN_TUNING_DEVICE  the device name tuned picks are looked up for (default: the current GPU's)
//   KILN_CACHE_LOCK_TIMEOUT_S  how long a process waits for another's compile of the same kernel (300)
//   KILN_NVRTC_LIB, KILN_CUDA_DRIVER_LIB   library overrides (read by nvrtc.cpp / driver.cpp)
#pragma once

#include <string>

#include "kiln/kiln.h"

namespace kiln {

struct DumpFlags {
  bool plan = false, source = false, ptx = false, sass = false;
  bool any() const { return plan || source || ptx || sass; }
};

// Parses "plan,source,ptx,sass" (also "all"); throws kiln::ArgumentError naming an unknown item.
DumpFlags parse_dump_flags(const std::string& text);

// Options with every empty field filled from the environment (when
// options.use_environment) and the defaults. Arch stays empty when neither
// the options nor KILN_ARCH name one: the runtime then asks the device.
Options resolve_options(Options options);

// KILN_CACHE_LOCK_TIMEOUT_S (seconds, >= 0; default 300): [Note: one compile per key across
// processes] in disk_cache.cpp. Throws kiln::ArgumentError for a value that is not a number.
int cache_lock_timeout_s();
// KILN_TUNING_DEVICE when options.use_environment, else "".
std::string tuning_device_override(const Options& options);

}  // namespace kiln
