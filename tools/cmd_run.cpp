// kiln run SPEC [--op NAME] [-D NAME=VALUE]... [--check] [--iters N] [--seed S] [--small] [--pack FILE]...
// On a GPU: seeded random inputs, poisoned outputs, each output compared with the
// CPU float64 reference (--check), and the median time of N launches.
#include <algorithm>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "generator/support/assert.h"
#include "generator/frontend/frontend.h"
#include "runtime/device.h"
#include "runtime/op_check.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace kiln::cli {

namespace {

struct RunArgs {
  std::string spec;
  std::string op;
  std::vector<std::string> defines;
  bool check = false;
  bool small = false;
  int iters = 20;
  std::uint64_t seed = 1;
  std::string precision;
  std::vector<std::string> packs;
};

int run_run(const RunArgs& a) {
  std::string why;
  if (!gpu_available(&why)) throw CudaError(fmt::format("kiln run needs a GPU: {}", why), "cuInit", 0, "no GPU");
  Options options;
  options.precision = parse_precision(a.precision);
  Runtime rt(options);
  for (const auto& pack : a.packs) rt.preload(pack);
  Program program = rt.load_file(a.spec);
  const auto defines = parse_defines(a.defines);
  std::map<std::string, bool> used;
  const auto ops = a.op.empty() ? program.op_names() : std::vector<std::string>{a.op};
  int failures = 0;
  const std::optional<SpecFile> spec = a.small ? std::optional<SpecFile>(load_spec_file(a.spec)) : std::nullopt;
  for (const auto& name : ops) {
    Op op = program.op(name);
    Bindings b = bindings_for(op, defines, &used);
    if (spec) cap_small_dims(*check_op(*spec, name), b.dims);
    OpCheckOptions o;
    o.seed = a.seed;
    o.compare = a.check;
    o.warmup = 3;
    o.iters = a.iters;
    const OpCheck r = run_and_check(rt, a.spec, name, b, o);
    if (!r.covered) {
      std::printf("%-28s not run: %s\n", name.c_str(), r.note.c_str());
      continue;
    }
    std::printf("%-28s median %.4f ms over %d launches%s\n", name.c_str(), r.median_ms(), a.iters,
                r.note.empty() ? "" : fmt::format(" ({})", r.note).c_str());
    for (std::size_t i = 0; i < r.outputs.size(); ++i) {
      const auto& c = r.outputs[i];
      std::printf("  %-10s %s  max abs err %.3g  max rel err %.3g  norm rel err %.3g%s\n", r.output_names[i].c_str(),
                  c.ok ? "ok  " : "FAIL", c.max_abs_error, c.max_rel_error, c.norm_rel_error,
                  c.ok ? "" : (" — " + c.detail).c_str());
    }
    failures += r.ok ? 0 : 1;
  }
  check_all_used(defines, used);
  return failures == 0 ? 0 : 1;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "run ops on the GPU on random inputs; check against the CPU reference");
  cmd->add_option("spec", args->spec, "spec file")->required();
  cmd->add_option("--op", args->op, "only this op (default: every op of the file)");
  cmd->add_option("-D", args->defines, "NAME=VALUE: a dim or const");
  cmd->add_flag("--check", args->check, "compare every output with the float64 reference");
  cmd->add_flag("--small", args->small, "cap every dim not given with -D at 64");
  cmd->add_option("--pack", args->packs, "FILE.kilnpack to preload (repeatable); kernels found there need no NVRTC");
  cmd->add_option("--iters", args->iters, "timed launches (median reported)")->check(CLI::PositiveNumber);
  cmd->add_option("--seed", args->seed, "random input seed");
  cmd->add_option("--precision", args->precision, "f32 matmul/conv precision: fp32 (accurate), ieee, tf32, 3xtf32");
  cmd->callback([args, &exit_code] { exit_code = run_run(*args); });
}

}  // namespace kiln::cli
