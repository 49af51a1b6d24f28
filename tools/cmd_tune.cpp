// kiln tune SPEC --op NAME [-D NAME=VALUE]... [--shapes FILE] [--budget S] [--iters N] [--no-store]
// Times every legal config of each tunable anchor of the op on the GPU (Op::tune; the families
// with picks and each one's candidate space: [Note: tuned picks] in generator/plan/plan.h and
// docs/api.md), each checked before it is timed, and stores the fastest in the cache directory, where the runtime
// (Options::tuning = stored, the default) finds it. Progress on stderr, a table on stdout.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "generator/support/assert.h"
#include "runtime/driver.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace kiln::cli {

namespace {

struct TuneArgs {
  std::string spec, op, precision, shapes;
  std::vector<std::string> defines;
  double budget_s = 120;
  int iters = 50;
  bool no_store = false;
};

void print_result(const TuneResult& r, bool no_store);

int run_tune(const TuneArgs& a) {
  Options options;
  if (!a.precision.empty()) options.precision = parse_precision(a.precision);
  options.tuning = "off";   // the candidates are planned as given; the stored pick is what this writes
  Runtime rt(options);
  Op op = rt.load_file(a.spec).op(a.op);
  const auto defines = parse_defines(a.defines);
  std::map<std::string, bool> used;
  // The shapes: the defaults with -D, or each --shapes line for this op ("*": every op) over them.
  std::vector<std::map<std::string, std::string>> shapes;
  if (a.shapes.empty()) shapes.push_back(defines);
  std::vector<std::string> names = op.dim_names();
  for (const auto& c : op.const_names()) names.push_back(c);
  for (const auto& line : a.shapes.empty() ? std::vector<ShapeLine>{} : read_shapes(a.shapes)) {
    if (line.op != a.op && line.op != "*") continue;
    auto merged = defines;
    for (const auto& [k, v] : line.values) {
      KILN_CHECK(std::find(names.begin(), names.end(), k) != names.end(), ArgumentError,
                 "{}:{}: {}={}: op {} has no dim or const named '{}'", a.shapes, line.line, k, v, a.op, k);
      merged[k] = v;
    }
    shapes.push_back(merged);
  }
  KILN_CHECK(!shapes.empty(), ArgumentError, "kiln tune: {} has no line for op {} (or '*')", a.shapes, a.op);
  std::vector<Bindings> bindings;
  for (const auto& values : shapes) bindings.push_back(bindings_for(op, values, &used));
  check_all_used(defines, used);
  // The input is checked first: a wrong spec, op or shapes file is exit 1 with or without a GPU.
  std::string why;
  if (!gpu_available(&why)) throw CudaError(fmt::format("kiln tune needs a GPU: {}", why), "cuInit", 0, "no GPU");
  TuneOptions o;
  o.budget_s = a.budget_s;
  o.iters = a.iters;
  o.store = !a.no_store;
  o.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  for (const auto& b : bindings) print_result(op.tune(b, o), a.no_store);
  return 0;
}

void print_result(const TuneResult& r, bool no_store) {
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
  if (!r.stored_path.empty()) std::printf("\nstored: %s\n\n", r.stored_path.c_str());
  else std::printf("\nnot stored%s\n\n", no_store ? " (--no-store)" : "");
}

}  // namespace

void add_tune_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand("tune", "time every legal config of an op's GEMMs (TMA engine, cp.async wgmma engine, mma.sync Gemm, small K, Gemv), convs, fused attention, row and split norms, reductions, scans, pools and elementwise kernels on the GPU and store the fastest");
  cmd->add_option("spec", args->spec, "spec file")->required();
  cmd->add_option("--op", args->op, "the op")->required();
  cmd->add_option("-D", args->defines, "NAME=VALUE: a dim or const");
  cmd->add_option("--shapes", args->shapes, "file of 'OP NAME=VALUE ...' lines (as kiln build's): one tuning each");
  cmd->add_option("--precision", args->precision, "f32 contractions: fp32 (accurate, default), tf32, 3xtf32, ieee");
  cmd->add_option("--budget", args->budget_s, "seconds after which no new candidate starts")->check(CLI::PositiveNumber);
  cmd->add_option("--iters", args->iters, "timed launches per candidate")->check(CLI::PositiveNumber);
  cmd->add_flag("--no-store", args->no_store, "measure only; leave the cache directory alone");
  cmd->callback([args, &exit_code] { exit_code = run_tune(*args); });
}

}  // namespace kiln::cli
