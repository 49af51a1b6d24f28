// The tuner and its store (issue 20; docs/api.md, "Tuning").
//
// [Note: the tuned store]
// A measured pick lives in <cache_dir>/tuned/<hash>.tune, one file per (op, shape, arch, device,
// kiln version). The hash is XXH3-128 of the key text (tuning_key_text), and the file repeats the
// key text, so a lookup that lands on another key's file (a collision, a hand-edited file) is
// told apart and ignored. The key text holds:
//   - the op's checked IR, printed (consts included): a spec edit that changes the op changes it,
//     one that only moves it does not;
//   - every dim's value, or for a dyn dim its bucket (a plan depends on nothing finer);
//   - the precision, the 16-byte alignment, the arch and SM count, the device's name and kiln's
//     version.
// Files are written like cache entries (a temporary file renamed over the entry), so concurrent
// tuners of one key leave one whole file. A file that does not parse is a warning once per path
// and is ignored (the heuristic serves); tuning again replaces it.
//
// Op::tune (and Options::tuning = on-first-call) runs every candidate of each tunable product in
// turn, the others held at their best so far: compile, launch on seeded inputs into NaN-poisoned
// outputs, compare (the float64 reference where the CPU can afford it, else the heuristic's
// output), then time the correct ones with device events. The winner is the fastest correct one.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "generator/support/assert.h"
#include "runtime/binary_io.h"
#include "runtime/device.h"
#include "runtime/driver.h"
#include "runtime/env.h"
#include "runtime/hash.h"
#include "runtime/log.h"
#include "runtime/op_check.h"
#include "runtime/pack.h"
#include "runtime/pipeline.h"
#include "runtime/runtime_internal.h"
#include "runtime/tuner.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMagic = "kiln-tuned 1";

std::string today() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace

bool tuner_skips_launch_error(const CudaError& e) {
  const bool launch =
      e.call() == kCallLaunchKernel || e.call() == kCallSetDynamicShared || e.call() == kCallMaxActiveClusters;
  return launch && (e.code() == CUDA_ERROR_INVALID_VALUE || e.code() == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
}

std::string tuning_device_name(const Options& options) {
  std::string name = tuning_device_override(options);
  if (!name.empty()) return name;
  try {
    std::string why;
    int device = -1;
    if (gpu_available(&why) && (device = current_device()) >= 0) name = device_name(device);
  } catch (const Error& e) {
    log_debug(fmt::format("no device name for the tuned store: {}", e.what()));
  }
  return name;
}

std::string tuning_key_text(const Plan& plan, const std::string& device) {
  std::string dims;
  // A dyn dim: what the plan serves, never the value: its bucket, its size class where it has
  // thresholds, its row alignment where the plan recorded one ([Note: dyn row alignment]).
  for (const auto& [name, value] : plan.bound->dims) {
    auto b = plan.dyn_buckets.find(name);
    if (b == plan.dyn_buckets.end()) {
      dims += fmt::format(" {}={}", name, value);
      continue;
    }
    std::string what = dyn_bucket_text(b->second);
    if (auto t = plan.dyn_thresholds.find(name); t != plan.dyn_thresholds.end() && !t->second.empty())
      what += ", class " + dyn_class_text(t->second, dyn_class(t->second, value));
    if (auto r = plan.dyn_row_align.find(name); r != plan.dyn_row_align.end())
      what += fmt::format(", {}", dyn_row_class_text(r->second));
    dims += fmt::format(" {}=dyn({})", name, what);
  }
  for (const auto& [key, t] : plan.dyn_thresholds)   // [Note: size classes of a product]
    if (key.find('*') != std::string::npos)
      dims += fmt::format(" {}=class {}", key, dyn_class_text(t, dyn_class(t, dyn_class_value(key, plan.bound->dims))));
  return fmt::format("op {}\nir {}\ndims{}\nprecision {} aligned16 {}\narch {} sms {}\ndevice {}\nkiln {}",
                     plan.ir().op_name, hex128(ir::print(plan.ir())), dims, precision_name(plan.target.precision),
                     plan.target.aligned16 ? 1 : 0, plan.target.arch, plan.target.sm_count, device, KILN_VERSION);
}

std::string tuned_file_name(const std::string& key_text) { return hex128(key_text) + ".tune"; }

std::string tuned_path(const std::string& cache_dir, const std::string& key_text) {
  return (fs::path(cache_dir) / "tuned" / tuned_file_name(key_text)).string();
}

std::map<int, TunedPick> parse_tuned(const std::string& text, const std::string& where, const std::string& key_text) {
  std::istringstream lines(text);
  std::string line, key;
  std::map<int, TunedPick> picks;
  bool ok = static_cast<bool>(std::getline(lines, line)) && line == kMagic;
  int key_lines = 0;
  if (ok && std::getline(lines, line) && std::sscanf(line.c_str(), "key %d", &key_lines) == 1 && key_lines > 0 &&
      key_lines < 64) {
    for (int i = 0; i < key_lines && ok; ++i) {
      ok = static_cast<bool>(std::getline(lines, line));
      key += (i ? "\n" : "") + line;
    }
  } else {
    ok = false;
  }
  while (ok && std::getline(lines, line)) {
    // "pick <anchor> <pick text: TmaPick's or RownormPick's> | <origin>"
    int anchor = -1, used = 0;
    const auto bar = line.find(" | ");
    if (std::sscanf(line.c_str(), "pick %d %n", &anchor, &used) != 1 || bar == std::string::npos || anchor < 0) {
      ok = false;
      break;
    }
    auto pick = parse_pick(std::string_view(line).substr(static_cast<std::size_t>(used), bar - static_cast<std::size_t>(used)));
    if (!pick) {
      ok = false;
      break;
    }
    picks[anchor] = {*pick, line.substr(bar + 3)};
  }
  if (!ok || picks.empty()) {
    if (warn_once_per_path(where))
      log_warning(fmt::format("tuned pick {} is damaged; ignored (the heuristic serves; `kiln tune` rewrites it)", where));
    return {};
  }
  if (key != key_text) {
    if (warn_once_per_path(where)) log_warning(fmt::format("tuned pick {} belongs to another key; ignored", where));
    return {};
  }
  return picks;
}

std::map<int, TunedPick> load_tuned(const std::string& path, const std::string& key_text) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return {};
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return parse_tuned(text.str(), path, key_text);
}

