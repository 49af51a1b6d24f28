// The float64 reference interpreter.
//
// [Note: what the reference computes]
// Every node is evaluated in topological order into a dense row-major array of doubles.
// The rules (docs/semantics.md is the contract; this is where they live in code):
//  - params are rounded to their dtype on load (an f32 input holds f32 values);
//  - f16/bf16 nodes are rounded (RNE) on store, as PyTorch eager materializes them;
//    f32 and f64 nodes keep the full double (the oracle is more accurate than any
//    kernel), except an explicit cast to f32, which rounds;
//  - integer nodes hold exact integers; i32 wraps modulo 2^32; bool is 0/1;
//  - outputs are rounded to their dtype (what the output tensor would hold).
// Shapes come only from BoundIr::shapes (Node::shape is symbolic and unused here).
// Intermediates are freed after their last use. matmul, conv and the large
// elementwise walks run on thread_count() threads; every result is independent of the
// thread count (each output element is computed by exactly one thread, in a fixed order).
#include "reference/reference.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <thread>

#include "generator/support/assert.h"
#include "templates/kiln/philox.cuh"

namespace kiln::ref {
namespace {

using Shape = std::vector<std::int64_t>;
using ir::Node;
using ir::NodeId;
using ir::OpKind;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::int64_t numel_of(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

double numel_double(const Shape& shape) {
  double n = 1;
  for (auto d : shape) n *= static_cast<double>(d);
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

// For internal-error messages; ir::op_kind_name lives in ir.cpp, which the reference
// does not need to link.
std::string kind_name(OpKind kind) { return "op kind #" + std::to_string(static_cast<int>(kind)); }

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// ---------------------------------------------------------------- threads
// Runs f(task) for task in [0, tasks) on up to thread_count() threads, tasks handed
// out dynamically. Small jobs stay on the calling thread.
template <class F>
void parallel_for(std::int64_t tasks, F&& f) {
  const int threads = static_cast<int>(std::min<std::int64_t>(thread_count(), tasks));
  if (threads <= 1) {
    for (std::int64_t t = 0; t < tasks; ++t) f(t);
    return;
  }
  std::atomic<std::int64_t> next{0};
  // A task that throws (out of memory) stops the others; its exception leaves on the caller's
  // thread, never from a worker (which would end the process).
  std::mutex failure_mutex;
  std::exception_ptr failure;
  auto worker = [&] {
    try {
      for (std::int64_t t; (t = next.fetch_add(1)) < tasks;) f(t);
    } catch (...) {
      next.store(tasks);
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

// ---------------------------------------------------------------- strided walks
// Visits flat indices [begin, end) of `shape` in row-major order, calling
// f(flat, offsets) where offsets[k] is the element offset under strides[k].
// Broadcasting is a stride of 0.
template <std::size_t K, class F>
void walk_range(const Shape& shape, const std::array<Shape, K>& strides, std::int64_t begin,
                std::int64_t end, F&& f) {
  if (begin >= end) return;
  const std::size_t rank = shape.size();
  std::array<std::int64_t, K> off{};
  if (rank == 0) {
    f(std::int64_t{0}, off);
    return;
  }
  Shape index(rank, 0);
  std::int64_t rem = begin;  // unravel `begin`
  for (std::size_t d = rank; d-- > 0;) {
    index[d] = rem % shape[d];
    rem /= shape[d];
    for (std::size_t k = 0; k < K; ++k) off[k] += index[d] * strides[k][d];
  }
  const std::int64_t inner = shape[rank - 1];
  std::array<std::int64_t, K> inner_stride;
  for (std::size_t k = 0; k < K; ++k) inner_stride[k] = strides[k][rank - 1];
  std::int64_t flat = begin;
  while (flat < end) {
    const std::int64_t run = std::min(inner - index[rank - 1], end - flat);
    for (std::int64_t j = 0; j < run; ++j, ++flat) {
      f(flat, off);
      for (std::size_t k = 0; k < K; ++k) off[k] += inner_stride[k];
    }
    // Carry: rewind the inner dim, step the next outer one (odometer).
    for (std::size_t k = 0; k < K; ++k) off[k] -= (index[rank - 1] + run) * inner_stride[k];
    index[rank - 1] = 0;
    for (std::size_t d = rank - 1; d-- > 0;) {
      for (std::size_t k = 0; k < K; ++k) off[k] += strides[k][d];
      if (++index[d] < shape[d]) break;
      for (std::size_t k = 0; k < K; ++k) off[k] -= shape[d] * strides[k][d];
      index[d] = 0;
    }
  }
}

// walk_range over the whole shape, split into chunks over threads when large.
template <std::size_t K, class F>
void walk_parallel(const Shape& shape, const std::array<Shape, K>& strides, F&& f) {
  constexpr std::int64_t kChunk = 1 << 16;
  const std::int64_t n = numel_of(shape);
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, [&](std::int64_t c) {
    walk_range(shape, strides, c * kChunk, std::min(n, (c + 1) * kChunk), f);
  });
}

// Strides that read `operand` broadcast to `out` (numpy rules, right-aligned).
Shape broadcast_strides(const Shape& operand, const Shape& out) {
  KILN_ASSERT(operand.size() <= out.size(), "operand {} has more dims than result {}",
              shape_str(operand), shape_str(out));
  const Shape contiguous = contiguous_strides(operand);
  Shape strides(out.size(), 0);
  const std::size_t lead = out.size() - operand.size();
  for (std::size_t i = 0; i < operand.size(); ++i) {
    KILN_ASSERT(operand[i] == out[lead + i] || operand[i] == 1,
                "operand {} does not broadcast to {}", shape_str(operand), shape_str(out));
    strides[lead + i] = operand[i] == 1 ? 0 : contiguous[i];
  }
  return strides;
}

// ---------------------------------------------------------------- rounding
double round_binary(double v, int precision, int min_exponent, double max_finite) {
  if (!std::isfinite(v) || v == 0) return v;
  int e = 0;
  std::frexp(v, &e);  // |v| = m * 2^e with m in [0.5, 1): the leading bit is 2^(e-1)
  const int quantum = std::max(e - 1, min_exponent) - (precision - 1);
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(v, -quantum)), quantum);
  if (std::fabs(rounded) > max_finite) return std::copysign(kInf, v);
  return rounded;
}

double wrap_i32(double v) {
  if (v >= -2147483648.0 && v <= 2147483647.0) return v;
  const double m = std::fmod(v, 4294967296.0);  // exact; same sign as v
  double r = m < 0 ? m + 4294967296.0 : m;
  return r >= 2147483648.0 ? r - 4294967296.0 : r;
}

// ---------------------------------------------------------------- values
struct Value {
  Shape shape;
  std::vector<double> data;
  // An input whose values are already exact in its dtype is read in place from the
  // caller's tensor instead of copied (a seed-shape input is several GB).
  const std::vector<double>* borrowed = nullptr;
  const std::vector<double>& values() const { return borrowed ? *borrowed : data; }
  bool has_bits = false;   // scalar params of u64/i64: the exact 64-bit pattern
  std::uint64_t bits = 0;
};

void store_all(DType dtype, std::vector<double>& data) {
  if (dtype == DType::f64 || dtype == DType::f32 || dtype == DType::i64 || dtype == DType::u64)
    return;  // f32 intermediates stay in double; see the Note
  for (auto& v : data) v = round_to(dtype, v);
}

bool is_int(DType d) { return d == DType::i32 || d == DType::i64 || d == DType::u64; }

double lowest_of(DType d) {
  switch (d) {
    case DType::i32: return -2147483648.0;
    case DType::i64: return -9223372036854775808.0;
    case DType::u64:
    case DType::boolean: return 0;
    default: return -kInf;
  }
}
double highest_of(DType d) {
  switch (d) {
    case DType::i32: return 2147483647.0;
    case DType::i64: return 9223372036854775807.0;
    case DType::u64: return 18446744073709551615.0;
    case DType::boolean: return 1;
    default: return kInf;
  }
}

// NaN-propagating min/max (PyTorch: any NaN in gives NaN out).
double nan_min(double a, double b) { return (std::isnan(a) || a < b) ? a : (std::isnan(b) ? b : std::min(a, b)); }
double nan_max(double a, double b) { return (std::isnan(a) || a > b) ? a : (std::isnan(b) ? b : std::max(a, b)); }

// ---------------------------------------------------------------- the interpreter
class Interpreter {
 public:
  Interpreter(const ir::BoundIr& bound) : bound_(bound), ir_(*bound.ir) {}

  std::vector<HostTensor> run(const std::vector<HostValue>& params);

 private:
  const Shape& shape(NodeId id) const { return bound_.shape(id); }
  const Value& operand(const Node& n, std::size_t i) const {
    KILN_ASSERT(i < n.operands.size(), "{} has {} operands, wanted #{}", kind_name(n.kind),
                n.operands.size(), i);
    const auto& v = values_.at(static_cast<std::size_t>(n.operands[i]));
    KILN_ASSERT(static_cast<std::int64_t>(v.values().size()) == numel_of(shape(n.operands[i])),
                "operand %{} was freed or has the wrong shape", n.operands[i]);
    return v;
  }
  DType operand_dtype(const Node& n, std::size_t i) const { return ir_.node(n.operands[i]).dtype; }

  Value eval(NodeId id, const Node& n);
  Value load_param(NodeId id, const Node& n, const HostValue& v) const;
  Value elementwise(const Node& n, const Shape& out);
  Value reduce(const Node& n, const Shape& out);
  Value scan(const Node& n, const Shape& out);
  Value iota(const Node& n, const Shape& out);
  Value rownorm(const Node& n, const Shape& out);
  Value normalize(const Node& n, const Shape& out);
  Value dropout(const Node& n, const Shape& out);
  Value permute(const Node& n, const Shape& out);
  Value index_view(const Node& n, const Shape& out);
  Value matmul(const Node& n, const Shape& out);
  Value attention(const Node& n, const Shape& out);
  Value conv(const Node& n, const Shape& out);
  Value pool(const Node& n, const Shape& out);

  const ir::BoundIr& bound_;
  const ir::Ir& ir_;
  std::vector<Value> values_;
  const std::vector<HostValue>* params_ = nullptr;
  std::vector<int> param_of_node_;
};

Value Interpreter::load_param(NodeId id, const Node& n, const HostValue& hv) const {
  const ir::Param& p = ir_.params.at(static_cast<std::size_t>(param_of_node_[static_cast<std::size_t>(id)]));
  Value v;
  if (p.is_tensor) {
    KILN_CHECK(hv.is_tensor, ArgumentError, "reference: input '{}' is a tensor, got a scalar", p.name);
    KILN_CHECK(hv.tensor.dtype == n.dtype, ArgumentError, "reference: input '{}' is {}, got {}", p.name,
               dtype_name(n.dtype), dtype_name(hv.tensor.dtype));
    KILN_CHECK(hv.tensor.shape == shape(id), ArgumentError, "reference: input '{}' has shape {}, got {}",
               p.name, shape_str(shape(id)), shape_str(hv.tensor.shape));
    KILN_CHECK(static_cast<std::int64_t>(hv.tensor.data.size()) == numel_of(shape(id)), ArgumentError,
               "reference: input '{}' holds {} values for shape {}", p.name, hv.tensor.data.size(),
               shape_str(shape(id)));
    v.shape = shape(id);
    const bool exact = std::all_of(hv.tensor.data.begin(), hv.tensor.data.end(), [&](double x) {
      return x == round_to(n.dtype, x) || std::isnan(x);
    });
    if (exact) {
      v.borrowed = &hv.tensor.data;
      return v;
    }
    v.data = hv.tensor.data;
    for (auto& x : v.data) x = round_to(n.dtype, x);
    return v;
  }
  KILN_CHECK(!hv.is_tensor, ArgumentError, "reference: input '{}' is a scalar, got a tensor", p.name);
  KILN_CHECK(hv.scalar.dtype == n.dtype, ArgumentError, "reference: scalar '{}' is {}, got {}", p.name,
             dtype_name(n.dtype), dtype_name(hv.scalar.dtype));
  v.shape = {};
  if (n.dtype == DType::u64 || n.dtype == DType::i64) {
    v.has_bits = true;
    v.bits = hv.scalar.u;
    v.data = {n.dtype == DType::u64 ? static_cast<double>(hv.scalar.u)
                                    : static_cast<double>(static_cast<std::int64_t>(hv.scalar.u))};
  } else {
    v.data = {round_to(n.dtype, hv.scalar.f)};
  }
  return v;
}

std::vector<HostTensor> Interpreter::run(const std::vector<HostValue>& params) {
  KILN_ASSERT(bound_.shapes.size() == ir_.nodes.size(), "BoundIr has {} shapes for {} nodes",
              bound_.shapes.size(), ir_.nodes.size());
  KILN_CHECK(params.size() == ir_.params.size(), ArgumentError,
             "reference: op '{}' takes {} inputs, got {}", ir_.op_name, ir_.params.size(), params.size());
  const double bytes = memory_estimate(bound_);
  KILN_CHECK(bytes <= max_bytes(), UnsupportedError,
             "reference: op '{}' would hold about {:.1f} GiB as float64 on the host, over the limit of "
             "{:.1f} GiB (KILN_REF_MAX_BYTES); bind smaller dims (-D NAME=VALUE)",
             ir_.op_name, bytes / 1073741824.0, max_bytes() / 1073741824.0);

  params_ = &params;
  param_of_node_.assign(ir_.nodes.size(), -1);
  for (std::size_t i = 0; i < ir_.params.size(); ++i)
    param_of_node_.at(static_cast<std::size_t>(ir_.params[i].node)) = static_cast<int>(i);

  // Free each intermediate after its last user; outputs live to the end.
  std::vector<NodeId> last_use(ir_.nodes.size(), -1);
  for (NodeId id = 0; id < static_cast<NodeId>(ir_.nodes.size()); ++id)
    for (NodeId op : ir_.node(id).operands) {
      KILN_ASSERT(op >= 0 && op < id, "node %{} uses %{}: not topological", id, op);
      last_use[static_cast<std::size_t>(op)] = id;
    }
  for (const auto& out : ir_.outputs) last_use.at(static_cast<std::size_t>(out.node)) = static_cast<NodeId>(ir_.nodes.size());

  values_.assign(ir_.nodes.size(), Value{});
  for (NodeId id = 0; id < static_cast<NodeId>(ir_.nodes.size()); ++id) {
    values_[static_cast<std::size_t>(id)] = eval(id, ir_.node(id));
    const auto& v = values_[static_cast<std::size_t>(id)];
    KILN_ASSERT(numel_of(v.shape) == static_cast<std::int64_t>(v.values().size()) && v.shape == shape(id),
                "node %{} ({}) produced shape {} with {} values, bound shape {}", id,
                kind_name(ir_.node(id).kind), shape_str(v.shape), v.values().size(), shape_str(shape(id)));
    for (NodeId op : ir_.node(id).operands)
      if (last_use[static_cast<std::size_t>(op)] == id) values_[static_cast<std::size_t>(op)] = Value{};
  }

  std::vector<HostTensor> outputs;
  for (const auto& out : ir_.outputs) {
    const Node& n = ir_.node(out.node);
    HostTensor t;
    t.dtype = n.dtype;
    t.shape = shape(out.node);
    t.data = values_.at(static_cast<std::size_t>(out.node)).values();  // copy: an op may output a node twice
    for (auto& x : t.data) x = round_to(n.dtype, x);
    outputs.push_back(std::move(t));
  }
  return outputs;
}

Value Interpreter::eval(NodeId id, const Node& n) {
  const Shape& out = shape(id);
  switch (n.kind) {
    case OpKind::Input:
    case OpKind::Scalar: {
      const int p = param_of_node_[static_cast<std::size_t>(id)];
      KILN_ASSERT(p >= 0, "node %{} is an input but no param names it", id);
      return load_param(id, n, (*params_)[static_cast<std::size_t>(p)]);
    }
    case OpKind::Literal:
    case OpKind::DimValue: {
      // A literal holds what its compute type can: f16/bf16/f32 literals are f32
      // constants (PyTorch's opmath); integers are exact in the IR, and exact here up
      // to 2^53 (the reference holds doubles; beyond that they round to nearest). A dim's
      // value is the extent it is bound to, as a literal ([Note: dims as values]).
      const double value = n.kind == OpKind::Literal ? n.literal.to_double() : static_cast<double>(bound_.dim_value(id));
      DType compute = (n.dtype == DType::f16 || n.dtype == DType::bf16) ? DType::f32 : n.dtype;
      Value v;
      v.shape = out;
      v.data.assign(static_cast<std::size_t>(numel_of(out)), cast_to(compute, value));
      return v;
    }
    case OpKind::Sum: case OpKind::Mean: case OpKind::Min: case OpKind::Max: case OpKind::Prod:
    case OpKind::Argmin: case OpKind::Argmax: case OpKind::Logsumexp:
      return reduce(n, out);
    case OpKind::Cumsum: case OpKind::Cumprod: case OpKind::Cummax: case OpKind::Cummin:
      return scan(n, out);
    case OpKind::Softmax: case OpKind::LogSoftmax:
      return rownorm(n, out);
    case OpKind::Normalize: return normalize(n, out);
    case OpKind::Dropout: return dropout(n, out);
    case OpKind::Permute: return permute(n, out);
    case OpKind::Reshape: case OpKind::Pad: case OpKind::Concat: case OpKind::Gather: case OpKind::Expand:
      return index_view(n, out);
    case OpKind::Matmul: return matmul(n, out);
    case OpKind::Attention: return attention(n, out);
    case OpKind::Conv: return conv(n, out);
    case OpKind::Iota: return iota(n, out);
    case OpKind::MaxPool: case OpKind::AvgPool: return pool(n, out);
    default:
      return elementwise(n, out);
  }
}

// ---------------------------------------------------------------- elementwise
double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double unary(OpKind kind, DType dtype, DType from, double x) {
  switch (kind) {
    case OpKind::Neg: return -x;
    case OpKind::Not: return x == 0 ? 1 : 0;
    case OpKind::Abs: return std::fabs(x);
    case OpKind::Exp: return std::exp(x);
    case OpKind::Log: return std::log(x);
    case OpKind::Sqrt: return std::sqrt(x);
    case OpKind::Rsqrt: return 1.0 / std::sqrt(x);
    case OpKind::Tanh: return std::tanh(x);
    case OpKind::Sigmoid: return sigmoid(x);
    case OpKind::Relu: return std::isnan(x) ? x : (x > 0 ? x : 0.0);
    case OpKind::Gelu: return gelu(x);
    case OpKind::Silu: return x * sigmoid(x);
    case OpKind::Log1p: return std::log1p(x);
    case OpKind::Expm1: return std::expm1(x);
    case OpKind::Erf: return std::erf(x);
    case OpKind::Cast:
      // Integer to i32 wraps (two's complement, as a C++/CUDA cast); the rest is cast_to.
      if (dtype == DType::i32 && (is_int(from) || from == DType::boolean)) return wrap_i32(x);
      return cast_to(dtype, x);
    default: break;
  }
  KILN_ASSERT(false, "{} is not a unary op", kind_name(kind));
  return 0;
}

double binary(OpKind kind, DType dtype, double a, double b) {
  switch (kind) {
    case OpKind::Add: return a + b;
    case OpKind::Sub: return a - b;
    case OpKind::Mul: return a * b;
    case OpKind::Div:
      if (is_int(dtype) || dtype == DType::boolean) return b == 0 ? 0 : std::trunc(a / b);
      return a / b;
    case OpKind::Pow: return std::pow(a, b);
    case OpKind::Minimum: return nan_min(a, b);
    case OpKind::Maximum: return nan_max(a, b);
    case OpKind::Eq: return a == b;
    case OpKind::Ne: return a != b;
    case OpKind::Lt: return a < b;
    case OpKind::Le: return a <= b;
    case OpKind::Gt: return a > b;
    case OpKind::Ge: return a >= b;
    case OpKind::And: return (a != 0) && (b != 0);
    case OpKind::Or: return (a != 0) || (b != 0);
    default: break;
  }
  KILN_ASSERT(false, "{} is not a binary op", kind_name(kind));
  return 0;
}

Value Interpreter::elementwise(const Node& n, const Shape& out) {
  Value v;
  v.shape = out;
  v.data.resize(static_cast<std::size_t>(numel_of(out)));
  double* dst = v.data.data();
  const std::size_t arity = n.operands.size();
  if (arity == 1) {
    const Value& a = operand(n, 0);
    const DType from = operand_dtype(n, 0);
    const double* pa = a.values().data();
    walk_parallel<1>(out, {broadcast_strides(a.shape, out)},
                     [&](std::int64_t i, const std::array<std::int64_t, 1>& o) {
                       dst[i] = unary(n.kind, n.dtype, from, pa[o[0]]);
                     });
  } else if (arity == 2) {
    const Value& a = operand(n, 0);
    const Value& b = operand(n, 1);
    const double* pa = a.values().data();
    const double* pb = b.values().data();
    walk_parallel<2>(out, {broadcast_strides(a.shape, out), broadcast_strides(b.shape, out)},
                     [&](std::int64_t i, const std::array<std::int64_t, 2>& o) {
                       dst[i] = binary(n.kind, n.dtype, pa[o[0]], pb[o[1]]);
                     });
  } else {
    KILN_ASSERT(n.kind == OpKind::Where && arity == 3, "{} with {} operands", kind_name(n.kind), arity);
    const Value& c = operand(n, 0);
    const Value& a = operand(n, 1);
    const Value& b = operand(n, 2);
    const double *pc = c.values().data(), *pa = a.values().data(), *pb = b.values().data();
    walk_parallel<3>(out,
                     {broadcast_strides(c.shape, out), broadcast_strides(a.shape, out),
                      broadcast_strides(b.shape, out)},
                     [&](std::int64_t i, const std::array<std::int64_t, 3>& o) {
                       dst[i] = pc[o[0]] != 0 ? pa[o[1]] : pb[o[2]];
                     });
  }
  if (n.kind != OpKind::Cast) store_all(n.dtype, v.data);
  return v;
}

// ---------------------------------------------------------------- reductions
Value Interpreter::reduce(const Node& n, const Shape& out) {
  const Value& x = operand(n, 0);
  const Shape& in = x.shape;
  const Shape in_strides = contiguous_strides(in);
  std::vector<bool> reduced(in.size(), false);
  for (int a : n.axes) {
    KILN_ASSERT(a >= 0 && static_cast<std::size_t>(a) < in.size(), "axis {} of rank {}", a, in.size());
    reduced[static_cast<std::size_t>(a)] = true;
  }
  // The kept dims index the outputs, the reduced dims a row; walk both with the
  // input's strides.
  Shape kept_shape, kept_strides, row_shape, row_strides;
  for (std::size_t d = 0; d < in.size(); ++d) {
    (reduced[d] ? row_shape : kept_shape).push_back(in[d]);
    (reduced[d] ? row_strides : kept_strides).push_back(in_strides[d]);
  }
  KILN_ASSERT(numel_of(kept_shape) == numel_of(out), "{} of {} over {} axes gives {}", kind_name(n.kind),
              shape_str(in), n.axes.size(), shape_str(out));
  const std::int64_t row_len = numel_of(row_shape);
  const std::int64_t outputs = numel_of(out);

  // Row offsets once (the same for every output), so the per-output loop is a gather.
  std::vector<std::int64_t> row_offsets(static_cast<std::size_t>(row_len));
  walk_range<1>(row_shape, {row_strides}, 0, row_len,
                [&](std::int64_t j, const std::array<std::int64_t, 1>& o) { row_offsets[static_cast<std::size_t>(j)] = o[0]; });
  std::vector<std::int64_t> bases(static_cast<std::size_t>(outputs));
  walk_range<1>(kept_shape, {kept_strides}, 0, outputs,
                [&](std::int64_t i, const std::array<std::int64_t, 1>& o) { bases[static_cast<std::size_t>(i)] = o[0]; });

  Value v;
  v.shape = out;
  v.data.resize(static_cast<std::size_t>(outputs));
  const double* px = x.values().data();
  const std::int64_t* ro = row_offsets.data();
  const OpKind kind = n.kind;
  auto reduce_one = [&](const double* base) -> double {
    switch (kind) {
      case OpKind::Sum:
      case OpKind::Mean: {
        double s = 0;
        for (std::int64_t j = 0; j < row_len; ++j) s += base[ro[j]];
        return kind == OpKind::Mean ? s / static_cast<double>(row_len) : s;
      }
      case OpKind::Prod: {
        double s = 1;
        for (std::int64_t j = 0; j < row_len; ++j) s *= base[ro[j]];
        return s;
      }
      case OpKind::Min:
      case OpKind::Max: {
        double m = base[ro[0]];
        for (std::int64_t j = 1; j < row_len; ++j)
          m = kind == OpKind::Min ? nan_min(m, base[ro[j]]) : nan_max(m, base[ro[j]]);
        return m;
      }
      case OpKind::Argmin:
      case OpKind::Argmax: {
        // First index of the extreme; a NaN is more extreme than anything (first NaN wins).
        std::int64_t best = 0;
        double m = base[ro[0]];
        for (std::int64_t j = 1; j < row_len && !std::isnan(m); ++j) {
          const double x = base[ro[j]];
          if (std::isnan(x) || (kind == OpKind::Argmin ? x < m : x > m)) {
            m = x;
            best = j;
          }
        }
        return static_cast<double>(best);
      }
      case OpKind::Logsumexp: {
        double m = base[ro[0]];
        for (std::int64_t j = 1; j < row_len; ++j) m = nan_max(m, base[ro[j]]);
        if (std::isnan(m) || std::isinf(m)) return m;  // all -inf rows give -inf; any +inf gives +inf
        double s = 0;
        for (std::int64_t j = 0; j < row_len; ++j) s += std::exp(base[ro[j]] - m);
        return m + std::log(s);
      }
      default: break;
    }
    KILN_ASSERT(false, "{} is not a reduction", kind_name(kind));
    return 0;
  };
  constexpr std::int64_t kChunk = 256;
  parallel_for((outputs + kChunk - 1) / kChunk, [&](std::int64_t c) {
    const std::int64_t end = std::min(outputs, (c + 1) * kChunk);
    for (std::int64_t i = c * kChunk; i < end; ++i)
      v.data[static_cast<std::size_t>(i)] = reduce_one(px + bases[static_cast<std::size_t>(i)]);
  });
  store_all(n.dtype, v.data);
  return v;
}

// ---------------------------------------------------------------- scans and rownorms
// A tensor seen as [outer, len, inner] around `axis`.
struct Lines {
  std::int64_t outer = 1, len = 1, inner = 1;
};
Lines lines_of(const Shape& shape, int axis) {
  KILN_ASSERT(axis >= 0 && static_cast<std::size_t>(axis) < shape.size(), "axis {} of rank {}", axis,
              shape.size());
  Lines l;
  for (int d = 0; d < axis; ++d) l.outer *= shape[static_cast<std::size_t>(d)];
  l.len = shape[static_cast<std::size_t>(axis)];
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) l.inner *= shape[d];
  return l;
}

Value Interpreter::scan(const Node& n, const Shape& out) {
  const Value& x = operand(n, 0);
  const Lines l = lines_of(x.shape, n.axis);
  double identity = 0;
  switch (n.kind) {
    case OpKind::Cumsum: identity = 0; break;
    case OpKind::Cumprod: identity = 1; break;
    case OpKind::Cummax: identity = lowest_of(n.dtype); break;
    case OpKind::Cummin: identity = highest_of(n.dtype); break;
    default: KILN_ASSERT(false, "{} is not a scan", kind_name(n.kind));
  }
  const OpKind kind = n.kind;
  auto combine = [kind](double acc, double v) {
    switch (kind) {
      case OpKind::Cumsum: return acc + v;
      case OpKind::Cumprod: return acc * v;
      case OpKind::Cummax: return nan_max(acc, v);
      default: return nan_min(acc, v);
    }
  };
  Value v;
  v.shape = out;
  v.data.resize(x.values().size());
  parallel_for(l.outer, [&](std::int64_t o) {
    std::vector<double> acc(static_cast<std::size_t>(l.inner), identity);
    for (std::int64_t step = 0; step < l.len; ++step) {
      const std::int64_t k = n.reverse ? l.len - 1 - step : step;
      const std::size_t base = static_cast<std::size_t>((o * l.len + k) * l.inner);
      for (std::size_t j = 0; j < acc.size(); ++j) {
        const double xi = x.values()[base + j];
        if (n.exclusive) {
          v.data[base + j] = acc[j];
          acc[j] = combine(acc[j], xi);
        } else {
          acc[j] = combine(acc[j], xi);
          v.data[base + j] = acc[j];
        }
      }
    }
  });
  store_all(n.dtype, v.data);
  return v;
}

// iota: element (o, k, i) of [outer, len, inner] is k.
Value Interpreter::iota(const Node& n, const Shape& out) {
  const Lines l = lines_of(out, n.axis);
  Value v;
  v.shape = out;
  v.data.resize(static_cast<std::size_t>(l.outer * l.len * l.inner));
  parallel_for(l.outer, [&](std::int64_t o) {
    for (std::int64_t k = 0; k < l.len; ++k) {
      const std::size_t base = static_cast<std::size_t>((o * l.len + k) * l.inner);
      for (std::int64_t j = 0; j < l.inner; ++j) v.data[base + static_cast<std::size_t>(j)] = static_cast<double>(k);
    }
  });
  return v;
}

Value Interpreter::rownorm(const Node& n, const Shape& out) {
  const Value& x = operand(n, 0);
  const Lines l = lines_of(x.shape, n.axis);
  Value v;
  v.shape = out;
  v.data.resize(x.values().size());
  const bool log_form = n.kind == OpKind::LogSoftmax;
  parallel_for(l.outer, [&](std::int64_t o) {
    std::vector<double> m(static_cast<std::size_t>(l.inner), -kInf), s(static_cast<std::size_t>(l.inner), 0);
    const std::size_t base = static_cast<std::size_t>(o * l.len * l.inner);
    const std::size_t inner = static_cast<std::size_t>(l.inner);
    for (std::int64_t k = 0; k < l.len; ++k)
      for (std::size_t j = 0; j < inner; ++j) m[j] = nan_max(m[j], x.values()[base + static_cast<std::size_t>(k) * inner + j]);
    for (std::int64_t k = 0; k < l.len; ++k)
      for (std::size_t j = 0; j < inner; ++j) s[j] += std::exp(x.values()[base + static_cast<std::size_t>(k) * inner + j] - m[j]);
    for (std::int64_t k = 0; k < l.len; ++k)
      for (std::size_t j = 0; j < inner; ++j) {
        const std::size_t i = base + static_cast<std::size_t>(k) * inner + j;
        const double shifted = x.values()[i] - m[j];
        v.data[i] = log_form ? shifted - std::log(s[j]) : std::exp(shifted) / s[j];
      }
  });
  store_all(n.dtype, v.data);
  return v;
}

// Normalize (ir.h, NormAttrs) over any set of axes, in float64: per line (an index of the kept
// axes) the mean of its elements, then the sum of squared deviations from it, then each element
// times the scale. A line's elements are at base + offsets[i]: the offsets of the normalized axes'
// indices, the base that of the kept ones (adjacent axes, a batch norm's 0, 2, 3: the same walk).
Value Interpreter::normalize(const Node& n, const Shape& out) {
  const Value& x = operand(n, 0);
  const std::size_t rank = x.shape.size();
  std::vector<bool> normalized(rank, false);
  for (int a : n.axes) normalized[static_cast<std::size_t>(a)] = true;
  std::vector<std::int64_t> stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * x.shape[d];
  // The flat offsets of every index of the axes in `which` (row-major over them).
  const auto offsets_of = [&](bool which) {
    std::vector<std::int64_t> offs{0};
    for (std::size_t d = 0; d < rank; ++d) {
      if (normalized[d] != which) continue;
      std::vector<std::int64_t> next;
      next.reserve(offs.size() * static_cast<std::size_t>(x.shape[d]));
      for (std::int64_t o : offs)
        for (std::int64_t i = 0; i < x.shape[d]; ++i) next.push_back(o + i * stride[d]);
      offs = std::move(next);
    }
    return offs;
  };
  const std::vector<std::int64_t> within = offsets_of(true), bases = offsets_of(false);
  const auto len = static_cast<std::int64_t>(within.size());
  const double eps = n.operands.size() > 1 ? operand(n, 1).values().at(0) : 0.0;
  Value v;
  v.shape = out;
  v.data.resize(x.values().size());
  if (x.values().empty()) {
    store_all(n.dtype, v.data);
    return v;
  }
  parallel_for(static_cast<std::int64_t>(bases.size()), [&](std::int64_t r) {
    const double* line = x.values().data() + bases[static_cast<std::size_t>(r)];
    double* dst = v.data.data() + bases[static_cast<std::size_t>(r)];
    double mean = 0;
    if (n.norm.centered) {
      for (std::int64_t off : within) mean += line[off];
      mean /= static_cast<double>(len);
    }
    double q = 0;
    for (std::int64_t off : within) q += (line[off] - mean) * (line[off] - mean);
    if (n.norm.mean) q /= static_cast<double>(len);
    const double scale = 1.0 / std::sqrt(q + eps);
    for (std::int64_t off : within) dst[off] = (line[off] - mean) * scale;
  });
  store_all(n.dtype, v.data);
  return v;
}

// ---------------------------------------------------------------- dropout, views
Value Interpreter::dropout(const Node& n, const Shape& out) {
  const Value& x = operand(n, 0);
  const Value& seed_value = operand(n, 1);
  KILN_ASSERT(seed_value.values().size() == 1, "dropout's seed is not a scalar");
  const std::uint64_t seed =
      seed_value.has_bits ? seed_value.bits : static_cast<std::uint64_t>(seed_value.values()[0]);
  const unsigned threshold = dropout_threshold(n.p);
  const double scale = 1.0 / (1.0 - n.p);
  Value v;
  v.shape = out;
  v.data.resize(x.values().size());
  constexpr std::int64_t kChunk = 1 << 16;
  const auto total = static_cast<std::int64_t>(x.values().size());
  parallel_for((total + kChunk - 1) / kChunk, [&](std::int64_t c) {
    const std::int64_t end = std::min(total, (c + 1) * kChunk);
    for (std::int64_t i = c * kChunk; i < end; ++i) {
      const auto u = static_cast<std::size_t>(i);
      v.data[u] = dropout_keep(seed, static_cast<unsigned long long>(i), threshold) ? x.values()[u] * scale : 0.0;
    }
  });
  store_all(n.dtype, v.data);
  return v;
}

// Reshape, Pad, Concat and Gather, element by element from docs/semantics.md's definitions: each
// element of the result is one operand's element (or pad's constant).
Value Interpreter::index_view(const Node& n, const Shape& out) {
  Value v;
  v.shape = out;
  const std::int64_t total = numel_of(out);
  v.data.resize(static_cast<std::size_t>(total));
  const std::size_t rank = out.size();
  constexpr std::int64_t kChunk = 1 << 14;
  parallel_for((total + kChunk - 1) / kChunk, [&](std::int64_t chunk) {
    Shape c(rank);
    const std::int64_t end = std::min(total, (chunk + 1) * kChunk);
    for (std::int64_t i = chunk * kChunk; i < end; ++i) {
      std::int64_t rest = i;   // the coordinates of i
      for (std::size_t d = rank; d-- > 0;) {
        c[d] = rest % out[d];
        rest /= out[d];
      }
      // Which operand, and the element's coordinates in it.
      std::size_t part = 0;
      Shape at = c;
      bool constant = false;
      switch (n.kind) {
        case OpKind::Reshape: {
          const Shape& s = operand(n, 0).shape;
          at.resize(s.size());
          for (std::size_t d = s.size(), r = static_cast<std::size_t>(i); d-- > 0;) {
            at[d] = static_cast<std::int64_t>(r) % s[d];
            r /= static_cast<std::size_t>(s[d]);
          }
          break;
        }
        case OpKind::Pad: {
          const Shape& s = operand(n, 0).shape;
          for (std::size_t d = 0; d < rank; ++d) {
            std::int64_t k = c[d] - n.pad.before[d];
            if (k < 0 || k >= s[d]) {
              if (n.pad.mode == ir::PadMode::Constant) constant = true;
              else if (n.pad.mode == ir::PadMode::Replicate) k = k < 0 ? 0 : s[d] - 1;
              else k = k < 0 ? -k : 2 * (s[d] - 1) - k;   // reflect: pads < the extent
            }
            at[d] = k;
          }
          break;
        }
        case OpKind::Concat: {
          const auto axis = static_cast<std::size_t>(n.axis);
          while (at[axis] >= operand(n, part).shape[axis]) at[axis] -= operand(n, part++).shape[axis];
          break;
        }
        case OpKind::Expand: {   // aligned on the right; an extent-1 dim of x read at 0
          const Shape& s = operand(n, 0).shape;
          at.assign(c.end() - static_cast<std::ptrdiff_t>(s.size()), c.end());
          for (std::size_t d = 0; d < s.size(); ++d)
            if (s[d] == 1) at[d] = 0;
          break;
        }
        default: {   // Gather: operands {index, x}
          const Value& index = operand(n, 0);
          const Shape& xs = operand(n, 1).shape;
          Shape ic = c;
          for (std::size_t d = 0; d < rank; ++d) {
            if (index.shape[d] == 1) ic[d] = 0;
            if (xs[d] == 1) at[d] = 0;
          }
          std::int64_t flat = 0;
          for (std::size_t d = 0; d < rank; ++d) flat = flat * index.shape[d] + ic[d];
          double raw = index.values()[static_cast<std::size_t>(flat)];
          const auto len = xs[static_cast<std::size_t>(n.axis)];
          auto k = static_cast<std::int64_t>(raw);
          if (k < 0) k += len;
          at[static_cast<std::size_t>(n.axis)] = std::clamp<std::int64_t>(k, 0, len - 1);
          part = 1;
          break;
        }
      }
      const Value& src = constant ? operand(n, 1) : operand(n, part);
      std::int64_t flat = 0;
      if (!constant)
        for (std::size_t d = 0; d < src.shape.size(); ++d) flat = flat * src.shape[d] + at[d];
      v.data[static_cast<std::size_t>(i)] = src.values()[static_cast<std::size_t>(flat)];
    }
  });
  return v;
}

Value Interpreter::permute(const Node& n, const Shape& out) {
  const Value& x = operand(n, 0);
  KILN_ASSERT(n.perm.size() == x.shape.size(), "permute of rank {} with {} axes", x.shape.size(), n.perm.size());
  const Shape in_strides = contiguous_strides(x.shape);
  Shape strides(n.perm.size());
  for (std::size_t i = 0; i < n.perm.size(); ++i) {
    const auto from = static_cast<std::size_t>(n.perm[i]);
    KILN_ASSERT(from < x.shape.size() && x.shape[from] == out[i], "bad permutation");
    strides[i] = in_strides[from];
  }
  Value v;
  v.shape = out;
  v.data.resize(x.values().size());
  const double* px = x.values().data();
  walk_parallel<1>(out, {strides}, [&](std::int64_t i, const std::array<std::int64_t, 1>& o) {
    v.data[static_cast<std::size_t>(i)] = px[o[0]];
  });
  return v;
}

// ---------------------------------------------------------------- matmul
// c[j] += a * b[j]; restrict lets the compiler vectorize without alias checks.
void axpy(std::int64_t n, double a, const double* __restrict b, double* __restrict c) {
  for (std::int64_t j = 0; j < n; ++j) c[j] += a * b[j];
}
// Four rows at once (a[r * lda] for row r, c rows ldc apart): each b[j] is loaded once
// for four multiply-adds.
void axpy4(std::int64_t n, const double* a, std::int64_t lda, const double* __restrict b, double* __restrict c,
           std::int64_t ldc) {
  const double a0 = a[0], a1 = a[lda], a2 = a[2 * lda], a3 = a[3 * lda];
  double* __restrict c0 = c;
  double* __restrict c1 = c + ldc;
  double* __restrict c2 = c + 2 * ldc;
  double* __restrict c3 = c + 3 * ldc;
  for (std::int64_t j = 0; j < n; ++j) {
    const double bj = b[j];
    c0[j] += a0 * bj;
    c1[j] += a1 * bj;
    c2[j] += a2 * bj;
    c3[j] += a3 * bj;
  }
}

// C[b] = A[b] @ B[b] with the batch dims broadcast. Rank-1 operands are a row (A) or
// a column (B) whose dim is dropped from the result, as torch.matmul. Rows of C are
// computed in blocks of kRowBlock over column tiles of kColTile: for each k, a row of B
// is read once and used for the whole row block (i-k-j order, C tile in L1).
// Each batch's offset of a stack of matrices (`matrix` elements each) whose batch dims `operand`
// broadcast to `batch` (numpy rules, right-aligned).
std::vector<std::int64_t> batch_offsets(const Shape& operand, const Shape& batch, std::int64_t matrix) {
  std::vector<std::int64_t> off(static_cast<std::size_t>(numel_of(batch)));
  Shape strides = broadcast_strides(operand, batch);
  for (auto& s : strides) s *= matrix;
  walk_range<1>(batch, {strides}, 0, numel_of(batch),
                [&](std::int64_t i, const std::array<std::int64_t, 1>& o) { off[static_cast<std::size_t>(i)] = o[0]; });
  return off;
}

Value Interpreter::matmul(const Node& n, const Shape& out) {
  const Value& a = operand(n, 0);
  const Value& b = operand(n, 1);
  Shape sa = a.shape, sb = b.shape;
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  KILN_ASSERT(sa.size() >= 2 && sb.size() >= 2, "matmul operands of rank 0");
  const std::int64_t m = sa[sa.size() - 2], k = sa.back(), nn = sb.back();
  KILN_ASSERT(sb[sb.size() - 2] == k, "matmul inner dims {} and {}", k, sb[sb.size() - 2]);
  const Shape a_batch(sa.begin(), sa.end() - 2), b_batch(sb.begin(), sb.end() - 2);
  Shape batch(std::max(a_batch.size(), b_batch.size()), 1);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::size_t ia = i + a_batch.size(), ib = i + b_batch.size();
    const std::int64_t da = ia >= batch.size() ? a_batch[ia - batch.size()] : 1;
    const std::int64_t db = ib >= batch.size() ? b_batch[ib - batch.size()] : 1;
    KILN_ASSERT(da == db || da == 1 || db == 1, "matmul batch dims {} and {}", da, db);
    batch[i] = std::max(da, db);
  }
  const std::int64_t batches = numel_of(batch);
  KILN_ASSERT(batches * m * nn == numel_of(out), "matmul result {} for {} @ {}", shape_str(out),
              shape_str(a.shape), shape_str(b.shape));

  // Each output batch's A and B matrix offsets.
  const std::vector<std::int64_t> a_off = batch_offsets(a_batch, batch, m * k), b_off = batch_offsets(b_batch, batch, k * nn);

  Value v;
  v.shape = out;
  v.data.assign(static_cast<std::size_t>(numel_of(out)), 0.0);
  constexpr std::int64_t kRowBlock = 8, kColTile = 512;
  const std::int64_t row_blocks = (m + kRowBlock - 1) / kRowBlock;
  parallel_for(batches * row_blocks, [&](std::int64_t task) {
    const std::int64_t bi = task / row_blocks, i0 = (task % row_blocks) * kRowBlock;
    const std::int64_t i1 = std::min(m, i0 + kRowBlock);
    const double* pa = a.values().data() + a_off[static_cast<std::size_t>(bi)];
    const double* pb = b.values().data() + b_off[static_cast<std::size_t>(bi)];
    double* pc = v.data.data() + bi * m * nn;
    for (std::int64_t j0 = 0; j0 < nn; j0 += kColTile) {
      const std::int64_t j1 = std::min(nn, j0 + kColTile);
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const double* brow = pb + kk * nn + j0;
        std::int64_t i = i0;
        for (; i + 4 <= i1; i += 4)
          axpy4(j1 - j0, pa + i * k + kk, k, brow, pc + i * nn + j0, nn);
        for (; i < i1; ++i) axpy(j1 - j0, pa[i * k + kk], brow, pc + i * nn + j0);
      }
    }
  });
  store_all(n.dtype, v.data);
  return v;
}

// Attention (ir.h, AttentionAttrs) in float64, row by row: the scores q·kt times the scale, the
// causal mask (key j > query i: excluded), their softmax, times v; rounded once to the node's
// dtype. A fused attention's meaning; the composition it replaced rounds each step instead.
Value Interpreter::attention(const Node& n, const Shape& out) {
  const Value& q = operand(n, 0);
  const Value& kt = operand(n, 1);
  const Value& v = operand(n, 2);
  double scale = n.attention.has_scale ? n.attention.scale : 1.0;
  if (n.operands.size() > 3) scale = operand(n, 3).values().at(0);
  if (n.attention.divide) scale = 1.0 / scale;
  const std::size_t r = out.size();
  KILN_ASSERT(r >= 2 && q.shape.size() >= 2 && kt.shape.size() >= 2 && v.shape.size() >= 2, "attention of rank < 2");
  const std::int64_t s = out[r - 2], dv = out[r - 1], d = q.shape.back(), t = kt.shape.back();
  const Shape batch(out.begin(), out.end() - 2);
  auto batch_of = [](const Shape& x) { return Shape(x.begin(), x.end() - 2); };
  const auto q_off = batch_offsets(batch_of(q.shape), batch, s * d), k_off = batch_offsets(batch_of(kt.shape), batch, d * t),
             v_off = batch_offsets(batch_of(v.shape), batch, t * dv);
  Value o;
  o.shape = out;
  o.data.assign(static_cast<std::size_t>(numel_of(out)), 0.0);
  parallel_for(numel_of(batch) * s, [&](std::int64_t task) {
    const std::int64_t b = task / s, i = task % s;
    const double* qi = q.values().data() + q_off[static_cast<std::size_t>(b)] + i * d;
    const double* pk = kt.values().data() + k_off[static_cast<std::size_t>(b)];
    const double* pv = v.values().data() + v_off[static_cast<std::size_t>(b)];
    std::vector<double> p(static_cast<std::size_t>(t));
    double mx = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < t; ++j) {
      double acc = 0;
      for (std::int64_t e = 0; e < d; ++e) acc += qi[e] * pk[e * t + j];
      acc *= scale;
      if (n.attention.causal && j > i) acc = -std::numeric_limits<double>::infinity();
      p[static_cast<std::size_t>(j)] = acc;
      mx = std::max(mx, acc);
    }
    double sum = 0;
    for (auto& x : p) sum += (x = std::exp(x - mx));
    double* oi = o.data.data() + task * dv;
    for (std::int64_t j = 0; j < t; ++j) axpy(dv, p[static_cast<std::size_t>(j)] / sum, pv + j * dv, oi);
  });
  store_all(n.dtype, o.data);
  return o;
}

