// DimExpr folding, IR text form, and binding dims to values.
#include "generator/ir/ir.h"

#include <fmt/format.h>

#include <functional>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "generator/support/assert.h"
#include "generator/support/diagnostics.h"

namespace kiln {

// ---------------------------------------------------------------- ConstValue
double ConstValue::to_double() const {
  switch (kind_) {
    case Kind::floating: return float_;
    case Kind::boolean: return magnitude_ != 0 ? 1.0 : 0.0;
    case Kind::integer: break;
  }
  const double m = static_cast<double>(magnitude_);   // round to nearest
  return negative_ ? -m : m;
}

std::string ConstValue::str() const {
  switch (kind_) {
    case Kind::floating: return fmt::format("{}", float_);   // shortest round trip, C locale
    case Kind::boolean: return magnitude_ != 0 ? "true" : "false";
    case Kind::integer: break;
  }
  return fmt::format("{}{}", negative_ ? "-" : "", magnitude_);
}

}  // namespace kiln

namespace kiln::ir {

// ---------------------------------------------------------------- DimExpr
// [Note: DimExpr folding]
// Constants fold, constants move to the right of + and *, and `(X + c1) + c2`
// becomes `X + (c1 + c2)`, so the conv output size of a 3x3 stride-1 unpadded
// conv prints as `(H - 2)` and compares equal to a shape written by hand the
// same way. Folding never overflows: an overflowing fold is left symbolic and
// evaluate() reports it with concrete values.

namespace {

DimExpr make_node(DimExpr::Kind kind, const DimExpr& a, const DimExpr& b);

bool add_ok(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_add_overflow(a, b, &out); }
bool sub_ok(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_sub_overflow(a, b, &out); }
bool mul_ok(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

std::int64_t floor_div_values(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

// Private access without widening the header: a friend-free builder through
// the public factories plus this file's helper.
struct DimExprAccess {
  static DimExpr node(DimExpr::Kind kind, const DimExpr& a, const DimExpr& b) {
    DimExpr e(kind, 0);
    // Not const objects (shared as const): ~DimExpr may move a sole owner's children out.
    e.lhs_ = std::make_shared<DimExpr>(a);
    e.rhs_ = std::make_shared<DimExpr>(b);
    return e;
  }
  static const DimExpr& lhs(const DimExpr& e) { return *e.lhs_; }
  static const DimExpr& rhs(const DimExpr& e) { return *e.rhs_; }
  static std::int64_t value(const DimExpr& e) { return e.value_; }
};

namespace {

DimExpr make_node(DimExpr::Kind kind, const DimExpr& a, const DimExpr& b) { return DimExprAccess::node(kind, a, b); }

// X + c with the constant folded into an existing trailing constant.
DimExpr add_constant(const DimExpr& x, std::int64_t c) {
  if (c == 0) return x;
  if (auto v = x.as_constant()) {
    std::int64_t r;
    if (add_ok(*v, c, r)) return DimExpr::constant(r);
  }
  if ((x.kind() == DimExpr::Kind::Add || x.kind() == DimExpr::Kind::Sub) &&
      DimExprAccess::rhs(x).as_constant()) {
    std::int64_t inner = *DimExprAccess::rhs(x).as_constant();
    std::int64_t signed_inner = inner, total;
    bool ok = x.kind() == DimExpr::Kind::Add || sub_ok(0, inner, signed_inner);
    if (ok && add_ok(signed_inner, c, total)) return add_constant(DimExprAccess::lhs(x), total);
  }
  if (c < 0 && c != std::numeric_limits<std::int64_t>::min())
    return make_node(DimExpr::Kind::Sub, x, DimExpr::constant(-c));
  return make_node(DimExpr::Kind::Add, x, DimExpr::constant(c));
}

}  // namespace

DimExpr::~DimExpr() {
  // Frees a deep expression without recursing: a child this node solely owns hands its own
  // children to the work list before it dies, so each destructor below frees one level.
  std::vector<std::shared_ptr<const DimExpr>> pending;
  if (lhs_) pending.push_back(std::move(lhs_));
  if (rhs_) pending.push_back(std::move(rhs_));
  while (!pending.empty()) {
    std::shared_ptr<const DimExpr> e = std::move(pending.back());
    pending.pop_back();
    if (e.use_count() == 1) {   // the last owner: nobody else can reach it any more
      auto& owned = const_cast<DimExpr&>(*e);
      if (owned.lhs_) pending.push_back(std::move(owned.lhs_));
      if (owned.rhs_) pending.push_back(std::move(owned.rhs_));
    }
  }
}

DimExpr DimExpr::constant(std::int64_t value) {
  return DimExpr(Kind::Const, value);
}

DimExpr DimExpr::dim(std::string name) {
  DimExpr e = constant(0);
  e.kind_ = Kind::Dim;
  e.name_ = std::move(name);
  return e;
}

DimExpr operator+(const DimExpr& a, const DimExpr& b) {
  if (auto c = b.as_constant()) return add_constant(a, *c);
  if (auto c = a.as_constant()) return add_constant(b, *c);
  return make_node(DimExpr::Kind::Add, a, b);
}

DimExpr operator-(const DimExpr& a, const DimExpr& b) {
  if (a == b) return DimExpr::constant(0);
  if (auto c = b.as_constant()) {
    std::int64_t neg;
    if (sub_ok(0, *c, neg)) return add_constant(a, neg);
  }
  if (auto ca = a.as_constant(); ca && b.as_constant()) {
    std::int64_t r;
    if (sub_ok(*ca, *b.as_constant(), r)) return DimExpr::constant(r);
  }
  return make_node(DimExpr::Kind::Sub, a, b);
}

DimExpr operator*(const DimExpr& a, const DimExpr& b) {
  auto ca = a.as_constant();
  auto cb = b.as_constant();
  if (ca && cb) {
    std::int64_t r;
    if (mul_ok(*ca, *cb, r)) return DimExpr::constant(r);
    return make_node(DimExpr::Kind::Mul, a, b);
  }
  if (ca) return b * a;   // constants to the right
  if (cb) {
    if (*cb == 1) return a;
    if (*cb == 0) return DimExpr::constant(0);
    if (a.kind() == DimExpr::Kind::Mul && DimExprAccess::rhs(a).as_constant()) {
      std::int64_t r;
      if (mul_ok(*DimExprAccess::rhs(a).as_constant(), *cb, r)) return DimExprAccess::lhs(a) * DimExpr::constant(r);
    }
    // (x + k) * c = x * c + k * c, and so for x - k: a transposed conv's output size ((D - 1) * 2
    // + 2) and a declared `2 * D` fold to one form, so shapes that agree compare equal.
    if ((a.kind() == DimExpr::Kind::Add || a.kind() == DimExpr::Kind::Sub) && DimExprAccess::rhs(a).as_constant()) {
      std::int64_t k = *DimExprAccess::rhs(a).as_constant(), r;
      if ((a.kind() == DimExpr::Kind::Add || sub_ok(0, k, k)) && mul_ok(k, *cb, r))
        return DimExprAccess::lhs(a) * b + DimExpr::constant(r);
    }
  }
  return make_node(DimExpr::Kind::Mul, a, b);
}

DimExpr floor_div(const DimExpr& a, const DimExpr& b) {
  auto ca = a.as_constant();
  auto cb = b.as_constant();
  if (cb && *cb == 1) return a;
  if (ca && cb && *cb != 0 && !(*ca == std::numeric_limits<std::int64_t>::min() && *cb == -1))
    return DimExpr::constant(floor_div_values(*ca, *cb));
  return make_node(DimExpr::Kind::FloorDiv, a, b);
}

DimExpr min(const DimExpr& a, const DimExpr& b) {
  if (a == b) return a;
  auto ca = a.as_constant();
  auto cb = b.as_constant();
  if (ca && cb) return DimExpr::constant(std::min(*ca, *cb));
  return make_node(DimExpr::Kind::Min, a, b);
}

// [Note: DimExpr walks use a work stack]
// A chain of convs through lets nests each output size in the next (100,000 convs is a legal
// spec), and the same subexpression is shared by pointer wherever it was copied (a conv whose
// weight is a conv output reuses its input's size twice). So ==, evaluate and str walk with
// an explicit stack, == takes one shared node as equal to itself, and bind() evaluates each
// shared node once.
bool operator==(const DimExpr& a, const DimExpr& b) {
  std::vector<std::pair<const DimExpr*, const DimExpr*>> stack{{&a, &b}};
  while (!stack.empty()) {
    const auto [x, y] = stack.back();
    stack.pop_back();
    if (x == y) continue;
    if (x->kind() != y->kind()) return false;
    switch (x->kind()) {
      case DimExpr::Kind::Const:
        if (DimExprAccess::value(*x) != DimExprAccess::value(*y)) return false;
        break;
      case DimExpr::Kind::Dim:
        if (x->name() != y->name()) return false;
        break;
      default:   // lhs first, as the recursive form compared
        stack.emplace_back(&DimExprAccess::rhs(*x), &DimExprAccess::rhs(*y));
        stack.emplace_back(&DimExprAccess::lhs(*x), &DimExprAccess::lhs(*y));
    }
  }
  return true;
}

std::optional<std::int64_t> DimExpr::as_constant() const {
  if (kind_ == Kind::Const) return value_;
  return std::nullopt;
}

namespace {

// DimExpr::evaluate with a memo of shared nodes (see the note above): post-order, lhs before
// rhs, so the first error found is the one the recursive form reported.
std::int64_t evaluate_shared(const DimExpr& root, const std::map<std::string, std::int64_t>& dims,
                             std::unordered_map<const DimExpr*, std::int64_t>& memo) {
  std::vector<std::pair<const DimExpr*, bool>> stack{{&root, false}};
  while (!stack.empty()) {
    const auto [e, expanded] = stack.back();
    stack.pop_back();
    if (memo.count(e)) continue;
    switch (e->kind()) {
      case DimExpr::Kind::Const: memo[e] = DimExprAccess::value(*e); continue;
      case DimExpr::Kind::Dim: {
        auto it = dims.find(e->name());
        KILN_CHECK(it != dims.end(), ArgumentError, "dim {} has no value", e->name());
        memo[e] = it->second;
        continue;
      }
      default: break;
    }
    if (!expanded) {
      stack.emplace_back(e, true);
      stack.emplace_back(&DimExprAccess::rhs(*e), false);
      stack.emplace_back(&DimExprAccess::lhs(*e), false);
      continue;
    }
    const std::int64_t a = memo.at(&DimExprAccess::lhs(*e)), b = memo.at(&DimExprAccess::rhs(*e));
    std::int64_t r = 0;
    bool ok = true;
    switch (e->kind()) {
      case DimExpr::Kind::Add: ok = add_ok(a, b, r); break;
      case DimExpr::Kind::Sub: ok = sub_ok(a, b, r); break;
      case DimExpr::Kind::Mul: ok = mul_ok(a, b, r); break;
      case DimExpr::Kind::FloorDiv:
        KILN_CHECK(b != 0, ArgumentError, "division by zero in dim expression {}", e->str());
        ok = !(a == std::numeric_limits<std::int64_t>::min() && b == -1);
        if (ok) r = floor_div_values(a, b);
        break;
      case DimExpr::Kind::Min: r = std::min(a, b); break;
      default: break;
    }
    KILN_CHECK(ok, ArgumentError, "dim expression {} overflows 64 bits ({} and {})", e->str(), a, b);
    memo[e] = r;
  }
  return memo.at(&root);
}

}  // namespace

bool DimExpr::walk_dims(std::unordered_set<const DimExpr*>& seen,
                        const std::function<bool(const std::string&)>& visit) const {
  std::vector<const DimExpr*> stack{this}, added;
  while (!stack.empty()) {
    const DimExpr* e = stack.back();
    stack.pop_back();
    if (!seen.insert(e).second) continue;   // shared nodes once each (see the note above)
    added.push_back(e);
    if (e->kind() == Kind::Dim && visit(e->name())) {
      // `seen` as it was: the path to the find is not free of it (a memo of such nodes stays true).
      for (const DimExpr* n : added) seen.erase(n);
      return true;
    }
    if (e->lhs_) stack.push_back(e->lhs_.get());
    if (e->rhs_) stack.push_back(e->rhs_.get());
  }
  return false;
}

ShapeExpr DimExpr::flatten() const {
  ShapeExpr out;
  std::unordered_map<const DimExpr*, int> index;   // a node's place in out.nodes, once placed
  std::vector<std::pair<const DimExpr*, bool>> stack{{this, false}};   // (node, operands placed)
  while (!stack.empty()) {
    const auto [e, ready] = stack.back();
    stack.pop_back();
    if (index.count(e)) continue;   // shared: placed already
    if (e->lhs_ && !ready) {
      stack.push_back({e, true});
      stack.push_back({e->rhs_.get(), false});
      stack.push_back({e->lhs_.get(), false});
      continue;
    }
    ShapeExpr::Node n;
    switch (e->kind_) {
      case Kind::Const: n.kind = ShapeExpr::Kind::Const; break;
      case Kind::Dim: n.kind = ShapeExpr::Kind::Dim; break;
      case Kind::Add: n.kind = ShapeExpr::Kind::Add; break;
      case Kind::Sub: n.kind = ShapeExpr::Kind::Sub; break;
      case Kind::Mul: n.kind = ShapeExpr::Kind::Mul; break;
      case Kind::FloorDiv: n.kind = ShapeExpr::Kind::FloorDiv; break;
      case Kind::Min: n.kind = ShapeExpr::Kind::Min; break;
    }
    n.value = e->value_;
    n.dim = e->name_;
    if (e->lhs_) {
      n.lhs = index.at(e->lhs_.get());
      n.rhs = index.at(e->rhs_.get());
    }
    index.emplace(e, static_cast<int>(out.nodes.size()));
    out.nodes.push_back(std::move(n));
  }
  return out;
}

bool DimExpr::mentions(const std::set<std::string>& names) const {
  std::unordered_set<const DimExpr*> seen;
  return walk_dims(seen, [&](const std::string& name) { return names.count(name) > 0; });
}

bool mentions(const Shape& shape, const std::set<std::string>& dims) {
  if (dims.empty()) return false;
  for (const auto& e : shape)
    if (e.mentions(dims)) return true;
  return false;
}

std::int64_t DimExpr::evaluate(const std::map<std::string, std::int64_t>& dims) const {
  std::unordered_map<const DimExpr*, std::int64_t> memo;
  return evaluate_shared(*this, dims, memo);
}

std::string DimExpr::str() const { return print(nullptr); }

bool DimExpr::divides() const {
  std::vector<const DimExpr*> stack{this};
  while (!stack.empty()) {
    const DimExpr& e = *stack.back();
    stack.pop_back();
    if (e.kind() == Kind::FloorDiv || e.kind() == Kind::Min) return true;
    if (e.kind() == Kind::Const || e.kind() == Kind::Dim) continue;
    stack.push_back(&DimExprAccess::lhs(e));
    stack.push_back(&DimExprAccess::rhs(e));
  }
  return false;
}

std::string DimExpr::code(const std::function<std::string(const std::string&)>& dim_code) const {
  return print(&dim_code);
}

std::string DimExpr::print(const std::function<std::string(const std::string&)>* dim_code) const {
  // In order, into one string: a pending item is a node to print or a piece of text.
  struct Item {
    const DimExpr* node;
    const char* text;
  };
  std::string out;
  std::vector<Item> stack{{this, nullptr}};
  while (!stack.empty()) {
    const Item item = stack.back();
    stack.pop_back();
    if (item.text) {
      out += item.text;
      continue;
    }
    const DimExpr& e = *item.node;
    const char* op = "";
    switch (e.kind()) {
      case Kind::Const:
        out += dim_code ? fmt::format("{}LL", DimExprAccess::value(e)) : fmt::format("{}", DimExprAccess::value(e));
        continue;
      case Kind::Dim: out += dim_code ? (*dim_code)(e.name()) : e.name(); continue;
      case Kind::Add: op = " + "; break;
      case Kind::Sub: op = " - "; break;
      case Kind::Mul: op = " * "; break;
      case Kind::FloorDiv: op = " / "; break;
      case Kind::Min: op = ", "; break;
    }
    stack.push_back({nullptr, ")"});
    stack.push_back({&DimExprAccess::rhs(e), nullptr});
    stack.push_back({nullptr, op});
    stack.push_back({&DimExprAccess::lhs(e), nullptr});
    out += e.kind() != Kind::Min ? "(" : dim_code ? "kiln::launch::min_ll(" : "min(";
  }
  return out;
}

// ---------------------------------------------------------------- op kinds
const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::Input: return "input";
    case OpKind::Scalar: return "scalar";
    case OpKind::Literal: return "literal";
    case OpKind::Neg: return "neg";
    case OpKind::Not: return "not";
    case OpKind::Abs: return "abs";
    case OpKind::Exp: return "exp";
    case OpKind::Log: return "log";
    case OpKind::Sqrt: return "sqrt";
    case OpKind::Rsqrt: return "rsqrt";
    case OpKind::Tanh: return "tanh";
    case OpKind::Sigmoid: return "sigmoid";
    case OpKind::Relu: return "relu";
    case OpKind::Gelu: return "gelu";
    case OpKind::Silu: return "silu";
    case OpKind::Log1p: return "log1p";
    case OpKind::Expm1: return "expm1";
    case OpKind::Erf: return "erf";
    case OpKind::Cast: return "cast";
    case OpKind::Add: return "add";
    case OpKind::Sub: return "sub";
    case OpKind::Mul: return "mul";
    case OpKind::Div: return "div";
    case OpKind::Pow: return "pow";
    case OpKind::Minimum: return "minimum";
    case OpKind::Maximum: return "maximum";
    case OpKind::Eq: return "eq";
    case OpKind::Ne: return "ne";
    case OpKind::Lt: return "lt";
    case OpKind::Le: return "le";
    case OpKind::Gt: return "gt";
    case OpKind::Ge: return "ge";
    case OpKind::And: return "and";
    case OpKind::Or: return "or";
    case OpKind::Where: return "where";
    case OpKind::Sum: return "sum";
    case OpKind::Mean: return "mean";
    case OpKind::Min: return "min";
    case OpKind::Max: return "max";
    case OpKind::Prod: return "prod";
    case OpKind::Argmin: return "argmin";
    case OpKind::Argmax: return "argmax";
    case OpKind::Logsumexp: return "logsumexp";
    case OpKind::Cumsum: return "cumsum";
    case OpKind::Cumprod: return "cumprod";
    case OpKind::Cummax: return "cummax";
    case OpKind::Cummin: return "cummin";
    case OpKind::Softmax: return "softmax";
    case OpKind::LogSoftmax: return "log_softmax";
    case OpKind::Normalize: return "normalize";
    case OpKind::Attention: return "attention";
    case OpKind::Dropout: return "dropout";
    case OpKind::Matmul: return "matmul";
    case OpKind::Permute: return "permute";
    case OpKind::Conv: return "conv";
    case OpKind::Iota: return "iota";
    case OpKind::DimValue: return "dim";
    case OpKind::MaxPool: return "max_pool";
    case OpKind::AvgPool: return "avg_pool";
    case OpKind::Reshape: return "reshape";
    case OpKind::Pad: return "pad";
    case OpKind::Concat: return "concat";
    case OpKind::Gather: return "gather";
    case OpKind::Expand: return "expand";
  }
  return "?";
}

const char* conv_name(const ConvAttrs& c) {
  static const char* const kNames[2][3] = {{"conv1d", "conv2d", "conv3d"},
                                           {"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}};
  KILN_ASSERT(c.dims >= 1 && c.dims <= 3, "a conv over {} axes", c.dims);
  return kNames[c.transposed ? 1 : 0][c.dims - 1];
}

const char* node_kind_name(const Node& n) { return n.kind == OpKind::Conv ? conv_name(n.conv) : op_kind_name(n.kind); }

bool is_elementwise(OpKind kind) {
  return (kind >= OpKind::Neg && kind <= OpKind::Where) || kind == OpKind::Dropout;
}
bool is_reduction(OpKind kind) { return kind >= OpKind::Sum && kind <= OpKind::Logsumexp; }
bool is_scan(OpKind kind) { return kind >= OpKind::Cumsum && kind <= OpKind::Cummin; }
bool is_rownorm(OpKind kind) { return kind == OpKind::Softmax || kind == OpKind::LogSoftmax; }
bool is_pool(OpKind kind) { return kind == OpKind::MaxPool || kind == OpKind::AvgPool; }
bool is_view(OpKind kind) { return kind == OpKind::Permute || (kind >= OpKind::Reshape && kind <= OpKind::Expand); }

const char* pad_mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::Constant: return "constant";
    case PadMode::Reflect: return "reflect";
    case PadMode::Replicate: return "replicate";
  }
  return "?";
}

// ---------------------------------------------------------------- Ir
const DimDecl* Ir::find_dim(const std::string& name) const {
  for (const auto& d : dims)
    if (d.name == name) return &d;
  return nullptr;
}

std::set<std::string> Ir::dyn_dims() const {
  std::set<std::string> out;
  for (const auto& d : dims)
    if (d.dynamic) out.insert(d.name);
  return out;
}

namespace {

template <class Entry, class Fn>
std::string join(const std::vector<Entry>& items, Fn&& fn, const char* sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += fn(items[i]);
  }
  return out;
}

std::string symbolic_shape(const Shape& shape) {
  return join(shape, [](const DimExpr& d) { return d.str(); });
}

std::string concrete_shape(const std::vector<std::int64_t>& shape) {
  return join(shape, [](std::int64_t v) { return fmt::format("{}", v); });
}

std::string type_text(DType dtype, const std::string& shape, bool scalar) {
  if (scalar) return std::string(dtype_name(dtype));
  return fmt::format("{}[{}]", dtype_name(dtype), shape);
}

// Shapes as text, for the symbolic or the bound form.
using ShapeText = std::function<std::string(NodeId)>;

std::string signature_with(const Ir& ir, const ShapeText& shape_of, bool parenthesize_one) {
  std::string ins = join(ir.params, [&](const Param& p) {
    return fmt::format("{}: {}", p.name, type_text(p.dtype, shape_of(p.node), !p.is_tensor));
  });
  std::string outs = join(ir.outputs, [&](const OutputDecl& o) {
    const Node& n = ir.node(o.node);
    return fmt::format("{}: {}", o.name, type_text(n.dtype, shape_of(o.node), n.shape.empty()));
  });
  bool parens = parenthesize_one || ir.outputs.size() != 1;
  return fmt::format("{}({}) -> {}{}{}", ir.op_name, ins, parens ? "(" : "", outs, parens ? ")" : "");
}

std::string number(double v) { return fmt::format("{}", v); }

std::string int_list(const std::vector<int>& v) {
  return "[" + join(v, [](int x) { return fmt::format("{}", x); }) + "]";
}

std::string node_text(const Ir& ir, const Node& n, NodeId id, const ShapeText& shape_of) {
  std::string args = join(n.operands, [](NodeId o) { return fmt::format("%{}", o); });
  std::vector<std::string> attrs;
  switch (n.kind) {
    case OpKind::Input: args = n.name; break;
    case OpKind::Scalar: args = n.name; break;
    case OpKind::Literal: args = n.literal.is_bool() ? (n.literal.magnitude() ? "1" : "0") : n.literal.str(); break;
    case OpKind::DimValue: args = n.dim; break;
    default: break;
  }
  if (is_reduction(n.kind)) {
    attrs.push_back("axes=" + int_list(n.axes));
    if (n.keepdims) attrs.push_back("keepdims");
  } else if (is_scan(n.kind)) {
    attrs.push_back(fmt::format("axis={}", n.axis));
    if (n.exclusive) attrs.push_back("exclusive");
    if (n.reverse) attrs.push_back("reverse");
  } else if (n.kind == OpKind::Normalize) {
    attrs.push_back("axes=" + int_list(n.axes));
    attrs.push_back(n.norm.centered ? "centered" : "uncentered");
    attrs.push_back(n.norm.mean ? "mean" : "sum");
    if (n.norm.divide) attrs.push_back("divide");
  } else if (n.kind == OpKind::Attention) {
    if (n.attention.has_scale && n.operands.size() < 4)
      attrs.push_back(fmt::format("{}={}", n.attention.divide ? "divisor" : "scale", number(n.attention.scale)));
    else if (n.attention.has_scale)
      attrs.push_back(n.attention.divide ? "divided" : "scaled");
    if (n.attention.causal) attrs.push_back("causal");
  } else if (is_rownorm(n.kind) || n.kind == OpKind::Iota || n.kind == OpKind::Concat || n.kind == OpKind::Gather) {
    attrs.push_back(fmt::format("axis={}", n.axis));
  } else if (n.kind == OpKind::Dropout) {
    attrs.push_back("p=" + number(n.p));
  } else if (n.kind == OpKind::Permute) {
    attrs.push_back("perm=" + int_list(n.perm));
  } else if (n.kind == OpKind::Pad) {
    auto list = [](const std::vector<std::int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); };
    attrs.push_back("before=" + list(n.pad.before));
    attrs.push_back("after=" + list(n.pad.after));
    attrs.push_back(fmt::format("mode={}", pad_mode_name(n.pad.mode)));
  } else if (n.kind == OpKind::Conv) {
    const ConvAttrs& c = n.conv;
    auto list = [&](const std::int64_t* v) {
      std::string t;
      for (int i = 0; i < c.dims; ++i) t += fmt::format("{}{}", i ? ", " : "", v[i]);
      return "[" + t + "]";
    };
    attrs.push_back("stride=" + list(c.stride));
    attrs.push_back("padding=" + list(c.padding));
    if (c.transposed) attrs.push_back("output_padding=" + list(c.output_padding));
    attrs.push_back("dilation=" + list(c.dilation));
    attrs.push_back(fmt::format("groups={}", c.groups));
    if (c.dims == 2) attrs.push_back(c.layout == Layout::NCHW ? "layout=NCHW" : "layout=NHWC");
  } else if (is_pool(n.kind)) {
    const PoolAttrs& a = n.pool;
    auto list = [&](const std::int64_t* v) {
      std::string t;
      for (int i = 0; i < a.dims; ++i) t += fmt::format("{}{}", i ? ", " : "", v[i]);
      return "[" + t + "]";
    };
    attrs.push_back(fmt::format("dims={}", a.dims));
    attrs.push_back("kernel=" + list(a.kernel));
    attrs.push_back("stride=" + list(a.stride));
    attrs.push_back("padding=" + list(a.padding));
    if (n.kind == OpKind::MaxPool) attrs.push_back("dilation=" + list(a.dilation));
    if (a.ceil_mode) attrs.push_back("ceil_mode");
    if (n.kind == OpKind::AvgPool && !a.count_include_pad) attrs.push_back("exclude_pad");
    if (a.divisor) attrs.push_back(fmt::format("divisor={}", a.divisor));
  }
  if ((n.kind == OpKind::Matmul || n.kind == OpKind::Conv) && n.precision)
    attrs.push_back(fmt::format("precision={}", precision_name(*n.precision)));
  for (const auto& a : attrs) args += (args.empty() ? "" : ", ") + a;
  const char* sep =
      n.kind == OpKind::Input || n.kind == OpKind::Scalar || n.kind == OpKind::Literal || n.kind == OpKind::DimValue ? " " : "(";
  std::string text = fmt::format("  %{} = {}{}{}{} : {}", id, node_kind_name(n), sep, args,
                                 *sep == '(' ? ")" : "", type_text(n.dtype, shape_of(id), n.shape.empty()));
  bool named = !n.name.empty() && n.kind != OpKind::Input && n.kind != OpKind::Scalar;
  if (n.loc.line > 0)
    text += named ? fmt::format("  # {}, line {}", n.name, n.loc.line) : fmt::format("  # line {}", n.loc.line);
  return text + "\n";
}

std::string body_text(const Ir& ir, const ShapeText& shape_of, const std::string& dims_line) {
  std::string out = "op " + signature_with(ir, shape_of, true) + "\n";
  out += dims_line;
  for (const auto& c : ir.consts) {
    out += fmt::format("  const {}: {} = {}\n", c.name, c.dtype == DType::i64 ? "int" : dtype_name(c.dtype), c.value.str());
  }
  for (std::size_t i = 0; i < ir.nodes.size(); ++i)
    out += node_text(ir, ir.nodes[i], static_cast<NodeId>(i), shape_of);
  for (const auto& o : ir.outputs) out += fmt::format("  out {} = %{}\n", o.name, o.node);
  return out;
}

}  // namespace