std::optional<TunedLookup> lookup_tuned(const std::string& cache_dir, const std::vector<std::shared_ptr<const Pack>>& packs,
                                        const Plan& plan, const std::string& device) {
  if (plan.tunables.empty() || device.empty()) return std::nullopt;
  TunedLookup r;
  r.key_text = tuning_key_text(plan, device);
  r.name = tuned_file_name(r.key_text);
  if (!cache_dir.empty()) {
    r.where = tuned_path(cache_dir, r.key_text);
    r.picks = load_tuned(r.where, r.key_text);
    if (!r.picks.empty()) return r;
  }
  for (const auto& pack : packs) {
    auto it = pack->tuned().find(r.name);
    if (it == pack->tuned().end()) continue;
    r.where = fmt::format("{} ({})", pack->path(), r.name);
    r.picks = parse_tuned(it->second, r.where, r.key_text);
    if (!r.picks.empty()) return r;
  }
  return r;
}

std::string tuned_file_text(const std::string& key_text, const std::map<int, TunedPick>& picks) {
  const int key_lines = static_cast<int>(std::count(key_text.begin(), key_text.end(), '\n')) + 1;
  std::string text = fmt::format("{}\nkey {}\n{}\n", kMagic, key_lines, key_text);
  for (const auto& [anchor, p] : picks) text += fmt::format("pick {} {} | {}\n", anchor, pick_text(p.pick), p.origin);
  return text;
}

bool store_tuned(const std::string& path, const std::string& key_text, const std::map<int, TunedPick>& picks,
                 std::string* error) {
  const std::string text = tuned_file_text(key_text, picks);
  return write_file_atomic(path, text.data(), text.size(), error);
}