// ---------------------------------------------------------------- convolution
// Direct convolution over 1, 2 or 3 spatial axes, NCHW ([Note: convolution] in checker.cpp). The
// axes are right-aligned into (D, H, W): a conv1d is [N, C, 1, 1, L]. NHWC input (conv2d) is
// transposed to NCHW first and the result back (O(size) work, one code path for the arithmetic).
// Forward, per axis: P = floor((L + 2*pad - dilation*(k-1) - 1) / stride) + 1, zeros outside the
// input, y[n][k][p] = sum over (c in k's group, taps) of x[p*stride - pad + tap*dilation] * w.
// Transposed: P = (L-1)*stride - 2*pad + dilation*(k-1) + output_padding + 1, and every input
// position i adds x[i] * w[c][k][tap] to y[i*stride - pad + tap*dilation] where that is inside.
// Threads take (n, k) output planes, so each output element is summed by one thread in a fixed
// order; within a plane the loop order keeps an output row in L1 while it accumulates.
Shape permuted_shape(const Shape& s, const std::vector<int>& perm) {
  Shape out(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) out[i] = s[static_cast<std::size_t>(perm[i])];
  return out;
}

std::vector<double> permute_data(const std::vector<double>& data, const Shape& shape, const std::vector<int>& perm) {
  const Shape out = permuted_shape(shape, perm);
  const Shape in_strides = contiguous_strides(shape);
  Shape strides(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) strides[i] = in_strides[static_cast<std::size_t>(perm[i])];
  std::vector<double> result(data.size());
  walk_parallel<1>(out, {strides}, [&](std::int64_t i, const std::array<std::int64_t, 1>& o) {
    result[static_cast<std::size_t>(i)] = data[static_cast<std::size_t>(o[0])];
  });
  return result;
}