std::string Ir::where(SourceLoc at) const {
  return fmt::format("{}:{}:{}: op {}", source ? source->name : op_name, at.line, at.column, op_name);
}

std::string Ir::signature() const {
  return signature_with(*this, [this](NodeId id) { return symbolic_shape(node(id).shape); }, false);
}

std::string print(const Ir& ir) {
  std::string dims_line;
  if (!ir.dims.empty()) {
    dims_line = "  dims " + join(ir.dims, [](const DimDecl& d) {
      std::string s = (d.dynamic ? "dyn " : d.fixed ? "static " : "") + d.name;
      if (d.default_value) s += fmt::format(" = {}", *d.default_value);
      return s;
    }) + "\n";
  }
  return body_text(ir, [&ir](NodeId id) { return symbolic_shape(ir.node(id).shape); }, dims_line);
}

// ---------------------------------------------------------------- binding
std::int64_t BoundIr::numel(NodeId id) const {
  std::int64_t n = 1;
  for (auto d : shape(id)) n *= d;   // bind() verified this cannot overflow
  return n;
}

bool BoundIr::is_dynamic(const std::string& dim) const {
  const DimDecl* d = ir->find_dim(dim);
  return d != nullptr && d->dynamic;
}

std::int64_t BoundIr::dim_value(NodeId id) const {
  const Node& n = node(id);
  KILN_ASSERT(n.kind == OpKind::DimValue, "node %{} is not a dim's value", id);
  KILN_CHECK(!is_dynamic(n.dim), UnsupportedError, "{}: dim '{}' is dyn; only a specialized dim can be used as a value",
             ir->where(n.loc), n.dim);
  const std::int64_t v = dims.at(n.dim);
  KILN_ASSERT(n.dtype != DType::i32 || v <= INT32_MAX, "dim {} = {} as an i32 value (bind() refuses it)", n.dim, v);
  return v;
}

