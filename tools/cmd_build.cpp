// kiln build SPEC... --arch sm_80,sm_90 [--op NAME] [-D NAME=VALUE]... [--shapes FILE]
//            [--precision P] -o DIR|FILE.kilnpack [-j N]
// Compiles every (op, shape, arch) offline — no GPU needed — into the cache layout
// (a directory a runtime uses as its cache dir) or one bundle for Runtime::preload.
// Kernels already in the output directory are not compiled again. The output is checked
// writable before any compile; a build that did not store everything it was asked for
// exits non-zero (the README's exit-code table) and writes no pack.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "generator/support/assert.h"
#include "generator/support/diagnostics.h"
#include "generator/support/file_read.h"
#include "runtime/binary_io.h"
#include "runtime/disk_cache.h"
#include "runtime/env.h"
#include "runtime/log.h"
#include "runtime/nvrtc.h"
#include "runtime/pack.h"
#include "runtime/pipeline.h"
#include "runtime/tuner.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;

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
  bool skip_unsupported = false;
};

constexpr int kMaxJobs = 1024;

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

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Creates `dir` if needed and proves it writable by creating (and removing) a file in it, so
// a build whose output cannot be stored fails before compiling anything.
void require_writable_dir(const fs::path& dir, const std::string& output) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec))
    throw IoError(fmt::format("kiln build: cannot store into '{}': '{}' {}", output, dir.string(),
                              fs::exists(dir, ec) ? "exists and is not a directory" : "cannot be created"));
  const fs::path probe = dir / fmt::format(".kiln-write-probe.tmp.{}", ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    throw IoError(fmt::format("kiln build: cannot store into '{}': '{}' is not writable: {}", output, dir.string(),
                              std::strerror(errno)));
  ::close(fd);
  fs::remove(probe, ec);
}

// Where the build stores its result, checked before any compile.
struct Output {
  bool to_pack = false;
  std::string path;        // as given, for messages
  std::string pack_path;   // where a pack is written ("./NAME" for a bare name)
};

Output check_output(const std::string& given) {
  Output out;
  out.path = given;
  out.to_pack = ends_with(given, kPackExtension);
  const fs::path path(given);
  std::error_code ec;
  if (!out.to_pack) {
    require_writable_dir(path, given);
    require_writable_dir(path / kCacheVersionDir, given);
    return out;
  }
  if (path.filename() == kPackExtension)
    throw CLI::ValidationError("-o", fmt::format("'{}' names no pack: give FILE.kilnpack", given));
  if (fs::is_directory(path, ec))
    throw IoError(fmt::format("kiln build: cannot write pack '{}': it is a directory", given));
  // A bare name ("kernels.kilnpack") is in the current directory.
  out.pack_path = path.has_parent_path() ? given : "./" + given;
  require_writable_dir(fs::path(out.pack_path).parent_path(), given);
  return out;
}

// How one failed job or store ranks: the worst failure sets the exit code.
struct Failure {
  ExitCode code;
  std::string message;
};