Value Interpreter::conv(const Node& n, const Shape& out) {
  const Value& xv = operand(n, 0);
  const Value& wv = operand(n, 1);
  const ir::ConvAttrs& cv = n.conv;
  const bool nhwc = cv.layout == ir::Layout::NHWC;
  const std::size_t d = static_cast<std::size_t>(cv.dims);
  KILN_ASSERT(xv.shape.size() == d + 2 && wv.shape.size() == d + 2 && out.size() == d + 2, "{} of rank {} and {}",
              ir::conv_name(cv), xv.shape.size(), wv.shape.size());
  const Shape xs = nhwc ? permuted_shape(xv.shape, {0, 3, 1, 2}) : xv.shape;
  const Shape ys = nhwc ? permuted_shape(out, {0, 3, 1, 2}) : out;
  std::vector<double> x_nhwc_copy;
  const double* x = xv.values().data();
  if (nhwc) {
    x_nhwc_copy = permute_data(xv.values(), xv.shape, {0, 3, 1, 2});
    x = x_nhwc_copy.data();
  }
  const std::int64_t N = xs[0], C = xs[1], K = ys[1], G = cv.groups;
  // (D, H, W) of x, y and the kernel, stride, padding, dilation: right-aligned, 1 (or 0) before.
  std::array<std::int64_t, 3> in{1, 1, 1}, o{1, 1, 1}, kn{1, 1, 1}, st{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};
  for (std::size_t i = 0; i < d; ++i) {
    const std::size_t a = 3 - d + i;
    in[a] = xs[2 + i], o[a] = ys[2 + i], kn[a] = wv.shape[2 + i];
    st[a] = cv.stride[i], pad[a] = cv.padding[i], dil[a] = cv.dilation[i];
    const std::int64_t span = dil[a] * (kn[a] - 1);
    const std::int64_t expect = cv.transposed ? (in[a] - 1) * st[a] - 2 * pad[a] + span + cv.output_padding[i] + 1
                                              : (in[a] + 2 * pad[a] - span - 1) / st[a] + 1;
    KILN_ASSERT(o[a] == expect, "{} output axis {} is {} but the formula gives {}", ir::conv_name(cv), i, o[a], expect);
  }
  const std::int64_t Cg = C / G, Kg = K / G;
  KILN_ASSERT(G >= 1 && C % G == 0 && K % G == 0 && wv.shape[0] == (cv.transposed ? C : K) &&
                  wv.shape[1] == (cv.transposed ? Kg : Cg),
              "{} channels C={} K={} w=[{}, {}] groups={}", ir::conv_name(cv), C, K, wv.shape[0], wv.shape[1], G);
  const std::int64_t taps = kn[0] * kn[1] * kn[2], in_plane = in[0] * in[1] * in[2], out_plane = o[0] * o[1] * o[2];
  const double* w = wv.values().data();
  std::vector<double> y(static_cast<std::size_t>(N * K * out_plane), 0.0);
  // The filter taps of (c, k): w[k][c % Cg][taps] forward, w[c][k % Kg][taps] transposed.
  auto filter = [&](std::int64_t c, std::int64_t ki) {
    return w + (cv.transposed ? c * Kg + ki % Kg : ki * Cg + c % Cg) * taps;
  };
  parallel_for(N * K, [&](std::int64_t task) {
    const std::int64_t ni = task / K, ki = task % K, g = ki / Kg;
    double* plane = y.data() + task * out_plane;
    if (cv.transposed) {   // input (i0, i1, i2) adds to output i * stride - pad + tap * dilation
      for (std::int64_t c = g * Cg; c < (g + 1) * Cg; ++c) {
        const double* xc = x + (ni * C + c) * in_plane;
        const double* wk = filter(c, ki);
        for (std::int64_t tap = 0; tap < taps; ++tap) {
          const std::int64_t t = tap / (kn[1] * kn[2]), r = tap / kn[2] % kn[1], s = tap % kn[2];
          for (std::int64_t i0 = 0; i0 < in[0]; ++i0) {
            const std::int64_t p0 = i0 * st[0] - pad[0] + t * dil[0];
            if (p0 < 0 || p0 >= o[0]) continue;
            for (std::int64_t i1 = 0; i1 < in[1]; ++i1) {
              const std::int64_t p1 = i1 * st[1] - pad[1] + r * dil[1];
              if (p1 < 0 || p1 >= o[1]) continue;
              const double* xrow = xc + (i0 * in[1] + i1) * in[2];
              double* row = plane + (p0 * o[1] + p1) * o[2];
              for (std::int64_t i2 = 0; i2 < in[2]; ++i2) {
                const std::int64_t p2 = i2 * st[2] - pad[2] + s * dil[2];
                if (p2 >= 0 && p2 < o[2]) row[p2] += wk[tap] * xrow[i2];
              }
            }
          }
        }
      }
      return;
    }
    // Forward: per s, the output columns q whose input column q*stride - pad + s*dilation is inside.
    std::vector<std::int64_t> q_lo(static_cast<std::size_t>(kn[2])), q_hi(static_cast<std::size_t>(kn[2]));
    for (std::int64_t s = 0; s < kn[2]; ++s) {
      const std::int64_t shift = s * dil[2] - pad[2];
      const std::int64_t lo = shift >= 0 ? 0 : (-shift + st[2] - 1) / st[2];
      const std::int64_t hi = in[2] - 1 - shift < 0 ? 0 : (in[2] - 1 - shift) / st[2] + 1;   // first q past the edge
      q_lo[static_cast<std::size_t>(s)] = std::min(lo, o[2]);
      q_hi[static_cast<std::size_t>(s)] = std::max(std::min(hi, o[2]), q_lo[static_cast<std::size_t>(s)]);
    }
    for (std::int64_t p0 = 0; p0 < o[0]; ++p0)
      for (std::int64_t p1 = 0; p1 < o[1]; ++p1) {
        double* row = plane + (p0 * o[1] + p1) * o[2];
        for (std::int64_t c = g * Cg; c < (g + 1) * Cg; ++c) {
          const double* xc = x + (ni * C + c) * in_plane;
          const double* wk = filter(c, ki);
          for (std::int64_t t = 0; t < kn[0]; ++t) {
            const std::int64_t i0 = p0 * st[0] - pad[0] + t * dil[0];
            if (i0 < 0 || i0 >= in[0]) continue;
            for (std::int64_t r = 0; r < kn[1]; ++r) {
              const std::int64_t i1 = p1 * st[1] - pad[1] + r * dil[1];
              if (i1 < 0 || i1 >= in[1]) continue;
              const double* xrow = xc + (i0 * in[1] + i1) * in[2];
              for (std::int64_t s = 0; s < kn[2]; ++s) {
                const double wt = wk[(t * kn[1] + r) * kn[2] + s];
                const std::int64_t shift = s * dil[2] - pad[2];
                for (std::int64_t q = q_lo[static_cast<std::size_t>(s)]; q < q_hi[static_cast<std::size_t>(s)]; ++q)
                  row[q] += wt * xrow[q * st[2] + shift];
              }
            }
          }
        }
      }
  });
  Value v;
  v.shape = out;
  v.data = nhwc ? permute_data(y, ys, {0, 2, 3, 1}) : std::move(y);
  store_all(n.dtype, v.data);
  return v;
}