namespace {

std::string node_description(const Ir& ir, NodeId id) {
  const Node& n = ir.node(id);
  std::string what = n.name.empty() ? node_kind_name(n) : fmt::format("{} '{}'", node_kind_name(n), n.name);
  if (n.loc.line > 0) what += fmt::format(" at {}:{}", n.loc.line, n.loc.column);
  return what;
}

}  // namespace

BoundIr bind(std::shared_ptr<const Ir> ir, const std::map<std::string, DimValue>& given) {
  KILN_ASSERT(ir != nullptr, "bind of a null Ir");
  // Errors about the spec's own dims and sizes point at the spec: the dim's declaration,
  // the constraint's call, the node whose size is wrong.
  // what() is the rendered diagnostic (file:line:col, the line and a caret) wherever the
  // error surfaces: kiln gen, kiln build, Op::specialize, a call.
  auto fail = [&](SourceLoc loc, const std::string& message) {
    const std::string text = fmt::format("op {}: {}", ir->op_name, message);
    if (!ir->source || loc.line <= 0) throw BindError(text, loc);
    std::string rendered = render({Severity::error, ir->source->name, loc.line, loc.column, text}, ir->source.get());
    while (!rendered.empty() && rendered.back() == '\n') rendered.pop_back();
    throw BindError(rendered, loc);
  };
  std::unordered_map<const DimExpr*, std::int64_t> evaluated;   // shared size expressions, once each
  auto evaluate = [&](const DimExpr& e, const std::map<std::string, std::int64_t>& dims, SourceLoc loc) -> std::int64_t {
    try {
      return evaluate_shared(e, dims, evaluated);
    } catch (const ArgumentError& error) {
      throw BindError(fmt::format("op {}: {}", ir->op_name, error.what()), loc);
    }
  };
  BoundIr bound;
  for (const auto& d : ir->dims) {
    auto it = given.find(d.name);
    DimValue v;
    if (it != given.end()) {
      v = it->second;
    } else if (d.default_value) {
      v = {*d.default_value, fmt::format("the default (dims {} = {})", d.name, *d.default_value)};
    } else {
      fail(d.loc, fmt::format("dim {} has no value; pass a tensor with that dim or -D {}=VALUE", d.name, d.name));
    }
    if (v.value < 1)
      fail(d.loc, fmt::format("dim {} is {} from {}; dims must be >= 1 (empty tensors are not supported)", d.name,
                              v.value, v.source));
    bound.dims[d.name] = v.value;
  }
  for (const auto& c : ir->constraints) {
    std::int64_t lhs = evaluate(c.lhs, bound.dims, c.loc), rhs = evaluate(c.rhs, bound.dims, c.loc);
    // Each side as "expr = value", or the value alone where the expr is a number ("C = 3 but 4").
    auto side = [](const DimExpr& e, std::int64_t value) {
      return e.as_constant() ? std::to_string(value) : fmt::format("{} = {}", e.str(), value);
    };
    if (lhs != rhs) fail(c.loc, fmt::format("{} ({} but {})", c.message, side(c.lhs, lhs), side(c.rhs, rhs)));
  }
  bound.shapes.reserve(ir->nodes.size());
  for (std::size_t i = 0; i < ir->nodes.size(); ++i) {
    const Node& n = ir->nodes[i];
    std::vector<std::int64_t> shape;
    std::int64_t numel = 1;
    for (const auto& e : n.shape) {
      std::int64_t v = evaluate(e, bound.dims, n.loc);
      if (v < 1)
        fail(n.loc, fmt::format("the {} would have size {} = {} (< 1); its input is too small",
                                node_description(*ir, static_cast<NodeId>(i)), e.str(), v));
      if (__builtin_mul_overflow(numel, v, &numel))
        fail(n.loc, fmt::format("the {} has more than 2^63 elements", node_description(*ir, static_cast<NodeId>(i))));
      shape.push_back(v);
    }
    // Its size in bytes (and every byte offset into it) must fit a signed 64-bit integer too.
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(numel, static_cast<std::int64_t>(dtype_size(n.dtype)), &bytes))
      fail(n.loc, fmt::format("the {} has {} elements of {}: more than 2^63 bytes",
                              node_description(*ir, static_cast<NodeId>(i)), numel, dtype_name(n.dtype)));
    if (n.kind == OpKind::DimValue && n.dtype == DType::i32 && bound.dims.at(n.dim) > INT32_MAX)
      fail(n.loc, fmt::format("dim {} = {} is used as a value beside an i32 tensor, but does not fit i32; cast the "
                              "tensor to i64 first", n.dim, bound.dims.at(n.dim)));
    bound.shapes.push_back(std::move(shape));
  }
  bound.ir = std::move(ir);
  return bound;
}

