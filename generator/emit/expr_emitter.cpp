#include "generator/emit/expr_emitter.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "generator/support/assert.h"
#include "generator/support/source.h"

namespace kiln {

const char* compute_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
    case DType::f16:
    case DType::bf16: return "float";
    case DType::f64: return "double";
    case DType::i32: return "int";
    case DType::i64: return "long long";
    case DType::u64: return "unsigned long long";
    case DType::boolean: return "bool";
  }
  return "?";
}

const char* storage_type(DType dtype) {
  switch (dtype) {
    case DType::f16: return "__half";
    case DType::bf16: return "__nv_bfloat16";
    default: return compute_type(dtype);
  }
}

std::string literal(DType dtype, double value) {
  const bool is_double = dtype == DType::f64;
  if (dtype_is_float(dtype)) {
    // A finite double beyond float's range (its largest finite value plus half an ulp,
    // 2^128 - 2^103) rounds to infinity as a float: spell that infinity, never "inf.0f".
    if (!is_double && std::isfinite(value) && std::fabs(value) >= std::ldexp(1.0, 128) - std::ldexp(1.0, 103))
      value = std::copysign(INFINITY, value);
    if (std::isnan(value)) return is_double ? "__longlong_as_double(0x7ff8000000000000LL)" : "__int_as_float(0x7fc00000)";
    if (std::isinf(value)) {
      if (is_double) return value > 0 ? "__longlong_as_double(0x7ff0000000000000LL)" : "__longlong_as_double(0xfff0000000000000LL)";
      return value > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
    }
    // Shortest round-trip spelling (fmt is locale-independent), as a float or double literal.
    std::string s = is_double ? fmt::format("{}", value) : fmt::format("{}", static_cast<float>(value));
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return is_double ? s : s + "f";
  }
  switch (dtype) {
    case DType::boolean: return value != 0 ? "true" : "false";
    case DType::i32: return fmt::format("{}", static_cast<long long>(value));
    case DType::i64: return fmt::format("{}LL", static_cast<long long>(value));
    case DType::u64: return fmt::format("{}ULL", static_cast<unsigned long long>(value));
    default: return fmt::format("{}", value);
  }
}

std::string literal(DType dtype, const ConstValue& value) {
  if (!value.is_integer() || dtype_is_float(dtype) || dtype == DType::boolean) return literal(dtype, value.to_double());
  // Integers are exact over the whole i64/u64 range. The most negative value of a signed
  // type has no literal of its own (2147483648 alone is a long), so it is spelled as a sum.
  const char* minus = value.negative() ? "-" : "";
  switch (dtype) {
    case DType::i32:
      if (value.negative() && value.magnitude() == 2147483648ULL) return "(-2147483647 - 1)";
      return fmt::format("{}{}", minus, value.magnitude());
    case DType::i64:
      if (value.negative() && value.magnitude() == 9223372036854775808ULL) return "(-9223372036854775807LL - 1)";
      return fmt::format("{}{}LL", minus, value.magnitude());
    default:
      KILN_ASSERT(!value.negative(), "negative u64 literal {}", value.str());
      return fmt::format("{}ULL", value.magnitude());
  }
}

ExprEmitter::ExprEmitter(const Plan& plan, CodeWriter& out) : plan_(plan), out_(out) {}

void ExprEmitter::set_scalar(int param, std::string name) {
  scalars_[plan_.ir().params.at(static_cast<std::size_t>(param)).node] = std::move(name);
}

void ExprEmitter::bind_value(ir::NodeId node, const Coords& coords, std::string var) {
  memo_[{node, coords}] = std::move(var);
}

const std::string* dyn_extent(const Plan& plan, ir::NodeId node, std::size_t dim) {
  const auto& shape = plan.ir().node(node).shape;
  if (dim < shape.size() && shape[dim].kind() == ir::DimExpr::Kind::Dim && plan.bound->is_dynamic(shape[dim].name()))
    return &shape[dim].name();
  return nullptr;
}