// ---------------------------------------------------------------- pooling
// max_pool / avg_pool over the last d axes, PyTorch's loops ([Note: pooling] in checker.cpp).
// Window positions along an axis: o * stride - padding + j * dilation, j < kernel; those outside
// [0, L) are padding. max: NaN-propagating, -inf where every position is padding (a dilated
// window can skip the whole input). avg: the window [start, start + kernel) clipped to
// [-padding, L + padding) counts `pool_size` positions, clipped to [0, L) the in-bounds ones;
// the sum is divided by divisor_override, else pool_size (count_include_pad), else the
// in-bounds count; a window with no in-bounds position is 0.
Value Interpreter::pool(const Node& n, const Shape& out) {
  const Value& xv = operand(n, 0);
  const ir::PoolAttrs& a = n.pool;
  const std::size_t d = static_cast<std::size_t>(a.dims), rank = xv.shape.size();
  KILN_ASSERT(rank > d && out.size() == rank, "pool of rank {} over {} axes into rank {}", rank, d, out.size());
  std::int64_t planes = 1;
  for (std::size_t i = 0; i + d < rank; ++i) planes *= xv.shape[i];
  std::array<std::int64_t, 3> in{1, 1, 1}, o{1, 1, 1}, k{1, 1, 1}, st{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};
  for (std::size_t i = 0; i < d; ++i) {   // right-aligned into 3 axes: a 1-d pool is [1, 1, L]
    const std::size_t j = 3 - d + i;
    in[j] = xv.shape[rank - d + i];
    o[j] = out[rank - d + i];
    k[j] = a.kernel[i];
    st[j] = a.stride[i];
    pad[j] = a.padding[i];
    dil[j] = a.dilation[i];
  }
  const bool is_max = n.kind == OpKind::MaxPool;
  const double* x = xv.values().data();
  Value v;
  v.shape = out;
  v.data.resize(static_cast<std::size_t>(planes * o[0] * o[1] * o[2]));
  parallel_for(planes, [&](std::int64_t plane) {
    const double* xp = x + plane * in[0] * in[1] * in[2];
    double* yp = v.data.data() + plane * o[0] * o[1] * o[2];
    for (std::int64_t o0 = 0; o0 < o[0]; ++o0)
      for (std::int64_t o1 = 0; o1 < o[1]; ++o1)
        for (std::int64_t o2 = 0; o2 < o[2]; ++o2) {
          const std::int64_t at[3] = {o0, o1, o2};
          double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
          std::int64_t lo[3], hi[3], pool_size = 1, inside = 1;
          for (int j = 0; j < 3; ++j) {
            lo[j] = at[j] * st[j] - pad[j];
            if (!is_max) {
              hi[j] = std::min(lo[j] + k[j], in[j] + pad[j]);
              pool_size *= hi[j] - lo[j];
              lo[j] = std::max<std::int64_t>(lo[j], 0);
              hi[j] = std::min(hi[j], in[j]);
              inside *= std::max<std::int64_t>(hi[j] - lo[j], 0);
            }
          }
          if (is_max) {
            for (std::int64_t j0 = 0; j0 < k[0]; ++j0) {
              const std::int64_t i0 = lo[0] + j0 * dil[0];
              if (i0 < 0 || i0 >= in[0]) continue;
              for (std::int64_t j1 = 0; j1 < k[1]; ++j1) {
                const std::int64_t i1 = lo[1] + j1 * dil[1];
                if (i1 < 0 || i1 >= in[1]) continue;
                for (std::int64_t j2 = 0; j2 < k[2]; ++j2) {
                  const std::int64_t i2 = lo[2] + j2 * dil[2];
                  if (i2 < 0 || i2 >= in[2]) continue;
                  acc = nan_max(xp[(i0 * in[1] + i1) * in[2] + i2], acc);
                }
              }
            }
          } else if (inside > 0) {
            for (std::int64_t i0 = lo[0]; i0 < hi[0]; ++i0)
              for (std::int64_t i1 = lo[1]; i1 < hi[1]; ++i1)
                for (std::int64_t i2 = lo[2]; i2 < hi[2]; ++i2) acc += xp[(i0 * in[1] + i1) * in[2] + i2];
            acc /= static_cast<double>(a.divisor ? a.divisor : a.count_include_pad ? pool_size : inside);
          }
          yp[(o0 * o[1] + o1) * o[2] + o2] = acc;
        }
  });
  store_all(n.dtype, v.data);
  return v;
}

