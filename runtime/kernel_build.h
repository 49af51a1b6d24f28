// Turning one generated kernel into a cache entry: the key it is stored under and
// the NVRTC compile with its metadata. Shared by the Runtime and `kiln build`.
#pragma once

#include <string>

#include "generator/emit/emit.h"
#include "generator/emit/templates.h"
#include "runtime/disk_cache.h"

namespace kiln {

// The disk / pack key of a kernel's source text (generated, or an override).
std::string kernel_cache_key(const std::string& text, const TemplateLibrary& templates, const std::string& compiler,
                             const std::string& arch);

// How log lines name a kernel: "axpby (N=1024) kernel kiln_axpby_k0_elementwise".
std::string kernel_label(const std::string& op_name, const std::string& bindings, const std::string& entry);

// Compiles `text` (the source of `kernel`) for `arch`; metadata names the op and its bindings.
// Throws CompileError. *compile_ms receives NVRTC's time. Logs the compile at KILN_LOG=info.
CacheEntry build_kernel(const KernelSource& kernel, const std::string& text, const std::string& arch,
                        const TemplateLibrary& templates, const std::string& op_name, const std::string& bindings,
                        double* compile_ms);

}  // namespace kiln