const ir::DimExpr* computed_dyn_extent(const Plan& plan, ir::NodeId node, std::size_t dim) {
  if (plan.dyn_buckets.empty()) return nullptr;   // no dyn dims
  const auto& e = plan.ir().node(node).shape.at(dim);
  return e.kind() != ir::DimExpr::Kind::Dim && !e.as_constant() && e.mentions(plan.ir().dyn_dims()) ? &e : nullptr;
}

std::string ExprEmitter::extent(ir::NodeId node, std::size_t dim) const {
  if (const std::string* dyn = dyn_extent(plan_, node, dim)) {
    KILN_ASSERT(dyn_dim_name, "dyn dim {} in a kernel that takes none", *dyn);
    return dyn_dim_name(*dyn);
  }
  if (const ir::DimExpr* e = computed_dyn_extent(plan_, node, dim)) {   // e.g. [Note: dyn pooled axes]
    KILN_ASSERT(dyn_dim_name, "dyn extent {} in a kernel that takes no dyn dim", e->str());
    if (auto v = dyn_values_.find(e->str()); v != dyn_values_.end()) return v->second;   // divides by multiply-high
    return fmt::format("Index({})", dyn_extent_code(plan_, *e, dyn_dim_name));
  }
  return std::to_string(plan_.bound->shape(node)[dim]);
}

std::string dyn_extent_code(const Plan& plan, const ir::DimExpr& e,
                            const std::function<std::string(const std::string&)>& dyn_name) {
  return e.code([&](const std::string& dim) {
    return plan.bound->is_dynamic(dim) ? fmt::format("static_cast<long long>({})", dyn_name(dim))
                                       : fmt::format("{}LL", plan.bound->dims.at(dim));
  });
}

