// `kiln check SPEC... [--ir] [-D NAME=VALUE]...`
// Parses and checks every op of every file, prints each op's signature (and
// with --ir its bound IR at the default dims, -D overriding dims or consts).
// Exit: 0 clean (warnings allowed), 1 any spec error, 2 bad usage.
#include <fmt/format.h>

#include <cstdio>

#include "generator/support/diagnostics.h"
#include "generator/frontend/frontend.h"
#include "runtime/pipeline.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace kiln::cli {

namespace {

// Thrown for a -D that does not fit the op it names: bad usage (exit 2).
struct UsageError {
  std::string message;
};

// The pipeline's first two stages: check every op, and with --ir bind it (no plan, no source).
int check_file(const Pipeline& pipeline, const std::string& path, bool print_ir,
               const std::map<std::string, std::string>& defines, std::map<std::string, bool>& used) {
  std::vector<std::string> warnings;
  std::vector<std::pair<std::shared_ptr<const ir::Ir>, Bindings>> checked;
  std::string errors;
  auto flush_warnings = [&] {
    for (const auto& w : warnings) std::fputs(w.c_str(), stderr);
    warnings.clear();
  };
  try {
    SpecFile spec = load_spec_file(path);
    for (const auto& op : spec.ast->ops) {
      std::vector<std::string> dim_names, const_names;
      for (const auto& d : op.dims) dim_names.push_back(d.name);
      for (const auto& c : op.consts) const_names.push_back(c.name);
      Bindings bindings;
      try {
        bindings = bindings_for(dim_names, const_names, defines, &used);
      } catch (const ArgumentError& e) {
        throw UsageError{e.what()};
      }
      try {
        checked.emplace_back(pipeline.check(spec, op.name, bindings.consts, &warnings), bindings);
      } catch (const SpecError& e) {
        errors += std::string(e.what()) + "\n";
      }
    }
  } catch (const Error& e) {
    errors += std::string(e.what()) + "\n";
  }
  flush_warnings();
  if (!errors.empty()) {
    std::fputs(errors.c_str(), stderr);
    return 1;
  }
  std::printf("%s: %zu op%s\n", path.c_str(), checked.size(), checked.size() == 1 ? "" : "s");
  int rc = 0;
  for (const auto& [ir, bindings] : checked) {
    std::printf("  %s\n", ir->signature().c_str());
    if (!print_ir) continue;
    std::map<std::string, ir::DimValue> dims;
    for (const auto& [name, value] : bindings.dims) dims[name] = {value, fmt::format("-D {}={}", name, value)};
    try {
      std::printf("%s\n", ir::print(*pipeline.bind(ir, dims)).c_str());
    } catch (const ir::BindError& e) {
      // Already rendered at the dim's declaration (or the node whose size is wrong), like a spec error.
      std::fprintf(stderr, "%s\n", e.what());
      rc = 1;
    } catch (const Error& e) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), e.what());   // the message names the op
      rc = 1;
    }
  }
  return rc;
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("check", "Check spec files and print each op's signature");
  struct Args {
    std::vector<std::string> files;
    std::vector<std::string> defines;
    bool ir = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("spec", args->files, "spec files (.kiln)")->required();
  cmd->add_flag("--ir", args->ir, "print each op's IR bound at its default dims (and -D values)");
  cmd->add_option("-D,--define", args->defines, "NAME=VALUE: a dim or const value (repeatable)")->take_all();
  cmd->callback([args, &exit_code] {
    std::map<std::string, std::string> defines = parse_defines(args->defines);   // malformed: exit 2
    std::map<std::string, bool> used;
    int rc = 0;
    const Pipeline pipeline;
    try {
      for (const auto& file : args->files) rc = std::max(rc, check_file(pipeline, file, args->ir, defines, used));
      check_all_used(defines, used);
    } catch (const UsageError& e) {
      std::fprintf(stderr, "kiln check: %s\n", e.message.c_str());
      rc = 2;
    } catch (const ArgumentError& e) {
      std::fprintf(stderr, "kiln check: %s\n", e.what());
      rc = 2;
    }
    exit_code = rc;
  });
}

}  // namespace kiln::cli
