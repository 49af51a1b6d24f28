// kiln gen SPEC [--op NAME] [-D NAME=VALUE]... [--arch A] [--precision P] [--ptx|--sass|--resources]
// Prints the plan and the generated CUDA source of each selected op. It runs the Runtime's
// pipeline (runtime/pipeline.h) and stops after emit: no NVRTC, no cache, unless --ptx,
// --sass or --resources asks for a compile.
#include <cstdio>

#include <fmt/format.h>

#include "tools/cli_util.h"
#include "tools/commands.h"

namespace kiln::cli {

namespace {

struct GenArgs {
  std::string spec;
  std::string op;
  std::vector<std::string> defines;
  std::string arch;   // empty: KILN_ARCH, else the GPU's, else sm_90 (as the runtime decides)
  std::string precision;
  bool ptx = false, sass = false, resources = false;
};

int run_gen(const GenArgs& a) {
  Options options;
  options.arch = a.arch;
  options.precision = parse_precision(a.precision);
  options.disk_cache = a.resources;   // only --resources needs binaries
  Runtime rt(options);
  Program program = rt.load_file(a.spec);
  const auto defines = parse_defines(a.defines);
  std::map<std::string, bool> used;
  std::vector<std::string> ops = a.op.empty() ? program.op_names() : std::vector<std::string>{a.op};
  std::vector<Executable> exes;
  for (const auto& name : ops) {
    Op op = program.op(name);
    exes.push_back(op.specialize(bindings_for(op, defines, &used)));
  }
  check_all_used(defines, used);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Executable& exe = exes[i];
    std::printf("// ===== %s\n", exe.signature().c_str());
    std::string plan = exe.plan_text();
    std::printf("/*\n%s*/\n\n", plan.c_str());
    if (a.ptx) std::printf("%s\n", exe.ptx().c_str());
    else if (a.sass) std::printf("%s\n", exe.sass().c_str());
    else std::printf("%s\n", exe.source().c_str());
    if (a.resources) {
      std::printf("// %-44s %-13s %5s %8s %6s %6s %10s\n", "kernel", "template", "regs", "smem", "spill", "stack",
                  "compile ms");
      for (const auto& k : exe.kernels())
        std::printf("// %-44s %-13s %5d %8u %6d %6d %10s\n", k.name.c_str(), k.template_name.c_str(), k.registers,
                    k.shared_bytes, k.spill_bytes, k.stack_bytes,
                    k.compile_ms < 0 ? "cached" : fmt::format("{:.1f}", k.compile_ms).c_str());
    }
  }
  return 0;
}

}  // namespace

void add_gen_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<GenArgs>();
  auto* cmd = app.add_subcommand("gen", "print the plan and generated CUDA source of a spec's ops");
  cmd->add_option("spec", args->spec, "spec file")->required();
  cmd->add_option("--op", args->op, "only this op");
  cmd->add_option("-D", args->defines, "NAME=VALUE: a dim or const")->allow_extra_args(false);
  cmd->add_option("--arch", args->arch,
                  "target arch (sm_80, sm_86, sm_89, sm_90, sm_90a; default: KILN_ARCH, else the GPU's, else sm_90)");
  cmd->add_option("--precision", args->precision, "f32 matmul/conv precision: fp32 (accurate), ieee, tf32, 3xtf32");
  auto* ptx = cmd->add_flag("--ptx", args->ptx, "print PTX instead of CUDA source");
  auto* sass = cmd->add_flag("--sass", args->sass, "print SASS (needs cuobjdump)");
  ptx->excludes(sass);
  cmd->add_flag("--resources", args->resources, "compile and print registers, shared memory, spills");
  cmd->callback([args, &exit_code] { exit_code = run_gen(*args); });
}

}  // namespace kiln::cli
