// Runs one op on the GPU on seeded random inputs with poisoned outputs and
// compares every output with the float64 reference. Shared by `kiln run --check`
// and the GPU test suite.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "generator/ir/ir.h"
#include "runtime/device.h"
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
  // Host wall time of the check's phases (what a GPU suite's time goes to): specializing (the
  // NVRTC compiles, or cache hits), the oracle's bind with the random inputs and their upload,
  // the first launch, the reference with the comparison.
  double specialize_s = 0, inputs_s = 0, launch_s = 0, reference_s = 0;
  double median_ms() const;
};

// The median of a series of times (the upper one of an even count); -1 for none.
double median_of(std::vector<double> times);

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

// The pieces run_and_check is made of, shared with Op::tune (runtime/tuner.cpp).
//
// Seeded random inputs uploaded to the device and poisoned outputs, as a launch takes them.
struct DeviceCase {
  std::vector<ref::HostValue> inputs;        // the host copies (the reference's arguments)
  std::vector<DeviceBuffer> memory;
  std::vector<Arg> args;                     // inputs, then outputs
  std::vector<std::size_t> output_memory;    // each output's index into memory

  void poison();                             // every output byte 0xFF: a float reads NaN, an integer -1
  std::vector<ref::HostTensor> outputs(const ir::BoundIr& bound) const;   // downloaded
  std::vector<std::vector<char>> output_bytes(const ir::BoundIr& bound) const;   // downloaded, as stored
};
// Outputs as stored (DeviceCase::output_bytes) as the reference's tensors.
std::vector<ref::HostTensor> as_tensors(const ir::BoundIr& bound, const std::vector<std::vector<char>>& bytes);
DeviceCase make_device_case(const ir::BoundIr& bound, const OpCheckOptions& options);
// Does an f32 contraction of the op run in tf32 (its own precision=, else `runtime_default`)?
bool runs_tf32(const ir::Ir& ir, Precision runtime_default);
// What a comparison holds the outputs to: the float64 reference's values, and per output the
// error that the op's f32 contractions bring into it beyond docs/semantics.md's table (0 for most:
// [Note: a softmax after a long contraction] in op_check.cpp).
struct Expected {
  std::vector<ref::HostTensor> outputs;
  std::vector<double> contraction_error;   // per output (empty: 0 for each)
};
// The reference's outputs of `bound` (the oracle's graph) on `inputs`, with their contraction errors.
Expected reference_outputs(const ir::BoundIr& bound, const std::vector<ref::HostValue>& inputs);
// Each output against the expected one, within docs/semantics.md's tolerance; *ok &= each result.
std::vector<Comparison> compare_outputs(const ir::Ir& ir, const std::vector<ref::HostTensor>& got,
                                        const Expected& expected, bool tf32, bool* ok);
// `warmup` launches, then `iters` timed one by one with device events (the current context's
// default stream).
std::vector<double> time_launches(const std::function<void()>& launch, int warmup, int iters);

}  // namespace kiln