namespace {

// Binds one tensor's dims from its concrete shape, recording where each came from.
void bind_shape(const std::string& who, const Shape& declared, DType dtype, const std::vector<std::int64_t>& actual,
                std::map<std::string, DimValue>& given, std::vector<std::pair<std::string, std::int64_t>>& deferred,
                std::vector<const DimExpr*>& deferred_exprs) {
  KILN_CHECK(actual.size() == declared.size(), ShapeError,
             "{} must have rank {} ({}[{}]) but has shape [{}]", who, declared.size(), dtype_name(dtype),
             symbolic_shape(declared), concrete_shape(actual));
  for (std::size_t i = 0; i < declared.size(); ++i) {
    std::string source = fmt::format("{}.shape[{}]", who, i);
    const DimExpr& e = declared[i];
    if (auto c = e.as_constant()) {
      KILN_CHECK(actual[i] == *c, ShapeError, "{} must be {}, got {}", source, *c, actual[i]);
    } else if (e.kind() == DimExpr::Kind::Dim) {
      auto [it, inserted] = given.try_emplace(e.name(), DimValue{actual[i], source});
      KILN_CHECK(inserted || it->second.value == actual[i], ShapeError, "dim {} is {} from {} but {} from {}",
                 e.name(), it->second.value, it->second.source, actual[i], source);
    } else {
      deferred.emplace_back(source, actual[i]);
      deferred_exprs.push_back(&e);
    }
  }
}

}  // namespace