std::string ExprEmitter::concat_end(const ir::Node& concat, std::size_t parts, std::size_t axis) const {
  // Where the first `parts` parts of a concat end along its axis: a number, or with a dyn part (a
  // dyn dim on the concat axis) an expression of the launch's extents, never the planned value.
  std::int64_t fixed = 0;
  std::vector<std::string> terms;
  for (std::size_t k = 0; k < parts; ++k) {
    const std::string e = extent(concat.operands[k], axis);
    if (!e.empty() && std::all_of(e.begin(), e.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      fixed += std::stoll(e);
    else
      terms.push_back(fmt::format("Index({})", e));
  }
  if (terms.empty()) return std::to_string(fixed);
  if (fixed != 0) terms.push_back(std::to_string(fixed));
  return fmt::format("({})", fmt::join(terms, " + "));
}

std::string ExprEmitter::flat_index(ir::NodeId node, const Coords& coords) const {
  if (coords.empty()) return "0";
  std::string expr = coords[0];
  for (std::size_t d = 1; d < coords.size(); ++d) {
    const std::string ext = extent(node, d);
    if (expr == "0") expr = coords[d];
    else expr = fmt::format("({} * {} + {})", expr, ext, coords[d]);
  }
  return expr;
}

Coords ExprEmitter::operand_coords(ir::NodeId user, ir::NodeId operand, const Coords& coords) const {
  const auto& u = plan_.ir().node(user);
  const auto& o = plan_.ir().node(operand);
  const auto& ushape = plan_.bound->shape(user);
  const auto& oshape = plan_.bound->shape(operand);
  if (u.kind == ir::OpKind::Permute) {
    Coords c(oshape.size());
    for (std::size_t i = 0; i < u.perm.size(); ++i) c[static_cast<std::size_t>(u.perm[i])] = coords[i];
    return c;
  }
  if (u.kind == ir::OpKind::Reshape) {   // the same flat index, decomposed in the operand's shape
    const std::string flat = flat_of(user, coords);
    Coords c(oshape.size());
    std::string inner = "1";   // the product of the extents after d, as C++
    for (std::size_t d = oshape.size(); d-- > 0;) {
      const std::string q = inner == "1" ? flat : fmt::format("({} / ({}))", flat, inner);
      c[d] = d == 0 ? q : fmt::format("({} % {})", q, extent(operand, d));
      inner = inner == "1" ? extent(operand, d) : fmt::format("{} * {}", extent(operand, d), inner);
    }
    flat_of_coords_[{c, oshape}] = flat;
    return c;
  }
  if (u.kind == ir::OpKind::Pad) {
    if (operand != u.operands[0]) return {};   // the constant: a literal
    Coords c(oshape.size());
    for (std::size_t d = 0; d < oshape.size(); ++d) {
      const std::int64_t before = u.pad.before[d];
      if (before == 0 && u.pad.after[d] == 0) {
        c[d] = coords[d];
        continue;
      }
      const std::string i = before == 0 ? coords[d] : fmt::format("{} - {}", coords[d], before);
      c[d] = fmt::format("kiln::{}(Index({}), Index({}))", u.pad.mode == ir::PadMode::Reflect ? "reflect_index" : "clamp_index",
                         i, extent(operand, d));
    }
    return c;
  }
  if (u.kind == ir::OpKind::Concat) {   // the part's slice, clamped into it (Concat's select picks)
    const auto axis = static_cast<std::size_t>(u.axis);
    std::size_t before = 0;
    while (u.operands[before] != operand) ++before;
    const std::string offset = concat_end(u, before, axis);
    Coords c = coords;
    c[axis] = fmt::format("kiln::clamp_index(Index({} - {}), Index({}))", coords[axis], offset, extent(operand, axis));
    return c;
  }
  // numpy broadcasting: align on the right; an extent-1 dim against a larger one reads index 0.
  Coords c(oshape.size());
  const std::size_t offset = ushape.size() - oshape.size();
  // Only an extent of dyn dims can be 1 at this binding and larger at the next: a dyn dim, not in
  // the bucket "one" (every launch of its source has it 1; a reduction's epilogue then finds its
  // anchor's value at the output's own coordinates), or an expression of one (a dyn spatial conv's
  // or pool's output extent, 1 at L = 2 of a stride-2 conv1d and 4 at L = 7).
  std::set<std::string> varying;
  for (const auto& [name, bucket] : plan_.dyn_buckets)
    if (bucket != DynBucket::One && plan_.bound->is_dynamic(name)) varying.insert(name);
  for (std::size_t k = 0; k < oshape.size(); ++k) {
    const std::size_t uk = k + offset;
    const bool symbolic_one = k < o.shape.size() && o.shape[k].as_constant() == std::optional<std::int64_t>(1);
    const bool user_varies = uk < u.shape.size() && u.shape[uk].mentions(varying);
    const bool pinned = oshape[k] == 1 && (ushape[uk] != 1 || (symbolic_one && user_varies));
    c[k] = pinned ? "0" : coords[uk];
  }
  return c;
}

std::string ExprEmitter::flat_of(ir::NodeId node, const Coords& coords) const {
  auto it = flat_of_coords_.find({coords, plan_.bound->shape(node)});
  return it != flat_of_coords_.end() ? it->second : flat_index(node, coords);
}

void ExprEmitter::declare_axes(ir::NodeId node, const std::string& index, const std::string& prefix, std::size_t first,
                               std::size_t last, Coords& c) {
  std::string rest = index;
  for (std::size_t d = last; d-- > first;) {
    c[d] = fmt::format("{}{}", prefix, d);
    if (d == 0) {
      out_.line("const Index {} = {};", c[d], rest);
    } else {
      const std::string ext = extent(node, d);
      out_.line("const Index {} = {} % {};", c[d], rest, ext);
      rest = fmt::format("({} / {})", rest, ext);
    }
  }
}

Coords ExprEmitter::declare_coords(ir::NodeId node, const std::string& flat, const std::string& prefix,
                                   const Coords& lead) {
  const std::size_t rank = plan_.bound->shape(node).size();
  KILN_ASSERT(lead.size() <= rank, "{} leading coordinates of a rank-{} value", lead.size(), rank);
  Coords c(rank);
  declare_axes(node, flat, prefix, lead.size(), rank, c);
  for (std::size_t d = lead.size(); d-- > 0;) {
    c[d] = fmt::format("{}{}", prefix, d);
    out_.line("const Index {} = {};", c[d], lead[d]);
  }
  flat_of_coords_[{c, plan_.bound->shape(node)}] = flat;
  return c;
}

Coords ExprEmitter::lead_coords(ir::NodeId node, const std::string& plane, const std::string& prefix,
                                std::size_t inner) {
  const std::size_t rank = plan_.bound->shape(node).size();
  Coords c(rank - std::min(inner, rank));
  declare_axes(node, plane, prefix, 0, c.size(), c);
  return c;
}

std::string ExprEmitter::fresh(ir::NodeId node) { return fmt::format("v{}_{}", node, counter_++); }

std::string ExprEmitter::load(ir::NodeId leaf, const Coords& coords) {
  const auto& n = plan_.ir().node(leaf);
  if (leaf_hook)
    if (auto served = leaf_hook(leaf, coords)) return *served;
  const int buffer = plan_.leaves.at(leaf);
  auto p = pointers_.find(buffer);
  KILN_ASSERT(p != pointers_.end(), "buffer #{} read but not in scope", buffer);
  std::string access = fmt::format("{}[{}]", p->second, flat_index(leaf, coords));
  if (n.dtype == DType::f16 || n.dtype == DType::bf16) access = fmt::format("kiln::to_float({})", access);
  return access;
}

// [Note: value() walks with a work stack]
// The elementwise graph behind one stored value is as deep as the spec's chain of lets, and
// 100,000 chained lets is a legal spec: value() keeps its pending nodes in a vector of frames
// on the heap, never on the call stack. It emits exactly what a recursive walk would, in the
// same order: each operand in turn (fully, first visit wins the memo), then the node itself.
std::string ExprEmitter::value(ir::NodeId id, const Coords& coords) {
  struct Frame {
    ir::NodeId id;
    Coords coords;
    std::vector<std::string> args;   // values of the operands visited so far, in order
  };
  std::vector<Frame> stack;
  std::string result;
  // Starts on (node, coords): true when its value is known at once (then it is in `result`).
  auto start = [&](ir::NodeId node, Coords at) {
    if (std::optional<std::string> v = known_value(node, at)) {
      result = std::move(*v);
      return true;
    }
    stack.push_back({node, std::move(at), {}});
    return false;
  };
  if (start(id, coords)) return result;
  for (;;) {
    const ir::NodeId top = stack.back().id;
    const auto& n = plan_.ir().node(top);
    const std::size_t done = stack.back().args.size();
    if (done < n.operands.size()) {
      const ir::NodeId op = n.operands[done];
      Coords at = n.kind == ir::OpKind::Gather && done == 1 ? gathered_coords(top, stack.back().coords, stack.back().args[0])
                                                           : operand_coords(top, op, stack.back().coords);
      if (start(op, std::move(at))) stack.back().args.push_back(std::move(result));
      continue;
    }
    Frame f = std::move(stack.back());
    stack.pop_back();
    if (ir::is_view(n.kind)) {   // [Note: index views]: an operand's value at other coordinates
      result = view_value(n, top, f.args, f.coords);
    } else {
      result = declare(top, f.coords, apply(n, top, f.args, f.coords));
    }
    if (stack.empty()) return result;
    stack.back().args.push_back(std::move(result));
  }
}

std::optional<std::string> ExprEmitter::known_value(ir::NodeId id, const Coords& coords) {
  auto key = std::make_pair(id, coords);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  const auto& n = plan_.ir().node(id);
  if (n.kind == ir::OpKind::Scalar) {
    auto s = scalars_.find(id);
    KILN_ASSERT(s != scalars_.end(), "scalar %{} read but not in scope", id);
    memo_[key] = s->second;
    return s->second;
  }
  if (auto b = flat_bound_.find(id); b != flat_bound_.end() && flat_of(id, coords) == b->second.first) {
    memo_[key] = b->second.second;
    return b->second.second;
  }
  if (plan_.leaves.count(id) && !computed_here_.count(id)) return declare(id, coords, load(id, coords));
  if (n.kind == ir::OpKind::Literal || n.kind == ir::OpKind::DimValue) {   // a dim's value: the bound extent
    std::string expr = literal(n.dtype, n.kind == ir::OpKind::Literal ? n.literal : ConstValue(plan_.bound->dim_value(id)));
    memo_[key] = expr;
    return expr;
  }
  if (n.kind == ir::OpKind::Iota) {   // an element's coordinate along the axis: nothing is loaded
    std::string expr = fmt::format("static_cast<{}>({})", compute_type(n.dtype), coords[static_cast<std::size_t>(n.axis)]);
    memo_[key] = expr;
    return expr;
  }
  KILN_ASSERT(ir::is_view(n.kind) || ir::is_elementwise(n.kind), "node %{} ({}) cannot be inlined", id,
              ir::op_kind_name(n.kind));
  return std::nullopt;
}

// x of a gather at the coordinates of its result, with the index value `index` along the axis.
Coords ExprEmitter::gathered_coords(ir::NodeId gather, const Coords& coords, const std::string& index) const {
  const auto& g = plan_.ir().node(gather);
  const ir::NodeId x = g.operands[1];
  Coords c = operand_coords(gather, x, coords);   // broadcasting (take_along_axis) off the axis
  const auto axis = static_cast<std::size_t>(g.axis);
  c[axis] = fmt::format("kiln::gather_index({}, Index({}))", index, extent(x, axis));
  return c;
}

std::string ExprEmitter::view_value(const ir::Node& n, ir::NodeId id, const std::vector<std::string>& args,
                                    const Coords& coords) {
  using K = ir::OpKind;
  std::string expr;
  if (n.kind == K::Pad && n.pad.mode == ir::PadMode::Constant) {   // the operand inside, the constant outside
    std::vector<std::string> inside;
    for (std::size_t d = 0; d < coords.size(); ++d) {
      const std::int64_t before = n.pad.before[d];
      if (before > 0) inside.push_back(fmt::format("{} >= {}", coords[d], before));
      if (n.pad.after[d] > 0) inside.push_back(fmt::format("{} < {} + {}", coords[d], extent(n.operands[0], d), before));
    }
    if (!inside.empty()) expr = fmt::format("(({}) ? {} : {})", fmt::join(inside, " && "), args[0], args[1]);
  } else if (n.kind == K::Concat) {   // the part whose slice holds the coordinate
    const auto axis = static_cast<std::size_t>(n.axis);
    expr = args.back();
    for (std::size_t k = args.size() - 1; k-- > 0;)
      expr = fmt::format("({} < {} ? {} : {})", coords[axis], concat_end(n, k + 1, axis), args[k], expr);
  }
  if (!expr.empty()) return declare(id, coords, expr);
  // Otherwise the view is one operand's value at its coordinates: x for a gather, else the first.
  const std::string& alias = n.kind == K::Gather ? args[1] : args[0];
  memo_[std::make_pair(id, coords)] = alias;
  return alias;
}

std::string ExprEmitter::declare(ir::NodeId id, const Coords& coords, const std::string& expr) {
  const auto& n = plan_.ir().node(id);
  if (n.loc.line > 0 && n.loc.line != last_line_ && plan_.ir().source) {
    last_line_ = n.loc.line;
    std::string text(plan_.ir().source->line(n.loc.line));
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.erase(text.begin());
    out_.line("// line {}: {}", n.loc.line, text);
  }
  std::string var = fresh(id);
  out_.line("const {} {} = {};", compute_type(n.dtype), var, expr);
  memo_[std::make_pair(id, coords)] = var;
  return var;
}

std::string ExprEmitter::apply(const ir::Node& n, ir::NodeId id, const std::vector<std::string>& a,
                               const Coords& coords) {
  using K = ir::OpKind;
  const DType t = n.dtype;
  const bool dbl = t == DType::f64;
  const bool flt = dtype_is_float(t);
  auto fn = [&](const char* name) { return fmt::format("{}{}({})", name, dbl ? "" : "f", a[0]); };
  const std::string one = literal(t, 1), zero = literal(t, 0);
  std::string r;
  switch (n.kind) {
    case K::Neg: r = fmt::format("(-{})", a[0]); break;
    case K::Not: r = fmt::format("(!{})", a[0]); break;
    case K::Abs: r = flt ? fn("fabs") : fmt::format("({0} < 0 ? -{0} : {0})", a[0]); break;
    case K::Exp: r = fn("exp"); break;
    case K::Log: r = fn("log"); break;
    case K::Sqrt: r = fn("sqrt"); break;
    case K::Rsqrt: r = fn("rsqrt"); break;
    case K::Tanh: r = fn("tanh"); break;
    case K::Sigmoid: r = fmt::format("({} / ({} + {}{}(-{})))", one, one, "exp", dbl ? "" : "f", a[0]); break;
    // NaN stays NaN (PyTorch): the comparison is false for NaN.
    case K::Relu: r = fmt::format("({0} < {1} ? {1} : {0})", a[0], zero); break;
    case K::Gelu:
      r = fmt::format("({0} * {1} * ({2} + erf{3}({1} * {4})))", literal(t, 0.5), a[0], one, dbl ? "" : "f",
                      literal(t, 0.7071067811865476));
      break;
    case K::Silu: r = fmt::format("({0} / ({1} + exp{2}(-{0})))", a[0], one, dbl ? "" : "f"); break;
    case K::Log1p: r = fn("log1p"); break;
    case K::Expm1: r = fn("expm1"); break;
    case K::Erf: r = fn("erf"); break;
    case K::Cast: {
      const DType from = plan_.ir().node(n.operands[0]).dtype;
      if (t == DType::boolean) r = fmt::format("({} != 0)", a[0]);
      else if (from == DType::boolean) r = fmt::format("({} ? {} : {})", a[0], one, zero);
      else r = fmt::format("static_cast<{}>({})", compute_type(t), a[0]);
      break;
    }
    case K::Add: r = fmt::format("({} + {})", a[0], a[1]); break;
    case K::Sub: r = fmt::format("({} - {})", a[0], a[1]); break;
    case K::Mul: r = fmt::format("({} * {})", a[0], a[1]); break;
    case K::Div: r = fmt::format("({} / {})", a[0], a[1]); break;
    case K::Pow: r = fmt::format("pow{}({}, {})", dbl ? "" : "f", a[0], a[1]); break;
    case K::Minimum: r = flt ? fmt::format("kiln::nan_min({}, {})", a[0], a[1]) : fmt::format("min({}, {})", a[0], a[1]); break;
    case K::Maximum: r = flt ? fmt::format("kiln::nan_max({}, {})", a[0], a[1]) : fmt::format("max({}, {})", a[0], a[1]); break;
    case K::Eq: r = fmt::format("({} == {})", a[0], a[1]); break;
    case K::Ne: r = fmt::format("({} != {})", a[0], a[1]); break;
    case K::Lt: r = fmt::format("({} < {})", a[0], a[1]); break;
    case K::Le: r = fmt::format("({} <= {})", a[0], a[1]); break;
    case K::Gt: r = fmt::format("({} > {})", a[0], a[1]); break;
    case K::Ge: r = fmt::format("({} >= {})", a[0], a[1]); break;
    case K::And: r = fmt::format("({} && {})", a[0], a[1]); break;
    case K::Or: r = fmt::format("({} || {})", a[0], a[1]); break;
    case K::Where: r = fmt::format("({} ? {} : {})", a[0], a[1], a[2]); break;
    case K::Dropout: {
      // keep iff (philox word >> 8) >= ceil(p * 2^24): "u >= p" in exact arithmetic.
      const auto threshold = static_cast<unsigned long long>(std::ceil(n.p * 16777216.0));
      const double scale = 1.0 / (1.0 - n.p);
      const std::optional<std::string> bits = dropout_bits_hook ? dropout_bits_hook(id, coords, a[1]) : std::nullopt;
      const std::string keep =
          bits ? fmt::format("kiln::dropout_keep_bits({}, {}u)", *bits, threshold)
               : fmt::format("kiln::dropout_keep({}, static_cast<unsigned long long>({}), {}u)", a[1],
                             flat_index(id, coords), threshold);
      r = fmt::format("({} ? {} * {} : {})", keep, a[0], literal(t, scale), zero);
      break;
    }
    default: KILN_ASSERT(false, "op {} is not elementwise", ir::op_kind_name(n.kind));
  }
  return rounded_to(t, r);   // f16/bf16 results are rounded per op, as PyTorch does
}

std::string rounded_to(DType dtype, const std::string& expr) {
  if (dtype == DType::f16) return fmt::format("__half2float(__float2half_rn({}))", expr);
  if (dtype == DType::bf16) return fmt::format("__bfloat162float(__float2bfloat16_rn({}))", expr);
  return expr;
}

}  // namespace kiln
