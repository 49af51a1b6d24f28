// kiln build SPEC... --arch sm_80,sm_90 [--op NAME] [-D NAME=VALUE]... [--shapes FILE]
//            [--precision P] -o DIR|FILE.kilnpack [-j N]
// Compiles every (op, shape, arch) offline — no GPU needed — into the cache layout
// (a directory a runtime uses as its cache dir) or one bundle for Runtime::preload.
// Kernels already in the output directory are not compiled again.
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "generator/assert.h"
#include "generator/emit.h"
#include "generator/frontend.h"
#include "generator/plan.h"
#include "runtime/disk_cache.h"
#include "runtime/kernel_build.h"
#include "runtime/log.h"
#include "runtime/nvrtc.h"
#include "runtime/pack.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace kiln::cli {

namespace {

struct BuildArgs {
  std::vector<std::string> specs;
  std::string arch = "sm_80,sm_90";
  std::string op;
  std::vector<std::string> defines;
  std::string shapes;
  bool small = false;
  std::string precision;
  std::string output;
  int jobs = 0;
};

// One --shapes line: "OP NAME=VALUE ..." ("*" for every op); '#' starts a comment.
struct ShapeLine {
  std::string op;
  std::map<std::string, std::string> values;
  int line = 0;
};

std::vector<ShapeLine> read_shapes(const std::string& path) {
  std::ifstream in(path);
  KILN_CHECK(in.good(), ArgumentError, "--shapes {}: cannot read the file", path);
  std::vector<ShapeLine> out;
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    if (auto hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    ShapeLine line;
    line.line = n;
    if (!(words >> line.op)) continue;
    std::vector<std::string> items;
    for (std::string w; words >> w;) items.push_back(w);
    try {
      line.values = parse_defines(items);
    } catch (const CLI::ValidationError& e) {
      throw ArgumentError(fmt::format("{}:{}: {}", path, n, e.what()));
    }
    out.push_back(std::move(line));
  }
  return out;
}

std::vector<std::string> split_archs(const std::string& list) {
  std::vector<std::string> archs;
  std::stringstream in(list);
  for (std::string a; std::getline(in, a, ',');)
    if (!a.empty()) archs.push_back(Target::for_arch(a).arch);
  KILN_CHECK(!archs.empty(), ArgumentError, "--arch: no architecture given");
  return archs;
}

struct Job {
  KernelSource source;
  std::string arch, op, bindings, key;
};

int run_build(const BuildArgs& a) {
  const auto archs = split_archs(a.arch);
  const auto defines = parse_defines(a.defines);
  const bool to_pack = a.output.size() > 9 && a.output.compare(a.output.size() - 9, 9, ".kilnpack") == 0;
  std::string why;
  KILN_CHECK(nvrtc_available(&why), Error, "kiln build needs NVRTC: {}", why);
  const std::string compiler = compiler_id();
  const TemplateLibrary templates;
  std::vector<ShapeLine> shape_lines;
  if (!a.shapes.empty()) shape_lines = read_shapes(a.shapes);

  std::vector<Job> jobs;
  std::set<std::string> keys;
  std::vector<std::string> uncovered;
  std::map<std::string, bool> used;
  int specializations = 0;
  for (const auto& path : a.specs) {
    const SpecFile spec = load_spec_file(path);
    for (const auto& op : spec.op_names()) {
      if (!a.op.empty() && op != a.op) continue;
      // The shapes of this op: the defaults with -D, then each --shapes line naming it.
      std::vector<std::map<std::string, std::string>> shapes = {defines};
      for (const auto& line : shape_lines)
        if (line.op == op || line.op == "*") {
          auto merged = defines;
          for (const auto& [k, v] : line.values) merged[k] = v;
          shapes.push_back(merged);
        }
      for (const auto& values : shapes) {
        // Dims and consts of this op (other names may belong to another op).
        auto ir0 = check_op(spec, op);
        std::vector<std::string> dim_names, const_names;
        for (const auto& d : ir0->dims) dim_names.push_back(d.name);
        for (const auto& c : ir0->consts) const_names.push_back(c.name);
        Bindings b = bindings_for(dim_names, const_names, values, &used);
        if (a.small) cap_small_dims(*ir0, b.dims);
        const auto& consts = b.consts;
        std::map<std::string, ir::DimValue> dims;
        for (const auto& [name, v] : b.dims) dims[name] = {v, fmt::format("-D {}={}", name, v)};
        auto ir = consts.empty() ? ir0 : check_op(spec, op, consts);
        auto bound = std::make_shared<const ir::BoundIr>(ir::bind(ir, dims));
        std::string bindings;
        for (const auto& [k, v] : bound->dims) bindings += fmt::format("{}{}={}", bindings.empty() ? "" : " ", k, v);
        for (const auto& [k, v] : consts) bindings += fmt::format(" {}={}", k, v);
        for (const auto& arch : archs) {
          Target target = Target::for_arch(arch);
          target.precision = parse_precision(a.precision);
          std::vector<KernelSource> sources;
          try {
            sources = emit(make_plan(bound, target), templates);
          } catch (const Error& e) {
            if (std::string(e.what()).find("has no kernel template") == std::string::npos) throw;
            if (std::find(uncovered.begin(), uncovered.end(), op) == uncovered.end()) uncovered.push_back(op);
            continue;
          }
          ++specializations;
          for (auto& s : sources) {
            std::string key = kernel_cache_key(s.text, templates, compiler, arch);
            if (!keys.insert(key).second) continue;
            jobs.push_back({std::move(s), arch, op, bindings, key});
          }
        }
      }
    }
  }
  check_all_used(defines, used);

  std::unique_ptr<DiskCache> cache;
  std::unique_ptr<PackWriter> pack;
  if (to_pack) pack = std::make_unique<PackWriter>(compiler);
  else cache = std::make_unique<DiskCache>(a.output);

  std::atomic<std::size_t> next{0}, done{0}, cached{0};
  std::mutex mutex;
  std::vector<std::string> failures;
  double compile_ms_total = 0;
  const std::size_t total = jobs.size();
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < total;) {
      const Job& job = jobs[i];
      std::optional<CacheEntry> entry;
      if (cache) entry = cache->load(job.key, job.arch);
      const bool hit = entry.has_value();
      double ms = 0;
      try {
        if (!entry) entry = build_kernel(job.source, job.source.text, job.arch, templates, job.op, job.bindings, &ms);
      } catch (const CompileError& e) {
        std::lock_guard<std::mutex> lock(mutex);
        failures.push_back(e.dump());
        continue;
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (hit) ++cached;
      else if (cache) cache->store(job.key, job.arch, *entry);
      if (pack) pack->add(job.key, job.arch, *entry);
      compile_ms_total += ms;
      ++done;
      std::fprintf(stderr, "\r[%zu/%zu] %s %-40s", done.load(), total, job.arch.c_str(), job.source.file_name.c_str());
    }
  };
  const int threads = a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 0; t < std::min<int>(threads, static_cast<int>(std::max<std::size_t>(1, total))); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (total > 0) std::fprintf(stderr, "\n");
  if (pack && failures.empty()) pack->write(a.output);

