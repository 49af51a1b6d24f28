// kiln bench SPEC --op NAME [-D NAME=VALUE]... [--iters N] [--calls N]
// Times one op from the C++ side, no PyTorch needed. Correctness first: an op
// whose outputs do not match the float64 reference is reported wrong and not
// timed. Then: the kernel's median device time; cold NVRTC compile (empty cache
// directory); the first call of a new Runtime on a warm disk cache; and the host
// cost of a cached call next to a bare cuLaunchKernel of the same cubin.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "generator/support/assert.h"
#include "runtime/device.h"
#include "runtime/disk_cache.h"
#include "runtime/op_check.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The number of parameters of `entry` in a unit's source (0 when not found).
std::size_t kernel_parameters(const std::string& source, const std::string& entry) {
  const auto at = source.find(" " + entry + "(");
  if (at == std::string::npos) return 0;
  std::size_t count = 1, depth = 0;
  for (std::size_t i = at + entry.size() + 2; i < source.size(); ++i) {
    const char c = source[i];
    if (c == '(' || c == '<') ++depth;
    else if ((c == '>' || c == ')') && depth > 0) --depth;
    else if (c == ')') return source[at + entry.size() + 2] == ')' ? 0 : count;
    else if (c == ',' && depth == 0) ++count;
  }
  return 0;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct BenchArgs {
  std::string spec, op;
  std::vector<std::string> defines;
  int iters = 50;
  int calls = 2000;
};

int run_bench(const BenchArgs& a) {
  std::string why;
  if (!gpu_available(&why)) throw CudaError(fmt::format("kiln bench needs a GPU: {}", why), "cuInit", 0, "no GPU");
  const fs::path dir = fs::temp_directory_path() / fmt::format("kiln-bench-{}", ::getpid());
  fs::remove_all(dir);
  const auto defines = parse_defines(a.defines);

  // 1. Correctness first, and the device time (its own runtime, memory cache only).
  Options scratch;
  scratch.disk_cache = false;
  Runtime rt0(scratch);
  Op op0 = rt0.load_file(a.spec).op(a.op);
  std::map<std::string, bool> used;
  const Bindings b = bindings_for(op0, defines, &used);
  check_all_used(defines, used);
  OpCheckOptions o;
  o.warmup = 5;
  o.iters = a.iters;
  const OpCheck check = run_and_check(rt0, a.spec, a.op, b, o);
  KILN_CHECK(check.covered, UnsupportedError, "{}", check.note);
  std::printf("op %s %s\n", a.op.c_str(), op0.signature().c_str());
  if (!check.ok) {
    for (const auto& c : check.outputs)
      if (!c.ok) std::printf("WRONG: %s\n", c.detail.c_str());
    std::printf("not timed: the output does not match the reference\n");
    return 1;
  }
  std::printf("correct: %s\n", check.checked ? "yes (float64 reference)" : check.note.c_str());
  std::printf("device time: median %.4f ms over %d launches\n", check.median_ms(), a.iters);

  // 2. Cold compile into an empty cache directory.
  Options cold;
  cold.cache_dir = dir.string();
  double cold_ms = 0, nvrtc_ms = 0;
  {
    Runtime rt(cold);
    const auto t0 = Clock::now();
    Executable exe = rt.load_file(a.spec).op(a.op).specialize(b);
    for (const auto& k : exe.kernels()) nvrtc_ms += std::max(0.0, k.compile_ms);
    cold_ms = ms_since(t0);
  }
  // 3. A new runtime on the warm directory: parse, plan, emit, disk read, no NVRTC.
  double disk_ms = 0;
  std::uint64_t disk_hits = 0, compiles = 0;
  {
    Runtime rt(cold);
    const auto t0 = Clock::now();
    Executable exe = rt.load_file(a.spec).op(a.op).specialize(b);
    exe.kernels();
    disk_ms = ms_since(t0);
    disk_hits = rt.stats().disk_hits;
    compiles = rt.stats().compiles;
  }
  std::printf("cold compile: %.1f ms of NVRTC, %.1f ms from load_file to binaries\n", nvrtc_ms, cold_ms);
  std::printf("disk-cache hit: %.2f ms from load_file to binaries (%llu disk hits, %llu compiles)\n", disk_ms,
              static_cast<unsigned long long>(disk_hits), static_cast<unsigned long long>(compiles));

  // 4. Host cost per call: a memory-tier hit through Op, against a bare cuLaunchKernel.
  Runtime rt(cold);
  Op op = rt.load_file(a.spec).op(a.op);
  if (!b.consts.empty()) op = op.with_consts(b.consts);
  Executable exe = op.specialize(b);
  std::vector<DeviceBuffer> memory;
  std::vector<Arg> args;
  std::vector<void*> pointers;
  for (const auto& arg : exe.arguments()) {
    KILN_CHECK(arg.is_tensor, UnsupportedError, "kiln bench: host-overhead timing supports tensor-only ops ('{}' is a scalar)",
               arg.name);
    std::int64_t n = 1;
    for (auto d : arg.shape) n *= d;
    memory.emplace_back(std::max<std::size_t>(16, static_cast<std::size_t>(n) * dtype_size(arg.dtype)));
    memory.back().memset8(0x3F);   // launch overhead only: the values do not matter
    args.emplace_back(TensorRef(memory.back().data(), arg.dtype, arg.shape));
  }
  for (auto& m : memory) pointers.push_back(m.data());
  op(nullptr, args);
  synchronize();
  auto t0 = Clock::now();
  for (int i = 0; i < a.calls; ++i) op(nullptr, args);
  const double op_us = ms_since(t0) * 1e3 / a.calls;
  synchronize();
  const auto infos = exe.kernels();
  double bare_us = -1;
  // The bare launch passes the op's tensors only: a kernel that also takes a workspace or a dyn
  // extent (more parameters than tensors) is not compared.
  const bool tensors_only = infos.size() == 1 && kernel_parameters(exe.source(), infos[0].name) == pointers.size();
  if (tensors_only) {
    DiskCache cache(dir.string());
    for (const auto& e : cache.ls()) {
      if (!e.valid || e.metadata.kernels.empty() || e.metadata.kernels[0] != infos[0].name) continue;
      auto entry = cache.load(e.key, e.arch);
      CUmodule module = load_module(entry->cubin);
      CUfunction f = get_function(module, infos[0].name);
      set_dynamic_shared(f, infos[0].shared_bytes);   // as the runtime does
      std::vector<CUdeviceptr> values;
      for (void* p : pointers) values.push_back(reinterpret_cast<CUdeviceptr>(p));
      std::vector<void*> params;
      for (auto& v : values) params.push_back(&v);
      launch_kernel(f, infos[0].grid, infos[0].block, infos[0].shared_bytes, nullptr, params.data());
      synchronize();
      t0 = Clock::now();
      for (int i = 0; i < a.calls; ++i) launch_kernel(f, infos[0].grid, infos[0].block, infos[0].shared_bytes, nullptr, params.data());
      bare_us = ms_since(t0) * 1e3 / a.calls;
      synchronize();
      unload_module(module);
    }
  }
  std::printf("host time per call: %.2f us through kiln::Op (memory hit)", op_us);
  if (bare_us >= 0) std::printf(", %.2f us bare cuLaunchKernel: +%.2f us\n", bare_us, op_us - bare_us);
  else std::printf(" (bare launch compared only for one kernel whose parameters are the op's tensors)\n");
  fs::remove_all(dir);
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "time one op on the GPU: device time, compile and cache latency, launch overhead");
  cmd->add_option("spec", args->spec, "spec file")->required();
  cmd->add_option("--op", args->op, "the op")->required();
  cmd->add_option("-D", args->defines, "NAME=VALUE: a dim or const");
  cmd->add_option("--iters", args->iters, "timed launches")->check(CLI::PositiveNumber);
  cmd->add_option("--calls", args->calls, "host calls timed for the launch overhead")->check(CLI::PositiveNumber);
  cmd->callback([args, &exit_code] { exit_code = run_bench(*args); });
}

}  // namespace kiln::cli
