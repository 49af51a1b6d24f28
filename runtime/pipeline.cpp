#include "runtime/pipeline.h"

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "generator/support/assert.h"
#include "generator/support/file_read.h"
#include "runtime/hash.h"
#include "runtime/log.h"
#include "runtime/nvrtc.h"
#include "runtime/pack.h"

namespace kiln {

namespace {

namespace fs = std::filesystem;

// How log lines name a kernel: "axpby (N=1024) kernel kiln_axpby_k0_elementwise".
std::string kernel_label(const std::string& op_name, const std::string& bindings, const std::string& entry) {
  return bindings.empty() ? fmt::format("{} kernel {}", op_name, entry)
                          : fmt::format("{} ({}) kernel {}", op_name, bindings, entry);
}

std::string text_cache_key(const std::string& text, const TemplateLibrary& templates, const std::string& compiler,
                           const std::string& arch) {
  return cache_key(text, templates.digest(), compiler, arch, compile_options(arch, {}));
}

// NVRTC on `text` (the source of `kernel`, or its override); the metadata names the op and
// its bindings. Throws CompileError. Logs the compile at KILN_LOG=info.
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
      message += fmt::format(" [key {}, source {}]", text_cache_key(text, templates, m.compiler_id, arch), kernel.file_name);
    log_info(message);
  }
  *compile_ms = result.compile_ms;
  entry.cubin = std::move(result.cubin);
  return entry;
}

}  // namespace

std::string bindings_text(const ir::BoundIr& bound, const Consts& consts) {
  std::string s;
  for (const auto& [k, v] : bound.dims) s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
  for (const auto& [k, v] : consts) s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
  return s;
}

Pipeline::Pipeline(const PipelineOptions& options)
    : templates_(options.template_dir), override_dir_(options.override_dir), shapes_(options.shapes) {
  if (!options.cache_dir.empty()) disk_ = std::make_unique<DiskCache>(options.cache_dir);
}

std::shared_ptr<const ir::Ir> Pipeline::check(const SpecFile& spec, std::string_view op, const Consts& consts,
                                              std::vector<std::string>* warnings) const {
  auto ir = check_op(spec, op, consts, warnings);
  if (shapes_ == "declared") return ir;
  // Options::shapes: "specialized" bakes every dim in; "generic" also makes dyn every dim that
  // sizes only elementwise kernels (generic_dims).
  const std::set<std::string> generic = shapes_ == "generic" ? generic_dims(*ir) : std::set<std::string>{};
  auto changed = std::make_shared<ir::Ir>(*ir);
  for (auto& d : changed->dims) d.dynamic = shapes_ == "generic" ? d.dynamic || generic.count(d.name) > 0 : false;
  return changed;
}

void Pipeline::check_all(const SpecFile& spec, std::vector<std::string>* warnings) const {
  kiln::check_all(spec, {}, warnings);
}

std::shared_ptr<const ir::BoundIr> Pipeline::bind(std::shared_ptr<const ir::Ir> ir,
                                                  const std::map<std::string, ir::DimValue>& dims) const {
  return std::make_shared<const ir::BoundIr>(ir::bind(std::move(ir), dims));
}

std::shared_ptr<const ir::BoundIr> Pipeline::bind(std::shared_ptr<const ir::Ir> ir,
                                                  const std::vector<std::vector<std::int64_t>>& param_shapes,
                                                  const std::vector<std::vector<std::int64_t>>& output_shapes) const {
  return std::make_shared<const ir::BoundIr>(ir::bind_from_shapes(std::move(ir), param_shapes, output_shapes));
}

Plan Pipeline::plan(std::shared_ptr<const ir::BoundIr> bound, const Target& target) const {
  return make_plan(std::move(bound), target);
}

std::vector<KernelSource> Pipeline::emit(const Plan& plan) const { return kiln::emit(plan, templates_); }

std::string Pipeline::cache_key(const KernelSource& source, const std::string& arch, const std::string& compiler) const {
  return text_cache_key(source.text, templates_, compiler, arch);
}

std::string Pipeline::content_key(const KernelSource& source, const std::string& arch) const {
  KeyHasher h;
  h.field(source.text).field(templates_.digest()).field(arch);
  for (const auto& o : compile_options(arch, {})) h.field(o);
  return h.digest();
}