int run_build(const BuildArgs& a) {
  const auto archs = split_archs(a.arch);
  const auto defines = parse_defines(a.defines);
  std::vector<ShapeLine> shape_lines;
  if (!a.shapes.empty()) shape_lines = read_shapes(a.shapes);
  const Output output = check_output(a.output);
  std::string why;
  if (!nvrtc_available(&why)) throw CompileError(fmt::format("kiln build needs NVRTC: {}", why));
  const std::string compiler = compiler_id();
  // The runtime's template library, KILN_TEMPLATE_PATH included, so the keys match the runtime's;
  // into a directory, the pipeline's disk tier is that directory.
  PipelineOptions pipeline_options;
  const Options resolved = resolve_options(Options{});
  pipeline_options.template_dir = resolved.template_dir;
  pipeline_options.shapes = resolved.shapes;   // KILN_SHAPES
  if (!output.to_pack) pipeline_options.cache_dir = a.output;
  Pipeline pipeline(pipeline_options);
  // Tuned picks (docs/api.md, "Tuning"): the store of the runtime's cache directory, for the
  // device KILN_TUNING_DEVICE names, else the GPU here; the pack carries each one it planned with.
  const std::string tuning_device = resolved.tuning != "off" ? tuning_device_name(resolved) : std::string();
  std::map<std::string, std::string> tuned_files;   // name -> text, the picks the build planned with

  std::vector<Job> jobs;
  std::set<std::string> keys;
  std::vector<std::string> uncovered;
  std::map<std::string, bool> used;
  std::vector<std::string> all_ops;
  int specializations = 0;
  for (const auto& path : a.specs) {
    const SpecFile spec = load_spec_file(path);
    const auto op_names = spec.op_names();
    KILN_CHECK(!op_names.empty(), ArgumentError, "kiln build: {} holds no op (an op starts with 'op NAME {{')", path);
    all_ops.insert(all_ops.end(), op_names.begin(), op_names.end());
    for (const auto& op : op_names) {
      if (!a.op.empty() && op != a.op) continue;
      // Every name of a --shapes line must be a dim or const of some op the line selects.
      {
        auto ir0 = pipeline.check(spec, op);
        for (auto& line : shape_lines) {
          if (line.op != op && line.op != "*") continue;
          line.selected = true;
          for (const auto& d : ir0->dims) line.known.insert(d.name);
          for (const auto& c : ir0->consts) line.known.insert(c.name);
        }
      }
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
        auto ir0 = pipeline.check(spec, op);
        std::vector<std::string> dim_names, const_names;
        for (const auto& d : ir0->dims) dim_names.push_back(d.name);
        for (const auto& c : ir0->consts) const_names.push_back(c.name);
        Bindings b = bindings_for(dim_names, const_names, values, &used);
        if (a.small) cap_small_dims(*ir0, b.dims);
        const auto& consts = b.consts;
        std::map<std::string, ir::DimValue> dims;
        for (const auto& [name, v] : b.dims) dims[name] = {v, fmt::format("-D {}={}", name, v)};
        auto bound = pipeline.bind(consts.empty() ? ir0 : pipeline.check(spec, op, consts), dims);
        const std::string bindings = bindings_text(*bound, consts);
        for (const auto& arch : archs) {
          Target target = Target::for_arch(arch);
          target.precision = parse_precision(a.precision);
          std::vector<KernelSource> sources;
          try {
            Plan plan = pipeline.plan(bound, target);
            auto found = lookup_tuned(resolved.cache_dir, {}, plan, tuning_device);
            if (found && !found->picks.empty()) {
              target.tuned_picks = found->picks;
              plan = pipeline.plan(bound, target);
              tuned_files[found->name] = tuned_file_text(found->key_text, found->picks);
            }
            sources = pipeline.emit(plan);
          } catch (const UnsupportedError& e) {   // by type: the one "no template" error
            uncovered.push_back(fmt::format("{} ({}) for {}: {}", op, bindings, arch, e.what()));
            continue;
          }
          ++specializations;
          for (auto& s : sources) {
            std::string key = pipeline.cache_key(s, arch, compiler);
            if (!keys.insert(key).second) continue;
            jobs.push_back({std::move(s), arch, op, bindings, key});
          }
        }
      }
    }
  }
  if (!a.op.empty() && std::find(all_ops.begin(), all_ops.end(), a.op) == all_ops.end())
    throw ArgumentError(fmt::format("kiln build: --op {}: no such op in {}{} (ops: {})", a.op, fmt::join(a.specs, ", "),
                                    did_you_mean(a.op, all_ops), fmt::join(all_ops, ", ")));
  check_all_used(defines, used);
  // A line for an op of the specs that --op left out is skipped; one naming no op is a typo.
  for (const auto& line : shape_lines) {
    const bool exists = line.op == "*" || std::find(all_ops.begin(), all_ops.end(), line.op) != all_ops.end();
    KILN_CHECK(exists, ArgumentError, "{}:{}: no op named '{}' in {}{} (ops: {})", a.shapes, line.line, line.op,
               fmt::join(a.specs, ", "), did_you_mean(line.op, all_ops), fmt::join(all_ops, ", "));
    if (!line.selected) continue;
    for (const auto& [name, value] : line.values)
      KILN_CHECK(line.known.count(name) != 0, ArgumentError, "{}:{}: {}={}: op {} has no dim or const named '{}'{}",
                 a.shapes, line.line, name, value, line.op, name,
                 did_you_mean(name, std::vector<std::string>(line.known.begin(), line.known.end())));
  }

  DiskCache* cache = pipeline.disk();
  std::unique_ptr<PackWriter> pack;
  if (output.to_pack) pack = std::make_unique<PackWriter>(compiler);

  std::atomic<std::size_t> next{0};
  std::size_t done = 0, cached = 0, stored = 0;
  std::mutex mutex;
  std::vector<Failure> failures;
  double compile_ms_total = 0;
  const std::size_t total = jobs.size();
  // On a terminal one progress line is rewritten in place; in a log each kernel gets a line.
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < total;) {
      const Job& job = jobs[i];
      // Every failure of a job is that job's error: nothing may escape a worker thread.
      try {
        const Cubin cubin = pipeline.compile(job.source, job.arch, job.op, job.bindings);
        const bool hit = cubin.origin == CubinOrigin::disk;
        std::lock_guard<std::mutex> lock(mutex);
        ++done;
        compile_ms_total += std::max(0.0, cubin.compile_ms);
        if (hit) {
          ++cached;
        } else if (cache) {
          if (cubin.stored) ++stored;
          else
            failures.push_back({ExitCode::device, fmt::format("kiln build: {} of op {} ({}) for {} was compiled but "
                                                              "could not be stored in {}",
                                                              job.source.entry, job.op, job.bindings, job.arch,
                                                              cache->entry_path(job.key, job.arch))});
        }
        if (pack) pack->add(job.key, job.arch, cubin.entry);
        if (tty) std::fprintf(stderr, "\r[%zu/%zu] %s %-40s", done, total, job.arch.c_str(), job.source.file_name.c_str());
        else std::fprintf(stderr, "[%zu/%zu] %s %s\n", done, total, job.arch.c_str(), job.source.file_name.c_str());
      } catch (const CompileError& e) {
        std::lock_guard<std::mutex> lock(mutex);
        failures.push_back({ExitCode::build, e.dump()});
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mutex);
        failures.push_back({exit_code_of(e), fmt::format("kiln build: {} of op {} ({}) for {}: {}", job.source.entry,
                                                         job.op, job.bindings, job.arch, e.what())});
      }
    }
  };
  const int threads = a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 0; t < std::min<int>(threads, static_cast<int>(std::max<std::size_t>(1, total))); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (tty && total > 0) std::fprintf(stderr, "\n");

  // Ops without a kernel template: the build did not do all it was asked unless told to skip them.
  for (const auto& u : uncovered)
    std::fprintf(stderr, "kiln build: %s %s\n", a.skip_unsupported ? "skipped" : "cannot build", u.c_str());
  if (!uncovered.empty() && !a.skip_unsupported)
    failures.push_back({ExitCode::input, fmt::format("kiln build: {} specialization{} {} no kernel template (pass "
                                                     "--skip-unsupported to build the rest and succeed)",
                                                     uncovered.size(), uncovered.size() == 1 ? "" : "s",
                                                     uncovered.size() == 1 ? "has" : "have")});
  KILN_CHECK(specializations > 0 || !failures.empty(), ArgumentError,
             "kiln build: nothing to build: every selected specialization lacks a kernel template");
  if (pack && failures.empty()) {
    for (const auto& [name, text] : tuned_files) pack->add_tuned(name, text);
    pack->write(output.pack_path);
  }
  // Into a cache directory other than the store read above: the picks go with the kernels.
  if (!pack && failures.empty() && fs::absolute(a.output) != fs::absolute(resolved.cache_dir))
    for (const auto& [name, text] : tuned_files) {
      std::string error;
      const std::string path = (fs::path(a.output) / "tuned" / name).string();
      if (!write_file_atomic(path, text.data(), text.size(), &error))
        failures.push_back({ExitCode::device, fmt::format("kiln build: cannot write the tuned pick {}: {}", path, error)});
    }

  for (const auto& f : failures) std::fprintf(stderr, "%s\n", f.message.c_str());
  if (!failures.empty()) {
    ExitCode worst = ExitCode::ok;
    for (const auto& f : failures) worst = std::max(worst, f.code);
    std::fprintf(stderr, "kiln build: failed (%zu problem%s); %s\n", failures.size(), failures.size() == 1 ? "" : "s",
                 pack ? fmt::format("no pack written to {}", a.output).c_str()
                      : fmt::format("{} kernels stored in {}", stored, a.output).c_str());
    return static_cast<int>(worst);
  }
  std::printf("kiln build: %d specializations, %zu kernels for %s: %zu compiled (%.0f ms of NVRTC), %zu already in %s%s\n",
              specializations, total, fmt::format("{}", fmt::join(archs, ",")).c_str(), done - cached,
              compile_ms_total, cached, a.output.c_str(),
              tuned_files.empty() ? ""
                                  : fmt::format("; {} with tuned picks for {}", tuned_files.size(), tuning_device).c_str());
  return 0;
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
  cmd->add_option("-o,--output", args->output, "a directory (cache layout) or FILE.kilnpack")
      ->required()
      ->check(CLI::Validator([](std::string& v) { return v.empty() ? std::string("an empty path names nothing") : std::string(); },
                             "PATH"));
  cmd->add_option("-j,--jobs", args->jobs, "parallel compiles, 1 to 1024 (default: all cores)")
      ->check(CLI::Range(1, kMaxJobs));
  cmd->add_flag("--skip-unsupported", args->skip_unsupported,
                "skip (and list) ops that have no kernel template instead of failing");
  cmd->callback([args, &exit_code] { exit_code = run_build(*args); });
}

}  // namespace kiln::cli
