#include "runtime/op_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "generator/frontend/frontend.h"
#include "generator/ir/ir.h"
#include "generator/plan/plan.h"
#include "runtime/device.h"
#include "runtime/pipeline.h"
#include "reference/reference.h"

namespace kiln {

double median_of(std::vector<double> times) {
  if (times.empty()) return -1;
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double OpCheck::median_ms() const { return median_of(times_ms); }

namespace {

void sprinkle_special_values(std::vector<ref::HostValue>& inputs, double fraction, bool infinities,
                             std::uint64_t seed) {
  static const double kSpecial[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity()};
  const auto threshold = static_cast<std::uint64_t>(fraction * 18446744073709551616.0);
  std::uint64_t state = seed ^ 0x5BEC1A15ull;   // a stream apart from the inputs' own
  int next = 0;
  for (auto& v : inputs) {
    if (!v.is_tensor || !dtype_is_float(v.tensor.dtype)) continue;
    for (double& e : v.tensor.data)
      if (ref::splitmix64(state) < threshold) e = kSpecial[infinities ? next++ % 3 : 0];
  }
}

// docs/semantics.md, "Tolerances": a selection (min, max, ...) of an input is
// exact, tf32 contractions are held to tf32's accuracy, everything else to its
// dtype's. A selection of computed values (min(exp(x))) inherits their rounding.
Tolerance tolerance_for(const ir::Ir& ir, const ir::Node& node, DType dtype, bool tf32) {
  // A widening cast of an f16 / bf16 value (f32 of an f16 matmul) holds that value's rounding:
  // one ulp of the 16-bit sum, which no f32 tolerance covers. It inherits the value's tolerance.
  if (node.kind == ir::OpKind::Cast && !node.operands.empty()) {
    const auto& from = ir.node(node.operands[0]);
    if ((from.dtype == DType::f16 || from.dtype == DType::bf16) && dtype_size(dtype) > dtype_size(from.dtype))
      return tolerance_for(ir, from, from.dtype, tf32);
  }
  const bool of_input = !node.operands.empty() && ir.node(node.operands[0]).kind == ir::OpKind::Input;
  // A row normalization of f16/bf16 values that a contraction computed: the
  // contraction's f32 sum is rounded to 8 (bf16) or 11 (f16) bits, and a sum
  // accumulated in another order than the reference's can round one ulp the
  // other way. A logit of magnitude ~10 moves by 2^-4 (bf16) or 2^-7 (f16), and
  // exp() turns that into a relative change of the output of that size.
  const bool after_contraction = std::any_of(ir.nodes.begin(), ir.nodes.end(), [](const ir::Node& n) {
    return n.kind == ir::OpKind::Matmul || n.kind == ir::OpKind::Conv;
  });
  if (after_contraction && (node.kind == ir::OpKind::Softmax || node.kind == ir::OpKind::LogSoftmax)) {
    if (dtype == DType::bf16) return {2e-2, 1.5e-1, 6e-2};
    if (dtype == DType::f16) return {2e-2, 2e-2, 1e-2};
  }
  switch (of_input ? node.kind : ir::OpKind::Input) {
    case ir::OpKind::Min:
    case ir::OpKind::Max:
    case ir::OpKind::Cummax:
    case ir::OpKind::Cummin:
    case ir::OpKind::Argmin:
    case ir::OpKind::Argmax: return Tolerance::exact();
    default: return dtype == DType::f32 && tf32 ? Tolerance::tf32() : Tolerance::for_dtype(dtype);
  }
}

// [Note: the oracle of a fused 16-bit norm]
// A norm written out in f16 or bf16 rounds every step to 16 bits in eager semantics (the
// reference's), and a near-constant row's squared deviations fall among the subnormals, so the
// composition's own result can be a few percent off. The fused kernel computes in f32 and rounds
// once (docs/design-notes.md, "Norm compositions"): its oracle is the reference of the graph the
// planner fused, whose Normalize node computes in float64 and rounds once. That fuse_norms'
// graph means what the spec wrote is tested on the CPU (tests/generator/test_fuse_norms.cpp).
// A fused 16-bit attention likewise ("Attention compositions"): the composition rounds the
// scores and P to 16 bits, the Attention node's reference rounds only its output
// (tests/generator/test_fuse_attention.cpp holds it to the f32 composition).
std::shared_ptr<const ir::BoundIr> oracle_graph(std::shared_ptr<const ir::BoundIr> bound, const Options& options) {
  // The target the runtime planned with (RuntimeImpl::current_target): Options::arch's, else the device's.
  const Target target = options.arch.empty() ? device_target(current_device(), options.precision)
                                             : Target::for_arch(options.arch);
  std::vector<std::string> fusions;
  auto fused = fuse_compositions(bound, target, fusions);
  for (const auto& n : fused->ir->nodes) {
    const bool half = n.dtype == DType::f16 || n.dtype == DType::bf16;
    if (half && (n.kind == ir::OpKind::Normalize || n.kind == ir::OpKind::Attention)) return fused;
  }
  return bound;
}

}  // namespace

DeviceCase make_device_case(const ir::BoundIr& bound, const OpCheckOptions& options) {
  DeviceCase c;
  c.inputs = ref::random_inputs(bound, options.seed);
  if (options.special_fraction > 0)
    sprinkle_special_values(c.inputs, options.special_fraction, options.special_infinities, options.seed);
  const ir::Ir& ir = *bound.ir;
  c.memory.reserve(c.inputs.size() + ir.outputs.size());
  for (const auto& v : c.inputs) {
    if (!v.is_tensor) {
      const auto& s = v.scalar;
      if (dtype_is_float(s.dtype)) c.args.emplace_back(Scalar::of_f64(s.f, s.dtype));
      else if (s.dtype == DType::u64) c.args.emplace_back(Scalar::of_u64(s.u));
      else c.args.emplace_back(Scalar::of_i64(static_cast<std::int64_t>(s.u), s.dtype));
      continue;
    }
    const auto bytes = to_device_bytes(v.tensor);
    c.memory.emplace_back(std::max<std::size_t>(bytes.size(), 16));
    c.memory.back().upload(bytes.data(), bytes.size());
    c.args.emplace_back(TensorRef(c.memory.back().data(), v.tensor.dtype, v.tensor.shape));
  }
  for (const auto& o : ir.outputs) {
    const auto& shape = bound.shape(o.node);
    const DType dtype = ir.node(o.node).dtype;
    std::int64_t numel = 1;
    for (auto d : shape) numel *= d;
    c.memory.emplace_back(std::max<std::size_t>(static_cast<std::size_t>(numel) * dtype_size(dtype), 16));
    c.output_memory.push_back(c.memory.size() - 1);
    c.args.emplace_back(TensorRef(c.memory.back().data(), dtype, shape));
  }
  c.poison();
  return c;
}

void DeviceCase::poison() {
  for (std::size_t m : output_memory) memory[m].memset8(0xFF);
}

std::vector<std::vector<char>> DeviceCase::output_bytes(const ir::BoundIr& bound) const {
  std::vector<std::vector<char>> out;
  const ir::Ir& ir = *bound.ir;
  for (std::size_t o = 0; o < ir.outputs.size(); ++o) {
    std::int64_t numel = 1;
    for (auto d : bound.shape(ir.outputs[o].node)) numel *= d;
    out.push_back(memory[output_memory[o]].download_as<char>());
    out.back().resize(static_cast<std::size_t>(numel) * dtype_size(ir.node(ir.outputs[o].node).dtype));
  }
  return out;
}

std::vector<ref::HostTensor> as_tensors(const ir::BoundIr& bound, const std::vector<std::vector<char>>& bytes) {
  std::vector<ref::HostTensor> out;
  const ir::Ir& ir = *bound.ir;
  for (std::size_t o = 0; o < ir.outputs.size(); ++o)
    out.push_back(from_device_bytes(ir.node(ir.outputs[o].node).dtype, bound.shape(ir.outputs[o].node), bytes[o]));
  return out;
}

std::vector<ref::HostTensor> DeviceCase::outputs(const ir::BoundIr& bound) const {
  return as_tensors(bound, output_bytes(bound));
}

bool runs_tf32(const ir::Ir& ir, Precision runtime_default) {
  bool tf32 = false;
  for (const auto& n : ir.nodes)
    if ((n.kind == ir::OpKind::Matmul || n.kind == ir::OpKind::Conv) && n.dtype == DType::f32)
      tf32 |= n.precision.value_or(runtime_default) == Precision::tf32;
  return tf32;
}

// [Note: a softmax after a long contraction]
// An f32 softmax over values a contraction computed turns the contraction's absolute error into
// a relative error of its result: y_i = exp(z_i) / sum_j exp(z_j) moves by y_i (dz_i - sum_j y_j
// dz_j), at most 2 y_i max|dz| (and log_softmax's value by at most 2 max|dz|). A sum of K
// products in f32, in whatever order a kernel (or cuBLAS, or PyTorch's CPU) adds them, is off
// from the exact one by about u sqrt(K) M: u = 2^-24 a rounding, about sqrt(K) of them adding up
// at random, each of a partial sum of magnitude M, which for the random inputs of a check is the
// result's own, so M is taken as the largest |z| the softmax reads. With K = 100003 and logits of
// magnitude ~100 (the GPU suite's "long" shape of linear + dropout + softmax) that is 2e-3 of a
// logit, where two close logits' outputs moved by 8e-4 of their value (H200, 2026-12-06): more
// than the table's 1e-4, which such outputs met only where one logit dominated the row. So an f32
// softmax (log_softmax) output over a contraction of f32 sums (not tf32, whose own bounds are
// wider) is held to the table's tolerance plus 2 u sqrt(K) M, relative (absolute), element-wise
// and norm-wise. K is the longest contraction behind it: a matmul's contracted extent, a conv's
// (C / groups) x kernel positions. A tf32 or bf16 mistake, or a wrong mask, is still far outside.
namespace {

// The longest contraction `id` depends on (0: none): a matmul's K, a conv's terms a output.
std::int64_t contraction_length(const ir::BoundIr& bound, ir::NodeId id) {
  std::int64_t longest = 0;
  std::vector<ir::NodeId> todo{id};
  std::set<ir::NodeId> seen;
  while (!todo.empty()) {
    const ir::NodeId n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    const ir::Node& node = bound.node(n);
    if (node.kind == ir::OpKind::Matmul) {
      longest = std::max(longest, bound.shape(node.operands[0]).back());
    } else if (node.kind == ir::OpKind::Conv) {
      const auto& w = bound.shape(node.operands[1]);   // [K, C/groups, kernel...] ([C, K/groups, ...] transposed)
      std::int64_t terms = node.conv.transposed ? w[0] / node.conv.groups : w[1];
      for (std::size_t d = 2; d < w.size(); ++d) terms *= w[d];
      longest = std::max(longest, terms);
    }
    for (const ir::NodeId o : node.operands) todo.push_back(o);
  }
  return longest;
}

}  // namespace

Expected reference_outputs(const ir::BoundIr& bound, const std::vector<ref::HostValue>& inputs) {
  // The outputs that take a contraction error: an f32 softmax or log_softmax over a contraction's
  // values. Their operands (the logits) are evaluated with the outputs, as extra outputs.
  const ir::Ir& ir = *bound.ir;
  std::vector<std::pair<std::size_t, std::int64_t>> widened;   // (output, K)
  for (std::size_t o = 0; o < ir.outputs.size(); ++o) {
    const ir::Node& n = ir.node(ir.outputs[o].node);
    if ((n.kind != ir::OpKind::Softmax && n.kind != ir::OpKind::LogSoftmax) || n.dtype != DType::f32) continue;
    if (const std::int64_t k = contraction_length(bound, n.operands[0]); k > 0) widened.emplace_back(o, k);
  }
  Expected e;
  if (widened.empty()) {
    e.outputs = ref::evaluate(bound, inputs);
    return e;
  }
  auto with_logits = std::make_shared<ir::Ir>(ir);   // a copy only where some output needs its logits
  for (const auto& [o, k] : widened) {
    const ir::Node& n = ir.node(ir.outputs[o].node);
    with_logits->outputs.push_back({"(logits of " + ir.outputs[o].name + ")", n.operands[0], n.loc});
  }
  ir::BoundIr b = bound;
  b.ir = with_logits;
  e.outputs = ref::evaluate(b, inputs);
  std::vector<ref::HostTensor> logits(e.outputs.begin() + static_cast<std::ptrdiff_t>(ir.outputs.size()),
                                      e.outputs.end());
  e.outputs.resize(ir.outputs.size());
  e.contraction_error.assign(ir.outputs.size(), 0.0);
  constexpr double kU = 1.0 / 16777216.0;   // 2^-24
  for (std::size_t i = 0; i < widened.size(); ++i) {
    double m = 0;
    for (const double z : logits[i].data)
      if (std::isfinite(z)) m = std::max(m, std::fabs(z));
    e.contraction_error[widened[i].first] = 2 * kU * std::sqrt(static_cast<double>(widened[i].second)) * m;
  }
  return e;
}

std::vector<Comparison> compare_outputs(const ir::Ir& ir, const std::vector<ref::HostTensor>& got,
                                        const Expected& expected, bool tf32, bool* ok) {
  std::vector<Comparison> out;
  for (std::size_t o = 0; o < expected.outputs.size(); ++o) {
    const ir::Node& node = ir.node(ir.outputs[o].node);
    Tolerance tol = tolerance_for(ir, node, expected.outputs[o].dtype, tf32);
    const double widen = o < expected.contraction_error.size() && !tf32 ? expected.contraction_error[o] : 0.0;
    if (widen > 0) {   // [Note: a softmax after a long contraction]
      (node.kind == ir::OpKind::LogSoftmax ? tol.atol : tol.rtol) += widen;
      tol.norm_rel += widen;
    }
    out.push_back(compare(got[o], expected.outputs[o], tol));
    *ok &= out.back().ok;
  }
  return out;
}

std::vector<double> time_launches(const std::function<void()>& launch, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) launch();
  EventTimer timer;
  std::vector<double> times;
  for (int i = 0; i < iters; ++i) {
    timer.start();
    launch();
    timer.stop();
    times.push_back(timer.elapsed_ms());
  }
  return times;
}

OpCheck run_and_check(Runtime& rt, const std::string& spec_path, const std::string& op_name, const Bindings& bindings,
                      const OpCheckOptions& options) {
  OpCheck r;
  auto mark = std::chrono::steady_clock::now();
  auto lap = [&mark](double& phase) {   // the seconds since the last lap, into `phase`
    const auto now = std::chrono::steady_clock::now();
    phase = std::chrono::duration<double>(now - mark).count();
    mark = now;
  };
  std::optional<Executable> exe;
  try {
    Op op = rt.load_file(spec_path).op(op_name);
    exe.emplace(bindings.consts.empty() ? op.specialize(bindings) : op.with_consts(bindings.consts).specialize(bindings));
  } catch (const UnsupportedError& e) {
    r.note = e.what();
    return r;
  }
  lap(r.specialize_s);
  r.covered = true;
  // The oracle's view of the same op, bound the same way: the pipeline up to bind.
  const SpecFile spec = load_spec_file(spec_path);
  PipelineRequest request;
  request.spec = &spec;
  request.op = op_name;
  request.consts = bindings.consts;
  for (const auto& [name, value] : bindings.dims) request.dims[name] = {value, "the caller"};
  const Specialization oracle = Pipeline().run(request, Stage::bind);
  const auto& ir = oracle.ir;
  const ir::BoundIr& bound = *oracle.bound;
  const auto oracle_bound = oracle_graph(oracle.bound, rt.options());
  for (const auto& o : ir->outputs) r.output_names.push_back(o.name);
  DeviceCase c = make_device_case(bound, options);
  const bool compare_now = options.compare && ref::work_estimate(bound) <= options.max_reference_work;
  if (options.compare && !compare_now)
    r.note = fmt::format("not compared: the CPU reference would take {:.2g} operations", ref::work_estimate(bound));
  lap(r.inputs_s);
  exe->launch(nullptr, c.args);
  synchronize();
  lap(r.launch_s);
  r.ok = true;
  if (compare_now) {
    r.checked = true;
    r.outputs = compare_outputs(*ir, c.outputs(bound), reference_outputs(*oracle_bound, c.inputs),
                                runs_tf32(*ir, rt.options().precision), &r.ok);
  }
  lap(r.reference_s);
  r.times_ms = time_launches([&] { exe->launch(nullptr, c.args); }, options.warmup, options.iters);
  return r;
}

}  // namespace kiln
