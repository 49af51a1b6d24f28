// The Runtime facade: programs, ops, specializations, the memory tier, launches.
//
// [Note: the two cache tiers and single flight]
// Memory tier: each Op keeps a map from what a call can vary — every tensor's
// shape, whether all pointers are 16-byte aligned, and the CUDA context — to a
// ready Executable. A hit costs a hash of a few integers: no binding, planning
// or source generation, so a repeated call is that lookup plus cuLaunchKernel.
// Below it, the runtime keeps one slot per distinct generated kernel (keyed by
// the source, the template library, the arch and the compile options, i.e. the
// disk key without the compiler id). A slot is filled exactly once under
// std::call_once — by Pipeline::compile: a preloaded pack, the disk cache, or NVRTC — however
// many threads, ops or executables ask for it (single flight); an exception
// leaves the slot empty so a later call retries. Modules are loaded per CUDA
// context, once per (context, slot).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

#include <cuda.h>

#include "generator/support/assert.h"
#include "generator/support/diagnostics.h"
#include "generator/emit/emit.h"
#include "generator/frontend/frontend.h"
#include "generator/plan/plan.h"
#include "kiln/dyn_dim.h"
#include "kiln/kiln.h"
#include "runtime/driver.h"
#include "runtime/env.h"
#include "runtime/hash.h"
#include "runtime/host_tensor.h"
#include "runtime/log.h"
#include "runtime/nvrtc.h"
#include "runtime/pack.h"
#include "runtime/pipeline.h"
#include "runtime/tuner.h"
#include "runtime/runtime_internal.h"
#include "runtime/tensor_map.h"

namespace kiln {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- RuntimeImpl

namespace {

PipelineOptions pipeline_options(const Options& options) {
  PipelineOptions p;
  p.template_dir = options.template_dir;
  if (options.disk_cache) p.cache_dir = options.cache_dir;
  p.override_dir = options.override_dir;
  p.shapes = options.shapes;
  return p;
}

}  // namespace

RuntimeImpl::RuntimeImpl(Options given)
    : options(resolve_options(std::move(given))), pipeline(pipeline_options(options)) {
  dump = parse_dump_flags(options.dump);
  int device = -1;
  if (!options.arch.empty()) {
    target = Target::for_arch(options.arch);
    target.precision = options.precision;
  } else if (gpu_available(nullptr) && (device = current_device()) >= 0) {
    target = device_target(device, options.precision);
    device_targets.emplace(device, target);
  } else {
    target = Target::for_arch("sm_90");
    target.precision = options.precision;
  }
}

std::shared_ptr<CubinSlot> RuntimeImpl::slot_for(const KernelSource& source, const std::string& arch) {
  const std::string content_key = pipeline.content_key(source, arch);
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = slots[content_key];
  if (!slot) slot = std::make_shared<CubinSlot>();
  return slot;
}

const CubinSlot& RuntimeImpl::cubin(const KernelSource& source, const std::string& arch, const std::string& op_name,
                                    const std::string& bindings) {
  auto slot = slot_for(source, arch);
  std::call_once(slot->once, [&] { slot->kernel = pipeline.compile(source, arch, op_name, bindings); });
  return *slot;
}

CUfunction RuntimeImpl::function(const CubinSlot& slot, const std::string& entry, void* context) {
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(context, &slot);
  auto it = functions.find(key);
  if (it != functions.end()) return it->second;
  CUmodule module = load_module(slot.kernel.entry.cubin);
  CUfunction f = get_function(module, entry);
  const unsigned shared_bytes = slot.kernel.entry.metadata.shared_bytes;
  set_dynamic_shared(f, shared_bytes);
  functions.emplace(key, f);
  return f;
}

// [Note: several devices]
// One Runtime serves every device of the process. The memory tier's key holds the CUDA context,
// so each device gets its own executables, planned for that device's target (its arch, and its
// SM count, which sizes persistent grids); without Options::arch, a process with an sm_80 and
// an sm_90a device plans and compiles each its own kernels. Kernels whose source and arch are
// the same (same-model devices) share one slot, so one compile, loaded once into each context
// that runs them. Options::arch fixes one target for every device: an executable whose code
// cannot run on the device it is launched on (arch_runs_on) is an ArgumentError naming both,
// never a wrong-arch load. The device and arch of every load are logged at KILN_LOG=info.
Target RuntimeImpl::current_target() {
  if (!options.arch.empty() || !gpu_available(nullptr)) return target;
  int device = 0;
  current_context(&device);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = device_targets.find(device);
    if (it != device_targets.end()) return it->second;
  }
  const Target t = device_target(device, options.precision);
  std::lock_guard<std::mutex> lock(mutex);
  return device_targets.emplace(device, t).first->second;
}

std::string RuntimeImpl::device_name_for_tuning() {
  const int device = gpu_available(nullptr) ? current_device() : -1;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = tuning_names.find(device);
    if (it != tuning_names.end()) return it->second;
  }
  std::string name = tuning_device_name(options);
  std::lock_guard<std::mutex> lock(mutex);
  return tuning_names.emplace(device, std::move(name)).first->second;
}

// ---------------------------------------------------------------- ExecutableImpl

namespace {

void write_file(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) log_warning(fmt::format("could not write dump file {}", path.string()));
}

}  // namespace

