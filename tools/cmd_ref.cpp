// `kiln ref SPEC --op NAME [-D NAME=VALUE]... [--seed S] [--max-work W]`
// Checks the spec, binds the op's dims (defaults, -D), runs the float64 reference
// interpreter on seeded random inputs and prints, per output, its shape, a checksum
// (sum and sum of squares, %.17g) and the first 8 values. Refuses ops whose work is
// absurd for a CPU. Exit: 0 done, 1 spec / binding / size error, 2 bad usage.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "reference/reference.h"
#include "tools/commands.h"

#include "generator/frontend/frontend.h"
#include "tools/cli_util.h"

namespace kiln::cli {

namespace {

struct RefArgs {
  std::string file;
  std::string op;
  std::vector<std::string> defines;
  std::uint64_t seed = 0;
  double max_work = 1e11;
};

std::string dims_text(const std::vector<std::int64_t>& shape) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s;
}

// Prints one output: shape, checksum, first values.
void print_output(const std::string& name, const ref::HostTensor& t) {
  double sum = 0, sumsq = 0;
  for (double v : t.data) {
    sum += v;
    sumsq += v * v;
  }
  std::printf("out %s: %s[%s]\n", name.c_str(), std::string(dtype_name(t.dtype)).c_str(), dims_text(t.shape).c_str());
  std::printf("  sum   = %.17g\n  sumsq = %.17g\n  first:", sum, sumsq);
  for (std::size_t i = 0; i < t.data.size() && i < 8; ++i) std::printf(" %.9g", t.data[i]);
  std::printf("\n");
}

int run_ref(const RefArgs& args) {
  std::map<std::string, std::string> defines;
  try {
    defines = parse_defines(args.defines);
  } catch (const CLI::ValidationError& e) {
    std::fprintf(stderr, "kiln ref: %s\n", e.what());
    return 2;
  }
  std::vector<std::string> warnings;
  const SpecFile spec = load_spec_file(args.file);
  const auto ir0 = check_op(spec, args.op);
  std::vector<std::string> dim_names, const_names;
  for (const auto& d : ir0->dims) dim_names.push_back(d.name);
  for (const auto& c : ir0->consts) const_names.push_back(c.name);
  Bindings b;
  try {
    b = bindings_for(dim_names, const_names, defines);
  } catch (const ArgumentError& e) {
    std::fprintf(stderr, "kiln ref: %s\n", e.what());
    return 2;   // a malformed value is bad usage
  }
  const auto ir = check_op(spec, args.op, b.consts, &warnings);
  for (const auto& w : warnings) std::fputs(w.c_str(), stderr);
  std::map<std::string, ir::DimValue> dims;
  for (const auto& [name, value] : b.dims) dims[name] = {value, fmt::format("-D {}={}", name, value)};
  const ir::BoundIr bound = ir::bind(ir, dims);
  const double work = ref::work_estimate(bound);
  if (work > args.max_work) {
    std::string dim_list;
    for (const auto& [name, value] : bound.dims) dim_list += fmt::format(" {}={}", name, value);
    std::fprintf(stderr,
                 "kiln ref: op %s at%s needs about %.3g multiply-adds, too many for the CPU reference "
                 "(limit %.3g, --max-work); bind smaller dims with -D NAME=VALUE\n",
                 ir->op_name.c_str(), dim_list.c_str(), work, args.max_work);
    return 1;
  }
  const auto inputs = ref::random_inputs(bound, args.seed);
  const auto outputs = ref::evaluate(bound, inputs);
  std::printf("op %s  seed %llu ", ir->op_name.c_str(), static_cast<unsigned long long>(args.seed));
  for (const auto& [name, value] : bound.dims) std::printf(" %s=%lld", name.c_str(), static_cast<long long>(value));
  std::printf("\n");
  for (std::size_t i = 0; i < outputs.size(); ++i) print_output(ir->outputs[i].name, outputs[i]);
  return 0;
}


}  // namespace

void add_ref_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("ref", "Run the float64 CPU reference of an op on seeded random inputs");
  auto args = std::make_shared<RefArgs>();
  cmd->add_option("spec", args->file, "spec file (.kiln)")->required();
  cmd->add_option("--op", args->op, "the op to run")->required();
  cmd->add_option("-D,--define", args->defines, "NAME=VALUE: a dim or const value (repeatable)")->take_all();
  cmd->add_option("--seed", args->seed, "seed of the random inputs (default 0)");
  cmd->add_option("--max-work", args->max_work, "refuse ops above this many multiply-adds (default 1e11)")
      ->check(CLI::Validator(
          [](std::string& v) {
            char* end = nullptr;
            const double w = std::strtod(v.c_str(), &end);
            return end != v.c_str() && *end == '\0' && std::isfinite(w) && w > 0 ? std::string()
                                                                                 : "needs a finite positive number";
          },
          "POSITIVE"));
  cmd->callback([args, &exit_code] { exit_code = run_ref(*args); });
}

}  // namespace kiln::cli