// ---------------------------------------------------------------- random inputs
}  // namespace

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {

// A value of `dtype` from 64 random bits, exactly representable in that dtype.
double draw(DType dtype, std::uint64_t r) {
  switch (dtype) {
    case DType::f32: return static_cast<double>(r >> 40) * 0x1p-24;
    case DType::f16: return static_cast<double>(r >> 53) * 0x1p-11;
    case DType::bf16: return static_cast<double>(r >> 56) * 0x1p-8;
    case DType::f64: return static_cast<double>(r >> 11) * 0x1p-53;
    case DType::i32:
    case DType::i64: return static_cast<double>(static_cast<std::int64_t>(r >> 60) - 8);
    case DType::u64: return static_cast<double>(r >> 60);
    case DType::boolean: return static_cast<double>(r >> 63);
  }
  return 0;
}

}  // namespace

// ---------------------------------------------------------------- public functions
std::int64_t HostTensor::numel() const { return numel_of(shape); }

HostValue make_tensor(DType dtype, std::vector<std::int64_t> shape, std::vector<double> data) {
  HostValue v;
  v.is_tensor = true;
  v.tensor.dtype = dtype;
  v.tensor.shape = std::move(shape);
  v.tensor.data = std::move(data);
  return v;
}

HostValue make_scalar(DType dtype, double value) {
  HostValue v;
  v.is_tensor = false;
  v.scalar.dtype = dtype;
  v.scalar.f = value;
  if (dtype == DType::u64) v.scalar.u = static_cast<std::uint64_t>(value);
  if (dtype == DType::i64 || dtype == DType::i32)
    v.scalar.u = static_cast<std::uint64_t>(static_cast<std::int64_t>(value));
  return v;
}