ExecutableImpl::ExecutableImpl(std::shared_ptr<RuntimeImpl> runtime, std::shared_ptr<const ir::BoundIr> bound,
                               const Consts& consts, Precision precision, bool aligned,
                               const std::map<int, TunedPick>* forced)
    : rt(std::move(runtime)) {
  Target target = rt->current_target();
  target.precision = precision;
  target.aligned16 = aligned;
  if (forced != nullptr) target.tuned_picks = *forced;
  plan = rt->pipeline.plan(bound, target);
  if (forced == nullptr && !plan.tunables.empty()) {   // Options::tuning: a stored pick re-plans
    target.tuned_picks = stored_picks(rt, plan, consts);
    if (!target.tuned_picks.empty()) plan = rt->pipeline.plan(std::move(bound), target);
  }
  sources = rt->pipeline.emit(plan);
  bindings = bindings_text(*plan.bound, consts);
  // A TMA map's spec is fixed per specialization: checked here once, so a launch only encodes it
  // over a new address. A map reaching past its buffer would let the TMA unit touch another
  // allocation. (A map's dyn extent, KernelArg::map_dyn_dim, is checked here at the planned value
  // and set at a launch to the extent of that launch's own, validated, tensors.)
  for (std::size_t k = 0; k < plan.kernels.size(); ++k)
    for (const auto& arg : plan.kernels[k].args) {
      if (arg.kind != KernelArg::Kind::TensorMap) continue;
      const auto& buf = plan.buffers[static_cast<std::size_t>(arg.buffer)];
      check_tensor_map(arg.tensor_map, arg.dtype);
      KILN_ASSERT(tensor_map_reach_bytes(arg.tensor_map, arg.dtype) <= buf.bytes,
                  "{}: kernel {} maps #{} {} ({} bytes) as {} of {}, which reaches {} bytes", plan.ir().op_name, k,
                  arg.buffer, buf.name, buf.bytes, arg.tensor_map.text(), dtype_name(arg.dtype),
                  tensor_map_reach_bytes(arg.tensor_map, arg.dtype));
    }
  // Where each dyn dim is read at a launch: the first tensor that has it as a whole extent.
  for (const auto& [dim, bucket] : plan.dyn_buckets) {
    const auto& ir = plan.ir();
    std::optional<DynSource> found;
    for (std::size_t i = 0; i < ir.params.size() + ir.outputs.size() && !found; ++i) {
      if (i < ir.params.size() && !ir.params[i].is_tensor) continue;
      const ir::Shape& shape = i < ir.params.size() ? ir.params[i].shape : ir.node(ir.outputs[i - ir.params.size()].node).shape;
      for (std::size_t d = 0; d < shape.size() && !found; ++d)
        if (shape[d].kind() == ir::DimExpr::Kind::Dim && shape[d].name() == dim) found = DynSource{dim, i, d};
    }
    KILN_CHECK(found.has_value(), UnsupportedError,
               "{}: dim '{}' is dyn but no argument has it as a whole extent, so a launch cannot read its value; "
               "make it a dim of some input or output",
               ir.op_name, dim);
    dyn_sources.push_back(*found);
  }
  for (const auto& [key, thresholds] : plan.dyn_thresholds)
    class_checks.push_back({key, dyn_class_factors(key), thresholds,
                            dyn_class(thresholds, dyn_class_value(key, plan.bound->dims))});
  if (rt->dump.any()) dump_files();
}

namespace {
// Argument i's name: the op's inputs, then its outputs.
const std::string& arg_name(const ir::Ir& ir, std::size_t i) {
  return i < ir.params.size() ? ir.params[i].name : ir.outputs[i - ir.params.size()].name;
}
}  // namespace

std::map<std::string, std::int64_t> ExecutableImpl::launch_dims(const Arg* args, std::size_t count) const {
  const auto& ir = plan.ir();
  std::map<std::string, std::int64_t> dims = plan.bound->dims;
  for (const auto& s : dyn_sources) {
    const std::int64_t value = args[s.arg].tensor().shape[s.axis];
    const DynBucket want = plan.dyn_buckets.at(s.dim);
    KILN_CHECK(dyn_bucket(value) == want, ShapeError,
               "{}: dyn dim {}={} is outside this executable's bucket ({}: {}); specialize another value, or call the "
               "op, which keeps one executable per bucket",
               ir.op_name, s.dim, value, s.dim, dyn_bucket_text(want));
    if (auto align = plan.dyn_row_align.find(s.dim); align != plan.dyn_row_align.end())
      KILN_CHECK(dyn_row_class(value) == align->second, ShapeError,
                 "{}: dyn dim {}={} is outside this executable's row alignment ({} {}); specialize another value, or "
                 "call the op, which keeps one executable per bucket, row alignment and class",
                 ir.op_name, s.dim, value, s.dim, dyn_row_class_text(align->second));
    dims[s.dim] = value;
  }
  // Each size class the plan assumed: of a dim, or of a product of dims ([Note: size classes of a
  // product] in generator/plan/plan.h).
  for (const auto& c : class_checks) {
    std::int64_t value = 1;
    for (const auto& d : c.dims) value *= dims.at(d);
    KILN_CHECK(dyn_class(c.thresholds, value) == c.klass, ShapeError,
               "{}: dyn {} {}={} is outside this executable's size class ({} in {}); specialize another value, or "
               "call the op, which keeps one executable per bucket and class",
               ir.op_name, c.dims.size() == 1 ? "dim" : "extent", c.key, value, c.key,
               dyn_class_text(c.thresholds, c.klass));
  }
  bool large = false;
  for (std::size_t i = 0; i < count; ++i) {
    if (!args[i].is_tensor()) continue;
    const bool output = i >= ir.params.size();
    const ir::Shape& shape = output ? ir.node(ir.outputs[i - ir.params.size()].node).shape : ir.params[i].shape;
    const auto& got = args[i].tensor().shape;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const std::int64_t want = shape[d].kind() == ir::DimExpr::Kind::Dim ? dims.at(shape[d].name())
                                : shape[d].as_constant() ? *shape[d].as_constant()
                                                         : shape[d].evaluate(dims);
      if (got[d] == want) continue;
      const std::string& name = arg_name(ir, i);
      if (shape[d].kind() == ir::DimExpr::Kind::Dim)   // a dyn dim read elsewhere: name both places, as binding does
        for (const auto& s : dyn_sources)
          if (s.dim == shape[d].name())
            throw ShapeError(fmt::format("{}: dim {} is {} from {}.shape[{}] but {} from {}.shape[{}]", ir.op_name, s.dim,
                                         want, arg_name(ir, s.arg), s.axis, got[d], name, d));
      std::vector<std::int64_t> expected;
      for (const auto& e : shape) expected.push_back(e.evaluate(dims));
      std::vector<std::string> bound;
      for (const auto& [name, value] : dims) bound.push_back(fmt::format("{}={}", name, value));
      throw ShapeError(fmt::format("{}: '{}' has shape {}, expected {} ({})", ir.op_name, name, fmt::join(got, "x"),
                                   fmt::join(expected, "x"), fmt::join(bound, " ")));
    }
    large |= args[i].tensor().numel() > kIndex32Limit;
  }
  for (const auto& c : ir.constraints)
    KILN_CHECK(c.lhs.evaluate(dims) == c.rhs.evaluate(dims), ShapeError, "{}: the sizes break {} == {} ({} against {})",
               ir.op_name, c.lhs.str(), c.rhs.str(), c.lhs.evaluate(dims), c.rhs.evaluate(dims));
  const bool planned_large = std::any_of(plan.kernels.begin(), plan.kernels.end(), [](const PlannedKernel& k) { return k.index64; });
  KILN_CHECK(!large || planned_large, ShapeError,
             "{}: a tensor has 2^31 elements or more, but this executable was planned with 32-bit indexing; "
             "specialize with those sizes, or call the op",
             ir.op_name);
  return dims;
}

void ExecutableImpl::dump_files() {
  const fs::path dir(rt->options.dump_dir);
  const std::string stem = fmt::format("{}_{}", plan.ir().op_name, hex128(bindings + plan.target.arch).substr(0, 8));
  if (rt->dump.plan) write_file(dir / (stem + ".plan.txt"), plan.text());
  for (std::size_t k = 0; k < sources.size(); ++k) {
    const std::string base = fmt::format("{}_k{}", stem, k);
    if (rt->dump.source) write_file(dir / (base + ".cu"), sources[k].text);
    try {
      if (rt->dump.ptx) write_file(dir / (base + ".ptx"), ptx_of(k));
      if (rt->dump.sass) write_file(dir / (base + ".sass"), sass_of(k));
    } catch (const Error& e) {
      log_warning(fmt::format("dump of {}: {}", base, e.what()));
    }
  }
}

