// kiln tune SPEC --op NAME [-D NAME=VALUE]... [--budget S] [--iters N] [--no-store]
// Times every legal config of each tunable product of the op on the GPU (Op::tune; today the
// sm_90a TMA GEMM engine's tiles, stages, K slices, clusters and rasterization), each checked
// before it is timed, and stores the fastest in the cache directory, where the runtime
// (Options::tuning = stored, the default) finds it. Progress on stderr, a table on stdout.
#include <cstdio>

#include <fmt/format.h>

#include "generator/support/assert.h"
#include "runtime/driver.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace kiln::cli {

namespace {

struct TuneArgs {
  std::string spec, op, precision;
  std::vector<std::string> defines;
  double budget_s = 120;
  int iters = 50;
  bool no_store = false;
};

int run_tune(const TuneArgs& a) {
  std::string why;
  if (!gpu_available(&why)) throw CudaError(fmt::format("kiln tune needs a GPU: {}", why), "cuInit", 0, "no GPU");
  Options options;
  if (!a.precision.empty()) options.precision = parse_precision(a.precision);
  options.tuning = "off";   // the candidates are planned as given; the stored pick is what this writes
  Runtime rt(options);
  Op op = rt.load_file(a.spec).op(a.op);
  const auto defines = parse_defines(a.defines);
  std::map<std::string, bool> used;
  const Bindings b = bindings_for(op, defines, &used);
  check_all_used(defines, used);
  TuneOptions o;
  o.budget_s = a.budget_s;
  o.iters = a.iters;
  o.store = !a.no_store;
  o.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  const TuneResult r = op.tune(b, o);
  std::printf("tune %s (%s) for %s on %s\n", r.op.c_str(), r.bindings.c_str(), r.arch.c_str(), r.device.c_str());
  std::printf("checked against %s\n", r.checked_against.c_str());
  for (const auto& p : r.products) {
    std::printf("\n%s: best %s %.4f ms, heuristic %s %.4f ms (%.3fx)\n", p.what.c_str(), p.best.c_str(), p.best_ms,
                p.heuristic.c_str(), p.heuristic_ms, p.heuristic_ms / p.best_ms);
    std::printf("| config | median ms | vs heuristic | correct | note |\n|---|---|---|---|---|\n");
    for (const auto& c : p.candidates)
      std::printf("| %s%s | %s | %s | %s | %s |\n", c.config.c_str(), c.heuristic ? " (heuristic)" : "",
                  c.median_ms >= 0 ? fmt::format("{:.4f}", c.median_ms).c_str() : "—",
                  c.median_ms >= 0 ? fmt::format("{:.3f}", c.median_ms / p.heuristic_ms).c_str() : "—",
                  c.correct ? "yes" : "no", c.note.c_str());
  }
  if (!r.stored_path.empty()) std::printf("\nstored: %s\n", r.stored_path.c_str());
  else std::printf("\nnot stored%s\n", a.no_store ? " (--no-store)" : "");
  return 0;
}

}  // namespace

void add_tune_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand("tune", "time every legal config of an op's GEMMs on the GPU and store the fastest");
  cmd->add_option("spec", args->spec, "spec file")->required();
  cmd->add_option("--op", args->op, "the op")->required();
  cmd->add_option("-D", args->defines, "NAME=VALUE: a dim or const");
  cmd->add_option("--precision", args->precision, "f32 contractions: fp32 (accurate, default), tf32, 3xtf32, ieee");
  cmd->add_option("--budget", args->budget_s, "seconds after which no new candidate starts")->check(CLI::PositiveNumber);
  cmd->add_option("--iters", args->iters, "timed launches per candidate")->check(CLI::PositiveNumber);
  cmd->add_flag("--no-store", args->no_store, "measure only; leave the cache directory alone");
  cmd->callback([args, &exit_code] { exit_code = run_tune(*args); });
}

}  // namespace kiln::cli
