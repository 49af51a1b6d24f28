// The CPU reference interpreter: evaluates a BoundIr in float64. It is the oracle of
// every GPU test, so its meaning of each op is the one docs/semantics.md writes down.
//
//   auto inputs = kiln::ref::random_inputs(bound, /*seed=*/1);
//   std::vector<kiln::ref::HostTensor> outputs = kiln::ref::evaluate(bound, inputs);
#pragma once

#include <cstdint>
#include <vector>

#include "generator/ir/ir.h"
#include "kiln/kiln.h"

namespace kiln::ref {

// A host tensor: row-major, every element held as a double whatever `dtype` says
// (f16/bf16/f32 values are exactly representable; integers exact up to 2^53).
struct HostTensor {
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;   // [] is a 0-d tensor with one element
  std::vector<double> data;
  std::int64_t numel() const;
};

// A host scalar. `f` is the value as a double; for i64/u64 scalars `u` holds the
// exact 64-bit pattern (two's complement for i64) and wins over `f` where bits matter
// (dropout's seed). make_scalar() fills both consistently.
struct HostScalar {
  DType dtype = DType::f32;
  double f = 0;
  std::uint64_t u = 0;
};

// One input of an op: a tensor or a scalar, as its Param says.
struct HostValue {
  bool is_tensor = true;
  HostTensor tensor;
  HostScalar scalar;
};

HostValue make_tensor(DType dtype, std::vector<std::int64_t> shape, std::vector<double> data);
HostValue make_scalar(DType dtype, double value);           // floats, i32, i64, bool
HostValue make_scalar_bits(DType dtype, std::uint64_t bits);  // u64 / i64 exactly

// Evaluates the bound op. `params` are the op's inputs in Ir::params order. Returns the
// outputs in Ir::outputs order, each rounded to its dtype. Throws kiln::ArgumentError on
// inputs of the wrong kind, dtype or shape, and kiln::Error when the op is too large for
// the host (see max_bytes()).
std::vector<HostTensor> evaluate(const ir::BoundIr& bound, const std::vector<HostValue>& params);

// Seeded random inputs like torch.rand: floats uniform in [0, 1) (drawn exactly
// representable in their dtype), i32/i64 in [-8, 8), u64 tensors in [0, 16), bool 50/50,
// u64 scalars random 64-bit, float scalars uniform. Deterministic in (bound shapes, seed),
// independent of the thread count.
std::vector<HostValue> random_inputs(const ir::BoundIr& bound, std::uint64_t seed);

// One step of SplitMix64: advances `state`, returns 64 random bits.
std::uint64_t splitmix64(std::uint64_t& state);

// What storing v into a `dtype` element leaves, as a double. f16 / bf16 / f32:
// round-to-nearest-even (overflow gives +-inf, NaN stays NaN); f64: v. Integers (the
// interpreter only stores integral values there): i32 wraps modulo 2^32 as two's
// complement, i64/u64 unchanged; bool: v != 0.
double round_to(DType dtype, double v);

// An explicit cast(v) to `dtype` (the Cast op): to a float type, round_to; to bool,
// v != 0 (NaN is true); float to an integer type truncates toward zero and saturates to
// the type's range, NaN gives 0; integer to i32 wraps.
double cast_to(DType dtype, double v);

// Multiply-adds (matmul, conv2d) plus elements touched by every other node: what the
// CLI checks before running.
double work_estimate(const ir::BoundIr& bound);

// Bytes the interpreter may hold at once (every node's tensor as doubles, an upper
// bound): evaluate() refuses ops above max_bytes(), which is $KILN_REF_MAX_BYTES or
// 96 GiB.
double memory_estimate(const ir::BoundIr& bound);
double max_bytes();

// Worker threads for matmul, conv2d and the large elementwise loops:
// $KILN_REF_THREADS, else std::thread::hardware_concurrency().
int thread_count();

}  // namespace kiln::ref