const CubinSlot& ExecutableImpl::compiled(std::size_t k) {
  return rt->cubin(sources[k], plan.target.arch, plan.ir().op_name, bindings);
}

void ExecutableImpl::compile_all_kernels() {
  // Independent kernels compile in parallel (each through its single-flight slot).
  if (sources.size() == 1) {
    compiled(0);
    return;
  }
  std::vector<std::thread> workers;
  std::vector<std::exception_ptr> errors(sources.size());
  for (std::size_t k = 0; k < sources.size(); ++k)
    workers.emplace_back([this, k, &errors] {
      try {
        compiled(k);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  for (auto& w : workers) w.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

std::string ExecutableImpl::ptx_of(std::size_t k) const { return rt->pipeline.ptx(sources[k], plan.target.arch); }

std::string ExecutableImpl::sass_of(std::size_t k) {
  return disassemble(compiled(k).kernel.entry.cubin);
}

const ExecutableImpl::Loaded& ExecutableImpl::functions_for(void* context) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& l : loaded)
      if (l.context == context) return l;
  }
  // First launch in this context: never load code the device cannot run ([Note: several devices]).
  int device = 0;
  current_context(&device);
  const std::string arch = device_arch(device);
  KILN_CHECK(arch_runs_on(plan.target.arch, arch), ArgumentError,
             "{} ({}) was planned for {}, but the current device {} ({}) is {}: {}", plan.ir().op_name, bindings,
             plan.target.arch, device, device_name(device), arch,
             rt->options.arch.empty()
                 ? "an Executable is planned for the device current when it was made; specialize it again with this "
                   "device current"
                 : fmt::format("Options::arch (or KILN_ARCH) asks for {} on every device; leave it empty to plan for "
                               "each device its own", rt->options.arch));
  compile_all_kernels();
  Loaded fresh{context, device, {}, {}};
  for (std::size_t k = 0; k < sources.size(); ++k) {
    const auto& src = sources[k];
    fresh.functions.push_back(rt->function(compiled(k), src.entry, context));
    fresh.grids.push_back(resident_grid(fresh.functions.back(), src.grid, src.block, src.shared_bytes));
  }
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& l : loaded)
    if (l.context == context) return l;
  if (log_level() >= LogLevel::info)
    log_info(fmt::format("loaded {} ({}: {} kernel{}, {}) on device {} ({}, {})", plan.ir().op_name, bindings,
                         sources.size(), sources.size() == 1 ? "" : "s", plan.target.arch, device, device_name(device), arch));
  loaded.push_back(std::move(fresh));
  return loaded.back();
}

namespace {

// One argument value as the kernel expects it, with storage that outlives the launch call.
union ArgValue {
  DynDim dyn;   // kiln/dyn_dim.h: 16 bytes
  unsigned long long ptr;
  float f32;
  double f64;
  int i32;
  long long i64;
  unsigned long long u64;
  bool b;
};

ArgValue scalar_value(const Scalar& s, DType want) {
  ArgValue v{};
  const bool from_float = s.dtype == DType::f32 || s.dtype == DType::f64 || s.dtype == DType::f16 || s.dtype == DType::bf16;
  const bool from_unsigned = s.dtype == DType::u64;
  auto as_double = [&] { return from_float ? s.value.f : from_unsigned ? static_cast<double>(s.value.u) : static_cast<double>(s.value.i); };
  auto as_i64 = [&] { return from_unsigned ? static_cast<long long>(s.value.u) : from_float ? static_cast<long long>(s.value.f) : s.value.i; };
  switch (want) {
    case DType::f32:
    case DType::f16:
    case DType::bf16: v.f32 = static_cast<float>(as_double()); break;
    case DType::f64: v.f64 = as_double(); break;
    case DType::i32: v.i32 = static_cast<int>(as_i64()); break;
    case DType::i64: v.i64 = as_i64(); break;
    case DType::u64: v.u64 = from_unsigned ? s.value.u : static_cast<unsigned long long>(as_i64()); break;
    case DType::boolean: v.b = from_float ? s.value.f != 0 : s.value.i != 0; break;
  }
  return v;
}

}  // namespace

// [Note: launch memo]
// Most of what a launch computes follows from the arguments' extents alone: the dims (a dyn dim
// read from its argument, every shape checked against them: launch_dims), the scratch layout,
// each dyn kernel's grid and the kernel arguments that carry dims and extents. A loop at one shape
// (the common case) computes them once: the executable keeps the last launch's extents and what
// they gave, and a launch with the same extents reuses it. Addresses, scalars, TMA maps (cached by
// address) and the grids of kernels whose grid is the resident one of the context stay per launch.
// Without dyn dims every launch has the same extents (they are checked against the executable's
// before), so the state is computed once.
struct ExecutableImpl::LaunchState {
  std::vector<std::int64_t> extents;           // the key: every tensor argument's extents, in order
  std::map<std::string, std::int64_t> dims;    // with dyn dims: the launch's (empty without)
  std::vector<std::int64_t> offsets;           // per buffer: its offset in the scratch block, -1 for none
  std::int64_t scratch_bytes = 0;
  struct Kernel {
    bool launch_grid = false;                  // the grid follows the launch's dims (else the context's)
    Dim3 grid;                                 // with launch_grid
    std::int64_t zero_bytes = -1;              // a look-back's workspace bytes this launch lays out (-1: the buffer's)
    long long extent = 0;                      // its dyn extent (a matmul's M or batches), for its maps' map_dyn_dim
    // Per argument, a map's dyn extents at this launch, which also key its encoding: map_dyn_dim's
    // one (`extent`), or map_dims_at's dims then map_strides_at's strides (elements).
    std::vector<std::vector<long long>> map_at;
    std::vector<ArgValue> values;              // the DynDim and DynValue arguments' values (others unset)
  };
  std::vector<Kernel> kernels;
};

namespace {
bool same_extents(const std::vector<std::int64_t>& extents, const Arg* args, std::size_t count) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (!args[i].is_tensor()) continue;
    for (const std::int64_t e : args[i].tensor().shape)
      if (at >= extents.size() || extents[at++] != e) return false;
  }
  return at == extents.size();
}
}  // namespace