HostValue make_scalar_bits(DType dtype, std::uint64_t bits) {
  HostValue v;
  v.is_tensor = false;
  v.scalar.dtype = dtype;
  v.scalar.u = bits;
  v.scalar.f = dtype == DType::i64 ? static_cast<double>(static_cast<std::int64_t>(bits)) : static_cast<double>(bits);
  return v;
}

double round_to(DType dtype, double v) {
  switch (dtype) {
    case DType::f64: return v;
    case DType::f32: return static_cast<double>(static_cast<float>(v));  // RNE, overflow to inf
    case DType::f16: return round_binary(v, 11, -14, 65504.0);
    case DType::bf16: return round_binary(v, 8, -126, 0x1.FEp127);
    case DType::i32: return wrap_i32(std::trunc(v));
    case DType::i64:
    case DType::u64: return v;
    case DType::boolean: return v != 0 ? 1.0 : 0.0;
  }
  return v;
}

double cast_to(DType dtype, double v) {
  if (dtype_is_float(dtype)) return round_to(dtype, v);
  if (dtype == DType::boolean) return v != 0 ? 1.0 : 0.0;  // NaN != 0: true
  if (std::isnan(v)) return 0;
  const double t = std::trunc(v);
  return std::clamp(t, lowest_of(dtype), highest_of(dtype));
}

