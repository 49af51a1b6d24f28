// `kiln check SPEC... [--ir] [-D NAME=VALUE]...`
// Parses and checks every op of every file, prints each op's signature (and
// with --ir its bound IR at the default dims, -D overriding dims or consts).
// Exit: 0 clean (warnings allowed), 1 any spec error, 2 bad usage.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdio>

#include "generator/frontend.h"
#include "tools/commands.h"

namespace kiln::cli {

namespace {

struct Define {
  std::string name;
  double value = 0;
  bool is_integer = false;
};

// "N=4096", "p=0.1", "flag=true". Returns false on a malformed entry.
bool parse_define(const std::string& text, Define& out) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) return false;
  out.name = text.substr(0, eq);
  for (char c : out.name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  std::string value = text.substr(eq + 1);
  if (value == "true" || value == "false") {
    out.value = value == "true" ? 1 : 0;
    return true;
  }
  std::int64_t i = 0;
  auto [iptr, iec] = std::from_chars(value.data(), value.data() + value.size(), i);
  if (iec == std::errc() && iptr == value.data() + value.size()) {
    out.value = static_cast<double>(i);
    out.is_integer = true;
    return true;
  }
  auto [fptr, fec] = std::from_chars(value.data(), value.data() + value.size(), out.value);
  return fec == std::errc() && fptr == value.data() + value.size() && std::isfinite(out.value);
}

int check_file(const std::string& path, bool print_ir, const std::vector<Define>& defines) {
  std::map<std::string, double> consts;
  for (const auto& d : defines) consts[d.name] = d.value;
  std::vector<std::string> warnings;
  std::vector<std::shared_ptr<const ir::Ir>> irs;
  try {
    SpecFile spec = load_spec_file(path);
    irs = check_all(spec, consts, &warnings);
  } catch (const Error& e) {
    for (const auto& w : warnings) std::fputs(w.c_str(), stderr);
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  for (const auto& w : warnings) std::fputs(w.c_str(), stderr);
  std::printf("%s: %zu op%s\n", path.c_str(), irs.size(), irs.size() == 1 ? "" : "s");
  int rc = 0;
  for (const auto& ir : irs) {
    std::printf("  %s\n", ir->signature().c_str());
    if (!print_ir) continue;
    std::map<std::string, ir::DimValue> dims;
    for (const auto& d : defines) {
      if (!ir->find_dim(d.name)) continue;
      if (!d.is_integer) {
        std::fprintf(stderr, "kiln check: -D %s=%g: a dim needs an integer value\n", d.name.c_str(), d.value);
        return 2;
      }
      dims[d.name] = {static_cast<std::int64_t>(d.value), fmt::format("-D {}={}", d.name, d.value)};
    }
    try {
      std::printf("%s\n", ir::print(ir::bind(ir, dims)).c_str());
    } catch (const Error& e) {
      std::fprintf(stderr, "%s: op %s: %s\n", path.c_str(), ir->op_name.c_str(), e.what());
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
    std::vector<Define> defines;
    for (const auto& text : args->defines) {
      Define d;
      if (!parse_define(text, d)) {
        std::fprintf(stderr, "kiln check: malformed -D '%s'; expected NAME=VALUE, e.g. -D N=4096\n", text.c_str());
        exit_code = 2;
        return;
      }
      defines.push_back(d);
    }
    int rc = 0;
    for (const auto& file : args->files) {
      int file_rc = check_file(file, args->ir, defines);
      if (file_rc == 2) {
        exit_code = 2;
        return;
      }
      rc = std::max(rc, file_rc);
    }
    exit_code = rc;
  });
}

}  // namespace kiln::cli