void Pipeline::add_pack(std::unique_ptr<Pack> pack) {
  std::lock_guard<std::mutex> lock(mutex_);
  packs_.push_back(std::shared_ptr<const Pack>(std::move(pack)));
}

std::vector<std::shared_ptr<const Pack>> Pipeline::packs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return packs_;
}

Cubin Pipeline::compile(const KernelSource& source, const std::string& arch, const std::string& op_name,
                        const std::string& bindings) {
  std::string text = source.text;
  bool overridden = false;
  if (!override_dir_.empty()) {
    const fs::path p = fs::path(override_dir_) / source.file_name;
    if (fs::exists(p)) {
      text = read_regular_file(p.string(), kMaxSourceBytes, "override source");
      overridden = true;
      log_warning(fmt::format("using {} in place of the generated source of {}", p.string(), source.entry));
    }
  }
  const std::string label = kernel_label(op_name, bindings, source.entry);
  Cubin out;
  // 1. preloaded packs: keyed with the compiler id that built them.
  if (!overridden)
    for (const auto& pack : packs()) {
      const std::string key = text_cache_key(text, templates_, pack->compiler_id(), arch);
      if (const CacheEntry* entry = pack->find(key)) {
        if (log_level() >= LogLevel::debug) log_info(fmt::format("pack hit: {} for {} [key {}, {}]", label, arch, key, pack->path()));
        else log_info(fmt::format("pack hit: {} for {}", label, arch));
        out.entry = *entry;
        out.origin = CubinOrigin::pack;
        cache_hits_.fetch_add(1);
        return out;
      }
    }
  std::string why;
  const bool have_nvrtc = nvrtc_available(&why);
  // 2. the disk cache. Without NVRTC the compiler id is unknown: try those that wrote into it.
  const bool use_disk = disk_ && !overridden;
  auto key_for = [&](const std::string& id) { return text_cache_key(text, templates_, id, arch); };
  const std::string key = have_nvrtc ? key_for(compiler_id()) : std::string();
  auto from_disk = [&](CacheEntry entry) {
    out.entry = std::move(entry);
    out.origin = CubinOrigin::disk;
    cache_hits_.fetch_add(1);
    return out;
  };
  if (use_disk) {
    auto entry = have_nvrtc ? disk_->load(key, arch, label) : disk_->load_any_compiler(key_for, arch, label);
    if (entry) return from_disk(std::move(*entry));
  }
  // 3. NVRTC (unless another process compiles the same kernel meanwhile), then the disk.
  KILN_CHECK(have_nvrtc, CompileError,
             "kernel {} of op {} ({}) for {} is in no preloaded pack or cache and NVRTC cannot be loaded: {}",
             source.entry, op_name, bindings, arch, why);
  DiskCache::CompileLock turn;   // held until the entry is stored
  if (use_disk) {
    auto waited = disk_->await_compile_turn(key, arch, label);
    if (waited.entry) return from_disk(std::move(*waited.entry));
    turn = std::move(waited.lock);
  }
  out.entry = build_kernel(source, text, arch, templates_, op_name, bindings, &out.compile_ms);
  compiles_.fetch_add(1);
  if (use_disk) out.stored = disk_->store(key, arch, out.entry);
  out.origin = overridden ? CubinOrigin::override_file : CubinOrigin::nvrtc;
  return out;
}

std::string Pipeline::ptx(const KernelSource& source, const std::string& arch) const {
  CompileRequest req;
  req.source = source.text;
  req.file_name = source.file_name;
  req.arch = arch;
  req.templates = &templates_;
  req.want_ptx = true;
  return kiln::compile(req).ptx;
}

Specialization Pipeline::run(const PipelineRequest& request, Stage last) {
  KILN_ASSERT(request.spec != nullptr, "Pipeline::run without a spec");
  Specialization s;
  s.ir = check(*request.spec, request.op, request.consts);
  if (last == Stage::check) return s;
  s.bound = bind(s.ir, request.dims);
  s.bindings = bindings_text(*s.bound, request.consts);
  if (last == Stage::bind) return s;
  s.plan = plan(s.bound, request.target);
  if (last == Stage::plan) return s;
  s.sources = emit(s.plan);
  if (last == Stage::emit) return s;
  for (const auto& source : s.sources) s.cubins.push_back(compile(source, s.plan.target.arch, request.op, s.bindings));
  return s;
}

}  // namespace kiln
