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

#include "runtime/reference.h"
#include "tools/commands.h"

#if __has_include("generator/frontend.h")
#include "generator/frontend.h"
#define KILN_HAVE_FRONTEND 1
#endif

namespace kiln::cli {

namespace {

struct RefArgs {
  std::string file;
  std::string op;
  std::vector<std::string> defines;
  std::uint64_t seed = 0;
  double max_work = 1e11;
};

#ifdef KILN_HAVE_FRONTEND

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

// -D NAME=VALUE split into dims (integers) and consts (any number, true/false).
// Returns an empty string on success, else what is wrong.
std::string split_defines(const std::vector<std::string>& defines, std::map<std::string, std::string>& out) {
  for (const auto& text : defines) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
      return fmt::format("malformed -D '{}'; expected NAME=VALUE, e.g. -D N=4096", text);
    out[text.substr(0, eq)] = text.substr(eq + 1);
  }
  return {};
}

bool parse_number(const std::string& text, double& value) {
  if (text == "true" || text == "false") {
    value = text == "true" ? 1 : 0;
    return true;
  }
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(value);
}

int run_ref(const RefArgs& args) {
  std::map<std::string, std::string> defines;
  if (auto err = split_defines(args.defines, defines); !err.empty()) {
    std::fprintf(stderr, "kiln ref: %s\n", err.c_str());
    return 2;
  }
  std::map<std::string, double> consts;
  for (const auto& [name, text] : defines) {
    double v = 0;
    if (!parse_number(text, v)) {
      std::fprintf(stderr, "kiln ref: -D %s=%s: not a number\n", name.c_str(), text.c_str());
      return 2;
    }
    consts[name] = v;
  }
  try {
    std::vector<std::string> warnings;
    const SpecFile spec = load_spec_file(args.file);
    const auto ir = check_op(spec, args.op, consts, &warnings);
    for (const auto& w : warnings) std::fputs(w.c_str(), stderr);
    std::map<std::string, ir::DimValue> dims;
    for (const auto& [name, text] : defines) {
      if (!ir->find_dim(name)) continue;
      const double v = consts.at(name);
      if (v != std::floor(v) || std::fabs(v) > 9e15) {
        std::fprintf(stderr, "kiln ref: -D %s=%s: a dim needs an integer value\n", name.c_str(), text.c_str());
        return 2;
      }
      dims[name] = {static_cast<std::int64_t>(v), fmt::format("-D {}={}", name, text)};
    }
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
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

#else

int run_ref(const RefArgs&) {
  std::fprintf(stderr, "kiln ref: this build has no spec front end yet\n");
  return 2;
}

#endif

}  // namespace

void add_ref_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("ref", "Run the float64 CPU reference of an op on seeded random inputs");
  auto args = std::make_shared<RefArgs>();
  cmd->add_option("spec", args->file, "spec file (.kiln)")->required();
  cmd->add_option("--op", args->op, "the op to run")->required();
  cmd->add_option("-D,--define", args->defines, "NAME=VALUE: a dim or const value (repeatable)")->take_all();
  cmd->add_option("--seed", args->seed, "seed of the random inputs (default 0)");
  cmd->add_option("--max-work", args->max_work, "refuse ops above this many multiply-adds (default 1e11)");
  cmd->callback([args, &exit_code] { exit_code = run_ref(*args); });
}

}  // namespace kiln::cli