std::map<int, TunedPick> stored_picks(const std::shared_ptr<RuntimeImpl>& rt, const Plan& plan, const Consts& consts) {
  if (rt->options.tuning == "off" || plan.tunables.empty()) return {};
  const std::string device = rt->device_name_for_tuning();
  // The store is read even without the disk tier of cubins (kiln gen plans without it); only
  // on-first-call's write needs it.
  auto found = lookup_tuned(rt->options.cache_dir, rt->pipeline.packs(), plan, device);
  if (!found) return {};
  if (!found->picks.empty() || rt->options.tuning != "on-first-call" || !rt->options.disk_cache) {
    if (!found->picks.empty()) log_debug(fmt::format("{}: tuned picks from {}", plan.ir().op_name, found->where));
    return found->picks;
  }
  log_info(fmt::format("{}: no tuned pick for {} on {}: tuning now (Options::tuning = on-first-call)",
                       plan.ir().op_name, bindings_text(*plan.bound, consts), device));
  TuneOptions o;
  o.progress = [](const std::string& line) { log_info(line); };
  const TuneResult r = tune_bound(rt, plan.bound, consts, plan.target.precision, o);
  return r.stored_path.empty() ? std::map<int, TunedPick>{} : load_tuned(r.stored_path, found->key_text);
}

// The timing rounds a candidate's launches are spread over ([Note: tuning in rounds]).
constexpr int kTuneRounds = 3;

