#include "runtime/kernel_build.h"

#include <chrono>

#include <fmt/format.h>

#include "runtime/hash.h"
#include "runtime/log.h"
#include "runtime/nvrtc.h"

namespace kiln {

std::string kernel_cache_key(const std::string& text, const TemplateLibrary& templates, const std::string& compiler,
                             const std::string& arch) {
  return cache_key(text, templates.digest(), compiler, arch, compile_options(arch, {}));
}

std::string kernel_label(const std::string& op_name, const std::string& bindings, const std::string& entry) {
  return bindings.empty() ? fmt::format("{} kernel {}", op_name, entry)
                          : fmt::format("{} ({}) kernel {}", op_name, bindings, entry);
}

CacheEntry build_kernel(const KernelSource& kernel, const std::string& text, const std::string& arch,
                        const TemplateLibrary& templates, const std::string& op_name, const std::string& bindings,
                        double* compile_ms) {
  CompileRequest req;
  req.source = text;
  req.file_name = kernel.file_name;
  req.arch = arch;
  req.templates = &templates;
  CompileResult result = compile(req);
  CacheEntry entry;
  auto& m = entry.metadata;
  m.kernels = {kernel.entry};
  m.template_name = kernel.template_name;
  m.grid = kernel.grid;
  m.block = kernel.block;
  m.shared_bytes = kernel.shared_bytes;
  m.source_hash = hex128(text);
  m.arch = arch;
  m.compiler_id = compiler_id();
  m.op_name = op_name;
  m.bindings = bindings;
  m.created_unix = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  for (const auto& r : result.resources)
    if (r.kernel == kernel.entry || result.resources.size() == 1) {
      m.registers = r.registers;
      m.spill_stores = r.spill_stores;
      m.spill_loads = r.spill_loads;
      m.stack_bytes = r.stack_bytes;
    }
  if (log_level() >= LogLevel::info) {
    std::string message = fmt::format("compiled {} for {} in {:.0f} ms", kernel_label(op_name, bindings, kernel.entry),
                                      arch, result.compile_ms);
    if (log_level() >= LogLevel::debug)
      message += fmt::format(" [key {}, source {}]", kernel_cache_key(text, templates, m.compiler_id, arch), kernel.file_name);
    log_info(message);
  }
  if (compile_ms) *compile_ms = result.compile_ms;
  entry.cubin = std::move(result.cubin);
  return entry;
}

}  // namespace kiln
