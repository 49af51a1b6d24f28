// Private state behind the public kiln::Runtime / Program / Op / Executable.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <cuda.h>

#include "generator/emit/emit.h"
#include "generator/frontend/frontend.h"
#include "generator/plan/plan.h"
#include "kiln/kiln.h"
#include "runtime/device.h"
#include "runtime/env.h"
#include "runtime/pipeline.h"
#include "runtime/tensor_map.h"

namespace kiln {

// One generated kernel's binary, filled once by the pipeline (see the note in runtime.cpp).
struct CubinSlot {
  std::once_flag once;
  Cubin kernel;
};

struct RuntimeImpl {
  explicit RuntimeImpl(Options given);

  std::shared_ptr<CubinSlot> slot_for(const KernelSource& source, const std::string& arch);
  const CubinSlot& cubin(const KernelSource& source, const std::string& arch, const std::string& op_name,
                         const std::string& bindings);
  CUfunction function(const CubinSlot& slot, const std::string& entry, void* context);

  // What an executable made now is planned for: Options::arch's target when it is set (or
  // without a GPU), else the current context's device's own (its arch and SM count), each
  // looked up once per device ([Note: several devices] in runtime.cpp).
  Target current_target();
  // The current device's name, the tuned store's key ("" without a GPU); looked up once per device.
  std::string device_name_for_tuning();

  Options options;
  DumpFlags dump;
  Target target;
  Pipeline pipeline;   // check → bind → plan → emit → compile (packs, disk, NVRTC)

  std::mutex mutex;
  std::map<std::string, std::shared_ptr<CubinSlot>> slots;
  std::map<std::pair<void*, const CubinSlot*>, CUfunction> functions;
  std::atomic<std::uint64_t> memory_hits{0}, launches{0};
  std::map<int, Target> device_targets;          // by device ordinal, under `mutex`
  std::map<int, std::string> tuning_names;       // by device ordinal, under `mutex`
};

struct ProgramImpl {
  std::shared_ptr<RuntimeImpl> runtime;
  std::shared_ptr<SpecFile> spec;
  std::string file;
  std::vector<std::string> warnings;
};

struct ExecutableImpl {
  // `forced`: the picks to plan with, as given (the tuner's candidates; none: the heuristic);
  // null: Options::tuning decides (runtime/tuner.h, stored_picks).
  ExecutableImpl(std::shared_ptr<RuntimeImpl> runtime, std::shared_ptr<const ir::BoundIr> bound,
                 const Consts& consts, Precision precision, bool aligned,
                 const std::map<int, TunedPick>* forced = nullptr);

  // `checked`: the caller has validated the arguments against this executable's shapes already
  // (a call whose key holds every tensor's shape); otherwise launch validates them. `context`: the
  // current context when the caller has read it already (null: launch reads it).
  void launch(Stream stream, const Arg* args, std::size_t count, bool checked = false, void* context = nullptr);
  const CubinSlot& compiled(std::size_t kernel);
  void compile_all_kernels();
  std::string ptx_of(std::size_t kernel) const;
  std::string sass_of(std::size_t kernel);

  std::shared_ptr<RuntimeImpl> rt;
  Plan plan;
  std::vector<KernelSource> sources;
  std::string bindings;   // "B=128 N=4096 p=0.2", for messages and cache metadata
  // Dyn dims ([Note: dyn buckets] in generator/plan/plan.h): the argument and axis each one is
  // read from at a launch; empty when the op has none.
  struct DynSource {
    std::string dim;
    std::size_t arg = 0, axis = 0;
  };
  std::vector<DynSource> dyn_sources;
  // Each size class the plan assumed (Plan::dyn_thresholds: of a dim, or of a product of dims,
  // [Note: size classes of a product] in generator/plan/plan.h): its key, the key's dims, the
  // thresholds and the planned values' class, which every launch's values must share.
  struct ClassCheck {
    std::string key;
    std::vector<std::string> dims;
    std::vector<std::int64_t> thresholds;
    int klass = 0;
  };
  std::vector<ClassCheck> class_checks;
  // A launch's dims: the planned binding with the dyn dims read from `args`, after checking each
  // dyn value against its planned bucket and every tensor's shape against them (ShapeError).
  std::map<std::string, std::int64_t> launch_dims(const Arg* args, std::size_t count) const;
  TensorMapCache tensor_maps;   // encoded TMA maps by (kernel, argument, address)