TuneResult tune_bound(const std::shared_ptr<RuntimeImpl>& rt, std::shared_ptr<const ir::BoundIr> bound,
                      const Consts& consts, Precision precision, const TuneOptions& o) {
  std::string why;
  if (!gpu_available(&why)) throw CudaError(fmt::format("tuning needs a GPU: {}", why), "cuInit", 0, "no GPU");
  const auto t0 = std::chrono::steady_clock::now();
  const std::map<int, TunedPick> none;
  ExecutableImpl base(rt, bound, consts, precision, true, &none);
  const Plan& plan = base.plan;
  TuneResult r;
  r.op = plan.ir().op_name;
  r.bindings = bindings_text(*bound, consts);
  r.arch = plan.target.arch;
  r.device = rt->device_name_for_tuning();
  KILN_CHECK(!plan.tunables.empty(), UnsupportedError,
             "{} ({}): nothing to tune for {}: none of this op's kernels ({}) has a candidate space (the families "
             "that have one, and when: docs/api.md, \"Tuning\")",
             r.op, r.bindings, plan.target.arch, [&] {
               std::string names;
               for (const auto& k : plan.kernels) names += (names.empty() ? "" : ", ") + k.template_name;
               return names;
             }());

  OpCheckOptions co;
  co.seed = o.seed;
  DeviceCase c = make_device_case(*bound, co);
  const bool tf32 = runs_tf32(plan.ir(), precision);
  Expected expected;
  // Against the heuristic's output (large ops): its bytes as stored. A candidate whose bytes are
  // the same passes (the comparison would pass it) without the element-wise comparison, which
  // widens every output to doubles and compares them on one core: KernelBench 46's candidates,
  // 2^28 outputs, took ~6 s each on an H100 (2026-12-06), their compile and timing included.
  std::vector<std::vector<char>> heuristic_bytes;
  const double work = ref::work_estimate(*bound);
  if (work <= co.max_reference_work) {   // as `kiln run --check`; above it, compare with the heuristic
    expected = reference_outputs(*bound, c.inputs);
    r.checked_against = "the float64 reference";
  } else {
    base.launch(nullptr, c.args.data(), c.args.size());
    synchronize();
    heuristic_bytes = c.output_bytes(*bound);
    expected.outputs = as_tensors(*bound, heuristic_bytes);
    r.checked_against = fmt::format("the heuristic kernel's output (the CPU reference would take {:.2g} operations; "
                                    "the GPU suite checks the heuristic's kernels against it)", work);
  }
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };

  std::map<int, TunedPick> best;   // the anchors tuned so far, at their winners
  for (const auto& t : plan.tunables) {
    TuneResult::Product prod;
    prod.anchor = t.anchor;
    prod.what = t.what;
    prod.heuristic = pick_text(t.heuristic);
    std::vector<Pick> order = {t.heuristic};
    for (const auto& cand : t.candidates)
      if (!(cand == t.heuristic)) order.push_back(cand);
    // [Note: tuning in rounds] First each candidate is compiled and checked (within the budget);
    // then the correct ones are timed in kTuneRounds interleaved rounds, iters / kTuneRounds
    // launches each (after a short warm-up: another candidate ran in between), and a candidate's
    // median is over all its rounds' launches. Timed one after another, a drift of the GPU's clocks
    // or temperature over the run fell on whole candidates: close ones flipped between runs.
    std::vector<std::unique_ptr<ExecutableImpl>> exes(order.size());
    std::vector<std::vector<double>> samples(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      TuneCandidate tc;
      tc.config = pick_text(order[i]);
      tc.heuristic = i == 0;
      if (i > 0 && elapsed() > o.budget_s) {
        tc.note = fmt::format("not run: the {:.0f} s budget was spent", o.budget_s);
      } else {
        auto forced = best;
        forced[t.anchor] = {order[i], "tuning"};
        try {
          auto exe = std::make_unique<ExecutableImpl>(rt, bound, consts, precision, true, &forced);
          c.poison();
          exe->launch(nullptr, c.args.data(), c.args.size());
          synchronize();
          tc.correct = true;
          const auto got = c.output_bytes(*bound);
          if (heuristic_bytes.empty() || got != heuristic_bytes) {   // (empty: checked against the reference)
            for (const auto& x : compare_outputs(plan.ir(), as_tensors(*bound, got), expected, tf32, &tc.correct))
              if (!x.ok) tc.note = x.detail;
          }
          if (tc.correct) exes[i] = std::move(exe);
        } catch (const CompileError& e) {
          tc.note = fmt::format("does not compile: {}", std::string(e.what()).substr(0, 300));
        } catch (const CudaError& e) {
          if (!tuner_skips_launch_error(e)) throw;   // a fault in a kernel leaves the context unusable
          tc.note = fmt::format("does not launch: {}", std::string(e.what()).substr(0, 300));
        }
      }
      if (o.progress)
        o.progress(fmt::format("tune {} {}: [{}/{}] {}{}: {}", r.op, t.what, i + 1, order.size(), tc.config,
                               tc.heuristic ? " (heuristic)" : "",
                               tc.correct ? std::string("correct") : tc.note.empty() ? std::string("wrong") : tc.note));
      if (tc.heuristic)
        KILN_CHECK(tc.correct, InternalError, "{} ({}): the heuristic's config {} gives a wrong result: {}", r.op,
                   r.bindings, tc.config, tc.note);
      prod.candidates.push_back(std::move(tc));
    }
    const int per_round = std::max(1, (o.iters + kTuneRounds - 1) / kTuneRounds);
    for (int round = 0; round < kTuneRounds; ++round)
      for (std::size_t i = 0; i < order.size(); ++i) {
        if (!exes[i]) continue;
        const auto times = time_launches([&] { exes[i]->launch(nullptr, c.args.data(), c.args.size()); },
                                         round == 0 ? o.warmup : std::max(1, o.warmup / 5), per_round);
        samples[i].insert(samples[i].end(), times.begin(), times.end());
      }
    for (std::size_t i = 0; i < order.size(); ++i) {
      TuneCandidate& tc = prod.candidates[i];
      if (exes[i]) tc.median_ms = median_of(samples[i]);
      if (o.progress && exes[i])
        o.progress(fmt::format("tune {} {}: {}{}: {:.4f} ms (median of {} launches in {} rounds)", r.op, t.what,
                               tc.config, tc.heuristic ? " (heuristic)" : "", tc.median_ms, samples[i].size(),
                               kTuneRounds));
      if (tc.heuristic) prod.heuristic_ms = tc.median_ms;
      if (tc.median_ms >= 0 && (prod.best_ms < 0 || tc.median_ms < prod.best_ms)) {
        prod.best_ms = tc.median_ms;
        prod.best = tc.config;
        best[t.anchor] = {order[i], ""};
      }
    }
    best[t.anchor].origin = fmt::format("tuned {:.4f} ms (heuristic {} {:.4f} ms) on {}, {}", prod.best_ms,
                                        prod.heuristic, prod.heuristic_ms, r.device, today());
    r.products.push_back(std::move(prod));
  }
  if (o.store && rt->options.disk_cache) {
    const std::string key = tuning_key_text(plan, r.device);
    const std::string path = tuned_path(rt->options.cache_dir, key);
    std::string error;
    if (store_tuned(path, key, best, &error)) r.stored_path = path;
    else log_warning(fmt::format("could not store the tuned pick in {}: {}", path, error));
  }
  return r;
}

}  // namespace kiln
