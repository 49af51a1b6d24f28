// The tuner and its store ([Note: the tuned store] in tuner.cpp; docs/api.md, "Tuning").
#pragma once

#include <map>
#include <optional>
#include <vector>
#include <memory>
#include <string>

#include "generator/plan/plan.h"
#include "kiln/kiln.h"

namespace kiln {

struct RuntimeImpl;
class Pack;

// What a stored pick is keyed by (op IR, dims or dyn buckets, precision, alignment, arch, SMs,
// device, kiln version), as text; the file name is its hash.
std::string tuning_key_text(const Plan& plan, const std::string& device);
std::string tuned_file_name(const std::string& key_text);   // "<hash>.tune"
std::string tuned_path(const std::string& cache_dir, const std::string& key_text);
// The device name picks are keyed by: KILN_TUNING_DEVICE (with options.use_environment), else the
// current GPU's, else "" (no lookups).
std::string tuning_device_name(const Options& options);
// The picks stored at `path` for `key_text`; empty when there is no file, or (with a warning
// once per path) when it is damaged or holds another key.
std::map<int, TunedPick> load_tuned(const std::string& path, const std::string& key_text);
bool store_tuned(const std::string& path, const std::string& key_text, const std::map<int, TunedPick>& picks,
                 std::string* error);
// A .tune file's text, and its picks (empty, with a warning once per `where`, when damaged or of
// another key).
std::string tuned_file_text(const std::string& key_text, const std::map<int, TunedPick>& picks);
std::map<int, TunedPick> parse_tuned(const std::string& text, const std::string& where, const std::string& key_text);

// Where the picks for a plan on `device` are: the cache directory's store first (empty: none),
// then each pack's tuned section. nullopt when there is nothing to look up (no tunable
// product, no device name); otherwise picks is empty on a miss.
struct TunedLookup {
  std::string key_text;
  std::string name;                  // "<hash>.tune"
  std::string where;                 // the file, or "PACK (<hash>.tune)"
  std::map<int, TunedPick> picks;
};
std::optional<TunedLookup> lookup_tuned(const std::string& cache_dir, const std::vector<std::shared_ptr<const Pack>>& packs,
                                        const Plan& plan, const std::string& device);

// Options::tuning for a plan the runtime just made: the stored picks for its key (none when
// tuning is off, there is no disk cache, no GPU, or nothing to tune); with on-first-call, a miss
// tunes first.
std::map<int, TunedPick> stored_picks(const std::shared_ptr<RuntimeImpl>& rt, const Plan& plan, const Consts& consts);

// Whether the tuner reports a candidate whose launch failed with `e` and goes on: the driver
// refused the launch (an invalid value or too few resources at cuLaunchKernel, raising its
// dynamic shared memory, or placing its clusters), which leaves the context usable. Any other
// CUDA error (a fault inside a kernel is sticky) ends the run.
bool tuner_skips_launch_error(const CudaError& e);

// Op::tune on a bound op.
TuneResult tune_bound(const std::shared_ptr<RuntimeImpl>& rt, std::shared_ptr<const ir::BoundIr> bound,
                      const Consts& consts, Precision precision, const TuneOptions& options);

}  // namespace kiln