  // What a launch computes from the arguments' extents alone ([Note: launch memo] in runtime.cpp).
  struct LaunchState;

 private:
  // The kernels as loaded into one context, with the grids they launch with (resident_grid).
  struct Loaded {
    void* context;
    int device;                        // the context's device
    std::vector<CUfunction> functions;
    std::vector<Dim3> grids;
  };
  const Loaded& functions_for(void* context);   // `context` is the current one
  // The launch state for these arguments' extents: the last launch's when they are the same, else
  // a new one (launch_dims checks the shapes), kept as the last.
  std::shared_ptr<const LaunchState> launch_state(const Arg* args, std::size_t count);
  void dump_files();

  std::mutex mutex;
  std::deque<Loaded> loaded;   // per context (a deque: a launch's reference outlives another context's load)
  std::shared_ptr<const LaunchState> last_launch;   // guarded by mutex
};

struct CallKey {
  void* context = nullptr;
  bool aligned = true;
  std::vector<std::int64_t> shape;   // rank, extents... of every tensor argument
  bool operator==(const CallKey& o) const { return context == o.context && aligned == o.aligned && shape == o.shape; }
};
struct CallKeyHash {
  std::size_t operator()(const CallKey& k) const noexcept {
    std::size_t h = std::hash<void*>()(k.context) ^ (k.aligned ? 0x9e3779b97f4a7c15ULL : 0);
    for (auto v : k.shape) h = (h ^ static_cast<std::size_t>(v)) * 0x100000001b3ULL;
    return h;
  }
};

struct OpImpl {
  void call(Stream stream, const Arg* args, std::size_t count);
  // The dims bound from every argument's shape (a call's miss path, Op::reference).
  std::shared_ptr<const ir::BoundIr> bind(const Arg* args, std::size_t count) const;
  // The dims and consts named by the caller (Op::specialize, Op::tune): the bound op and, in
  // *consts, the op's consts with the given ones applied. ArgumentError for an unknown name.
  std::shared_ptr<const ir::BoundIr> bind_named(const Bindings& bindings, const char* caller, Consts* consts) const;

  std::shared_ptr<ProgramImpl> program;
  std::string name;
  std::shared_ptr<const ir::Ir> ir;
  Consts consts;
  Precision precision = Precision::fp32_accurate;
  // Per argument, per axis: the extent is a dyn dim, keyed by its bucket (empty: no dyn dims),
  // and a dyn row length's also by its row alignment ([Note: dyn row alignment] in plan.h); or an
  // expression of dyn dims (a pool's output extent, a concat's sum), not keyed at all: the dims
  // it reads are keyed where they are whole extents, and every launch checks it
  // (ExecutableImpl::launch_dims), so one executable serves every image size of a bucket and class.
  enum class DynAxis : std::uint8_t { Static, Dyn, DynRowLength, Computed };
  std::vector<std::vector<DynAxis>> dyn_axes;
  bool computed_axes = false;   // some axis is DynAxis::Computed
  void set_ir(std::shared_ptr<const ir::Ir> checked);   // ir and dyn_axes
  std::shared_mutex mutex;
  std::unordered_map<CallKey, std::shared_ptr<ExecutableImpl>, CallKeyHash> executables;
  // Per bucket key (dyn dims by bucket): where each dim with size classes is read and its
  // thresholds, learned from the key's first plan ([Note: dyn size classes] in plan.h). The
  // executables' keys add each such dim's class.
  struct ClassProbe {
    std::vector<std::pair<std::size_t, std::size_t>> factors;   // (arg, axis) of each dim of the key
    std::vector<std::int64_t> thresholds;
  };
  std::unordered_map<CallKey, std::vector<ClassProbe>, CallKeyHash> class_probes;
};

// Checks count, kinds, dtypes, ranks, extents, null and misaligned pointers and
// contiguity; with `bound`, also the exact shapes; then, with `aliasing`, refuse_aliasing. Throws
// ArgumentError.
void validate_arguments(const ir::Ir& ir, const Arg* args, std::size_t count, const ir::BoundIr* bound,
                        bool aliasing = true);
// Refuses an output whose memory overlaps another argument's (ArgumentError). A dyn executable runs
// it after its launch's shape checks, so a shape error is reported as one whatever the pointers.
void refuse_aliasing(const ir::Ir& ir, const Arg* args, std::size_t count);

}  // namespace kiln