double work_estimate(const ir::BoundIr& bound) {
  double work = 0;
  const ir::Ir& ir = *bound.ir;
  for (NodeId id = 0; id < static_cast<NodeId>(ir.nodes.size()); ++id) {
    const Node& n = ir.node(id);
    const Shape& out = bound.shape(id);
    if (n.kind == OpKind::Matmul && n.operands.size() == 2) {
      const Shape& a = bound.shape(n.operands[0]);
      work += numel_double(out) * static_cast<double>(a.empty() ? 1 : a.back());
    } else if (n.kind == OpKind::Conv && n.operands.size() == 2) {
      const Shape& w = bound.shape(n.operands[1]);
      // Multiply-adds: each output takes C/groups times the taps; a transposed conv's input
      // element meets K/groups (w[1]) times the taps (its outputs take fewer, by its strides).
      double taps = 1;
      for (std::size_t d = 2; d < w.size(); ++d) taps *= static_cast<double>(w[d]);
      work += n.conv.transposed ? numel_double(bound.shape(n.operands[0])) * static_cast<double>(w[1]) * taps
                                : numel_double(out) * static_cast<double>(w[1]) * taps;
    } else {
      double touched = numel_double(out);
      for (NodeId op : n.operands) touched = std::max(touched, numel_double(bound.shape(op)));
      work += touched;
    }
  }
  return work;
}

