// Host-side helpers for tools and tests: reference values <-> device bytes,
// and the comparison every correctness check uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "reference/reference.h"

namespace kiln {

// Element bytes of `t` in its dtype (f16/bf16 rounded to nearest even).
std::vector<char> to_device_bytes(const ref::HostTensor& t);
ref::HostTensor from_device_bytes(DType dtype, std::vector<std::int64_t> shape, const std::vector<char>& bytes);

std::uint16_t float_to_half_bits(float v);
float half_bits_to_float(std::uint16_t h);
std::uint16_t float_to_bf16_bits(float v);
float bf16_bits_to_float(std::uint16_t h);

// The float64 reference of `bound` on host arguments, as a launch takes them (inputs, then
// outputs; every tensor in host memory, contiguous, already checked against the op): reads the
// inputs, evaluates, and writes each output in its dtype. Executable::reference, Op::reference.
void evaluate_on_host(const ir::BoundIr& bound, const Arg* args, std::size_t count);

// How close a result must be to the float64 reference, per output dtype:
// f32: every element within atol = rtol = 1e-4 (KernelBench's check) and
// norm-wise relative error under 1e-5; f16/bf16: 1e-2; f64: 1e-9; integers and
// bool: exact. NaN must match NaN, infinities must match exactly.
// An f32 output of an op whose matmul or conv runs in tf32 (by the spec's
// `precision=` or the runtime's choice) is held to tf32's accuracy instead:
// atol = rtol = 1e-2 element-wise and 5e-3 norm-wise (tf32 keeps 10 mantissa bits).
// Outputs that select an input value (min, max, cummax, cummin, argmin, argmax)
// must match exactly whatever their dtype. docs/semantics.md lists every op's.
struct Tolerance {
  double atol = 1e-4, rtol = 1e-4, norm_rel = 1e-5;
  static Tolerance for_dtype(DType dtype);
  static Tolerance tf32();
  static Tolerance exact();   // bit for bit (NaN matches NaN): ops that select a value
};

struct Comparison {
  bool ok = true;
  double max_abs_error = 0;
  double max_rel_error = 0;      // |d| / max(|ref|, tiny)
  double norm_rel_error = 0;     // ||out - ref|| / ||ref||
  std::int64_t mismatches = 0;
  std::int64_t first_bad = -1;   // flat index
  std::string detail;            // "element 17 [0, 17]: got 1.5, expected 2 (..)"
};

Comparison compare(const ref::HostTensor& got, const ref::HostTensor& expected, const Tolerance& tol);

}  // namespace kiln
