// Runs one op on the GPU on seeded random inputs with poisoned outputs and
// compares every output with the float64 reference. Shared by `kiln run --check`
// and the GPU test suite.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "runtime/host_tensor.h"

namespace kiln {

struct OpCheck {
  bool covered = false;        // false: no template covers the op yet (reason in `note`)
  bool checked = false;        // compared with the reference (false when skipped as too large)
  bool ok = false;             // every output within tolerance (true when not checked)
  std::string note;
  std::vector<std::string> output_names;
  std::vector<Comparison> outputs;
  std::vector<double> times_ms;   // one per timed launch, after the warm-up
  double median_ms() const;
};

struct OpCheckOptions {
  std::uint64_t seed = 1;
  bool compare = true;
  double max_reference_work = 4e9;   // skip the CPU reference above this many operations
  int warmup = 0, iters = 1;
  // This fraction of the elements of every float input tensor is replaced by
  // NaN, +inf or -inf (in turn), at seeded positions: the special-value checks.
  double special_fraction = 0;
  bool special_infinities = true;   // false: NaN only
};

OpCheck run_and_check(Runtime& rt, const std::string& spec_path, const std::string& op_name, const Bindings& bindings,
                      const OpCheckOptions& options);

}  // namespace kiln