double memory_estimate(const ir::BoundIr& bound) {
  double elements = 0;
  for (const auto& s : bound.shapes) elements += numel_double(s);
  return elements * 8.0;
}

double max_bytes() {
  if (const char* env = std::getenv("KILN_REF_MAX_BYTES")) {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (end != env && v > 0) return v;
  }
  return 96.0 * 1073741824.0;
}

int thread_count() {
  if (const char* env = std::getenv("KILN_REF_THREADS")) {
    const int n = std::atoi(env);
    if (n >= 1) return n;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

std::vector<HostTensor> evaluate(const ir::BoundIr& bound, const std::vector<HostValue>& params) {
  KILN_ASSERT(bound.ir != nullptr, "BoundIr without an Ir");
  Interpreter interpreter(bound);
  return interpreter.run(params);
}

std::vector<HostValue> random_inputs(const ir::BoundIr& bound, std::uint64_t seed) {
  const ir::Ir& ir = *bound.ir;
  KILN_CHECK(memory_estimate(bound) <= max_bytes(), UnsupportedError,
             "reference: op '{}' is too large for host random inputs; bind smaller dims (-D NAME=VALUE)",
             ir.op_name);
  std::vector<HostValue> values;
  for (std::size_t i = 0; i < ir.params.size(); ++i) {
    const ir::Param& p = ir.params[i];
    // Each param, and each chunk of it, has its own stream: independent of threads.
    std::uint64_t stream = seed ^ (0xA0761D6478BD642Full * (i + 1));
    const std::uint64_t param_key = splitmix64(stream);
    if (!p.is_tensor) {
      std::uint64_t state = param_key;
      const std::uint64_t r = splitmix64(state);
      values.push_back(p.dtype == DType::u64 ? make_scalar_bits(DType::u64, r) : make_scalar(p.dtype, draw(p.dtype, r)));
      continue;
    }
    const Shape& shape = bound.shape(p.node);
    HostValue v = make_tensor(p.dtype, shape, std::vector<double>(static_cast<std::size_t>(numel_of(shape))));
    constexpr std::int64_t kChunk = 1 << 16;
    const auto total = static_cast<std::int64_t>(v.tensor.data.size());
    double* dst = v.tensor.data.data();
    parallel_for((total + kChunk - 1) / kChunk, [&](std::int64_t c) {
      std::uint64_t state = param_key ^ (static_cast<std::uint64_t>(c) * 0xE7037ED1A0B428DBull);
      splitmix64(state);
      const std::int64_t end = std::min(total, (c + 1) * kChunk);
      for (std::int64_t e = c * kChunk; e < end; ++e) dst[e] = draw(p.dtype, splitmix64(state));
    });
    values.push_back(std::move(v));
  }
  return values;
}

}  // namespace kiln::ref
