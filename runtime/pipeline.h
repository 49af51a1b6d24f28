// The one pipeline every entry point runs: spec → cubin.
//
// [Note: the pipeline and where each entry point stops]
// What enters: a parsed spec file (SpecFile), an op name, consts, dims and a
// Target. What leaves, one arrow per member function, one type per stage:
//
//   SpecFile ─check─▶ ir::Ir ─bind─▶ ir::BoundIr ─plan─▶ Plan ─emit─▶ KernelSource
//            ─compile─▶ Cubin   (preloaded packs → disk cache → NVRTC → store)
//
// `run(request, last)` walks the arrows and stops after `last`; each stage is
// also callable on its own, for callers that keep a stage's result (the
// Runtime keeps the Ir per Op and the Plan per Executable). A Pipeline owns the
// template library, the disk tier and the packs; it holds no GPU state, so
// loading a Cubin into a context (LoadedKernel) stays with the Runtime.
//
// Where each entry point stops:
//   kiln check          after bind (prints the Ir, with --ir the BoundIr)
//   run_and_check       its oracle stops after bind; the kernels go through the Runtime
//   kiln gen            after emit through the Runtime (no NVRTC); --ptx, --sass,
//                       --resources go on to compile
//   kiln build          after emit for every (op, shape, arch), then compile for each
//                       distinct kernel (disk lookup → NVRTC → store, or into a pack)
//   Runtime / C API     plan and emit per Executable, compile per kernel under a
//                       single-flight slot (runtime.cpp), then load and launch
//
// compile() is thread-safe and keeps no memory tier: single flight (one compile
// per distinct kernel however many threads ask) is the Runtime's slot map above it.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "generator/emit/emit.h"
#include "generator/emit/templates.h"
#include "generator/frontend/frontend.h"
#include "generator/ir/ir.h"
#include "generator/plan/plan.h"
#include "kiln/kiln.h"
#include "runtime/disk_cache.h"

namespace kiln {

class Pack;

// How far run() goes: the last stage it performs.
enum class Stage { check, bind, plan, emit, compile };

struct PipelineOptions {
  std::string template_dir;   // adds to / overrides the built-in templates (KILN_TEMPLATE_PATH)
  std::string cache_dir;      // the disk tier; empty: none
  std::string override_dir;   // <dir>/<file_name> replaces a generated source (KILN_OVERRIDE_DIR)
  std::string shapes = "generic";   // Options::shapes: which dims check() leaves `dyn`
};

// Where a Cubin came from.
enum class CubinOrigin { none, pack, disk, nvrtc, override_file };

// One kernel's binary and where it came from.
struct Cubin {
  CacheEntry entry;          // the image and its metadata
  CubinOrigin origin = CubinOrigin::none;
  double compile_ms = -1;    // NVRTC's time; -1 when it came from a pack or the disk
  bool stored = false;       // NVRTC's result was written to the disk tier (not kept in memory only)
};

// What one pass of run() produced, up to the stage it stopped after.
struct Specialization {
  std::shared_ptr<const ir::Ir> ir;          // check
  std::shared_ptr<const ir::BoundIr> bound;  // bind
  std::string bindings;                      // bind: "B=128 N=4096 p=0.2", for messages and metadata
  Plan plan;                                 // plan
  std::vector<KernelSource> sources;         // emit
  std::vector<Cubin> cubins;                 // compile, one per source
};

struct PipelineRequest {
  const SpecFile* spec = nullptr;
  std::string op;
  Consts consts;                              // overriding the op's defaults
  std::map<std::string, ir::DimValue> dims;   // overriding the op's defaults
  Target target = Target::for_arch("sm_90");
};

// The counters of one Pipeline (this process).
struct PipelineCounters {
  std::uint64_t cache_hits = 0;   // from a pack or the disk
  std::uint64_t compiles = 0;     // NVRTC runs
};

// "B=128 N=4096 p=0.2": the bound dims, then the consts given.
std::string bindings_text(const ir::BoundIr& bound, const Consts& consts);

class Pipeline {
 public:
  explicit Pipeline(const PipelineOptions& options = {});
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // SpecFile → Ir. Throws SpecError (ArgumentError for an unknown op).
  std::shared_ptr<const ir::Ir> check(const SpecFile& spec, std::string_view op, const Consts& consts = {},
                                      std::vector<std::string>* warnings = nullptr) const;
  // Every op of the file, collecting all errors of all ops into one SpecError.
  void check_all(const SpecFile& spec, std::vector<std::string>* warnings = nullptr) const;
  // Ir → BoundIr, from named dims (else the defaults) or from the tensors' shapes.
  std::shared_ptr<const ir::BoundIr> bind(std::shared_ptr<const ir::Ir> ir,
                                          const std::map<std::string, ir::DimValue>& dims) const;
  std::shared_ptr<const ir::BoundIr> bind(std::shared_ptr<const ir::Ir> ir,
                                          const std::vector<std::vector<std::int64_t>>& param_shapes,
                                          const std::vector<std::vector<std::int64_t>>& output_shapes) const;
  // BoundIr → Plan. Throws UnsupportedError for an op no template covers.
  Plan plan(std::shared_ptr<const ir::BoundIr> bound, const Target& target) const;
  // Plan → one KernelSource per planned kernel. Throws UnsupportedError too.
  std::vector<KernelSource> emit(const Plan& plan) const;
  // KernelSource → Cubin: a preloaded pack, else the disk cache, else NVRTC (then stored on
  // disk). An override file in override_dir is compiled in place of the source, never cached.
  // `op_name` and `bindings` name the kernel in log lines and in the cache metadata.
  // Throws CompileError (NVRTC rejects it, or it is in no pack or cache and NVRTC is missing).
  Cubin compile(const KernelSource& source, const std::string& arch, const std::string& op_name,
                const std::string& bindings);
  // PTX of a source (inspection; nothing cached).
  std::string ptx(const KernelSource& source, const std::string& arch) const;

  // The stages from the spec up to `last`, in order.
  Specialization run(const PipelineRequest& request, Stage last);

  // The disk / pack key of a source for a compiler.
  std::string cache_key(const KernelSource& source, const std::string& arch, const std::string& compiler) const;
  // What determines the binary except the compiler id: the single-flight key of the Runtime.
  std::string content_key(const KernelSource& source, const std::string& arch) const;

  void add_pack(std::unique_ptr<Pack> pack);
  std::vector<std::shared_ptr<const Pack>> packs() const;   // preloaded, in order
  const TemplateLibrary& templates() const { return templates_; }
  DiskCache* disk() const { return disk_.get(); }
  PipelineCounters counters() const { return {cache_hits_.load(), compiles_.load()}; }

 private:
  TemplateLibrary templates_;
  std::unique_ptr<DiskCache> disk_;
  std::string override_dir_;
  std::string shapes_;
  mutable std::mutex mutex_;   // packs_
  std::vector<std::shared_ptr<const Pack>> packs_;
  std::atomic<std::uint64_t> cache_hits_{0}, compiles_{0};
};

}  // namespace kiln