  std::printf("kiln build: %d specializations, %zu kernels for %s: %zu compiled (%.0f ms of NVRTC), %zu already in %s\n",
              specializations, total, fmt::format("{}", fmt::join(archs, ",")).c_str(), done.load() - cached.load(),
              compile_ms_total, cached.load(), a.output.c_str());
  if (!uncovered.empty())
    std::printf("kiln build: no kernel template yet for: %s\n", fmt::format("{}", fmt::join(uncovered, ", ")).c_str());
  for (const auto& f : failures) std::fprintf(stderr, "%s\n", f.c_str());
  return failures.empty() ? 0 : 1;
}

}  // namespace

void add_build_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<BuildArgs>();
  auto* cmd = app.add_subcommand("build", "compile ops offline (no GPU) into a cache directory or a .kilnpack");
  cmd->add_option("specs", args->specs, "spec files")->required();
  cmd->add_option("--arch", args->arch, "comma list of sm_80, sm_86, sm_89, sm_90, sm_90a");
  cmd->add_option("--op", args->op, "only this op");
  cmd->add_option("-D", args->defines, "NAME=VALUE: a dim or const");
  cmd->add_option("--shapes", args->shapes, "file of 'OP NAME=VALUE ...' lines, one specialization each");
  cmd->add_option("--precision", args->precision, "f32 matmul/conv precision: fp32 (accurate), ieee, tf32, 3xtf32");
  cmd->add_flag("--small", args->small, "cap every dim not given with -D or --shapes at 64 (as kiln run --small)");
  cmd->add_option("-o,--output", args->output, "a directory (cache layout) or FILE.kilnpack")->required();
  cmd->add_option("-j,--jobs", args->jobs, "parallel compiles (default: all cores)");
  cmd->callback([args, &exit_code] { exit_code = run_build(*args); });
}

}  // namespace kiln::cli