BoundIr bind_from_shapes(std::shared_ptr<const Ir> ir, const std::vector<std::vector<std::int64_t>>& param_shapes,
                         const std::vector<std::vector<std::int64_t>>& output_shapes) {
  KILN_ASSERT(ir != nullptr, "bind of a null Ir");
  KILN_CHECK(param_shapes.size() == ir->params.size(), ArgumentError, "op {} takes {} inputs, got {} shapes",
             ir->op_name, ir->params.size(), param_shapes.size());
  KILN_CHECK(output_shapes.empty() || output_shapes.size() == ir->outputs.size(), ArgumentError,
             "op {} has {} outputs, got {} shapes", ir->op_name, ir->outputs.size(), output_shapes.size());
  std::map<std::string, DimValue> given;
  std::vector<std::pair<std::string, std::int64_t>> deferred;
  std::vector<const DimExpr*> deferred_exprs;
  for (std::size_t i = 0; i < ir->params.size(); ++i) {
    const Param& p = ir->params[i];
    if (!p.is_tensor) continue;
    bind_shape(p.name, p.shape, p.dtype, param_shapes[i], given, deferred, deferred_exprs);
  }
  for (std::size_t i = 0; i < output_shapes.size(); ++i) {
    const Node& n = ir->node(ir->outputs[i].node);
    bind_shape(ir->outputs[i].name, n.shape, n.dtype, output_shapes[i], given, deferred, deferred_exprs);
  }
  BoundIr bound = ir::bind(std::move(ir), given);
  for (std::size_t i = 0; i < deferred.size(); ++i) {
    std::int64_t want = deferred_exprs[i]->evaluate(bound.dims);
    KILN_CHECK(want == deferred[i].second, ShapeError, "{} must be {} = {}, got {}", deferred[i].first,
               deferred_exprs[i]->str(), want, deferred[i].second);
  }
  return bound;
}

std::string print(const BoundIr& bound) {
  const Ir& ir = *bound.ir;
  std::string dims_line = "  dims:";
  for (const auto& d : ir.dims)
    dims_line += fmt::format(" {}={}{}", d.name, bound.dims.at(d.name), d.dynamic ? " (dyn)" : "");
  dims_line += "\n";
  return body_text(ir, [&bound](NodeId id) { return concrete_shape(bound.shape(id)); }, dims_line);
}

}  // namespace kiln::ir