std::shared_ptr<const ExecutableImpl::LaunchState> ExecutableImpl::launch_state(const Arg* args, std::size_t count) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (last_launch && (dyn_sources.empty() || same_extents(last_launch->extents, args, count))) return last_launch;
  }
  auto state = std::make_shared<LaunchState>();
  for (std::size_t i = 0; i < count; ++i)
    if (args[i].is_tensor())
      state->extents.insert(state->extents.end(), args[i].tensor().shape.begin(), args[i].tensor().shape.end());
  if (!dyn_sources.empty()) state->dims = launch_dims(args, count);
  // Scratch (intermediates and workspaces); with dyn dims an intermediate is sized by this launch,
  // and so is a workspace with a dyn first extent (Buffer::dyn_dim; other workspaces are sized for
  // their class: see [Note: dyn rows]).
  state->offsets.assign(plan.buffers.size(), -1);
  for (std::size_t b = 0; b < plan.buffers.size(); ++b) {
    const auto kind = plan.buffers[b].kind;
    if (kind != BufferKind::Intermediate && kind != BufferKind::Workspace) continue;
    state->offsets[b] = state->scratch_bytes;
    state->scratch_bytes += (plan.buffer_bytes(b, state->dims) + 255) / 256 * 256;
  }
  for (std::size_t k = 0; k < sources.size(); ++k) {
    LaunchState::Kernel& kernel = state->kernels.emplace_back();
    if (plan.kernels[k].reads_dyn_dims()) {   // the grid over this launch's extents
      const launch::Geometry g = launch_for(plan, k, state->dims);
      kernel.launch_grid = true;
      kernel.grid = {static_cast<unsigned>(g.grid.x), static_cast<unsigned>(g.grid.y), static_cast<unsigned>(g.grid.z)};
      if (g.zero_workspace) kernel.zero_bytes = g.workspace_bytes;
    }
    if (!plan.kernels[k].dyn_outer.empty()) kernel.extent = plan.kernels[k].dyn_extent(state->dims);
    const auto& kernel_args = sources[k].args;   // plan.kernels[k].args, copied by the emitter
    kernel.values.resize(kernel_args.size());
    kernel.map_at.resize(kernel_args.size());
    for (std::size_t a = 0; a < kernel_args.size(); ++a) {
      const auto& arg = kernel_args[a];
      if (arg.map_dyn_dim >= 0) kernel.map_at[a] = {kernel.extent};
      for (const auto* exprs : {&arg.map_dims_at, &arg.map_strides_at})   // [Note: dyn attention]
        for (const auto& e : *exprs) kernel.map_at[a].push_back(e.evaluate(state->dims));
      if (arg.kind == KernelArg::Kind::DynDim)
        kernel.values[a].dyn = dyn_dim_arg(state->dims.at(arg.dim));   // [Note: division constants on the host]
      else if (arg.kind == KernelArg::Kind::DynValue)   // an extent of dyn dims, at this launch
        kernel.values[a].dyn = dyn_dim_arg(arg.value.evaluate(state->dims));
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  last_launch = state;
  return state;
}

void ExecutableImpl::launch(Stream stream, const Arg* args, std::size_t count, bool checked, void* context) {
  if (!dyn_sources.empty()) {
    if (!checked) validate_arguments(*plan.bound->ir, args, count, nullptr, false);
  } else if (!checked) {
    validate_arguments(*plan.bound->ir, args, count, plan.bound.get());
  }
  // An executable planned for 16-byte aligned tensors (an Executable always is; an Op's for
  // aligned pointers) loads and stores 16-byte vectors without a check of its own (docs/
  // design-notes.md, "Alignment"): a pointer that is not is refused here, before any launch.
  // (An Op call keyed the executable by the pointers' alignment: nothing to check.)
  if (!checked && plan.target.aligned16)
    for (std::size_t i = 0; i < count; ++i) {
      if (!args[i].is_tensor()) continue;
      const void* data = args[i].tensor().data;
      KILN_CHECK(reinterpret_cast<std::uintptr_t>(data) % 16 == 0, ArgumentError,
                 "{}: '{}' at {} is not 16-byte aligned, but this executable was specialized for 16-byte aligned "
                 "tensors (its kernels use 16-byte vector loads and stores); call the op, which plans for the "
                 "pointers it is given",
                 plan.ir().op_name, arg_name(plan.ir(), i), data);
    }
  const std::shared_ptr<const LaunchState> state = launch_state(args, count);   // launch_dims' checks
  if (!dyn_sources.empty() && !checked) refuse_aliasing(*plan.bound->ir, args, count);
  const Loaded& fns = functions_for(context != nullptr ? context : current_context(nullptr));
  const auto& ir = plan.ir();
  CUstream s = static_cast<CUstream>(stream);
  // Scratch, laid out by the launch state: from kiln's stream-ordered pool ([Note: the scratch
  // pool] in device.cpp) or the caller's Options::scratch, freed on the stream after the kernels.
  const std::size_t scratch_bytes = static_cast<std::size_t>(state->scratch_bytes);
  ScratchAllocator* const user = rt->options.scratch.get();
  unsigned long long base = 0;
  if (scratch_bytes > 0)
    base = user != nullptr ? reinterpret_cast<unsigned long long>(user->allocate(scratch_bytes, stream))
                           : allocate_async(scratch_bytes, s, fns.device);
  struct ScratchGuard {
    unsigned long long ptr;
    std::size_t bytes;
    Stream stream;
    ScratchAllocator* user;
    ~ScratchGuard() {
      if (ptr == 0) return;
      if (user != nullptr) user->deallocate(reinterpret_cast<void*>(ptr), bytes, stream);
      else free_async(ptr, static_cast<CUstream>(stream));
    }
  } guard{base, scratch_bytes, stream, user};
  KILN_CHECK(scratch_bytes == 0 || (base != 0 && base % 256 == 0), ArgumentError,
             "{} ({}): Options::scratch returned {:#x} for {} bytes of scratch; it must return device memory "
             "aligned to 256 bytes", ir.op_name, bindings, base, scratch_bytes);
  const std::size_t outputs_at = ir.params.size();
  auto address_of = [&](int buffer) -> unsigned long long {
    const auto& buf = plan.buffers[static_cast<std::size_t>(buffer)];
    if (buf.kind == BufferKind::Input)
      return reinterpret_cast<unsigned long long>(args[static_cast<std::size_t>(buf.slot)].tensor().data);
    if (buf.kind == BufferKind::Output)
      return reinterpret_cast<unsigned long long>(args[outputs_at + static_cast<std::size_t>(buf.slot)].tensor().data);
    return base + static_cast<unsigned long long>(state->offsets[static_cast<std::size_t>(buffer)]);
  };
  std::vector<Dim3> grids(sources.size());   // this launch's
  std::vector<ArgValue> values;
  std::vector<void*> pointers;
  std::vector<TensorMapBytes> maps;
  for (std::size_t k = 0; k < sources.size(); ++k) {
    const auto& src = sources[k];   // src.args is plan.kernels[k].args, copied by the emitter
    const LaunchState::Kernel& planned = state->kernels[k];
    grids[k] = planned.launch_grid ? planned.grid : fns.grids[k];
    // A launch's grid with no blocks: the kernel has nothing to do at this launch (a chunked
    // scan's totals where the launch takes one chunk: [Note: chunks per launch]).
    if (grids[k].x == 0 || grids[k].y == 0 || grids[k].z == 0) continue;
    values = planned.values;
    pointers.resize(src.args.size());
    // TMA maps, sized up front: pointers[] holds their addresses until cuLaunchKernel copies them.
    maps.resize(static_cast<std::size_t>(std::count_if(
        src.args.begin(), src.args.end(), [](const KernelArg& arg) { return arg.kind == KernelArg::Kind::TensorMap; })));
    std::size_t next_map = 0;
    for (std::size_t a = 0; a < src.args.size(); ++a) {
      const auto& arg = src.args[a];
      pointers[a] = &values[a];
      if (arg.kind == KernelArg::Kind::Buffer) {
        values[a].ptr = address_of(arg.buffer);
      } else if (arg.kind == KernelArg::Kind::Scalar) {
        values[a] = scalar_value(args[static_cast<std::size_t>(arg.param)].scalar(), arg.dtype);
      } else if (arg.kind == KernelArg::Kind::LaunchSplits) {   // [Note: splits per launch]
        // launch_value: the split kernel's grid.y at this launch (that kernel is this one or an
        // earlier one, whose grid is set above).
        KILN_ASSERT(arg.kernel >= 0 && static_cast<std::size_t>(arg.kernel) <= k, "{}: split kernel {} after kernel {}",
                    ir.op_name, arg.kernel, k);
        values[a].i64 = grids[static_cast<std::size_t>(arg.kernel)].y;
      } else if (arg.kind == KernelArg::Kind::TensorMap) {
        const unsigned long long address = address_of(arg.buffer);
        TensorMapBytes& map = maps[next_map++];
        const std::vector<long long>& at = planned.map_at[a];   // its dyn extents, the key's last part
        map = tensor_maps.get(k, a, address, [&] {   // the spec was checked at construction
          const auto& buf = plan.buffers[static_cast<std::size_t>(arg.buffer)];
          const std::size_t rank = arg.map_dims_at.size();
          const TensorMapSpec spec =
              arg.map_dyn_dim >= 0 ? arg.tensor_map.with_extent(arg.map_dyn_dim, planned.extent)
              : rank > 0 ? arg.tensor_map.with_extents({at.begin(), at.begin() + static_cast<std::ptrdiff_t>(rank)},
                                                       {at.begin() + static_cast<std::ptrdiff_t>(rank), at.end()},
                                                       static_cast<std::int64_t>(dtype_size(arg.dtype)))
                         : arg.tensor_map;
          return encode_tensor_map(spec, arg.dtype, address, fmt::format("{}: '{}'", ir.op_name, buf.name));
        }, at);
        pointers[a] = &map;
      }   // DynDim and DynValue: the launch state's
    }
    // Workspaces the kernel needs zeroed (look-back flags): on the same stream, just before it;
    // with dyn rows or a dyn length the part this launch lays out (the buffer is sized for its
    // class's largest).
    for (int b : plan.kernels[k].zero_before) {
      const auto& buf = plan.buffers[static_cast<std::size_t>(b)];
      const std::int64_t bytes = planned.zero_bytes >= 0 ? std::min(planned.zero_bytes, buf.bytes) : buf.bytes;
      check(driver().memset_d32_async(address_of(b), 0u, static_cast<std::size_t>(bytes / 4), s), "cuMemsetD32Async");
    }
    kiln::launch_kernel(fns.functions[k], grids[k], src.block, src.shared_bytes, s, pointers.data());
  }
  rt->launches.fetch_add(1);
}

// ---------------------------------------------------------------- argument checks

namespace {
void validate_each(const ir::Ir& ir, const Arg* args, std::size_t count, const ir::BoundIr* bound) {
  for (std::size_t i = 0; i < count; ++i) {
    const bool is_output = i >= ir.params.size();
    const std::string& name = is_output ? ir.outputs[i - ir.params.size()].name : ir.params[i].name;
    const bool want_tensor = is_output || ir.params[i].is_tensor;
    const DType want = is_output ? ir.node(ir.outputs[i - ir.params.size()].node).dtype : ir.params[i].dtype;
    const Arg& a = args[i];
    KILN_CHECK(a.is_tensor() == want_tensor, ArgumentError, "{}: argument {} ('{}') must be {}", ir.op_name, i, name,
               want_tensor ? "a tensor (kiln::TensorRef)" : fmt::format("a scalar of type {}", dtype_name(want)));
    if (!want_tensor) continue;
    const TensorRef& t = a.tensor();
    KILN_CHECK(t.dtype == want, ArgumentError, "{}: '{}' has dtype {}, expected {}", ir.op_name, name,
               dtype_name(t.dtype), dtype_name(want));
    const std::size_t rank = is_output ? (bound ? bound->shape(ir.outputs[i - ir.params.size()].node).size()
                                                : ir.node(ir.outputs[i - ir.params.size()].node).shape.size())
                                       : ir.params[i].shape.size();
    KILN_CHECK(t.shape.size() == rank, ShapeError, "{}: '{}' has rank {}, expected {}", ir.op_name, name,
               t.shape.size(), rank);
    for (std::size_t d = 0; d < t.shape.size(); ++d)
      KILN_CHECK(t.shape[d] >= 1, ShapeError, "{}: '{}' has extent {} in dim {}; every extent must be >= 1",
                 ir.op_name, name, t.shape[d], d);
    KILN_CHECK(t.data != nullptr, ArgumentError, "{}: '{}' is a null pointer", ir.op_name, name);
    KILN_CHECK(reinterpret_cast<std::uintptr_t>(t.data) % dtype_size(t.dtype) == 0, ArgumentError,
               "{}: '{}' at {} is not aligned to its element size ({} bytes)", ir.op_name, name, t.data,
               dtype_size(t.dtype));
    KILN_CHECK(t.strides.empty() || t.strides.size() == t.shape.size(), ArgumentError,
               "{}: '{}' has {} strides for {} dims", ir.op_name, name, t.strides.size(), t.shape.size());
    KILN_CHECK(t.contiguous(), ArgumentError,
               "{}: '{}' is not contiguous; this version of kiln needs row-major contiguous tensors", ir.op_name, name);
    if (bound) {
      const auto& want_shape = is_output ? bound->shape(ir.outputs[i - ir.params.size()].node)
                                         : bound->shape(ir.params[i].node);
      KILN_CHECK(t.shape == want_shape, ShapeError, "{}: '{}' has shape {}, but this executable was specialized for {}",
                 ir.op_name, name, fmt::join(t.shape, "x"), fmt::join(want_shape, "x"));
    }
  }
}

// What a bound op's arguments are (Executable::arguments, Op::arguments_for).
std::vector<ArgumentInfo> arguments_of(const ir::BoundIr& bound) {
  std::vector<ArgumentInfo> out;
  for (const auto& p : bound.ir->params) out.push_back({p.name, p.is_tensor, false, p.dtype, p.is_tensor ? bound.shape(p.node) : std::vector<std::int64_t>{}});
  for (const auto& o : bound.ir->outputs) out.push_back({o.name, true, true, bound.node(o.node).dtype, bound.shape(o.node)});
  return out;
}
}  // namespace

void validate_arguments(const ir::Ir& ir, const Arg* args, std::size_t count, const ir::BoundIr* bound,
                        bool aliasing) {
  const std::size_t expected = ir.params.size() + ir.outputs.size();
  KILN_CHECK(count == expected, ArgumentError, "{}: got {} arguments, expected {} ({})", ir.op_name, count, expected,
             ir.signature());
  validate_each(ir, args, count, bound);
  if (aliasing) refuse_aliasing(ir, args, count);
}

void refuse_aliasing(const ir::Ir& ir, const Arg* args, std::size_t count) {
  // An output that shares memory with another argument would be read while it is written (or
  // written twice): refused, whatever the kernels' order would make of it.
  auto range_of = [&](std::size_t i) {
    const TensorRef& t = args[i].tensor();
    const auto begin = reinterpret_cast<std::uintptr_t>(t.data);
    return std::pair{begin, begin + static_cast<std::uintptr_t>(t.numel()) * dtype_size(t.dtype)};
  };
  for (std::size_t o = ir.params.size(); o < count; ++o) {
    const auto [out_begin, out_end] = range_of(o);
    for (std::size_t i = 0; i < count; ++i) {
      if (i == o || !args[i].is_tensor()) continue;
      const auto [begin, end] = range_of(i);
      KILN_CHECK(out_end <= begin || end <= out_begin, ArgumentError,
                 "{}: output '{}' overlaps {} '{}' in memory; outputs must not alias other arguments", ir.op_name,
                 arg_name(ir, o), i < ir.params.size() ? "input" : "output", arg_name(ir, i));
    }
  }
}

// ---------------------------------------------------------------- public classes

namespace {
// Packs compiled into the program (kiln_add_pack(... EMBED)), registered by static initializers.
struct EmbeddedPack {
  std::string name;
  const unsigned char* data;
  std::size_t size;
};
std::mutex& embedded_mutex() {
  static std::mutex m;
  return m;
}
std::vector<EmbeddedPack>& embedded_packs() {
  static std::vector<EmbeddedPack> packs;
  return packs;
}
}  // namespace

bool register_embedded_pack(const char* name, const unsigned char* data, std::size_t size) {
  std::lock_guard<std::mutex> lock(embedded_mutex());
  embedded_packs().push_back({name, data, size});
  return true;
}

Runtime::Runtime(Options options) : impl_(std::make_shared<RuntimeImpl>(std::move(options))) {
  std::vector<EmbeddedPack> packs;
  {
    std::lock_guard<std::mutex> lock(embedded_mutex());
    packs = embedded_packs();
  }
  for (const auto& e : packs) {
    const std::string bytes(reinterpret_cast<const char*>(e.data), e.size);
    impl_->pipeline.add_pack(std::make_unique<Pack>(Pack::parse(bytes, fmt::format("<embedded pack {}>", e.name))));
  }
}
Runtime::~Runtime() = default;

Program Runtime::load_file(const std::string& path) {
  auto p = std::make_shared<ProgramImpl>();
  p->runtime = impl_;
  p->spec = std::make_shared<SpecFile>(load_spec_file(path));
  p->file = path;
  // Check every op now so errors surface at load, with every location.
  impl_->pipeline.check_all(*p->spec, &p->warnings);
  for (const auto& w : p->warnings) log_spec_warning(w);
  return Program(p);
}

Program Runtime::load_string(std::string_view text, std::string name) {
  auto p = std::make_shared<ProgramImpl>();
  p->runtime = impl_;
  p->spec = std::make_shared<SpecFile>(parse_spec(std::string(text), name));
  p->file = name;
  impl_->pipeline.check_all(*p->spec, &p->warnings);
  for (const auto& w : p->warnings) log_spec_warning(w);
  return Program(p);
}

void Runtime::preload(const std::string& pack_path) {
  auto pack = std::make_unique<Pack>(Pack::open(pack_path));
  // A pack holds kernels per arch; one without the arch this runtime plans for serves nothing
  // here (a pack from `kiln build`'s default sm_80,sm_90 on an H100, which runs sm_90a): say so.
  std::set<std::string> archs;
  for (const auto& item : pack->entries()) archs.insert(item.arch);
  const std::string arch = impl_->current_target().arch;
  if (!archs.empty() && !archs.count(arch))
    log_warning(fmt::format("{} holds kernels for {} only, and this runtime plans for {}: none of them will be "
                            "used here (build it with `kiln build --arch {}`)",
                            pack_path, fmt::join(archs, ", "), arch, arch));
  impl_->pipeline.add_pack(std::move(pack));
}

Stats Runtime::stats() const {
  Stats s;
  s.memory_hits = impl_->memory_hits.load();
  const PipelineCounters counters = impl_->pipeline.counters();
  s.disk_hits = counters.cache_hits;
  s.compiles = counters.compiles;
  s.launches = impl_->launches.load();
  return s;
}

const Options& Runtime::options() const { return impl_->options; }
std::string Runtime::arch() const { return impl_->target.arch; }

Op Program::op(std::string_view name) const {
  const auto names = impl_->spec->op_names();
  KILN_CHECK(std::find(names.begin(), names.end(), name) != names.end(), ArgumentError,
             "{} has no op named '{}' (it has: {})", impl_->file, name, fmt::join(names, ", "));
  auto o = std::make_shared<OpImpl>();
  o->program = impl_;
  o->name = std::string(name);
  o->precision = impl_->runtime->options.precision;
  o->set_ir(impl_->runtime->pipeline.check(*impl_->spec, name));
  return Op(o);
}

std::vector<std::string> Program::op_names() const { return impl_->spec->op_names(); }
const std::string& Program::file() const { return impl_->file; }
std::vector<std::string> Program::warnings() const { return impl_->warnings; }

const std::string& Op::name() const { return impl_->name; }
std::string Op::signature() const { return impl_->ir->signature(); }
std::vector<std::string> Op::dim_names() const {
  std::vector<std::string> names;
  for (const auto& d : impl_->ir->dims) names.push_back(d.name);
  return names;
}
std::vector<std::string> Op::const_names() const {
  std::vector<std::string> names;
  for (const auto& c : impl_->ir->consts) names.push_back(c.name);
  return names;
}

namespace {

// A name given to with_consts or specialize must be one of the op's consts (or dims): a typo
// is an error naming the op's names, never silently ignored.
template <class Map, class Decls>
void require_known(const Map& given, const Decls& declared, const char* kind, const std::string& op) {
  std::vector<std::string> names;
  for (const auto& d : declared) names.push_back(d.name);
  for (const auto& [name, value] : given)
    KILN_CHECK(std::find(names.begin(), names.end(), name) != names.end(), ArgumentError,
               "op {} has no {} named '{}'{} (its {}s: {})", op, kind, name, did_you_mean(name, names), kind,
               names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")));
}

}  // namespace

Op Op::with_consts(const Consts& consts) const {
  require_known(consts, impl_->ir->consts, "const", impl_->name);
  auto o = std::make_shared<OpImpl>();
  o->program = impl_->program;
  o->name = impl_->name;
  o->precision = impl_->precision;
  o->consts = impl_->consts;
  for (const auto& [k, v] : consts) o->consts[k] = v;
  o->set_ir(o->program->runtime->pipeline.check(*o->program->spec, o->name, o->consts));
  return Op(o);
}

std::vector<ArgumentInfo> Op::arguments_for(const std::vector<Arg>& inputs) const {
  const ir::Ir& ir = *impl_->ir;
  KILN_CHECK(inputs.size() == ir.params.size(), ArgumentError, "{}: got {} inputs, expected {} ({})", ir.op_name,
             inputs.size(), ir.params.size(), ir.signature());
  validate_each(ir, inputs.data(), inputs.size(), nullptr);
  std::vector<std::vector<std::int64_t>> shapes;
  for (const auto& a : inputs) shapes.push_back(a.is_tensor() ? a.tensor().shape : std::vector<std::int64_t>{});
  return arguments_of(*impl_->program->runtime->pipeline.bind(impl_->ir, shapes, {}));
}

ShapeRules Op::shape_rules() const {
  const ir::Ir& ir = *impl_->ir;
  ShapeRules rules;
  auto argument = [](const std::string& name, bool is_tensor, bool is_output, DType dtype, const ir::Shape& shape) {
    ShapeRules::Argument a{name, is_tensor, is_output, dtype, {}};
    for (const auto& e : shape) a.shape.push_back(e.flatten());
    return a;
  };
  for (const auto& p : ir.params) rules.arguments.push_back(argument(p.name, p.is_tensor, false, p.dtype, p.shape));
  for (const auto& o : ir.outputs) {
    const ir::Node& n = ir.node(o.node);
    rules.arguments.push_back(argument(o.name, true, true, n.dtype, n.shape));
  }
  for (const auto& d : ir.dims)
    if (d.default_value) rules.defaults[d.name] = *d.default_value;
  for (const auto& c : ir.constraints) rules.equal.push_back({c.lhs.flatten(), c.rhs.flatten(), c.message});
  return rules;
}

Op Op::with_precision(Precision precision) const {
  auto o = std::make_shared<OpImpl>();
  o->program = impl_->program;
  o->name = impl_->name;
  o->consts = impl_->consts;
  o->set_ir(impl_->ir);
  o->precision = precision;
  return Op(o);
}

std::shared_ptr<const ir::BoundIr> OpImpl::bind_named(const Bindings& bindings, const char* caller,
                                                      Consts* bound_consts) const {
  require_known(bindings.consts, ir->consts, "const", name);
  require_known(bindings.dims, ir->dims, "dim", name);
  const auto& runtime = program->runtime;
  std::shared_ptr<const ir::Ir> checked = ir;
  *bound_consts = consts;
  if (!bindings.consts.empty()) {
    for (const auto& [k, v] : bindings.consts) (*bound_consts)[k] = v;
    checked = runtime->pipeline.check(*program->spec, name, *bound_consts);
  }
  std::map<std::string, ir::DimValue> given;
  for (const auto& [k, v] : bindings.dims) given[k] = {v, fmt::format("{}({}={})", caller, k, v)};
  return runtime->pipeline.bind(checked, given);
}

Executable Op::specialize(const Bindings& bindings) const {
  Consts consts;
  auto bound = impl_->bind_named(bindings, "specialize", &consts);
  return Executable(std::make_shared<ExecutableImpl>(impl_->program->runtime, bound, consts, impl_->precision, true));
}

TuneResult Op::tune(const Bindings& bindings, const TuneOptions& options) const {
  Consts consts;
  auto bound = impl_->bind_named(bindings, "tune", &consts);
  return tune_bound(impl_->program->runtime, bound, consts, impl_->precision, options);
}

void Op::operator()(Stream stream, std::initializer_list<Arg> args) const {
  impl_->call(stream, args.begin(), args.size());
}
void Op::operator()(Stream stream, const std::vector<Arg>& args) const {
  impl_->call(stream, args.data(), args.size());
}

void OpImpl::call(Stream stream, const Arg* args, std::size_t count) {
  // Hot path: the key is every tensor's shape, the 16-byte alignment of all
  // pointers, and the context. No string is built and nothing is generated on a hit.
  validate_arguments(*ir, args, count, nullptr);
  CallKey key;
  key.context = current_context(nullptr);
  key.shape.reserve(4 * count + 8);
  bool aligned = true, large = false;
  for (std::size_t i = 0; i < count; ++i) {
    if (!args[i].is_tensor()) continue;
    const auto& t = args[i].tensor();
    key.shape.push_back(static_cast<std::int64_t>(t.shape.size()));
    if (dyn_axes.empty()) {
      key.shape.insert(key.shape.end(), t.shape.begin(), t.shape.end());
    } else {   // an extent that is a dyn dim keys by its bucket (a negative code), not its value;
               // an expression of dyn dims not at all (a code no extent or bucket has)
      for (std::size_t d = 0; d < t.shape.size(); ++d) {
        const DynAxis axis = dyn_axes[i][d];
        key.shape.push_back(axis == DynAxis::Static     ? t.shape[d]
                            : axis == DynAxis::Computed ? std::numeric_limits<std::int64_t>::min()
                                                        : -dyn_key_code(t.shape[d], axis == DynAxis::DynRowLength));
      }
      large |= t.numel() > kIndex32Limit;
    }
    aligned &= reinterpret_cast<std::uintptr_t>(t.data) % 16 == 0;
  }
  if (!dyn_axes.empty()) key.shape.push_back(large);
  key.aligned = aligned;
  // With size classes, the executable's key adds each class; the thresholds come from the bucket
  // key's first plan (they hold for every value of the buckets).
  const std::size_t bucket_key_size = key.shape.size();
  auto add_classes = [&](const std::vector<ClassProbe>& probes) {
    for (const auto& p : probes) {
      std::int64_t value = 1;
      for (const auto& [arg, axis] : p.factors) value *= args[arg].tensor().shape[axis];
      key.shape.push_back(dyn_class(p.thresholds, value));
    }
  };
  std::shared_ptr<ExecutableImpl> exe;
  bool classes_known = dyn_axes.empty();
  {
    std::shared_lock<std::shared_mutex> lock(mutex);
    if (!classes_known) {
      auto probes = class_probes.find(key);
      if (probes != class_probes.end()) {
        add_classes(probes->second);
        classes_known = true;
      }
    }
    if (classes_known) {
      auto it = executables.find(key);
      if (it != executables.end()) exe = it->second;
    }
  }
  if (exe) {
    program->runtime->memory_hits.fetch_add(1);
  } else {
    auto created = std::make_shared<ExecutableImpl>(program->runtime, bind(args, count), consts, precision, aligned);
    std::unique_lock<std::shared_mutex> lock(mutex);
    if (!classes_known) {
      std::vector<ClassProbe> probes;
      for (const auto& check : created->class_checks) {
        ClassProbe probe{{}, check.thresholds};
        for (const std::string& dim : check.dims) {   // a dim, or each of a product's
          const auto source = std::find_if(created->dyn_sources.begin(), created->dyn_sources.end(),
                                           [&](const auto& s) { return s.dim == dim; });
          KILN_ASSERT(source != created->dyn_sources.end(), "{}: dyn dim {} has classes but no source", name, dim);
          probe.factors.emplace_back(source->arg, source->axis);
        }
        probes.push_back(std::move(probe));
      }
      CallKey bucket_key = key;
      bucket_key.shape.resize(bucket_key_size);
      add_classes(class_probes.emplace(std::move(bucket_key), std::move(probes)).first->second);
    }
    auto [it, inserted] = executables.emplace(key, created);
    exe = it->second;
  }
  // Validated above; without dyn dims the key holds every tensor's shape: they are the executable's.
  // With dyn dims the launch checks each extent against its dims (launch_dims), and an executable
  // that reads none (every dyn dim in the bucket `== 1`) has the arguments checked in full, since
  // the key does not hold the extents computed from dyn dims.
  exe->launch(stream, args, count, /*checked=*/!computed_axes || !exe->dyn_sources.empty(), key.context);
}

void OpImpl::set_ir(std::shared_ptr<const ir::Ir> checked) {
  ir = std::move(checked);
  dyn_axes.clear();
  computed_axes = false;
  const std::set<std::string> dyn = ir->dyn_dims();
  if (dyn.empty()) return;
  const std::set<std::string> rows = dyn_row_lengths(*ir);
  auto axes_of = [&](const ir::Shape& shape) {
    std::vector<DynAxis> axes;
    for (const auto& e : shape) {
      if (e.kind() != ir::DimExpr::Kind::Dim) {
        axes.push_back(e.mentions(dyn) ? DynAxis::Computed : DynAxis::Static);
        computed_axes |= axes.back() == DynAxis::Computed;
      } else {
        axes.push_back(!dyn.count(e.name()) ? DynAxis::Static : rows.count(e.name()) ? DynAxis::DynRowLength : DynAxis::Dyn);
      }
    }
    return axes;
  };
  for (const auto& p : ir->params) dyn_axes.push_back(p.is_tensor ? axes_of(p.shape) : std::vector<DynAxis>{});
  for (const auto& o : ir->outputs) dyn_axes.push_back(axes_of(ir->node(o.node).shape));
}

std::shared_ptr<const ir::BoundIr> OpImpl::bind(const Arg* args, std::size_t count) const {
  std::vector<std::vector<std::int64_t>> param_shapes, output_shapes;
  for (std::size_t i = 0; i < count; ++i) {
    std::vector<std::int64_t> shape = args[i].is_tensor() ? args[i].tensor().shape : std::vector<std::int64_t>{};
    (i < ir->params.size() ? param_shapes : output_shapes).push_back(std::move(shape));
  }
  return program->runtime->pipeline.bind(ir, param_shapes, output_shapes);
}

void Op::reference(const std::vector<Arg>& args) const {
  validate_arguments(*impl_->ir, args.data(), args.size(), nullptr);
  evaluate_on_host(*impl_->bind(args.data(), args.size()), args.data(), args.size());
}

void Executable::reference(const std::vector<Arg>& args) const {
  const auto& bound = impl_->plan.bound;
  if (impl_->dyn_sources.empty()) {
    validate_arguments(*bound->ir, args.data(), args.size(), bound.get());
    evaluate_on_host(*bound, args.data(), args.size());
    return;
  }
  // Dyn dims: the arguments' values, as a launch takes them.
  validate_arguments(*bound->ir, args.data(), args.size(), nullptr, false);
  std::map<std::string, ir::DimValue> given;
  for (const auto& [name, value] : impl_->launch_dims(args.data(), args.size())) given[name] = {value, "the arguments"};
  refuse_aliasing(*bound->ir, args.data(), args.size());
  evaluate_on_host(*impl_->rt->pipeline.bind(bound->ir, given), args.data(), args.size());
}

void Executable::launch(Stream stream, std::initializer_list<Arg> args) const {
  impl_->launch(stream, args.begin(), args.size());
}
void Executable::launch(Stream stream, const std::vector<Arg>& args) const {
  impl_->launch(stream, args.data(), args.size());
}
std::string Executable::plan_text() const { return impl_->plan.text(); }
std::string Executable::source() const {
  std::string all;
  for (const auto& s : impl_->sources) all += s.text + (impl_->sources.size() > 1 ? "\n" : "");
  return all;
}
std::string Executable::ptx() const {
  std::string all;
  for (std::size_t k = 0; k < impl_->sources.size(); ++k) all += impl_->ptx_of(k);
  return all;
}
std::string Executable::sass() const {
  std::string all;
  for (std::size_t k = 0; k < impl_->sources.size(); ++k) all += impl_->sass_of(k);
  return all;
}
std::string Executable::signature() const { return impl_->plan.ir().signature(); }

std::vector<ArgumentInfo> Executable::arguments() const {
  return arguments_of(*impl_->plan.bound);
}

std::vector<KernelInfo> Executable::kernels() const {
  impl_->compile_all_kernels();
  std::vector<KernelInfo> out;
  for (std::size_t k = 0; k < impl_->sources.size(); ++k) {
    const auto& src = impl_->sources[k];
    const auto& slot = impl_->compiled(k);
    KernelInfo info;
    info.name = src.entry;
    info.template_name = src.template_name;
    info.grid = src.grid;
    info.block = src.block;
    info.shared_bytes = src.shared_bytes;
    const auto& metadata = slot.kernel.entry.metadata;
    info.registers = metadata.registers;
    info.spill_bytes = metadata.spill_stores < 0 ? -1 : metadata.spill_stores + std::max(0, metadata.spill_loads);
    info.stack_bytes = metadata.stack_bytes;
    info.compile_ms = slot.kernel.compile_ms;
    out.push_back(info);
  }
  return out;
}

}  // namespace kiln
