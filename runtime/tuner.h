// The tuner and its store ([Note: the tuned store] in tuner.cpp; docs/api.md, "Tuning").
#pragma once

#include <map>
#include <memory>
#include <string>

#include "generator/plan/plan.h"
#include "kiln/kiln.h"

namespace kiln {

struct RuntimeImpl;

// What a stored pick is keyed by (op IR, dims or dyn buckets, precision, alignment, arch, SMs,
// device, kiln version), as text; the file name is its hash.
std::string tuning_key_text(const Plan& plan, const std::string& device);
std::string tuned_path(const std::string& cache_dir, const std::string& key_text);
// The picks stored at `path` for `key_text`; empty when there is no file, or (with a warning
// once per path) when it is damaged or holds another key.
std::map<int, TunedPick> load_tuned(const std::string& path, const std::string& key_text);
bool store_tuned(const std::string& path, const std::string& key_text, const std::map<int, TunedPick>& picks,
                 std::string* error);

// Options::tuning for a plan the runtime just made: the stored picks for its key (none when
// tuning is off, there is no disk cache, no GPU, or nothing to tune); with on-first-call, a miss
// tunes first.
std::map<int, TunedPick> stored_picks(const std::shared_ptr<RuntimeImpl>& rt, const Plan& plan, const Consts& consts);

// Op::tune on a bound op.
TuneResult tune_bound(const std::shared_ptr<RuntimeImpl>& rt, std::shared_ptr<const ir::BoundIr> bound,
                      const Consts& consts, Precision precision, const TuneOptions& options);

}  // namespace kiln
