// [Note: how the checker types an op]
// Declarations (dims, consts, ins) are processed first, whatever their order in
// the op; then lets and outs in source order, each one a statement: an error
// inside a statement is reported and the statement's name is marked poisoned,
// so later uses of it stay quiet instead of cascading, and checking goes on
// with the next statement. Literals (and consts used in expressions) stay
// untyped "weak" values until they meet a typed operand, whose dtype they take,
// as in PyTorch: `2.0 * x` is f32 when x is. Keyword arguments are
// compile-time values, evaluated here; that is why the Ir has concrete axes,
// strides and probabilities while dims stay symbolic.
#include "generator/frontend/checker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "generator/frontend/parser.h"

namespace kiln {

namespace {

using ast::Expr;
using ast::ExprKind;
using ir::DimExpr;
using ir::Node;
using ir::NodeId;
using ir::OpKind;
using ir::Shape;
using ir::PadAttrs;
using ir::PadMode;
using ir::SourceLoc;

// Thrown once a statement's error has been reported.
struct Abort {};

// Weak integers are exact: literals and const arithmetic are 128-bit, bounded to
// what some 64-bit type can hold in magnitude; the dtype a value meets checks its range.
using Int128 = __int128;
constexpr Int128 kMaxWeakInt = static_cast<Int128>(UINT64_MAX);

// The smallest magnitude that rounds to infinity in a float format with `mantissa`
// explicit bits and largest exponent `emax` (round to nearest even): the largest finite
// value plus half an ulp. f32: 2^128 - 2^103; f16: 65520; bf16: 2^128 - 2^119.
double overflow_threshold(DType dtype) {
  switch (dtype) {
    case DType::f16: return 65520.0;
    case DType::bf16: return std::ldexp(1.0, 128) - std::ldexp(1.0, 119);
    case DType::f64: return INFINITY;
    default: return std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
  }
}
const char* largest_finite(DType dtype) {
  switch (dtype) {
    case DType::f16: return "65504";
    case DType::bf16: return "3.3895314e+38";
    default: return "3.4028235e+38";
  }
}

std::string or_else(std::string hint, const char* otherwise) { return hint.empty() ? otherwise : hint; }

std::string int_text(Int128 v) {   // |v| <= 2^64-1
  const bool negative = v < 0;
  return fmt::format("{}{}", negative ? "-" : "", static_cast<std::uint64_t>(negative ? -v : v));
}

// The range of an integer dtype.
Int128 int_min(DType t) {
  return t == DType::i32 ? INT32_MIN : t == DType::i64 ? static_cast<Int128>(INT64_MIN) : 0;
}
Int128 int_max(DType t) {
  return t == DType::i32 ? INT32_MAX : t == DType::i64 ? static_cast<Int128>(INT64_MAX) : static_cast<Int128>(UINT64_MAX);
}

std::string at(SourceLoc loc) { return fmt::format("{}:{}", loc.line, loc.column); }

std::optional<DType> parse_dtype(const std::string& s) {
  if (s == "f32") return DType::f32;
  if (s == "f16") return DType::f16;
  if (s == "bf16") return DType::bf16;
  if (s == "f64") return DType::f64;
  if (s == "i32") return DType::i32;
  if (s == "i64") return DType::i64;
  if (s == "u64") return DType::u64;
  if (s == "bool") return DType::boolean;
  return std::nullopt;
}

bool is_integer(DType t) { return t == DType::i32 || t == DType::i64 || t == DType::u64; }

// [Note: type promotion]
// Where two typed operands of an elementwise op differ, PyTorch's promotion for bool and for
// integers meeting floats (docs/semantics.md, "Type promotion"): a bool meets a number as that
// number's type (`mask * x`), an integer meets a float as the float (`i32 + f32` is f32), and i32
// meets i64 as i64. Floats of different types (f16 + f32), and u64 with a signed integer, stay an
// error that asks for a cast: kiln keeps a 16-bit computation 16-bit unless the spec says
// otherwise, and PyTorch has no u64 promotion either. A weak literal takes the type it meets; a
// float literal meeting an integer or bool tensor makes it f32 (PyTorch's default float type), an
// integer literal meeting a bool tensor makes it i64.
std::optional<DType> promoted(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::boolean) return b;
  if (b == DType::boolean) return a;
  if (is_integer(a) && dtype_is_float(b)) return b;
  if (dtype_is_float(a) && is_integer(b)) return a;
  if ((a == DType::i32 && b == DType::i64) || (a == DType::i64 && b == DType::i32)) return DType::i64;
  return std::nullopt;
}

std::string shape_text(const Shape& shape) {
  std::string out;
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + shape[i].str();
  return out;
}

std::string type_text(DType dtype, const Shape& shape) {
  if (shape.empty()) return fmt::format("scalar {}", dtype_name(dtype));
  return fmt::format("{}[{}]", dtype_name(dtype), shape_text(shape));
}

// A checked expression: a graph node, or a weak (untyped) compile-time value.
struct Value {
  enum class Kind : std::uint8_t { Node, Int, Float, Bool } kind = Kind::Node;
  NodeId node = -1;
  Int128 integer = 0;   // Int (exact), Bool (0/1)
  double real = 0;      // Float
  std::string text;   // how the user wrote it, for messages
  SourceLoc loc;
  bool is_node() const { return kind == Kind::Node; }
};

struct Symbol {
  enum class Kind : std::uint8_t { Dim, Const, Input, Let, Output } kind = Kind::Dim;
  SourceLoc loc;
  Value value;            // consts: weak value; inputs/lets/outs: their value
  bool poisoned = false;  // its statement failed: uses stay silent
  bool used = false;
};

const char* symbol_kind_name(Symbol::Kind k) {
  switch (k) {
    case Symbol::Kind::Dim: return "a dim";
    case Symbol::Kind::Const: return "a const";
    case Symbol::Kind::Input: return "an input";
    case Symbol::Kind::Let: return "a let";
    case Symbol::Kind::Output: return "an output";
  }
  return "?";
}

// A compile-time value (a keyword argument, a const, a folded weak expression).
struct Constant {
  Value::Kind kind = Value::Kind::Int;   // Int, Float or Bool
  Int128 integer = 0;                    // Int (exact), Bool (0/1)
  double real = 0;                       // Float
};

Constant constant_of(const Value& v) { return {v.kind, v.integer, v.real}; }

double to_double(const Constant& c) {
  return c.kind == Value::Kind::Float ? c.real : static_cast<double>(c.integer);   // rounds to nearest
}

std::string describe_const(const Constant& c) {
  if (c.kind == Value::Kind::Bool) return c.integer != 0 ? "true" : "false";
  if (c.kind == Value::Kind::Int) return int_text(c.integer);
  return fmt::format("{}", c.real);
}

// An exact integer as the public ConstValue (|v| <= 2^64-1).
ConstValue const_value_of(Int128 v) {
  return ConstValue::integer(v < 0, static_cast<std::uint64_t>(v < 0 ? -v : v));
}

const std::set<std::string> kFloatUnary = {"exp",  "log",  "sqrt",  "rsqrt", "tanh", "sigmoid",
                                           "gelu", "silu", "log1p", "expm1", "erf"};

// [Note: activation functions]
// PyTorch's activations are written in the IR's own elementwise ops (activation() below), so the
// reference, the emitter and fusion take them with nothing new. f16 and bf16 inputs are cast to
// f32 first and the result back once (PyTorch computes them in f32, its "opmath", and rounds once;
// kiln rounds every 16-bit node, so computing the steps in the 16-bit type would round each).
// Each is docs/semantics.md's formula, which is PyTorch's CUDA kernel's:
//   leaky_relu(x, negative_slope=0.01)  where(x > 0, x, x * negative_slope)
//   elu(x, alpha=1.0)                   where(x > 0, x, alpha * expm1(x))
//   selu(x)                             where(x > 0, x * scale, expm1(x) * (alpha * scale)), PyTorch's
//                                       alpha and scale
//   softplus(x, beta=1.0, threshold=20.0)  where(x * beta > threshold, x, log1p(exp(x * beta)) / beta)
//   mish(x)                             x * tanh(log1p(exp(x)))
//   hardtanh(x, min_val=-1.0, max_val=1.0), relu6(x) = hardtanh(x, 0, 6), clamp(x, min=, max=)
//                                       minimum(maximum(x, min), max): NaN stays NaN
//   hardsigmoid(x)                      minimum(maximum(x + 3, 0), 6) / 6
//   hardswish(x)                        x * minimum(maximum(x + 3, 0), 6) / 6
//   celu(x, alpha=1.0)                  where(x > 0, x, expm1(x * (1 / alpha)) * alpha)
//   logsigmoid(x)                       minimum(0, x) - log1p(exp(-abs(x)))
//   hardshrink(x, lambd=0.5)            where(x >= -lambd and x <= lambd, 0, x)
//   softshrink(x, lambd=0.5)            where(x > lambd, x - lambd, where(x < -lambd, x + lambd, x * 0))
//   softsign(x), tanhshrink(x)          x / (abs(x) + 1), x - tanh(x): PyTorch composes these of
//                                       tensor ops, each rounded to a 16-bit input's type, and so
//                                       does kiln (no f32 step for them)
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// Every function call() knows, for did-you-mean (keep in step with call()).
const std::vector<std::string> kFunctions = {
    "f32", "f16", "bf16", "f64", "i32", "i64", "u64", "bool", "abs", "exp", "log", "sqrt", "rsqrt", "tanh",
    "sigmoid", "relu", "gelu", "silu", "log1p", "expm1", "erf", "leaky_relu", "elu", "selu", "softplus", "mish",
    "hardtanh", "relu6", "hardsigmoid", "hardswish", "celu", "logsigmoid", "hardshrink", "softshrink", "softsign",
    "tanhshrink", "clamp", "not", "pow", "min", "max", "minimum", "maximum",
    "and", "or", "sum",
    "mean", "prod", "argmin", "argmax", "logsumexp", "cumsum", "cumprod", "cummax", "cummin", "softmax",
    "log_softmax", "where", "dropout", "matmul", "mm", "bmm", "dot", "linear", "outer", "einsum", "transpose",
    "permute", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "iota", "max_pool1d", "max_pool2d",
    "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "reshape", "view", "flatten", "squeeze", "unsqueeze",
    "pad", "concat", "cat", "gather", "take_along_axis", "triu", "tril", "group_norm", "var", "std", "any", "all",
    "expand", "broadcast_to"};

class Checker {
 public:
  Checker(const ast::OpDecl& op, std::shared_ptr<const SourceFile> source, const Consts& consts, Diagnostics& diagnostics)
      : op_(op), consts_(consts), diag_(diagnostics) {
    ir_ = std::make_shared<ir::Ir>();
    ir_->op_name = op.name;
    ir_->source = std::move(source);
    ir_->loc = op.loc;
  }

  std::shared_ptr<ir::Ir> run() {
    int errors_before = diag_.error_count();
    for (const auto& d : op_.dims) declare_dim(d);
    for (const auto& c : op_.consts) guarded([&] { declare_const(c); }, c.name);
    for (const auto& in : op_.inputs) guarded([&] { declare_input(in); }, in.name);
    bool any_output = false;
    for (const auto& b : op_.bindings) {
      any_output |= b.is_output;
      guarded([&] { binding(b); }, b.name);
    }
    if (!any_output)
      diag_.error(op_.loc, fmt::format("op '{}' has no outputs; add `out NAME = <expression>`", op_.name));
    // After an error the use that was meant may be in the failed statement: stay quiet.
    for (const auto& in : op_.inputs) {
      if (diag_.error_count() != errors_before) break;
      auto it = symbols_.find(in.name);
      if (it != symbols_.end() && it->second.kind == Symbol::Kind::Input && !it->second.used && !it->second.poisoned)
        diag_.warning(in.loc, fmt::format("input '{}' is never used", in.name));
    }
    // A launch reads a dyn dim's value from a tensor that has it as a whole extent (the runtime's
    // dyn sources): a dyn dim that no input or output has as one is an error at its declaration.
    for (const auto& d : op_.dims) {
      if (diag_.error_count() != errors_before) break;
      if (d.dynamic && !whole_extent_of_an_argument(d.name))
        diag_.error(d.loc, fmt::format("dim '{}' is dyn but no input or output has it as a whole extent, so a launch "
                                       "cannot read its value; make it a dim of some input or output, or drop `dyn`",
                                       d.name));
    }
    if (diag_.error_count() != errors_before) return nullptr;
    return ir_;
  }

 private:
  // Whether some tensor input or output has `dim` as one of its extents, the dim itself.
  bool whole_extent_of_an_argument(const std::string& dim) const {
    auto has = [&](const ir::Shape& shape) {
      return std::any_of(shape.begin(), shape.end(), [&](const ir::DimExpr& e) {
        return e.kind() == ir::DimExpr::Kind::Dim && e.name() == dim;
      });
    };
    for (const auto& p : ir_->params)
      if (p.is_tensor && has(p.shape)) return true;
    for (const auto& o : ir_->outputs)
      if (has(ir_->node(o.node).shape)) return true;
    return false;
  }

  // ------------------------------------------------------------ plumbing
  template <class Fn>
  void guarded(Fn&& fn, const std::string& name) {
    if (diag_.too_many()) return;
    try {
      fn();
    } catch (const Abort&) {
      auto [it, inserted] = symbols_.try_emplace(name);
      if (inserted || it->second.kind != Symbol::Kind::Dim) it->second.poisoned = true;
      if (inserted) it->second.kind = Symbol::Kind::Let;
    }
  }

  [[noreturn]] void fail(SourceLoc loc, std::string message) {
    diag_.error(loc, std::move(message));
    throw Abort{};
  }

  // "; did you mean 'x'?" naming the closest declared symbol of `kind` (any but a dim
  // when none is given), or "".
  std::string suggest_symbol(const std::string& name, std::optional<Symbol::Kind> kind) const {
    std::vector<std::string> names;
    for (const auto& [n, symbol] : symbols_)
      if (kind ? symbol.kind == *kind : symbol.kind != Symbol::Kind::Dim) names.push_back(n);
    return did_you_mean(name, names);
  }

  void declare(const std::string& name, SourceLoc loc, Symbol symbol) {
    auto it = symbols_.find(name);
    if (it != symbols_.end())
      fail(loc, fmt::format("duplicate name '{}': already declared as {} at {}", name,
                            symbol_kind_name(it->second.kind), at(it->second.loc)));
    symbol.loc = loc;
    symbols_.emplace(name, std::move(symbol));
  }

  NodeId add_node(Node node, bool from_tensor) {
    ir_->nodes.push_back(std::move(node));
    from_tensor_.push_back(from_tensor);
    return static_cast<NodeId>(ir_->nodes.size() - 1);
  }
  const Node& node(NodeId id) const { return ir_->nodes[static_cast<std::size_t>(id)]; }

  Value node_value(NodeId id, SourceLoc loc) {
    Value v;
    v.node = id;
    v.loc = loc;
    return v;
  }

  // ------------------------------------------------------------ declarations
  void declare_dim(const ast::DimDecl& d) {
    try {
      Symbol s;
      s.kind = Symbol::Kind::Dim;
      declare(d.name, d.loc, s);
      ir_->dims.push_back({d.name, d.default_value, d.dynamic, d.loc, d.fixed});
      // (Declared first: a bad value is one error, not one more at every use of the dim.)
      if (d.default_value && *d.default_value < 1)
        fail(d.value_loc, fmt::format("dim {} must be >= 1, got {}", d.name, *d.default_value));
    } catch (const Abort&) {
    }
  }

  void declare_const(const ast::ConstDecl& c) {
    DType dtype;
    if (c.type == "int" || c.type == "i64") dtype = DType::i64;
    else if (c.type == "f32") dtype = DType::f32;
    else if (c.type == "f64") dtype = DType::f64;
    else if (c.type == "bool") dtype = DType::boolean;
    else fail(c.type_loc, fmt::format("unknown const type '{}'{}", c.type,
                                      or_else(did_you_mean(c.type, {"int", "i64", "f32", "f64", "bool"}),
                                              "; expected int, f32, f64 or bool")));
    Constant v;
    SourceLoc where = c.loc;
    std::string origin;   // " (from -D N=5)" for a value given from outside
    auto given = consts_.find(c.name);
    if (given != consts_.end()) {
      origin = given->second.source().empty() ? " (given by the caller)" : fmt::format(" (from {})", given->second.source());
      v = given_const(c, dtype, given->second, origin);
    } else if (c.default_value) {
      where = c.default_value->loc;
      v = const_eval(*c.default_value, fmt::format("the default of const {}", c.name));
      if (dtype == DType::boolean && v.kind != Value::Kind::Bool)
        fail(where, fmt::format("const {} is bool but its value is a number; use true or false", c.name));
      if (dtype != DType::boolean && v.kind == Value::Kind::Bool)
        fail(where, fmt::format("const {} is {} but its value is a bool", c.name, c.type));
      if (dtype == DType::i64 && v.kind != Value::Kind::Int)
        fail(where, fmt::format("const {} is int but its value {} is not an integer", c.name, describe_const(v)));
    } else {
      fail(c.loc, fmt::format("const {} has no default and no value was given; write `{}: {} = VALUE` or pass -D {}=VALUE",
                              c.name, c.name, c.type, c.name));
    }
    ConstValue ir_value = v.kind == Value::Kind::Bool ? ConstValue(v.integer != 0) : const_value_of(v.integer);
    if (dtype == DType::i64 && (v.integer < INT64_MIN || v.integer > INT64_MAX))
      fail(where, fmt::format("const {} = {}{} is out of range for int (i64: -9223372036854775808 .. 9223372036854775807)",
                              c.name, describe_const(v), origin));
    if (dtype_is_float(dtype)) {
      const double d = to_double(v);
      if (!(std::fabs(d) < overflow_threshold(dtype)))
        fail(where, fmt::format("const {} = {}{} is out of range for {} (largest finite {})", c.name, describe_const(v),
                                origin, dtype_name(dtype), largest_finite(dtype)));
      ir_value = ConstValue(d);
    }
    Symbol s;
    s.kind = Symbol::Kind::Const;
    s.value.kind = v.kind;
    s.value.integer = v.integer;
    s.value.real = v.real;
    s.value.text = c.name;
    declare(c.name, c.loc, s);
    ir_->consts.push_back({c.name, dtype, ir_value, c.loc});
  }

  // A value given from outside (-D, Bindings, Op::with_consts) for const `c` of type
  // `dtype`: an int const takes an integer only; a float const a finite float or an
  // integer; a bool const true/false or 0/1 (the C interface passes numbers).
  Constant given_const(const ast::ConstDecl& c, DType dtype, const ConstValue& g, const std::string& origin) {
    const std::string type = c.type;
    Constant v;
    if (g.is_integer()) {
      v.kind = Value::Kind::Int;
      v.integer = g.negative() ? -static_cast<Int128>(g.magnitude()) : static_cast<Int128>(g.magnitude());
    } else if (g.is_bool()) {
      v.kind = Value::Kind::Bool;
      v.integer = g.magnitude() != 0;
    } else {
      v.kind = Value::Kind::Float;
      v.real = g.float_value();
      if (!std::isfinite(v.real))
        fail(c.loc, fmt::format("const {} = {}{} is not finite; a const value must be a finite number", c.name, g.str(),
                                origin));
    }
    if (dtype == DType::boolean) {
      const bool zero_one = (v.kind == Value::Kind::Int && (v.integer == 0 || v.integer == 1)) ||
                            (v.kind == Value::Kind::Float && (v.real == 0 || v.real == 1));
      if (v.kind != Value::Kind::Bool && !zero_one)
        fail(c.loc, fmt::format("const {} is bool but was given {}{}; pass true or false", c.name, g.str(), origin));
      return {Value::Kind::Bool, v.kind == Value::Kind::Float ? Int128(v.real != 0) : v.integer, 0};
    }
    if (v.kind == Value::Kind::Bool)
      fail(c.loc, fmt::format("const {} is {} but was given the bool {}{}; only a bool const takes true or false", c.name,
                              type, g.str(), origin));
    if (dtype == DType::i64 && v.kind != Value::Kind::Int) {
      if (std::trunc(v.real) == v.real && std::fabs(v.real) < 1e19)
        fail(c.loc, fmt::format("const {} is int but was given the float {}{}; an int const takes an integer, e.g. {:.0f}",
                                c.name, g.str(), origin, v.real));
      fail(c.loc, fmt::format("const {} is int but was given {}{}, which is not an integer", c.name, g.str(), origin));
    }
    return v;
  }

  DType resolve_dtype(const ast::TypeRef& t) {
    auto dtype = parse_dtype(t.dtype);
    if (!dtype)
      fail(t.loc, fmt::format("unknown type '{}'{}", t.dtype,
                              or_else(did_you_mean(t.dtype, {"f32", "f16", "bf16", "f64", "i32", "i64", "u64", "bool"}),
                                      "; expected one of f32, f16, bf16, f64, i32, i64, u64, bool")));
    return *dtype;
  }

  Shape resolve_shape(const ast::TypeRef& t, const std::string& owner) {
    Shape shape;
    if (t.shape.empty())
      fail(t.loc, fmt::format("the shape of {} is empty; a tensor needs at least one dim (drop the [] for a scalar)", owner));
    for (const auto& e : t.shape) {
      if (!e.is_name && e.op == 0) {
        if (e.value < 1) fail(e.loc, fmt::format("a dim in the shape of {} must be >= 1, got {}", owner, e.value));
        shape.push_back(DimExpr::constant(e.value));
        continue;
      }
      shape.push_back(resolve_extent(e, owner));
      if (auto c = shape.back().as_constant(); c && *c < 1)
        fail(e.loc, fmt::format("the extent {} in the shape of {} is {}; extents must be >= 1", extent_text(e), owner, *c));
    }
    return shape;
  }

  // a op b of two extents ('+', '-', '*', or '/': the floor), `where` naming the shape in messages.
  DimExpr extent_arithmetic(char op, const DimExpr& a, const DimExpr& b, SourceLoc loc, const std::string& where) {
    switch (op) {
      case '+': return a + b;
      case '-': return a - b;
      case '*': return a * b;
      default:
        if (b.as_constant() == 0) fail(loc, fmt::format("division by zero in {}", where));
        return floor_div(a, b);
    }
  }

  // An extent as the spec wrote it ("2 * D"), for messages.
  static std::string extent_text(const ast::TypeRef::Entry& e) {
    if (e.op == 0) return e.is_name ? e.name : std::to_string(e.value);
    const auto side = [](const ast::TypeRef::Entry& x) { return x.op ? "(" + extent_text(x) + ")" : extent_text(x); };
    return fmt::format("{} {} {}", side(e.operands[0]), e.op, side(e.operands[1]));
  }

  // A declared extent: a dim, an integer, or arithmetic of them ('/' divides with the floor).
  DimExpr resolve_extent(const ast::TypeRef::Entry& e, const std::string& owner) {
    if (e.op != 0)
      return extent_arithmetic(e.op, resolve_extent(e.operands[0], owner), resolve_extent(e.operands[1], owner), e.loc,
                               "the shape of " + owner);
    if (!e.is_name) return DimExpr::constant(e.value);
    auto it = symbols_.find(e.name);
    if (it == symbols_.end()) {
      std::string hint = suggest_symbol(e.name, Symbol::Kind::Dim);
      fail(e.loc, hint.empty() ? fmt::format("unknown dim '{}' in the shape of {}; declare it with `dims {} = ...`", e.name,
                                             owner, e.name)
                               : fmt::format("unknown dim '{}' in the shape of {}{}", e.name, owner, hint));
    }
    if (it->second.kind != Symbol::Kind::Dim)
      fail(e.loc, fmt::format("'{}' in the shape of {} is {}, not a dim", e.name, owner, symbol_kind_name(it->second.kind)));
    return DimExpr::dim(e.name);
  }

  void declare_input(const ast::InputDecl& in) {
    DType dtype = resolve_dtype(in.type);
    Shape shape;
    if (in.type.has_shape) shape = resolve_shape(in.type, fmt::format("input {}", in.name));
    auto it = symbols_.find(in.name);
    if (it != symbols_.end())
      fail(in.loc, fmt::format("duplicate name '{}': already declared as {} at {}", in.name,
                               symbol_kind_name(it->second.kind), at(it->second.loc)));
    Node n;
    n.kind = in.type.has_shape ? OpKind::Input : OpKind::Scalar;
    n.dtype = dtype;
    n.shape = shape;
    n.name = in.name;
    n.loc = in.loc;
    NodeId id = add_node(std::move(n), in.type.has_shape);
    ir_->params.push_back({in.name, id, in.type.has_shape, dtype, shape, in.loc});
    Symbol s;
    s.kind = Symbol::Kind::Input;
    s.value = node_value(id, in.loc);
    declare(in.name, in.loc, s);
  }

  void binding(const ast::Binding& b) {
    if (!b.value)
      fail(b.loc, fmt::format("output '{}' is declared but never defined; write `out {} = <expression>`", b.name, b.name));
    if (symbols_.count(b.name)) {
      const Symbol& prev = symbols_.at(b.name);
      fail(b.loc, fmt::format("duplicate name '{}': already declared as {} at {}", b.name, symbol_kind_name(prev.kind),
                              at(prev.loc)));
    }
    Value v = expr(*b.value);
    if (b.is_output) {
      if (!v.is_node())
        fail(b.value->loc, fmt::format("output '{}' is a constant; an output must be computed from the inputs", b.name));
      if (!from_tensor_[static_cast<std::size_t>(v.node)])
        fail(b.value->loc, fmt::format("output '{}' is a scalar computed from scalar inputs; outputs must be tensors", b.name));
      if (b.type) {
        DType dtype = resolve_dtype(*b.type);
        Shape shape = b.type->has_shape ? resolve_shape(*b.type, fmt::format("output {}", b.name)) : Shape{};
        const Node& n = node(v.node);
        if (dtype != n.dtype || shape != n.shape)
          fail(b.type->loc, fmt::format("output '{}' is declared {} but its expression gives {}", b.name,
                                        type_text(dtype, shape), type_text(n.dtype, n.shape)));
      }
      ir_->outputs.push_back({b.name, v.node, b.loc});
    }
    if (v.is_node() && ir_->nodes[static_cast<std::size_t>(v.node)].name.empty())
      ir_->nodes[static_cast<std::size_t>(v.node)].name = b.name;
    Symbol s;
    s.kind = b.is_output ? Symbol::Kind::Output : Symbol::Kind::Let;
    s.value = v;
    s.used = true;
    declare(b.name, b.loc, s);
  }

  // ------------------------------------------------------------ compile-time values
  Constant const_eval(const Expr& e, const std::string& what) {
    switch (e.kind) {
      case ExprKind::Int: return {Value::Kind::Int, static_cast<Int128>(e.int_value), 0};
      case ExprKind::Float: return {Value::Kind::Float, 0, e.float_value};
      case ExprKind::Bool: return {Value::Kind::Bool, e.bool_value ? 1 : 0, 0};
      case ExprKind::Name: {
        auto it = symbols_.find(e.text);
        if (it == symbols_.end())
          fail(e.loc, fmt::format("unknown name '{}' in {}{}", e.text, what, suggest_symbol(e.text, Symbol::Kind::Const)));
        if (it->second.poisoned) throw Abort{};
        if (it->second.kind != Symbol::Kind::Const)
          fail(e.loc, fmt::format("{} needs a compile-time value (a literal or a const), but '{}' is {}", what, e.text,
                                  symbol_kind_name(it->second.kind)));
        it->second.used = true;
        return constant_of(it->second.value);
      }
      case ExprKind::Unary: {
        Constant v = const_eval(*e.args[0], what);
        if (v.kind == Value::Kind::Bool) fail(e.loc, "cannot negate a bool");
        v.integer = -v.integer;   // |integer| <= 2^64-1: no overflow in 128 bits
        v.real = -v.real;
        return v;
      }
      case ExprKind::Binary: {
        Constant a = const_eval(*e.args[0], what);
        Constant b = const_eval(*e.args[1], what);
        return fold(e.binary_op, a, b, e.loc);
      }
      case ExprKind::String:
        fail(e.loc, fmt::format("{} cannot be a string", what));
      case ExprKind::List:
        fail(e.loc, fmt::format("{} cannot be a list", what));
      case ExprKind::Call:
        fail(e.loc, fmt::format("{} needs a compile-time value (a literal or a const), not a call to {}()", what, e.text));
    }
    fail(e.loc, "unsupported expression");
  }

  // Integers fold exactly (128-bit, bounded to 64-bit magnitudes); a float on either
  // side makes the result a float; '/' is true division, as in Python.
  Constant fold(ast::BinaryOp op, Constant a, Constant b, SourceLoc loc) {
    using ast::BinaryOp;
    bool comparison = op >= BinaryOp::Eq;
    if (!comparison && (a.kind == Value::Kind::Bool || b.kind == Value::Kind::Bool))
      fail(loc, fmt::format("'{}' is not defined on bool values", ast::binary_op_spelling(op)));
    const bool exact = a.kind != Value::Kind::Float && b.kind != Value::Kind::Float;   // Int (or Bool, compared)
    if (comparison) {
      bool r = false;
      if (exact) {
        const Int128 x = a.integer, y = b.integer;
        r = op == BinaryOp::Eq ? x == y : op == BinaryOp::Ne ? x != y : op == BinaryOp::Lt ? x < y
          : op == BinaryOp::Le ? x <= y : op == BinaryOp::Gt ? x > y : x >= y;
      } else {
        const double x = to_double(a), y = to_double(b);
        r = op == BinaryOp::Eq ? x == y : op == BinaryOp::Ne ? x != y : op == BinaryOp::Lt ? x < y
          : op == BinaryOp::Le ? x <= y : op == BinaryOp::Gt ? x > y : x >= y;
      }
      return {Value::Kind::Bool, r ? 1 : 0, 0};
    }
    if (op == BinaryOp::Div) {
      if (to_double(b) == 0) fail(loc, "division by zero in a constant expression");
      const double q = to_double(a) / to_double(b);
      if (!std::isfinite(q)) fail(loc, "constant expression overflows");
      return {Value::Kind::Float, 0, q};
    }
    if (exact) {
      Int128 r = 0;
      const bool overflow = op == BinaryOp::Add   ? __builtin_add_overflow(a.integer, b.integer, &r)
                            : op == BinaryOp::Sub ? __builtin_sub_overflow(a.integer, b.integer, &r)
                                                  : __builtin_mul_overflow(a.integer, b.integer, &r);
      if (overflow || r > kMaxWeakInt || r < -kMaxWeakInt)
        fail(loc, fmt::format("integer constant expression {} {} {} overflows 64 bits", int_text(a.integer),
                              ast::binary_op_spelling(op), int_text(b.integer)));
      return {Value::Kind::Int, r, 0};
    }
    const double x = to_double(a), y = to_double(b);
    const double r = op == BinaryOp::Add ? x + y : op == BinaryOp::Sub ? x - y : x * y;
    if (!std::isfinite(r)) fail(loc, "constant expression overflows");
    return {Value::Kind::Float, 0, r};
  }

  std::int64_t as_int(const Constant& v, SourceLoc loc, const std::string& what) {
    if (v.kind != Value::Kind::Int) fail(loc, fmt::format("{} expects an integer, got {}", what, describe_const(v)));
    if (v.integer < INT64_MIN || v.integer > INT64_MAX)
      fail(loc, fmt::format("{} {} is out of range (a 64-bit signed integer)", what, int_text(v.integer)));
    return static_cast<std::int64_t>(v.integer);
  }

  // ------------------------------------------------------------ expressions
  Value expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Int:
      case ExprKind::Float:
      case ExprKind::Bool: return weak(const_eval(e, ""), e.text, e.loc);
      case ExprKind::String:
        fail(e.loc, "a string is only allowed as the value of layout= or precision=, or as einsum()'s equation");
      case ExprKind::List:
        fail(e.loc, "a list is only allowed as a keyword value (axis=[0, 1]) or as the order of permute()");
      case ExprKind::Name: return name(e);
      case ExprKind::Unary: return negate(expr(*e.args[0]), e.loc);
      case ExprKind::Binary: {
        Value a = expr(*e.args[0]);
        Value b = expr(*e.args[1]);
        return binary(e.binary_op, a, b, e.loc);
      }
      case ExprKind::Call: return call(e);
    }
    fail(e.loc, "unsupported expression");
  }

  static Value weak(const Constant& c, std::string text, SourceLoc loc) {
    Value v;
    v.kind = c.kind;
    v.integer = c.integer;
    v.real = c.real;
    v.text = std::move(text);
    v.loc = loc;
    return v;
  }

  Value name(const Expr& e) {
    auto it = symbols_.find(e.text);
    if (it == symbols_.end()) fail(e.loc, fmt::format("unknown name '{}'{}", e.text, suggest_symbol(e.text, std::nullopt)));
    Symbol& s = it->second;
    if (s.poisoned) throw Abort{};
    if (s.kind == Symbol::Kind::Dim) return dim_value(e);
    s.used = true;
    Value v = s.value;
    v.loc = e.loc;
    if (!v.is_node()) v.text = e.text;
    return v;
  }

  // [Note: dims as values]
  // A dim written in an expression is the extent it is bound to: `sum(x, axis=1) / N` is
  // PyTorch's `x.sum(1) / x.shape[1]`. It is a value of the op, not a constant: the checker folds
  // nothing with it (dims bind after checking). Like the Python int it stands for, a bare dim is
  // weak (unify): it takes the type of the typed operand it meets (`h * N` is f16, computed with
  // N as an f32 constant as literals are; `i * N` is i32), and is i64 on its own or beside a bool
  // or a literal (`N - 1` is i64, which then promotes as an i64 scalar does). The emitter writes the
  // bound extent as a literal, so only a specialized dim can be a value: a dyn dim's would be a
  // kernel argument of every kernel that reads it, which no family takes yet (generic_dims keeps
  // a dim used as a value specialized).
  Value dim_value(const Expr& e) {
    const ir::DimDecl* decl = ir_->find_dim(e.text);
    if (decl == nullptr) throw Abort{};   // its declaration failed and said why
    if (decl->dynamic)
      fail(e.loc, fmt::format("'{}' is a dyn dim; only a specialized dim can be used as a value (its extent) "
                              "yet; declare it without dyn", e.text));
    return dim_value_node(e.text, e.loc);
  }
  // The extent of specialized dim `name` as an i64 value (weak, as PyTorch's x.shape[1]).
  Value dim_value_node(const std::string& name, SourceLoc loc) {
    Node n;
    n.kind = OpKind::DimValue;
    n.dtype = DType::i64;
    n.dim = name;
    n.loc = loc;
    return node_value(add_node(std::move(n), false), loc);
  }

  Value negate(Value v, SourceLoc loc) {
    if (!v.is_node()) {
      if (v.kind == Value::Kind::Bool) fail(loc, "cannot negate a bool; use not(x)");
      v.integer = -v.integer;   // |integer| <= 2^64-1: no overflow in 128 bits
      v.real = -v.real;
      v.text = "-" + v.text;
      v.loc = loc;
      return v;
    }
    const Node& n = node(v.node);
    if (n.dtype == DType::boolean) fail(loc, "cannot negate a bool tensor; use not(x)");
    if (n.dtype == DType::u64) fail(loc, "cannot negate an unsigned u64 value; cast it first, e.g. i64(x)");
    return unary_node(OpKind::Neg, v.node, n.dtype, loc);
  }

  Value unary_node(OpKind kind, NodeId operand, DType dtype, SourceLoc loc) {
    Node n;
    n.kind = kind;
    n.dtype = dtype;
    n.shape = node(operand).shape;
    n.operands = {operand};
    n.loc = loc;
    bool from_tensor = from_tensor_[static_cast<std::size_t>(operand)];
    return node_value(add_node(std::move(n), from_tensor), loc);
  }

  // Gives a weak value the dtype it meets, as a Literal node.
  NodeId materialize(const Value& v, DType dtype, const std::string& context) {
    if (v.is_node()) return v.node;
    std::string tname(dtype_name(dtype));
    if (v.kind == Value::Kind::Bool && dtype != DType::boolean)
      fail(v.loc, fmt::format("bool {} cannot meet a {} value{}", v.text, tname, context));
    if (v.kind != Value::Kind::Bool && dtype == DType::boolean)
      fail(v.loc, fmt::format("number {} cannot meet a bool value{}", v.text, context));
    if (v.kind == Value::Kind::Float && is_integer(dtype))
      fail(v.loc, fmt::format("float {} cannot meet an integer {} value{}; cast the tensor to a float type, e.g. f32(x)",
                              v.text, tname, context));
    Node n;
    n.kind = OpKind::Literal;
    n.dtype = dtype;
    n.loc = v.loc;
    if (dtype == DType::boolean) {
      n.literal = ConstValue(v.integer != 0);
    } else if (is_integer(dtype)) {
      if (dtype == DType::u64 && v.integer < 0)
        fail(v.loc, fmt::format("negative {} cannot meet a u64 value{}", v.text, context));
      if (v.integer < int_min(dtype) || v.integer > int_max(dtype))
        fail(v.loc, fmt::format("{}{} is out of range for {} ({} .. {})", v.text, context, tname,
                                int_text(int_min(dtype)), int_text(int_max(dtype))));
      n.literal = const_value_of(v.integer);
    } else {
      // Float literals are emitted in their compute type (f32 for f16/bf16, PyTorch's
      // opmath), so one beyond f32 cannot be written; past f16/bf16's range the value
      // is still exact in f32, but storing a result near it gives inf: a warning.
      const double d = to_double(constant_of(v));
      const DType emitted = dtype == DType::f64 ? DType::f64 : DType::f32;
      if (!(std::fabs(d) < overflow_threshold(emitted)))
        fail(v.loc, fmt::format("{}{} is out of range for {} (largest finite {})", v.text, context, tname,
                                largest_finite(emitted)));
      if (emitted != dtype && !(std::fabs(d) < overflow_threshold(dtype)))
        diag_.warning(v.loc, fmt::format("{}{} overflows {} (largest finite {}); it is used as an f32 constant, but "
                                         "a result near it stored as {} becomes inf",
                                         v.text, context, tname, largest_finite(dtype), tname));
      n.literal = ConstValue(d);
    }
    return add_node(std::move(n), false);
  }

  // Where two dims that do not match (different dims, or a dim and a literal) have one value at
  // the dims' declared values (`dims C = 4` against a literal 4): why they still do not match, for
  // the error's end; "" where the values differ or a dim has no declared value.
  std::string same_value_hint(const DimExpr& a, const DimExpr& b) const {
    std::map<std::string, std::int64_t> values;
    for (const auto& d : ir_->dims)
      if (d.default_value) values[d.name] = *d.default_value;
    std::int64_t va = 0, vb = 0;
    try {
      va = a.evaluate(values);
      vb = b.evaluate(values);
    } catch (const std::exception&) {
      return "";
    }
    if (va != vb) return "";
    return fmt::format(" ({} and {} are both {} at the declared dims, but a dim matches only the same dim or "
                       "expression: each dim can be bound to another value)",
                       a.str(), b.str(), va);
  }

  Shape broadcast(const Shape& a, const Shape& b, SourceLoc loc, const std::string& what) {
    std::size_t rank = std::max(a.size(), b.size());
    Shape out(rank);
    for (std::size_t i = 0; i < rank; ++i) {
      const DimExpr* da = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
      const DimExpr* db = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
      if (!da) out[i] = *db;
      else if (!db) out[i] = *da;
      else if (*da == *db) out[i] = *da;
      else if (da->as_constant() == 1) out[i] = *db;
      else if (db->as_constant() == 1) out[i] = *da;
      else
        fail(loc, fmt::format("{}: shapes [{}] and [{}] do not broadcast ({} vs {}); dims must be equal or 1{}", what,
                              shape_text(a), shape_text(b), da->str(), db->str(), same_value_hint(*da, *db)));
    }
    return out;
  }

  // A tensor in dtype t: itself, or a cast of it.
  NodeId as_type(NodeId id, DType t, SourceLoc loc) {
    return node(id).dtype == t ? id : unary_node(OpKind::Cast, id, t, loc).node;
  }
  bool is_dim_value(NodeId id) const { return node(id).kind == OpKind::DimValue; }
  // A dim's value of type t ([Note: dims as values]): the node itself where it has that type, or
  // is the newest node and no let names it (the name just read), else a copy.
  NodeId dim_value_as(NodeId id, DType t) {
    if (node(id).dtype == t) return id;
    Node& n = ir_->nodes[static_cast<std::size_t>(id)];
    if (static_cast<std::size_t>(id) + 1 == ir_->nodes.size() && n.name.empty()) {
      n.dtype = t;
      return id;
    }
    Node copy = n;
    copy.dtype = t;
    copy.name.clear();
    return add_node(std::move(copy), false);
  }
  // The type a tensor takes to meet a weak value ([Note: type promotion]).
  NodeId meet_weak(NodeId id, const Value& weak, SourceLoc loc) {
    const DType t = node(id).dtype;
    if (weak.kind == Value::Kind::Float && (is_integer(t) || t == DType::boolean))
      return is_dim_value(id) ? dim_value_as(id, DType::f32) : as_type(id, DType::f32, loc);
    if (weak.kind == Value::Kind::Int && t == DType::boolean) return as_type(id, DType::i64, loc);
    return id;
  }
  // Brings two operands to one dtype: weak values take the other's, typed ones promote
  // ([Note: type promotion]).
  std::pair<NodeId, NodeId> unify(const Value& a, const Value& b, const std::string& what, SourceLoc loc) {
    if (!a.is_node()) {
      NodeId nb = meet_weak(b.node, a, loc);
      return {materialize(a, node(nb).dtype, fmt::format(" in {}", what)), nb};
    }
    if (!b.is_node()) {
      NodeId na = meet_weak(a.node, b, loc);
      return {na, materialize(b, node(na).dtype, fmt::format(" in {}", what))};
    }
    const bool dim_a = is_dim_value(a.node), dim_b = is_dim_value(b.node);
    if (dim_a != dim_b) {   // a dim's value is weak, as PyTorch's Python int x.shape[1]
      Value weak_int;
      weak_int.kind = Value::Kind::Int;
      const NodeId other = meet_weak(dim_a ? b.node : a.node, weak_int, loc);
      const NodeId dim = dim_value_as(dim_a ? a.node : b.node, node(other).dtype);
      return dim_a ? std::pair{dim, other} : std::pair{other, dim};
    }
    DType ta = node(a.node).dtype, tb = node(b.node).dtype;
    const std::optional<DType> t = promoted(ta, tb);
    if (!t)
      fail(loc, fmt::format("mismatched types in {}: {} and {}; cast one side explicitly, e.g. {}(x)", what,
                            dtype_name(ta), dtype_name(tb), dtype_name(ta)));
    return {as_type(a.node, *t, loc), as_type(b.node, *t, loc)};
  }

  Value binary_node(OpKind kind, const Value& a, const Value& b, DType result, SourceLoc loc, const std::string& what,
                    std::pair<NodeId, NodeId> ids) {
    Node n;
    n.kind = kind;
    n.dtype = result;
    n.shape = broadcast(node(ids.first).shape, node(ids.second).shape, loc, what);
    n.operands = {ids.first, ids.second};
    n.loc = loc;
    bool from_tensor = from_tensor_[static_cast<std::size_t>(ids.first)] || from_tensor_[static_cast<std::size_t>(ids.second)];
    return node_value(add_node(std::move(n), from_tensor), loc);
  }

  Value binary(ast::BinaryOp op, const Value& a, const Value& b, SourceLoc loc) {
    using ast::BinaryOp;
    if (!a.is_node() && !b.is_node()) {
      Constant r = fold(op, constant_of(a), constant_of(b), loc);
      return weak(r, describe_const(r), loc);
    }
    std::string what = fmt::format("'{}'", ast::binary_op_spelling(op));
    auto ids = unify(a, b, what, loc);
    DType dtype = node(ids.first).dtype;
    bool comparison = op >= BinaryOp::Eq;
    if (!comparison && dtype == DType::boolean)
      fail(loc, fmt::format("{} is not defined on bool; cast first, e.g. i32(x) or f32(x)", what));
    if (op == BinaryOp::Div && is_integer(dtype))
      fail(loc, fmt::format("'/' on integer type {} is not supported; cast to a float type first, e.g. f32(x)",
                            dtype_name(dtype)));
    if (comparison && dtype == DType::boolean && op != BinaryOp::Eq && op != BinaryOp::Ne)
      fail(loc, fmt::format("{} is not defined on bool; only == and != compare bools", what));
    static const OpKind kinds[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Eq,
                                   OpKind::Ne,  OpKind::Lt,  OpKind::Le,  OpKind::Gt,  OpKind::Ge};
    return binary_node(kinds[static_cast<int>(op)], a, b, comparison ? DType::boolean : dtype, loc, what, ids);
  }

  // ------------------------------------------------------------ calls
  // Checks the argument counts and keyword names of a call.
  void expect_args(const Expr& e, std::size_t min_pos, std::size_t max_pos, const std::vector<std::string>& keywords,
                   const char* positional_names) {
    if (e.args.size() < min_pos || e.args.size() > max_pos) {
      std::string count = min_pos == max_pos ? fmt::format("{}", min_pos) : fmt::format("{} to {}", min_pos, max_pos);
      // Too many: a PyTorch habit (unsqueeze(x, 1), sum(x, 1)); say which arguments go by name.
      std::string named;   // (the keywords that are not also positional: an activation's parameters are both)
      const std::string positional = std::string(", ") + positional_names + ",";
      for (const auto& k : keywords)
        if (positional.find(", " + k + ",") == std::string::npos) named += (named.empty() ? "" : ", ") + k + "=";
      const std::string hint = e.args.size() > max_pos && !named.empty()
                                   ? fmt::format("; the others are given by name: {}", named)
                                   : "";
      fail(e.loc, fmt::format("{}() takes {} positional argument{} ({}), got {}{}", e.text, count,
                              max_pos == 1 ? "" : "s", positional_names, e.args.size(), hint));
    }
    std::set<std::string> seen;
    for (const auto& kw : e.kwargs) {
      if (std::find(keywords.begin(), keywords.end(), kw.name) == keywords.end()) {
        std::string allowed;
        for (const auto& k : keywords) allowed += (allowed.empty() ? "" : ", ") + k;
        std::string hint = did_you_mean(kw.name, keywords);
        fail(kw.loc, keywords.empty() ? fmt::format("{}() takes no keyword arguments, got '{}'", e.text, kw.name)
                     : hint.empty()   ? fmt::format("{}() has no argument '{}'; expected one of: {}", e.text, kw.name, allowed)
                                      : fmt::format("{}() has no argument '{}'{}", e.text, kw.name, hint));
      }
      if (!seen.insert(kw.name).second) fail(kw.loc, fmt::format("argument '{}' given twice", kw.name));
    }
  }

  const ast::KeywordArg* keyword(const Expr& e, const char* name) {
    for (const auto& kw : e.kwargs)
      if (kw.name == name) return &kw;
    return nullptr;
  }

  std::optional<std::int64_t> int_kw(const Expr& e, const char* name) {
    const ast::KeywordArg* kw = keyword(e, name);
    if (!kw) return std::nullopt;
    return as_int(const_eval(*kw->value, fmt::format("{}=", name)), kw->value->loc, fmt::format("{}=", name));
  }

  std::optional<bool> bool_kw(const Expr& e, const char* name) {
    const ast::KeywordArg* kw = keyword(e, name);
    if (!kw) return std::nullopt;
    Constant v = const_eval(*kw->value, fmt::format("{}=", name));
    if (v.kind != Value::Kind::Bool)
      fail(kw->value->loc, fmt::format("{}= expects true or false, got {}", name, describe_const(v)));
    return v.integer != 0;
  }

  // An int or a list of ints (`axis=1`, `axis=[0, 2]`, `stride=[2, 1]`).
  std::optional<std::vector<std::int64_t>> ints_kw(const Expr& e, const char* name, SourceLoc* loc_out = nullptr) {
    const ast::KeywordArg* kw = keyword(e, name);
    if (!kw) return std::nullopt;
    if (loc_out) *loc_out = kw->value->loc;
    return int_list(*kw->value, fmt::format("{}=", name));
  }

  std::vector<std::int64_t> int_list(const Expr& value, const std::string& what) {
    std::vector<std::int64_t> out;
    if (value.kind != ExprKind::List) {
      out.push_back(as_int(const_eval(value, what), value.loc, what));
      return out;
    }
    for (const auto& item : value.args) out.push_back(as_int(const_eval(*item, what), item->loc, what));
    return out;
  }

  std::optional<std::string> string_kw(const Expr& e, const char* name) {
    const ast::KeywordArg* kw = keyword(e, name);
    if (!kw) return std::nullopt;
    if (kw->value->kind != ExprKind::String) fail(kw->value->loc, fmt::format("{}= expects a string", name));
    return kw->value->text;
  }

  // A positional argument that must be a tensor (rank >= 1).
  NodeId tensor_arg(const Expr& e, std::size_t index, const char* what = "a tensor") {
    const Expr& arg = *e.args[index];
    Value v = expr(arg);
    if (!v.is_node()) fail(arg.loc, fmt::format("{}() expects {}, got the constant {}", e.text, what, v.text));
    const Node& n = node(v.node);
    if (n.shape.empty())
      fail(arg.loc, fmt::format("{}() expects {}, got {}{}", e.text, what, type_text(n.dtype, n.shape),
                                n.name.empty() ? "" : fmt::format(" '{}'", n.name)));
    return v.node;
  }

  // A positional argument of an elementwise op: a tensor or a scalar input (not a bare constant).
  NodeId value_arg(const Expr& e, std::size_t index) {
    const Expr& arg = *e.args[index];
    Value v = expr(arg);
    if (!v.is_node())
      fail(arg.loc, fmt::format("{}() expects a tensor or a scalar input, got the constant {}", e.text, v.text));
    return v.node;
  }

  void need_float(const Expr& e, NodeId id) {
    DType t = node(id).dtype;
    if (!dtype_is_float(t))
      fail(e.loc, fmt::format("{}() needs a float type (f32, f16, bf16, f64), got {}; cast first, e.g. f32(x)", e.text,
                              dtype_name(t)));
  }

  int normalize_axis(std::int64_t axis, std::size_t rank, SourceLoc loc, const std::string& fn) {
    auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r)
      fail(loc, fmt::format("axis {} is out of range for {}() of a rank-{} tensor (expected {}..{})", axis, fn, rank, -r,
                            r - 1));
    return static_cast<int>(axis < 0 ? axis + r : axis);
  }

  SourceLoc kw_loc(const Expr& e, const char* name) {
    const ast::KeywordArg* kw = keyword(e, name);
    return kw ? kw->value->loc : e.loc;
  }

  Value call(const Expr& e) {
    const std::string& f = e.text;
    if (auto dtype = parse_dtype(f)) return cast(e, *dtype);
    if (f == "min" || f == "max") {
      if (e.args.size() == 2)
        return elementwise_binary(e, f == "min" ? OpKind::Minimum : OpKind::Maximum);
      return reduction(e, f == "min" ? OpKind::Min : OpKind::Max);
    }
    static const std::map<std::string, OpKind> unary = {
        {"abs", OpKind::Abs},     {"exp", OpKind::Exp},         {"log", OpKind::Log},   {"sqrt", OpKind::Sqrt},
        {"rsqrt", OpKind::Rsqrt}, {"tanh", OpKind::Tanh},       {"sigmoid", OpKind::Sigmoid},
        {"relu", OpKind::Relu},   {"gelu", OpKind::Gelu},       {"silu", OpKind::Silu}, {"not", OpKind::Not},
        {"log1p", OpKind::Log1p}, {"expm1", OpKind::Expm1},     {"erf", OpKind::Erf}};
    if (auto it = unary.find(f); it != unary.end()) return elementwise_unary(e, it->second);
    if (f == "clamp") return clamp(e);
    if (f == "var" || f == "std") return variance(e);
    if (f == "any" || f == "all") return any_all(e);
    static const std::set<std::string> activations = {
        "leaky_relu", "elu",        "selu",       "softplus",   "mish",     "hardtanh",  "relu6",     "hardsigmoid",
        "hardswish",  "celu",       "logsigmoid", "hardshrink", "softshrink", "softsign", "tanhshrink"};
    if (activations.count(f)) return activation(e);
    static const std::map<std::string, OpKind> binary_fns = {
        {"pow", OpKind::Pow}, {"minimum", OpKind::Minimum}, {"maximum", OpKind::Maximum},
        {"and", OpKind::And}, {"or", OpKind::Or}};
    if (auto it = binary_fns.find(f); it != binary_fns.end()) return elementwise_binary(e, it->second);
    static const std::map<std::string, OpKind> reductions = {
        {"sum", OpKind::Sum},   {"mean", OpKind::Mean},     {"prod", OpKind::Prod}, {"argmin", OpKind::Argmin},
        {"argmax", OpKind::Argmax}, {"logsumexp", OpKind::Logsumexp}};
    if (auto it = reductions.find(f); it != reductions.end()) return reduction(e, it->second);
    static const std::map<std::string, OpKind> scans = {
        {"cumsum", OpKind::Cumsum}, {"cumprod", OpKind::Cumprod}, {"cummax", OpKind::Cummax}, {"cummin", OpKind::Cummin}};
    if (auto it = scans.find(f); it != scans.end()) return scan(e, it->second);
    if (f == "softmax") return rownorm(e, OpKind::Softmax);
    if (f == "log_softmax") return rownorm(e, OpKind::LogSoftmax);
    if (f == "where") return where(e);
    if (f == "dropout") return dropout(e);
    if (f == "matmul" || f == "mm" || f == "bmm" || f == "dot") return matmul(e);
    if (f == "linear") return linear(e);
    if (f == "outer") return outer(e);
    if (f == "einsum") return einsum(e);
    if (f == "transpose") return transpose(e);
    if (f == "permute") return permute(e);
    for (int d = 1; d <= 3; ++d) {
      if (f == fmt::format("conv{}d", d)) return conv(e, d, false);
      if (f == fmt::format("conv_transpose{}d", d)) return conv(e, d, true);
    }
    if (f == "iota") return iota(e);
    if (f == "reshape" || f == "view") return reshape(e);
    if (f == "expand" || f == "broadcast_to") return expand(e);
    if (f == "flatten") return flatten(e);
    if (f == "squeeze" || f == "unsqueeze") return squeeze(e, f == "unsqueeze");
    if (f == "pad") return pad(e);
    if (f == "concat" || f == "cat") return concat(e);
    if (f == "gather" || f == "take_along_axis") return gather(e, f == "take_along_axis");
    if (f == "triu" || f == "tril") return triangle(e, f == "triu");
    if (f == "group_norm") return group_norm(e);
    for (int d = 1; d <= 3; ++d) {
      if (f == fmt::format("max_pool{}d", d)) return pool(e, OpKind::MaxPool, d);
      if (f == fmt::format("avg_pool{}d", d)) return pool(e, OpKind::AvgPool, d);
    }
    const std::string written_out = composition_hint(f);
    fail(e.loc, fmt::format("unknown function '{}'{}", f, written_out.empty() ? did_you_mean(f, kFunctions) : written_out));
  }

  // PyTorch's functions the language writes out as compositions the planner fuses (language.md,
  // "Row normalizations"): how to write `f`, or "".
  static std::string composition_hint(const std::string& f) {
    static const char* const kNorms[] = {"layer_norm", "rms_norm", "instance_norm", "batch_norm", "normalize"};
    if (std::find(std::begin(kNorms), std::end(kNorms), f) != std::end(kNorms))
      return "; norms other than group_norm() are written out, e.g. `d * rsqrt(mean(d * d, axis=-1, keepdims=true) + "
             "eps)` with `let d = x - mean(x, axis=-1, keepdims=true)`, and the planner fuses the composition into one "
             "kernel (docs/language.md, \"Row normalizations\")";
    if (f == "scaled_dot_product_attention" || f == "attention")
      return "; attention is written out, `matmul(softmax(matmul(q, transpose(k)) * scale, axis=-1), v)`, and the "
             "planner fuses it into one kernel on sm_90a (docs/language.md, \"Row normalizations\")";
    return "";
  }

  Value cast(const Expr& e, DType dtype) {
    expect_args(e, 1, 1, {}, "x");
    Value v = expr(*e.args[0]);
    if (!v.is_node()) {
      Value w = v;
      if (dtype == DType::boolean && w.kind != Value::Kind::Bool) {
        const bool nonzero = w.kind == Value::Kind::Float ? w.real != 0 : w.integer != 0;
        w = weak({Value::Kind::Bool, nonzero ? 1 : 0, 0}, w.text, w.loc);
      }
      return node_value(materialize(w, dtype, fmt::format(" in {}()", e.text)), e.loc);
    }
    if (node(v.node).dtype == dtype) return v;
    return unary_node(OpKind::Cast, v.node, dtype, e.loc);
  }

  Value elementwise_unary(const Expr& e, OpKind kind) {
    expect_args(e, 1, 1, {}, "x");
    NodeId x = value_arg(e, 0);
    DType t = node(x).dtype;
    if (kFloatUnary.count(e.text)) need_float(e, x);
    if (kind == OpKind::Not && t != DType::boolean)
      fail(e.loc, fmt::format("not() needs a bool value, got {}", dtype_name(t)));
    if ((kind == OpKind::Abs || kind == OpKind::Relu) && t == DType::boolean)
      fail(e.loc, fmt::format("{}() is not defined on bool", e.text));
    return unary_node(kind, x, t, e.loc);
  }

  Value elementwise_binary(const Expr& e, OpKind kind) {
    expect_args(e, 2, 2, {}, "a, b");
    Value a = expr(*e.args[0]);
    Value b = expr(*e.args[1]);
    if (!a.is_node() && !b.is_node())
      fail(e.loc, fmt::format("{}() needs at least one tensor or scalar input argument", e.text));
    std::string what = fmt::format("{}()", e.text);
    auto ids = unify(a, b, what, e.loc);
    DType t = node(ids.first).dtype;
    if (kind == OpKind::Pow && !dtype_is_float(t))
      fail(e.loc, fmt::format("pow() needs a float type (f32, f16, bf16, f64), got {}; cast first, e.g. f32(x)",
                              dtype_name(t)));
    if ((kind == OpKind::And || kind == OpKind::Or) && t != DType::boolean)
      fail(e.loc, fmt::format("{}() needs bool values, got {}; compare first, e.g. x > 0", e.text, dtype_name(t)));
    if ((kind == OpKind::Minimum || kind == OpKind::Maximum) && t == DType::boolean)
      fail(e.loc, fmt::format("{}() is not defined on bool", e.text));
    return binary_node(kind, a, b, t, e.loc, what, ids);
  }

  // ------------------------------------------------------------ activations ([Note: activation functions])
  Value weak_real(double v, SourceLoc loc) {
    Value c;
    c.kind = Value::Kind::Float;
    c.real = v;
    c.text = fmt::format("{}", v);
    c.loc = loc;
    return c;
  }
  Value un(OpKind kind, const Value& x, SourceLoc loc) { return unary_node(kind, x.node, node(x.node).dtype, loc); }
  Value fn2(OpKind kind, const Value& a, const Value& b, SourceLoc loc, const std::string& what) {
    auto ids = unify(a, b, what, loc);
    return binary_node(kind, a, b, node(ids.first).dtype, loc, what, ids);
  }
  // where(c, a, b) of a bool node and two values (one of them a node): they unify, all three broadcast.
  Value select(const Value& c, const Value& a, const Value& b, SourceLoc loc) {
    auto ids = unify(a, b, "where()", loc);
    Node n;
    n.kind = OpKind::Where;
    n.dtype = node(ids.first).dtype;
    n.shape = broadcast(broadcast(node(c.node).shape, node(ids.first).shape, loc, "where()"), node(ids.second).shape,
                        loc, "where()");
    n.operands = {c.node, ids.first, ids.second};
    n.loc = loc;
    bool from_tensor = from_tensor_[static_cast<std::size_t>(c.node)] ||
                       from_tensor_[static_cast<std::size_t>(ids.first)] || from_tensor_[static_cast<std::size_t>(ids.second)];
    return node_value(add_node(std::move(n), from_tensor), loc);
  }
  // A float keyword argument's value, or `fallback` when it is not given.
  double real_kw(const Expr& e, const char* name, double fallback) {
    const ast::KeywordArg* kw = keyword(e, name);
    if (!kw) return fallback;
    Constant c = const_eval(*kw->value, fmt::format("{}=", name));
    if (c.kind == Value::Kind::Bool) fail(kw->value->loc, fmt::format("{}= expects a number, got a bool", name));
    return to_double(c);
  }
  Value softplus_of(const Value& x, double beta, double threshold, SourceLoc loc) {
    using ast::BinaryOp;
    const Value bx = beta == 1.0 ? x : binary(BinaryOp::Mul, x, weak_real(beta, loc), loc);
    const Value soft = un(OpKind::Log1p, un(OpKind::Exp, bx, loc), loc);
    return select(binary(BinaryOp::Gt, bx, weak_real(threshold, loc), loc), x,
                  beta == 1.0 ? soft : binary(BinaryOp::Div, soft, weak_real(beta, loc), loc), loc);
  }
  Value clamp_of(const Value& x, const std::optional<Value>& lo, const std::optional<Value>& hi, SourceLoc loc,
                 const std::string& what) {
    Value v = x;
    if (lo) v = fn2(OpKind::Maximum, v, *lo, loc, what);
    if (hi) v = fn2(OpKind::Minimum, v, *hi, loc, what);
    return v;
  }
  // A float tensor in the type its activation computes in (f32 for f16 / bf16), and back.
  Value to_opmath(const Value& x, SourceLoc loc) {
    const DType t = node(x.node).dtype;
    return t == DType::f16 || t == DType::bf16 ? unary_node(OpKind::Cast, x.node, DType::f32, loc) : x;
  }
  Value from_opmath(const Value& v, DType t, SourceLoc loc) {
    return node(v.node).dtype == t ? v : unary_node(OpKind::Cast, v.node, t, loc);
  }

  // An activation's parameter: positional argument `index` (PyTorch's order after x, as in
  // F.leaky_relu(x, 0.2)) or keyword `name`, not both; `fallback` when neither is given.
  const Expr* param(const Expr& e, std::size_t index, const char* name) {
    const ast::KeywordArg* kw = keyword(e, name);
    if (index < e.args.size()) {
      if (kw) fail(kw->loc, fmt::format("{}() got {} twice (argument {} and {}=)", e.text, name, index + 1, name));
      return e.args[index].get();
    }
    return kw ? kw->value.get() : nullptr;
  }
  double real_param(const Expr& e, std::size_t index, const char* name, double fallback) {
    const Expr* v = param(e, index, name);
    if (!v) return fallback;
    Constant c = const_eval(*v, fmt::format("{}=", name));
    if (c.kind == Value::Kind::Bool) fail(v->loc, fmt::format("{}= expects a number, got a bool", name));
    return to_double(c);
  }
  SourceLoc param_loc(const Expr& e, std::size_t index, const char* name) {
    const Expr* v = param(e, index, name);
    return v ? v->loc : e.loc;
  }

  Value activation(const Expr& e) {
    using ast::BinaryOp;
    const std::string& f = e.text;
    std::vector<std::string> keywords;
    if (f == "leaky_relu") keywords = {"negative_slope"};
    if (f == "elu") keywords = {"alpha"};
    if (f == "softplus") keywords = {"beta", "threshold"};
    if (f == "hardtanh") keywords = {"min_val", "max_val"};
    if (f == "celu") keywords = {"alpha"};
    if (f == "hardshrink" || f == "softshrink") keywords = {"lambd"};
    std::string positional = "x";
    for (const auto& k : keywords) positional += ", " + k;
    expect_args(e, 1, 1 + keywords.size(), keywords, positional.c_str());
    const NodeId xn = tensor_arg(e, 0);
    need_float(e, xn);
    const DType t = node(xn).dtype;
    const SourceLoc loc = e.loc;
    const bool composite = f == "softsign" || f == "tanhshrink";   // PyTorch's tensor ops: no f32 step
    const Value x = composite ? node_value(xn, loc) : to_opmath(node_value(xn, loc), loc);
    const Value zero = weak_real(0, loc);
    auto negative_branch = [&](double alpha) {   // alpha * expm1(x)
      return binary(BinaryOp::Mul, weak_real(alpha, loc), un(OpKind::Expm1, x, loc), loc);
    };
    Value r;
    if (f == "leaky_relu") {
      const double slope = real_param(e, 1, "negative_slope", 0.01);
      r = select(binary(BinaryOp::Gt, x, zero, loc), x, binary(BinaryOp::Mul, x, weak_real(slope, loc), loc), loc);
    } else if (f == "elu") {
      r = select(binary(BinaryOp::Gt, x, zero, loc), x, negative_branch(real_param(e, 1, "alpha", 1.0)), loc);
    } else if (f == "selu") {
      r = select(binary(BinaryOp::Gt, x, zero, loc), binary(BinaryOp::Mul, x, weak_real(kSeluScale, loc), loc),
                 binary(BinaryOp::Mul, un(OpKind::Expm1, x, loc), weak_real(kSeluAlpha * kSeluScale, loc), loc), loc);
    } else if (f == "softplus") {
      const double beta = real_param(e, 1, "beta", 1.0);
      if (beta == 0) fail(param_loc(e, 1, "beta"), "softplus() needs beta != 0 (it divides by beta)");
      r = softplus_of(x, beta, real_param(e, 2, "threshold", 20.0), loc);
    } else if (f == "mish") {   // (PyTorch's kernel: log1p(exp(x)), no softplus threshold)
      r = binary(BinaryOp::Mul, x, un(OpKind::Tanh, un(OpKind::Log1p, un(OpKind::Exp, x, loc), loc), loc), loc);
    } else if (f == "celu") {
      const double alpha = real_param(e, 1, "alpha", 1.0);
      if (alpha == 0) fail(param_loc(e, 1, "alpha"), "celu() needs alpha != 0 (it divides by alpha)");
      r = select(binary(BinaryOp::Gt, x, zero, loc), x,
                 binary(BinaryOp::Mul, un(OpKind::Expm1, binary(BinaryOp::Mul, x, weak_real(1.0 / alpha, loc), loc), loc),
                     weak_real(alpha, loc), loc),
                 loc);
    } else if (f == "logsigmoid") {
      r = binary(BinaryOp::Sub, fn2(OpKind::Minimum, zero, x, loc, "logsigmoid()"),
              un(OpKind::Log1p, un(OpKind::Exp, un(OpKind::Neg, un(OpKind::Abs, x, loc), loc), loc), loc), loc);
    } else if (f == "hardshrink" || f == "softshrink") {
      const double lambd = real_param(e, 1, "lambd", 0.5);
      if (lambd < 0) fail(param_loc(e, 1, "lambd"), fmt::format("{}() needs lambd >= 0, got {}", f, lambd));
      const Value l = weak_real(lambd, loc), minus_l = weak_real(-lambd, loc);
      if (f == "hardshrink") {
        const Value inside = fn2(OpKind::And, binary(BinaryOp::Ge, x, minus_l, loc), binary(BinaryOp::Le, x, l, loc), loc,
                                 "hardshrink()");
        r = select(inside, zero, x, loc);
      } else {
        r = select(binary(BinaryOp::Gt, x, l, loc), binary(BinaryOp::Sub, x, l, loc),
                   select(binary(BinaryOp::Lt, x, minus_l, loc), binary(BinaryOp::Add, x, l, loc),
                          binary(BinaryOp::Mul, x, zero, loc), loc),
                   loc);
      }
    } else if (f == "softsign") {
      r = binary(BinaryOp::Div, x, binary(BinaryOp::Add, un(OpKind::Abs, x, loc), weak_real(1, loc), loc), loc);
    } else if (f == "tanhshrink") {
      r = binary(BinaryOp::Sub, x, un(OpKind::Tanh, x, loc), loc);
    } else if (f == "hardtanh" || f == "relu6") {
      const double lo = f == "relu6" ? 0.0 : real_param(e, 1, "min_val", -1.0);
      const double hi = f == "relu6" ? 6.0 : real_param(e, 2, "max_val", 1.0);
      if (lo > hi) fail(loc, fmt::format("hardtanh() needs min_val <= max_val, got {} > {}", lo, hi));
      r = clamp_of(x, weak_real(lo, loc), weak_real(hi, loc), loc, fmt::format("{}()", f));
    } else {   // hardsigmoid, hardswish: relu6(x + 3) / 6 (times x)
      const Value six = weak_real(6, loc);
      const Value relu6 = clamp_of(binary(BinaryOp::Add, x, weak_real(3, loc), loc), zero, six, loc, fmt::format("{}()", f));
      r = f == "hardsigmoid" ? binary(BinaryOp::Div, relu6, six, loc)
                             : binary(BinaryOp::Div, binary(BinaryOp::Mul, x, relu6, loc), six, loc);
    }
    return from_opmath(r, t, loc);
  }

  // clamp(x, min, max) / clamp(x, min=, max=): torch.clamp; a bound may be a tensor or a number,
  // and one may be left out. NaN stays NaN (minimum and maximum keep it).
  Value clamp(const Expr& e) {
    expect_args(e, 1, 3, {"min", "max"}, "x, min, max");
    Value x = expr(*e.args[0]);
    if (!x.is_node()) fail(e.loc, "clamp() needs a tensor or scalar input as x");
    if (node(x.node).dtype == DType::boolean) fail(e.loc, "clamp() is not defined on bool");
    auto bound = [&](std::size_t position, const char* name) -> std::optional<Value> {
      const ast::KeywordArg* kw = keyword(e, name);
      if (e.args.size() > position && kw)
        fail(kw->value->loc, fmt::format("clamp() got {} twice (argument {} and {}=)", name, position + 1, name));
      if (e.args.size() > position) return expr(*e.args[position]);
      if (kw) return expr(*kw->value);
      return std::nullopt;
    };
    const std::optional<Value> lo = bound(1, "min"), hi = bound(2, "max");
    if (!lo && !hi) fail(e.loc, "clamp() needs min, max or both");
    return clamp_of(x, lo, hi, e.loc, "clamp()");
  }

  Value where(const Expr& e) {
    expect_args(e, 3, 3, {}, "cond, a, b");
    Value c = expr(*e.args[0]);
    Value a = expr(*e.args[1]);
    Value b = expr(*e.args[2]);
    if (!c.is_node() || node(c.node).dtype != DType::boolean)
      fail(e.args[0]->loc, fmt::format("where() needs a bool tensor as its condition, got {}",
                                       c.is_node() ? type_text(node(c.node).dtype, node(c.node).shape) : c.text));
    if (!a.is_node() && !b.is_node()) {
      // Both branches constant: they take the type of... nothing. Ask for one typed side.
      fail(e.loc, "where() needs a tensor in at least one of its value arguments; cast a constant, e.g. f32(0)");
    }
    return select(c, a, b, e.loc);
  }

  Value reduction(const Expr& e, OpKind kind) {
    expect_args(e, 1, 1, {"axis", "keepdims"}, "x");
    NodeId x = tensor_arg(e, 0);
    if (kind == OpKind::Mean || kind == OpKind::Logsumexp) need_float(e, x);
    // PyTorch counts: the sum or product of bools is an i64 (torch.sum(mask)).
    if ((kind == OpKind::Sum || kind == OpKind::Prod) && node(x).dtype == DType::boolean)
      x = unary_node(OpKind::Cast, x, DType::i64, e.loc).node;
    const std::vector<int> axes = reduced_axes(e, node(x).shape.size());
    const bool arg = kind == OpKind::Argmin || kind == OpKind::Argmax;
    if (arg && axes.size() > 1 && keyword(e, "axis"))
      fail(kw_loc(e, "axis"), fmt::format("{}() takes one axis (or none, for the flat index), got {}", e.text, axes.size()));
    return reduce_node(kind, x, axes, bool_kw(e, "keepdims").value_or(false), e.loc);
  }

  // A reduction's axis= (an axis or a list; none: every axis), sorted, for a tensor of `rank`.
  std::vector<int> reduced_axes(const Expr& e, std::size_t rank) {
    SourceLoc axis_loc = kw_loc(e, "axis");
    std::vector<int> axes;
    if (auto list = ints_kw(e, "axis")) {
      if (list->empty()) fail(axis_loc, fmt::format("axis= of {}() is an empty list; omit it to reduce every axis", e.text));
      for (auto a : *list) {
        int n = normalize_axis(a, rank, axis_loc, e.text);
        if (std::find(axes.begin(), axes.end(), n) != axes.end())
          fail(axis_loc, fmt::format("axis {} appears twice in axis= of {}()", n, e.text));
        axes.push_back(n);
      }
    } else {
      for (std::size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int>(i));
    }
    std::sort(axes.begin(), axes.end());
    return axes;
  }

  Value reduce_node(OpKind kind, NodeId x, const std::vector<int>& axes, bool keepdims, SourceLoc loc) {
    const Node& in = node(x);
    Node n;
    n.kind = kind;
    n.dtype = kind == OpKind::Argmin || kind == OpKind::Argmax ? DType::i64 : in.dtype;
    for (std::size_t i = 0; i < in.shape.size(); ++i) {
      bool reduced = std::find(axes.begin(), axes.end(), static_cast<int>(i)) != axes.end();
      if (!reduced) n.shape.push_back(in.shape[i]);
      else if (keepdims) n.shape.push_back(DimExpr::constant(1));
    }
    n.operands = {x};
    n.axes = axes;
    n.keepdims = keepdims;
    n.loc = loc;
    return node_value(add_node(std::move(n), true), loc);
  }

  // var(x, axis=, correction=1, keepdims=false) and std(...): torch.var / torch.std, written as
  // sum((x - mean(x))^2) / (count - correction) over the axes (the count: the reduced extents,
  // each a number or a specialized dim), in f32 for f16 and bf16, then x's type.
  Value variance(const Expr& e) {
    using ast::BinaryOp;
    expect_args(e, 1, 1, {"axis", "correction", "keepdims"}, "x");
    const NodeId xn = tensor_arg(e, 0);
    need_float(e, xn);
    const DType t = node(xn).dtype;
    const SourceLoc loc = e.loc;
    const std::vector<int> axes = reduced_axes(e, node(xn).shape.size());
    const bool keepdims = bool_kw(e, "keepdims").value_or(false);
    const double correction = real_kw(e, "correction", 1.0);
    const Value x = to_opmath(node_value(xn, loc), loc);
    const Value mu = reduce_node(OpKind::Mean, x.node, axes, true, loc);
    const Value d = binary(BinaryOp::Sub, x, mu, loc);
    const Value sq = binary(BinaryOp::Mul, d, d, loc);
    Value v;
    if (correction == 0) {
      v = reduce_node(OpKind::Mean, sq.node, axes, keepdims, loc);
    } else {
      std::optional<Value> count;   // the product of the reduced extents (a number or specialized dims)
      std::int64_t constant = 1;
      for (int a : axes) {
        const DimExpr& extent = node(xn).shape[static_cast<std::size_t>(a)];
        if (auto c = extent.as_constant()) {
          constant *= *c;
          continue;
        }
        const ir::DimDecl* decl = extent.kind() == DimExpr::Kind::Dim ? ir_->find_dim(extent.name()) : nullptr;
        if (decl == nullptr || decl->dynamic)
          fail(loc, fmt::format("{}() with correction={} needs each reduced extent to be a number or a specialized dim, "
                                "got {} (a dyn dim or an expression); write sum((x - mean(x))^2) / (count - {}) with "
                                "the count as a value, or pass correction=0",
                                e.text, correction, extent.str(), correction));
        const Value dim = dim_value_node(extent.name(), loc);
        count = count ? binary(BinaryOp::Mul, *count, dim, loc) : dim;
      }
      const Value c = !count          ? weak_real(double(constant), loc)
                      : constant == 1 ? *count
                                      : binary(BinaryOp::Mul, *count, weak_real(double(constant), loc), loc);
      v = binary(BinaryOp::Div, reduce_node(OpKind::Sum, sq.node, axes, keepdims, loc),
                 binary(BinaryOp::Sub, c, weak_real(correction, loc), loc), loc);
    }
    if (e.text == "std") v = un(OpKind::Sqrt, v, loc);
    return from_opmath(v, t, loc);
  }

  // any(x, axis=, keepdims=false) / all(...): torch.any / torch.all (x bool, or nonzero), written
  // as a count of the true (any) or false (all) elements compared with 0.
  Value any_all(const Expr& e) {
    using ast::BinaryOp;
    expect_args(e, 1, 1, {"axis", "keepdims"}, "x");
    const NodeId xn = tensor_arg(e, 0);
    const SourceLoc loc = e.loc;
    Value b = node_value(xn, loc);
    if (node(xn).dtype != DType::boolean) b = binary(BinaryOp::Ne, b, weak_real(0, loc), loc);
    if (e.text == "all") b = un(OpKind::Not, b, loc);
    const Value count = unary_node(OpKind::Cast, b.node, DType::i64, loc);
    const Value n = reduce_node(OpKind::Sum, count.node, reduced_axes(e, node(xn).shape.size()),
                                bool_kw(e, "keepdims").value_or(false), loc);
    Value zero;
    zero.kind = Value::Kind::Int;
    zero.text = "0";
    zero.loc = loc;
    return binary(e.text == "any" ? BinaryOp::Gt : BinaryOp::Eq, n, zero, loc);
  }

  Value scan(const Expr& e, OpKind kind) {
    expect_args(e, 1, 1, {"axis", "exclusive", "reverse"}, "x");
    NodeId x = tensor_arg(e, 0);
    // As PyTorch: a running count (or product) of bools is an i64.
    if ((kind == OpKind::Cumsum || kind == OpKind::Cumprod) && node(x).dtype == DType::boolean)
      x = unary_node(OpKind::Cast, x, DType::i64, e.loc).node;
    const Node& in = node(x);
    Node n;
    n.kind = kind;
    n.dtype = in.dtype;
    n.shape = in.shape;
    n.axis = normalize_axis(int_kw(e, "axis").value_or(-1), in.shape.size(), kw_loc(e, "axis"), e.text);
    n.exclusive = bool_kw(e, "exclusive").value_or(false);
    n.reverse = bool_kw(e, "reverse").value_or(false);
    n.operands = {x};
    n.loc = e.loc;
    return node_value(add_node(std::move(n), true), e.loc);
  }

  // iota(d0, d1, ..., axis=k): an i64 tensor of shape [d0, d1, ...] whose element is its
  // coordinate along axis k (default -1): torch.arange(dk) broadcast over the shape. The
  // positional arguments are the shape, written as in a declaration: dim names or integers.
  Value iota(const Expr& e) {
    expect_args(e, 1, e.args.size() + 1, {"axis"}, "d0, d1, ...");
    ast::TypeRef shape_ref;
    shape_ref.loc = e.loc;
    shape_ref.has_shape = true;
    for (const auto& arg : e.args) {
      ast::TypeRef::Entry entry;
      entry.loc = arg->loc;
      if (arg->kind == ast::ExprKind::Name) {
        entry.name = arg->text;
      } else if (arg->kind == ast::ExprKind::Int && arg->int_value <= static_cast<std::uint64_t>(INT64_MAX)) {
        entry.is_name = false;
        entry.value = static_cast<std::int64_t>(arg->int_value);
      } else {
        fail(arg->loc, "iota() takes the shape of its result: dim names or integers >= 1 (iota(M, N, axis=1))");
      }
      shape_ref.shape.push_back(std::move(entry));
    }
    Node n;
    n.kind = OpKind::Iota;
    n.dtype = DType::i64;
    n.shape = resolve_shape(shape_ref, "iota()");
    n.axis = normalize_axis(int_kw(e, "axis").value_or(-1), n.shape.size(), kw_loc(e, "axis"), e.text);
    n.loc = e.loc;
    return node_value(add_node(std::move(n), true), e.loc);
  }

  Value rownorm(const Expr& e, OpKind kind) {
    expect_args(e, 1, 1, {"axis"}, "x");
    NodeId x = tensor_arg(e, 0);
    need_float(e, x);
    Node n;
    n.kind = kind;
    n.dtype = node(x).dtype;
    n.shape = node(x).shape;
    n.axis = normalize_axis(int_kw(e, "axis").value_or(-1), n.shape.size(), kw_loc(e, "axis"), e.text);
    n.operands = {x};
    n.loc = e.loc;
    return node_value(add_node(std::move(n), true), e.loc);
  }

  Value dropout(const Expr& e) {
    expect_args(e, 1, 1, {"p", "seed"}, "x");
    NodeId x = tensor_arg(e, 0);
    need_float(e, x);
    const ast::KeywordArg* p = keyword(e, "p");
    const ast::KeywordArg* seed = keyword(e, "seed");
    if (!p) fail(e.loc, "dropout() needs p= (the probability of zeroing an element, a const in [0, 1))");
    if (!seed) fail(e.loc, "dropout() needs seed= (a u64 scalar input, e.g. `in seed: u64`)");
    Constant pv = const_eval(*p->value, "p=");
    if (pv.kind == Value::Kind::Bool) fail(p->value->loc, "p= expects a number in [0, 1), got a bool");
    const double p_value = to_double(pv);
    if (!(p_value >= 0 && p_value < 1))
      fail(p->value->loc, fmt::format("dropout probability p must be in [0, 1), got {}", describe_const(pv)));
    Value s = expr(*seed->value);
    if (!s.is_node() || node(s.node).kind != OpKind::Scalar || node(s.node).dtype != DType::u64)
      fail(seed->value->loc, "seed= expects a u64 scalar input (declare `in seed: u64` and pass seed=seed)");
    Node n;
    n.kind = OpKind::Dropout;
    n.dtype = node(x).dtype;
    n.shape = node(x).shape;
    n.operands = {x, s.node};
    n.p = p_value;
    n.loc = e.loc;
    return node_value(add_node(std::move(n), true), e.loc);
  }

  ir::PrecisionChoice precision_kw(const Expr& e, DType dtype) {
    auto s = string_kw(e, "precision");
    if (!s) return std::nullopt;
    SourceLoc loc = kw_loc(e, "precision");
    if (dtype != DType::f32) fail(loc, fmt::format("precision= applies to f32 operands only, got {}", dtype_name(dtype)));
    if (*s == "ieee") return Precision::ieee;
    if (*s == "tf32") return Precision::tf32;
    if (*s == "3xtf32") return Precision::tf32x3;
    fail(loc, fmt::format("precision= expects \"ieee\", \"tf32\" or \"3xtf32\", got \"{}\"", *s));
  }

  // matmul(a, b) (also a @ b): torch.matmul. A rank-1 a is a row [1, K] and a rank-1 b a column
  // [K, 1], that dim dropped from the result: reshapes (views) around a product of rank-2
  // operands. mm, bmm and dot are torch's forms of one rank (2, 3 with equal batches, 1), without
  // broadcasting.
  Value matmul(const Expr& e) {
    expect_args(e, 2, 2, {"precision"}, "a, b");
    const NodeId a = tensor_arg(e, 0);
    const NodeId b = tensor_arg(e, 1);
    static const std::map<std::string, std::pair<std::size_t, const char*>> fixed = {
        {"mm", {2, "torch.mm: two matrices"}}, {"bmm", {3, "torch.bmm: two batches of matrices"}},
        {"dot", {1, "torch.dot: two vectors"}}};
    if (auto it = fixed.find(e.text); it != fixed.end()) {
      const auto [rank, what] = it->second;
      for (std::size_t k = 0; k < 2; ++k) {
        const Node& n = node(k == 0 ? a : b);
        if (n.shape.size() != rank)
          fail(e.args[k]->loc, fmt::format("{}() takes operands of rank {} ({}); {} is {}; matmul() takes any rank and "
                                           "broadcasts batch dims", e.text, rank, what, k == 0 ? "a" : "b",
                                           type_text(n.dtype, n.shape)));
      }
      if (rank == 3 && !(node(a).shape[0] == node(b).shape[0]))
        fail(e.loc, fmt::format("bmm() takes equal batch dims (torch.bmm does not broadcast): a is {} and b is {}",
                                type_text(node(a).dtype, node(a).shape), type_text(node(b).dtype, node(b).shape)));
    }
    return product(e, a, b);
  }

  // linear(x, weight, bias=None): torch.nn.functional.linear, x · weightᵀ (+ bias): x [..., K],
  // weight [N, K], bias [N].
  Value linear(const Expr& e) {
    expect_args(e, 2, 3, {"bias", "precision"}, "x, weight, bias");
    const NodeId x = tensor_arg(e, 0);
    const NodeId w = tensor_arg(e, 1);
    const Shape ws = node(w).shape, xs = node(x).shape;   // copies: add_node below may move the nodes
    const DType wt = node(w).dtype, xt = node(x).dtype;
    if (ws.size() != 2)
      fail(e.args[1]->loc, fmt::format("linear() takes weight as [out_features, in_features]; it is {}",
                                       type_text(wt, ws)));
    if (!(xs.back() == ws[1]))
      fail(e.loc, fmt::format("linear(): x's last dim ({}) must equal weight's in_features (its last dim, {}); x is {} "
                              "and weight is {}{}",
                              xs.back().str(), ws[1].str(), type_text(xt, xs), type_text(wt, ws),
                              same_value_hint(xs.back(), ws[1])));
    const SourceLoc wloc = e.args[1]->loc;
    const Value y = product(e, x, permute_node(w, {1, 0}, wloc).node);
    const Expr* bias = e.args.size() == 3 ? e.args[2].get() : nullptr;
    if (const ast::KeywordArg* kw = keyword(e, "bias")) {
      if (bias) fail(kw->loc, "linear() got bias both by position and by name");
      bias = kw->value.get();
    }
    if (!bias) return y;
    const Value bv = expr(*bias);
    if (!bv.is_node() || !(node(bv.node).shape.size() == 1 && node(bv.node).shape[0] == ws[0]))
      fail(bias->loc, fmt::format("linear() takes bias as a tensor [out_features] = [{}], got {}", ws[0].str(),
                                  bv.is_node() ? type_text(node(bv.node).dtype, node(bv.node).shape) : bv.text));
    return binary(ast::BinaryOp::Add, y, bv, e.loc);
  }

  // outer(a, b): torch.outer, out[i, j] = a[i] * b[j] for two vectors (a broadcast product).
  Value outer(const Expr& e) {
    expect_args(e, 2, 2, {}, "a, b");
    const NodeId a = tensor_arg(e, 0);
    const NodeId b = tensor_arg(e, 1);
    for (std::size_t k = 0; k < 2; ++k) {
      const Node& n = node(k == 0 ? a : b);
      if (n.shape.size() != 1)
        fail(e.args[k]->loc, fmt::format("outer() takes two vectors (torch.outer); {} is {}", k == 0 ? "a" : "b",
                                         type_text(n.dtype, n.shape)));
    }
    const DimExpr m = node(a).shape[0], n = node(b).shape[0];   // copies: add_node below may move the nodes
    const Value column = reshape_node(a, {m, DimExpr::constant(1)}, e.args[0]->loc);
    const Value row = reshape_node(b, {DimExpr::constant(1), n}, e.args[1]->loc);
    return binary(ast::BinaryOp::Mul, column, row, e.loc);
  }

  // einsum("subscripts", a[, b], precision=): torch.einsum of one or two operands, each axis named
  // by a letter (no ellipsis, no repeated letter within an operand). Written with kiln's ops: an
  // operand's letters in no other term and not in the output are summed first; one operand is
  // then a permute; two without a shared summed letter an elementwise product of views; two with
  // one a matmul of reshaped views ([batch, free of a, summed] times [batch, summed, free of b]),
  // reshaped and permuted to the output's letters. Without "->" the output is the letters that
  // appear once, in alphabetical order (numpy's and torch's rule).
  Value einsum(const Expr& e) {
    expect_args(e, 2, 3, {"precision"}, "equation, a, b");
    const Expr& eq = *e.args[0];
    if (eq.kind != ExprKind::String)
      fail(eq.loc, "einsum() takes its equation first, as a string: einsum(\"bij,bjk->bik\", a, b)");
    std::string text;
    for (char c : eq.text)
      if (c != ' ') text += c;
    const std::size_t arrow = text.find("->");
    const std::string lhs = arrow == std::string::npos ? text : text.substr(0, arrow);
    std::vector<std::string> terms(1);
    for (char c : lhs) {
      if (c == ',') terms.emplace_back();
      else terms.back() += c;
    }
    const std::size_t nops = e.args.size() - 1;
    if (terms.size() != nops)
      fail(eq.loc, fmt::format("einsum() equation \"{}\" has {} operand term{}, and {} operand{} given", eq.text,
                               terms.size(), terms.size() == 1 ? "" : "s", nops, nops == 1 ? " is" : "s are"));
    const auto check_letters = [&](const std::string& term) {
      for (char c : term) {
        if (c == '.')
          fail(eq.loc, "einsum(): an ellipsis ('...') is not supported; name each axis with a letter");
        if (!std::isalpha(static_cast<unsigned char>(c)))
          fail(eq.loc, fmt::format("einsum() subscripts are letters, found '{}' in \"{}\"", c, eq.text));
        if (std::count(term.begin(), term.end(), c) > 1)
          fail(eq.loc, fmt::format("einsum(): '{}' appears twice in \"{}\" (diagonals are not supported)", c, term));
      }
    };
    std::vector<NodeId> ops;
    std::map<char, DimExpr> extent;
    std::map<char, std::string> where;   // the first operand that names a letter, for messages
    for (std::size_t k = 0; k < nops; ++k) {
      check_letters(terms[k]);
      const NodeId x = tensor_arg(e, k + 1);
      const Shape shape = node(x).shape;
      if (shape.size() != terms[k].size())
        fail(e.args[k + 1]->loc, fmt::format("einsum(): \"{}\" names {} axes, but {} is {}", terms[k], terms[k].size(),
                                             k == 0 ? "a" : "b", type_text(node(x).dtype, shape)));
      for (std::size_t i = 0; i < shape.size(); ++i) {
        const char c = terms[k][i];
        if (auto it = extent.find(c); it == extent.end()) {
          extent.emplace(c, shape[i]);
          where[c] = k == 0 ? "a" : "b";
        } else if (!(it->second == shape[i])) {
          fail(e.loc, fmt::format("einsum(): '{}' is {} in {} and {} in {}{}", c, it->second.str(), where[c],
                                  shape[i].str(), k == 0 ? "a" : "b", same_value_hint(it->second, shape[i])));
        }
      }
      ops.push_back(x);
    }
    std::string out;
    if (arrow != std::string::npos) {
      out = text.substr(arrow + 2);
      check_letters(out);
      for (char c : out)
        if (!extent.count(c)) fail(eq.loc, fmt::format("einsum(): the output's '{}' is in no operand's subscripts", c));
    } else {
      for (const auto& [c, _] : extent) {
        std::size_t seen = 0;
        for (const auto& t : terms) seen += static_cast<std::size_t>(std::count(t.begin(), t.end(), c));
        if (seen == 1) out += c;
      }
      std::sort(out.begin(), out.end());
    }
    const auto has = [](const std::string& t, char c) { return t.find(c) != std::string::npos; };
    // Each operand's letters in nothing else are summed first.
    std::vector<Value> vals;
    for (std::size_t k = 0; k < nops; ++k) {
      std::vector<int> axes;
      std::string kept;
      for (std::size_t i = 0; i < terms[k].size(); ++i) {
        const char c = terms[k][i];
        const bool elsewhere = has(out, c) || (nops == 2 && has(terms[1 - k], c));
        if (elsewhere) kept += c;
        else axes.push_back(static_cast<int>(i));
      }
      vals.push_back(axes.empty() ? node_value(ops[k], e.loc) : reduce_node(OpKind::Sum, ops[k], axes, false, e.loc));
      terms[k] = kept;
    }
    // `v` (letters `have`) with its axes in the order of `want` (a permutation of them).
    const auto ordered = [&](const Value& v, const std::string& have, const std::string& want) {
      std::vector<int> perm;
      for (char c : want) perm.push_back(static_cast<int>(have.find(c)));
      bool identity = true;
      for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int>(i);
      return identity ? v : permute_node(v.node, std::move(perm), e.loc);
    };
    const auto extents_of = [&](const std::string& letters) {
      Shape s;
      for (char c : letters) s.push_back(extent.at(c));
      return s;
    };
    if (nops == 1) return ordered(vals[0], terms[0], out);
    std::string batch, summed, free_a, free_b;
    for (char c : out) {
      if (has(terms[0], c) && has(terms[1], c)) batch += c;
      else if (has(terms[0], c)) free_a += c;
      else free_b += c;
    }
    for (char c : terms[0])
      if (has(terms[1], c) && !has(out, c)) summed += c;
    if (summed.empty()) {   // an elementwise product: each operand in the output's order, 1 where it lacks a letter
      std::vector<Value> aligned;
      for (std::size_t k = 0; k < 2; ++k) {
        std::string mine;
        for (char c : out)
          if (has(terms[k], c)) mine += c;
        const Value v = ordered(vals[k], terms[k], mine);
        Shape shape;
        for (char c : out) shape.push_back(has(terms[k], c) ? extent.at(c) : DimExpr::constant(1));
        aligned.push_back(reshape_node(v.node, std::move(shape), e.loc));
      }
      return binary(ast::BinaryOp::Mul, aligned[0], aligned[1], e.loc);
    }
    const Shape bs = extents_of(batch);
    const auto matrix = [&](const Value& v, const std::string& have, const std::string& rows, const std::string& cols) {
      const Value p = ordered(v, have, batch + rows + cols);
      Shape shape = bs;
      shape.push_back(numel_of(extents_of(rows)));
      shape.push_back(numel_of(extents_of(cols)));
      return reshape_node(p.node, std::move(shape), e.loc);
    };
    const Value a = matrix(vals[0], terms[0], free_a, summed);
    const Value b = matrix(vals[1], terms[1], summed, free_b);
    const Value c = product(e, a.node, b.node);
    const Value split = reshape_node(c.node, extents_of(batch + free_a + free_b), e.loc);
    return ordered(split, batch + free_a + free_b, out);
  }

  // The product of a and b as torch.matmul (e: the call, for its locations and keywords).
  Value product(const Expr& e, NodeId a, NodeId b) {
    const Shape sa = node(a).shape, sb = node(b).shape;   // copies: add_node below may move the nodes
    const DType dt = node(a).dtype;
    if (dt != node(b).dtype)
      fail(e.loc, fmt::format("mismatched types in {}(): {} and {}; cast one side explicitly, e.g. {}(x)", e.text,
                              dtype_name(dt), dtype_name(node(b).dtype), dtype_name(dt)));
    if (dt == DType::boolean) fail(e.loc, fmt::format("{}() is not defined on bool", e.text));
    const bool row = sa.size() == 1, column = sb.size() == 1;
    const DimExpr& k1 = sa.back();
    const DimExpr& k2 = sb[sb.size() - (column ? 1 : 2)];
    if (k1 != k2)
      fail(e.loc, fmt::format("{}() inner dims differ: a is {} and b is {}; a's last dim ({}) must equal b's "
                              "{} ({}){}",
                              e.text, type_text(dt, sa), type_text(dt, sb), k1.str(),
                              column ? "only dim" : "second-to-last dim", k2.str(), same_value_hint(k1, k2)));
    if (row) a = reshape_node(a, {DimExpr::constant(1), sa[0]}, e.loc).node;
    if (column) b = reshape_node(b, {sb[0], DimExpr::constant(1)}, e.loc).node;
    const Shape& ra = node(a).shape;
    const Shape& rb = node(b).shape;
    Shape batch_a(ra.begin(), ra.end() - 2), batch_b(rb.begin(), rb.end() - 2);
    Node n;
    n.kind = OpKind::Matmul;
    n.dtype = dt;
    n.shape = broadcast(batch_a, batch_b, e.loc, fmt::format("{}() batch dims", e.text));
    n.shape.push_back(ra[ra.size() - 2]);
    n.shape.push_back(rb.back());
    n.operands = {a, b};
    n.precision = precision_kw(e, dt);
    n.loc = e.loc;
    Shape vector_shape = n.shape;   // the result without the row's or the column's extent of 1
    if (column) vector_shape.erase(vector_shape.end() - 1);
    if (row) vector_shape.erase(vector_shape.end() - 1 - (column ? 0 : 1));
    const NodeId p = add_node(std::move(n), true);
    if (!row && !column) return node_value(p, e.loc);
    return reshape_node(p, std::move(vector_shape), e.loc);
  }

  Value permute_node(NodeId x, std::vector<int> perm, SourceLoc loc) {
    Node n;
    n.kind = OpKind::Permute;
    n.dtype = node(x).dtype;
    for (int p : perm) n.shape.push_back(node(x).shape[static_cast<std::size_t>(p)]);
    n.operands = {x};
    n.perm = std::move(perm);
    n.loc = loc;
    return node_value(add_node(std::move(n), true), loc);
  }

  // transpose(x): the last two dims swapped; transpose(x, d0, d1): dims d0 and d1 swapped (torch.transpose).
  Value transpose(const Expr& e) {
    expect_args(e, 1, 3, {}, "x, or x, dim0, dim1");
    if (e.args.size() == 2)
      fail(e.loc, "transpose() takes both dims to swap (transpose(x, dim0, dim1)) or none (the last two)");
    NodeId x = tensor_arg(e, 0);
    std::size_t rank = node(x).shape.size();
    if (rank < 2)
      fail(e.args[0]->loc, fmt::format("transpose() swaps two dims and needs rank >= 2, got {}",
                                       type_text(node(x).dtype, node(x).shape)));
    std::vector<int> perm(rank);
    for (std::size_t i = 0; i < rank; ++i) perm[i] = static_cast<int>(i);
    if (e.args.size() == 3) {
      auto dim = [&](int i) {
        const std::string what = fmt::format("dim{} of transpose()", i);
        const std::int64_t d = as_int(const_eval(*e.args[1 + i], what), e.args[1 + i]->loc, what);
        return normalize_axis(d, rank, e.args[1 + i]->loc, e.text);
      };
      std::swap(perm[dim(0)], perm[dim(1)]);
    } else {
      std::swap(perm[rank - 1], perm[rank - 2]);
    }
    return permute_node(x, std::move(perm), e.loc);
  }

  Value permute(const Expr& e) {
    expect_args(e, 2, 2, {}, "x, order");
    NodeId x = tensor_arg(e, 0);
    const Expr& order = *e.args[1];
    if (order.kind != ExprKind::List) fail(order.loc, "permute() expects its order as a list, e.g. permute(x, [1, 0])");
    std::vector<std::int64_t> raw = int_list(order, "the order of permute()");
    std::size_t rank = node(x).shape.size();
    if (raw.size() != rank)
      fail(order.loc, fmt::format("permute() of a rank-{} tensor needs {} entries in its order, got {}", rank, rank, raw.size()));
    std::vector<int> perm;
    std::vector<bool> seen(rank, false);
    for (auto v : raw) {
      int a = normalize_axis(v, rank, order.loc, "permute");
      if (seen[static_cast<std::size_t>(a)])
        fail(order.loc, fmt::format("permute() order must be a permutation of 0..{}; {} appears twice", rank - 1, a));
      seen[static_cast<std::size_t>(a)] = true;
      perm.push_back(a);
    }
    return permute_node(x, std::move(perm), e.loc);
  }

  // ------------------------------------------------------------ index views ([Note: index views] in ir.h)
  static DimExpr numel_of(const Shape& s) {
    DimExpr n = DimExpr::constant(1);
    for (const auto& d : s) n = n * d;
    return n;
  }
  Value reshape_node(NodeId x, Shape shape, SourceLoc loc) {
    if (shape == node(x).shape) return node_value(x, loc);
    Node n;
    n.kind = OpKind::Reshape;
    n.dtype = node(x).dtype;
    n.shape = std::move(shape);
    n.operands = {x};
    n.loc = loc;
    return node_value(add_node(std::move(n), true), loc);
  }
  // Requires numel(shape) == numel(x): now when both are known, else at bind.
  void same_numel(NodeId x, const Shape& shape, SourceLoc loc, const std::string& fn) {
    const DimExpr have = numel_of(node(x).shape), want = numel_of(shape);
    if (have == want) return;
    const auto h = have.as_constant(), w = want.as_constant();
    const std::string message = fmt::format("{}() of {} to [{}]: the sizes must multiply out to the same count",
                                            fn, type_text(node(x).dtype, node(x).shape), shape_text(shape));
    if (h && w) fail(loc, fmt::format("{} ({} elements, not {})", message, *h, *w));
    ir_->constraints.push_back({want, have, message, loc});
  }
  // Whether `e` names a dim anywhere (then it is an extent, not a compile-time value).
  bool mentions_dim(const Expr& e) const {
    if (e.kind == ExprKind::Name) {
      auto it = symbols_.find(e.text);
      return it != symbols_.end() && it->second.kind == Symbol::Kind::Dim;
    }
    if (e.kind != ExprKind::Binary && e.kind != ExprKind::Unary) return false;
    for (const auto& a : e.args)
      if (mentions_dim(*a)) return true;
    return false;
  }

  // An extent written in an expression ("N / 3", "2 * D + 1"): dims, integer literals and consts
  // under + - * and / (which divides with the floor, as in a declared shape).
  DimExpr extent_of(const Expr& e, const std::string& what) {
    if (e.kind == ExprKind::Name) {
      auto it = symbols_.find(e.text);
      if (it != symbols_.end() && it->second.kind == Symbol::Kind::Dim) {
        it->second.used = true;
        return DimExpr::dim(e.text);
      }
    }
    if (e.kind == ExprKind::Binary && e.binary_op <= ast::BinaryOp::Div)
      return extent_arithmetic(ast::binary_op_spelling(e.binary_op)[0], extent_of(*e.args[0], what),
                               extent_of(*e.args[1], what), e.loc, what);
    if (e.kind == ExprKind::Binary || e.kind == ExprKind::Unary)
      fail(e.loc, fmt::format("{} can combine dims with + - * and / only", what));
    return DimExpr::constant(as_int(const_eval(e, what), e.loc, what));
  }

  // reshape(x, [d0, d1, ...]) / view(x, [...]): entries are extents of dims (a dim name, or
  // arithmetic of dims and integers as in a declared shape), integer constants >= 1, or one -1
  // (the count left over). The elements keep their row-major order.
  Value reshape(const Expr& e) {
    expect_args(e, 2, 2, {}, "x, shape");
    const NodeId x = tensor_arg(e, 0);
    const Expr& list = *e.args[1];
    if (list.kind != ExprKind::List || list.args.empty())
      fail(list.loc, fmt::format("{}() expects its shape as a non-empty list, e.g. {}(x, [N, -1])", e.text, e.text));
    Shape shape;
    std::optional<std::size_t> infer;
    for (const auto& item : list.args) {
      if (mentions_dim(*item)) {
        shape.push_back(extent_of(*item, fmt::format("the shape of {}()", e.text)));
        if (auto c = shape.back().as_constant(); c && *c < 1)
          fail(item->loc, fmt::format("a dim in the shape of {}() must be >= 1, got {}", e.text, *c));
        continue;
      }
      const std::int64_t v = as_int(const_eval(*item, fmt::format("the shape of {}()", e.text)), item->loc,
                                    fmt::format("the shape of {}()", e.text));
      if (v == -1) {
        if (infer) fail(item->loc, fmt::format("{}() takes at most one -1 in its shape", e.text));
        infer = shape.size();
        shape.push_back(DimExpr::constant(1));
        continue;
      }
      if (v < 1) fail(item->loc, fmt::format("a dim in the shape of {}() must be >= 1 (or -1 once), got {}", e.text, v));
      shape.push_back(DimExpr::constant(v));
    }
    if (infer) {
      const DimExpr known = numel_of(shape);
      shape[*infer] = floor_div(numel_of(node(x).shape), known);
      const auto k = known.as_constant(), total = numel_of(node(x).shape).as_constant();
      if (k && total && *total % *k != 0)
        fail(list.loc, fmt::format("{}() of {} to [{}]: {} elements do not split into rows of {}", e.text,
                                   type_text(node(x).dtype, node(x).shape), shape_text(shape), *total, *k));
    }
    same_numel(x, shape, list.loc, e.text);
    return reshape_node(x, std::move(shape), e.loc);
  }

  // expand(x, [d0, d1, ...]) / broadcast_to(x, [...]): torch.expand, x broadcast to the shape by
  // numpy's rules: aligned on the right, new leading dims, a dim of x that is 1 to any extent, any
  // other kept (the same dim, or -1). Entries are extents as in reshape(). A view: no data moves
  // until a kernel reads it ([Note: index views] in ir.h).
  Value expand(const Expr& e) {
    expect_args(e, 2, 2, {}, "x, shape");
    const NodeId x = tensor_arg(e, 0);
    const Shape in = node(x).shape;   // a copy: add_node below may move the nodes
    const Expr& list = *e.args[1];
    if (list.kind != ExprKind::List || list.args.empty())
      fail(list.loc, fmt::format("{}() expects its shape as a non-empty list, e.g. {}(x, [B, N])", e.text, e.text));
    if (list.args.size() < in.size())
      fail(list.loc, fmt::format("{}() cannot drop dims: x is {}, the shape has {} entries", e.text,
                                 type_text(node(x).dtype, in), list.args.size()));
    const std::size_t lead = list.args.size() - in.size();
    const std::string what = fmt::format("the shape of {}()", e.text);
    Shape shape;
    for (std::size_t i = 0; i < list.args.size(); ++i) {
      const Expr& item = *list.args[i];
      DimExpr d;
      if (mentions_dim(item)) {
        d = extent_of(item, what);
        if (auto c = d.as_constant(); c && *c < 1)
          fail(item.loc, fmt::format("a dim in the shape of {}() must be >= 1, got {}", e.text, *c));
      } else {
        const std::int64_t v = as_int(const_eval(item, what), item.loc, what);
        if (v == -1 && i < lead)
          fail(item.loc, fmt::format("-1 in the shape of {}() keeps a dim of x; a new leading dim needs its extent",
                                     e.text));
        if (v != -1 && v < 1)
          fail(item.loc, fmt::format("a dim in the shape of {}() must be >= 1 (or -1), got {}", e.text, v));
        d = v == -1 ? in[i - lead] : DimExpr::constant(v);
      }
      if (i >= lead) {
        const DimExpr& have = in[i - lead];
        if (!(have == d) && have.as_constant() != std::optional<std::int64_t>(1))
          fail(item.loc, fmt::format("{}() broadcasts only dims of extent 1: x's dim {} is {}, not 1, and the shape "
                                     "asks for {}",
                                     e.text, i - lead, have.str(), d.str()));
      }
      shape.push_back(d);
    }
    if (shape == in) return node_value(x, e.loc);
    Node n;
    n.kind = OpKind::Expand;
    n.dtype = node(x).dtype;
    n.shape = std::move(shape);
    n.operands = {x};
    n.loc = e.loc;
    return node_value(add_node(std::move(n), true), e.loc);
  }

  // flatten(x, start_dim=0, end_dim=-1): torch.flatten, the axes start..end as one.
  Value flatten(const Expr& e) {
    expect_args(e, 1, 1, {"start_dim", "end_dim"}, "x");
    const NodeId x = tensor_arg(e, 0);
    const Shape& in = node(x).shape;
    const int start = normalize_axis(int_kw(e, "start_dim").value_or(0), in.size(), kw_loc(e, "start_dim"), e.text);
    const int end = normalize_axis(int_kw(e, "end_dim").value_or(-1), in.size(), kw_loc(e, "end_dim"), e.text);
    if (start > end) fail(e.loc, fmt::format("flatten() needs start_dim <= end_dim, got {} > {}", start, end));
    Shape shape(in.begin(), in.begin() + start);
    DimExpr merged = DimExpr::constant(1);
    for (int d = start; d <= end; ++d) merged = merged * in[static_cast<std::size_t>(d)];
    shape.push_back(merged);
    shape.insert(shape.end(), in.begin() + end + 1, in.end());
    return reshape_node(x, std::move(shape), e.loc);
  }

  // squeeze(x, axis=k): drops axis k, whose extent must be 1. unsqueeze(x, axis=k): a new axis of
  // extent 1 at position k of the result (-1: last).
  Value squeeze(const Expr& e, bool unsqueeze) {
    expect_args(e, 1, 1, {"axis"}, "x");
    const NodeId x = tensor_arg(e, 0);
    if (!keyword(e, "axis")) fail(e.loc, fmt::format("{}() needs axis=", e.text));
    Shape shape = node(x).shape;
    const int axis = normalize_axis(*int_kw(e, "axis"), shape.size() + (unsqueeze ? 1 : 0), kw_loc(e, "axis"), e.text);
    if (unsqueeze) {
      shape.insert(shape.begin() + axis, DimExpr::constant(1));
    } else {
      if (shape[static_cast<std::size_t>(axis)].as_constant() != std::optional<std::int64_t>(1))
        fail(kw_loc(e, "axis"), fmt::format("squeeze() drops an axis of extent 1; axis {} of {} is {}", axis,
                                            type_text(node(x).dtype, node(x).shape), shape[static_cast<std::size_t>(axis)].str()));
      if (shape.size() == 1) fail(e.loc, "squeeze() of a rank-1 tensor would give a scalar; kiln values are tensors");
      shape.erase(shape.begin() + axis);
    }
    return reshape_node(x, std::move(shape), e.loc);
  }

  // pad(x, [before_last, after_last, before_prev, after_prev, ...], mode="constant", value=0):
  // F.pad's order, the last axis first. mode "reflect" (each pad < the extent) or "replicate".
  Value pad(const Expr& e) {
    expect_args(e, 2, 2, {"mode", "value"}, "x, pads");
    const NodeId x = tensor_arg(e, 0);
    const Node& in = node(x);
    const Expr& list = *e.args[1];
    const std::vector<std::int64_t> pads = int_list(list, "the pads of pad()");
    const std::size_t rank = in.shape.size();
    if (list.kind != ExprKind::List || pads.empty() || pads.size() % 2 != 0 || pads.size() > 2 * rank)
      fail(list.loc, fmt::format("pad() takes a list of 2 to {} pads (before and after, the last axis first) for {}, got {}",
                                 2 * rank, type_text(in.dtype, in.shape), pads.size()));
    PadAttrs a;
    a.before.assign(rank, 0);
    a.after.assign(rank, 0);
    for (std::size_t i = 0; i < pads.size(); ++i) {
      if (pads[i] < 0)
        fail(list.args[i]->loc, fmt::format("pad() pads must be >= 0, got {} (PyTorch's negative pads, which crop, are not supported)", pads[i]));
      const std::size_t axis = rank - 1 - i / 2;
      (i % 2 == 0 ? a.before : a.after)[axis] = pads[i];
    }
    const std::string mode = string_kw(e, "mode").value_or("constant");
    if (mode == "constant") a.mode = PadMode::Constant;
    else if (mode == "reflect") a.mode = PadMode::Reflect;
    else if (mode == "replicate") a.mode = PadMode::Replicate;
    else fail(kw_loc(e, "mode"), fmt::format("pad() mode= expects \"constant\", \"reflect\" or \"replicate\", got \"{}\"", mode));
    if (a.mode != PadMode::Constant && keyword(e, "value"))
      fail(kw_loc(e, "value"), fmt::format("pad() takes value= in constant mode only, not \"{}\"", mode));
    Node n;
    n.kind = OpKind::Pad;
    n.dtype = in.dtype;
    for (std::size_t d = 0; d < rank; ++d) {
      const DimExpr& ext = in.shape[d];
      const std::int64_t most = std::max(a.before[d], a.after[d]);
      if (a.mode == PadMode::Reflect && most > 0) {   // each pad < the extent: now, or at bind as min(ext, pad+1) == pad+1
        const std::string message =
            fmt::format("pad() in reflect mode needs each pad < the extent: axis {} is {}, pad {}", d, ext.str(), most);
        const DimExpr need = DimExpr::constant(most + 1);
        if (const auto c = ext.as_constant(); c && most >= *c) fail(list.loc, message);
        if (!ext.as_constant()) ir_->constraints.push_back({min(ext, need), need, message, list.loc});
      }
      n.shape.push_back(ext + DimExpr::constant(a.before[d] + a.after[d]));
    }
    n.operands = {x};
    if (a.mode == PadMode::Constant) {
      const ast::KeywordArg* v = keyword(e, "value");
      Value fill = v ? expr(*v->value) : weak({Value::Kind::Int, 0, 0}, "0", e.loc);
      if (fill.is_node()) fail(v->value->loc, "pad() value= expects a constant");
      n.operands.push_back(materialize(fill, in.dtype, " in pad()"));
    }
    n.pad = std::move(a);
    n.loc = e.loc;
    return node_value(add_node(std::move(n), true), e.loc);
  }

  // concat([a, b, ...], axis=0) / cat: torch.cat. Same dtype, same extents but along axis.
  Value concat(const Expr& e) {
    expect_args(e, 1, 1, {"axis"}, "[a, b, ...]");
    const Expr& list = *e.args[0];
    if (list.kind != ExprKind::List || list.args.empty())
      fail(list.loc, fmt::format("{}() expects a list of tensors, e.g. {}([a, b], axis=1)", e.text, e.text));
    std::vector<NodeId> parts;
    for (const auto& item : list.args) {
      Value v = expr(*item);
      if (!v.is_node() || node(v.node).shape.empty())
        fail(item->loc, fmt::format("{}() joins tensors, got {}", e.text, v.is_node() ? type_text(node(v.node).dtype, node(v.node).shape) : v.text));
      parts.push_back(v.node);
    }
    const Node& first = node(parts[0]);
    const int axis = normalize_axis(int_kw(e, "axis").value_or(0), first.shape.size(), kw_loc(e, "axis"), e.text);
    Node n;
    n.kind = OpKind::Concat;
    n.dtype = first.dtype;
    n.shape = first.shape;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      const Node& p = node(parts[i]);
      const SourceLoc at = list.args[i]->loc;
      if (p.dtype != first.dtype)
        fail(at, fmt::format("{}() joins tensors of one type: {} and {}; cast one, e.g. {}(x)", e.text,
                             dtype_name(first.dtype), dtype_name(p.dtype), dtype_name(first.dtype)));
      if (p.shape.size() != first.shape.size())
        fail(at, fmt::format("{}() joins tensors of one rank: {} and {}", e.text, type_text(first.dtype, first.shape),
                             type_text(p.dtype, p.shape)));
      for (std::size_t d = 0; d < p.shape.size(); ++d)
        if (static_cast<int>(d) != axis && p.shape[d] != first.shape[d])
          fail(at, fmt::format("{}() along axis {}: {} and {} differ on axis {}", e.text, axis,
                               type_text(first.dtype, first.shape), type_text(p.dtype, p.shape), d));
      n.shape[static_cast<std::size_t>(axis)] = n.shape[static_cast<std::size_t>(axis)] + p.shape[static_cast<std::size_t>(axis)];
    }
    if (parts.size() == 1) return node_value(parts[0], e.loc);
    n.operands = parts;
    n.axis = axis;
    n.loc = e.loc;
    return node_value(add_node(std::move(n), true), e.loc);
  }

  // gather(x, index, axis=k): torch.gather; take_along_axis(x, index, axis=k): numpy's, whose other
  // axes broadcast. The result has the index's extent along k; index is an integer tensor of x's
  // rank. Index values count from the end when negative and are clamped into range
  // (docs/semantics.md).
  Value gather(const Expr& e, bool broadcasting) {
    expect_args(e, 2, 2, {"axis"}, "x, index");
    const NodeId x = tensor_arg(e, 0);
    const NodeId index = tensor_arg(e, 1, "an integer index tensor");
    const Node& xn = node(x);
    const Node& in = node(index);
    if (in.dtype != DType::i32 && in.dtype != DType::i64)
      fail(e.args[1]->loc, fmt::format("{}() needs an integer index (i32, i64), got {}", e.text, dtype_name(in.dtype)));
    if (in.shape.size() != xn.shape.size())
      fail(e.args[1]->loc, fmt::format("{}() needs an index of x's rank: x is {}, index is {}", e.text,
                                       type_text(xn.dtype, xn.shape), type_text(in.dtype, in.shape)));
    if (!keyword(e, "axis")) fail(e.loc, fmt::format("{}() needs axis=", e.text));
    const int axis = normalize_axis(*int_kw(e, "axis"), xn.shape.size(), kw_loc(e, "axis"), e.text);
    Node n;
    n.kind = OpKind::Gather;
    n.dtype = xn.dtype;
    for (std::size_t d = 0; d < xn.shape.size(); ++d) {
      if (static_cast<int>(d) == axis) {
        n.shape.push_back(in.shape[d]);
      } else if (broadcasting) {
        n.shape.push_back(broadcast({xn.shape[d]}, {in.shape[d]}, e.loc, fmt::format("{}() on axis {}", e.text, d))[0]);
      } else {
        const auto a = in.shape[d].as_constant(), b = xn.shape[d].as_constant();
        const std::string message = fmt::format("gather() needs index extents <= x's off the axis: axis {} of index is {}, of x {}",
                                                d, in.shape[d].str(), xn.shape[d].str());
        if (a && b && *a > *b) fail(e.args[1]->loc, message);
        if (in.shape[d] != xn.shape[d] && !(a && b))   // checked at bind: min(x, index) == index
          ir_->constraints.push_back({min(xn.shape[d], in.shape[d]), in.shape[d], message, e.args[1]->loc});
        n.shape.push_back(in.shape[d]);
      }
    }
    n.operands = {index, x};
    n.axis = axis;
    n.loc = e.loc;
    return node_value(add_node(std::move(n), true), e.loc);
  }

  // triu(x, diagonal=0) / tril: torch.triu / tril over the last two axes, as
  // where(col - row >= diagonal, x, 0) (<= for tril) with iota's coordinates.
  Value triangle(const Expr& e, bool upper) {
    // The diagonal as torch.triu takes it: the second argument, or diagonal=.
    expect_args(e, 1, 2, {"diagonal"}, "x, diagonal");
    const ast::KeywordArg* diagonal_kw = keyword(e, "diagonal");
    if (e.args.size() == 2 && diagonal_kw != nullptr)
      fail(diagonal_kw->loc, fmt::format("{}() needs its diagonal once: as the second argument or as diagonal=", e.text));
    const NodeId x = tensor_arg(e, 0);
    const Shape s = node(x).shape;   // a copy: add_node below may move the nodes
    if (s.size() < 2)
      fail(e.args[0]->loc, fmt::format("{}() needs rank >= 2, got {}", e.text, type_text(node(x).dtype, s)));
    const std::string what = "the diagonal of " + e.text + "()";
    const std::int64_t k = e.args.size() == 2 ? as_int(const_eval(*e.args[1], what), e.args[1]->loc, what)
                                              : int_kw(e, "diagonal").value_or(0);
    auto coordinate = [&](int axis) {
      Node n;
      n.kind = OpKind::Iota;
      n.dtype = DType::i64;
      n.shape = {s[s.size() - 2], s[s.size() - 1]};
      n.axis = axis;
      n.loc = e.loc;
      return node_value(add_node(std::move(n), true), e.loc);
    };
    const Value diff = binary(ast::BinaryOp::Sub, coordinate(1), coordinate(0), e.loc);
    const Value kv = weak({Value::Kind::Int, k, 0}, std::to_string(k), e.loc);
    const Value keep = binary(upper ? ast::BinaryOp::Ge : ast::BinaryOp::Le, diff, kv, e.loc);
    const DType t = node(x).dtype;
    const Value zero = t == DType::boolean ? weak({Value::Kind::Bool, 0, 0}, "false", e.loc)
                                           : weak({Value::Kind::Int, 0, 0}, "0", e.loc);
    return select(keep, node_value(x, e.loc), zero, e.loc);
  }

  // group_norm(x, groups, weight=, bias=, eps=1e-5): F.group_norm over x [N, C, ...] with C a
  // multiple of groups, written as views and reductions: x viewed [N, groups, rest], normalized by
  // its mean and biased variance over the last axis, viewed back, then weight [C] and bias [C] per
  // channel. f16 and bf16 compute in f32, as PyTorch.
  Value group_norm(const Expr& e) {
    using ast::BinaryOp;
    expect_args(e, 2, 2, {"weight", "bias", "eps"}, "x, groups");
    const NodeId xn = tensor_arg(e, 0);
    need_float(e, xn);
    const Shape in = node(xn).shape;
    const DType t = node(xn).dtype;
    const SourceLoc loc = e.loc;
    if (in.size() < 2)
      fail(e.args[0]->loc, fmt::format("group_norm() needs x [N, C, ...], got {}", type_text(t, in)));
    const std::int64_t groups = as_int(const_eval(*e.args[1], "the groups of group_norm()"), e.args[1]->loc,
                                       "the groups of group_norm()");
    if (groups < 1) fail(e.args[1]->loc, fmt::format("group_norm() needs groups >= 1, got {}", groups));
    const DimExpr g = DimExpr::constant(groups);
    if (const auto c = in[1].as_constant(); c && *c % groups != 0)
      fail(e.args[1]->loc, fmt::format("group_norm() needs channels divisible by groups: {} channels, {} groups", *c, groups));
    if (!in[1].as_constant())
      ir_->constraints.push_back({floor_div(in[1], g) * g, in[1],
                                  fmt::format("group_norm(): channels {} must be a multiple of groups {}", in[1].str(), groups), loc});
    const double eps = real_kw(e, "eps", 1e-5);
    if (!(eps >= 0)) fail(kw_loc(e, "eps"), fmt::format("group_norm() needs eps >= 0, got {}", eps));
    auto per_channel = [&](const char* name) -> std::optional<Value> {
      const ast::KeywordArg* kw = keyword(e, name);
      if (!kw) return std::nullopt;
      Value v = expr(*kw->value);
      if (!v.is_node() || node(v.node).shape.size() != 1 || node(v.node).shape[0] != in[1])
        fail(kw->value->loc, fmt::format("group_norm() {}= must be [C] = [{}], got {}", name, in[1].str(),
                                         v.is_node() ? type_text(node(v.node).dtype, node(v.node).shape) : v.text));
      Shape s{in[1]};
      for (std::size_t d = 2; d < in.size(); ++d) s.push_back(DimExpr::constant(1));
      return reshape_node(v.node, s, kw->value->loc);
    };
    const std::optional<Value> weight = per_channel("weight"), bias = per_channel("bias");
    const Value x = to_opmath(node_value(xn, loc), loc);
    DimExpr rest = floor_div(in[1], g);
    for (std::size_t d = 2; d < in.size(); ++d) rest = rest * in[d];
    const Value xr = reshape_node(x.node, {in[0], g, rest}, loc);
    auto mean_last = [&](const Value& v) {
      Node n;
      n.kind = OpKind::Mean;
      n.dtype = node(v.node).dtype;
      n.shape = {in[0], g, DimExpr::constant(1)};
      n.operands = {v.node};
      n.axes = {2};
      n.keepdims = true;
      n.loc = loc;
      return node_value(add_node(std::move(n), true), loc);
    };
    const Value d = binary(BinaryOp::Sub, xr, mean_last(xr), loc);
    const Value var = mean_last(binary(BinaryOp::Mul, d, d, loc));
    const Value scaled = binary(BinaryOp::Mul, d, un(OpKind::Rsqrt, binary(BinaryOp::Add, var, weak_real(eps, loc), loc), loc), loc);
    Value y = reshape_node(scaled.node, in, loc);
    if (weight) y = binary(BinaryOp::Mul, y, *weight, loc);
    if (bias) y = binary(BinaryOp::Add, y, *bias, loc);
    return from_opmath(y, t, loc);
  }

  // [Note: convolution]
  // conv{1,2,3}d(x, w, stride=, padding=, dilation=, groups=) and conv_transpose{1,2,3}d(x, w,
  // stride=, padding=, output_padding=, dilation=, groups=) are PyTorch's F.conv*d and
  // F.conv_transpose*d over the last d axes of a rank d+2 x [N, C, spatial...] (docs/semantics.md,
  // "Convolution"). conv2d alone also takes layout="NHWC". Per spatial axis, with kernel k:
  //   forward:    out = (L + 2 * padding - dilation * (k - 1) - 1) / stride + 1   (floor division)
  //   transposed: out = (L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1
  // The filters are w [K, C/groups, k...] (forward) and w [C, K/groups, k...] (transposed). A
  // relation between dims that is not decidable symbolically is recorded and checked at bind.
  // A conv parameter: an int or a list of `dims`, each within [min, 2^31).
  void conv_axes(const Expr& e, const char* name, int dims, std::int64_t min, std::int64_t out[3]) {
    SourceLoc loc = e.loc;
    auto v = ints_kw(e, name, &loc);
    if (!v) return;
    static const char* const kLists[] = {"[l]", "[h, w]", "[d, h, w]"};
    if (v->size() != 1 && v->size() != static_cast<std::size_t>(dims))
      fail(loc, fmt::format("{}= of {}() is an int or {}, got {} values", name, e.text, kLists[dims - 1], v->size()));
    for (int i = 0; i < dims; ++i) {
      out[i] = v->size() == 1 ? (*v)[0] : (*v)[static_cast<std::size_t>(i)];
      if (out[i] < min || out[i] >= (std::int64_t{1} << 31))
        fail(loc, fmt::format("{} of {}() must be in {}..2147483647, got {}", name, e.text, min, out[i]));
    }
  }

  Value conv(const Expr& e, int dims, bool transposed) {
    std::vector<std::string> keywords = {"stride", "padding", "dilation", "groups", "precision"};
    if (transposed) keywords.push_back("output_padding");
    if (dims == 2 && !transposed) keywords.push_back("layout");
    expect_args(e, 2, 2, keywords, "x, w");
    NodeId x = tensor_arg(e, 0);
    NodeId w = tensor_arg(e, 1);
    const Node& nx = node(x);
    const Node& nw = node(w);
    static const char* const kKernel[] = {"S", "R, S", "T, R, S"};
    const std::size_t rank = static_cast<std::size_t>(dims) + 2;
    if (nx.shape.size() != rank)
      fail(e.args[0]->loc, fmt::format("{}() needs a rank-{} input x, got {}", e.text, rank, type_text(nx.dtype, nx.shape)));
    if (nw.shape.size() != rank)
      fail(e.args[1]->loc, fmt::format("{}() needs a rank-{} weight w [{}, {}], got {}", e.text, rank,
                                       transposed ? "C, K/groups" : "K, C/groups", kKernel[dims - 1],
                                       type_text(nw.dtype, nw.shape)));
    if (nx.dtype != nw.dtype)
      fail(e.loc, fmt::format("mismatched types in {}(): {} and {}; cast one side explicitly, e.g. {}(w)", e.text,
                              dtype_name(nx.dtype), dtype_name(nw.dtype), dtype_name(nx.dtype)));
    if (!dtype_is_float(nx.dtype))
      fail(e.loc, fmt::format("{}() needs a float type (f32, f16, bf16, f64), got {}", e.text, dtype_name(nx.dtype)));
    ir::ConvAttrs c;
    c.dims = dims;
    c.transposed = transposed;
    conv_axes(e, "stride", dims, 1, c.stride);
    conv_axes(e, "padding", dims, 0, c.padding);
    conv_axes(e, "dilation", dims, 1, c.dilation);
    if (transposed) conv_axes(e, "output_padding", dims, 0, c.output_padding);
    if (auto g = int_kw(e, "groups")) {
      if (*g < 1 || *g >= (std::int64_t{1} << 31))
        fail(kw_loc(e, "groups"), fmt::format("groups of {}() must be in 1..2147483647, got {}", e.text, *g));
      c.groups = *g;
    }
    if (auto layout = string_kw(e, "layout")) {
      if (*layout == "NCHW") c.layout = ir::Layout::NCHW;
      else if (*layout == "NHWC") c.layout = ir::Layout::NHWC;
      else fail(kw_loc(e, "layout"), fmt::format("layout= expects \"NCHW\" or \"NHWC\", got \"{}\"", *layout));
    }
    for (int i = 0; i < dims; ++i)
      if (c.output_padding[i] >= std::max(c.stride[i], c.dilation[i]))
        fail(kw_loc(e, "output_padding"),
             fmt::format("output_padding of {}() must be smaller than the stride or the dilation (axis {}: stride {}, "
                         "dilation {}), got {}", e.text, i, c.stride[i], c.dilation[i], c.output_padding[i]));
    const bool nhwc = c.layout == ir::Layout::NHWC;
    const DimExpr& batch = nx.shape[0];
    const DimExpr& channels = nx.shape[nhwc ? 3 : 1];
    const DimExpr groups = DimExpr::constant(c.groups);
    // Forward: x's channels are w.shape[1] * groups and K = w.shape[0] (divisible by groups).
    // Transposed: x's channels are w.shape[0] (divisible by groups) and K = w.shape[1] * groups.
    const DimExpr& w_in = nw.shape[transposed ? 0 : 1];
    const DimExpr& w_split = nw.shape[0];   // divisible by groups
    const DimExpr expected_c = transposed ? w_in : w_in * groups;
    if (expected_c != channels) {
      auto cc = channels.as_constant();
      auto ec = expected_c.as_constant();
      const std::string rule = transposed ? "w.shape[0]" : fmt::format("w.shape[1] * groups = {} * {}", w_in.str(), c.groups);
      // Without groups the two must be the same dim, as a matmul's inner dims must.
      if ((cc && ec) || c.groups == 1 || transposed)
        fail(e.loc, fmt::format("{}() channels do not match: x has {} channels but {} = {}{}", e.text, channels.str(),
                                rule, expected_c.str(), same_value_hint(channels, expected_c)));
      ir_->constraints.push_back({channels, expected_c,
                                  fmt::format("{}() at {} needs x's channels to equal {}", e.text, at(e.loc),
                                              transposed ? "w.shape[0]" : "w.shape[1] * groups"),
                                  e.loc});
    }
    if (c.groups > 1) {
      const char* what = transposed ? "input channels w.shape[0]" : "output channels w.shape[0]";
      if (auto kc = w_split.as_constant()) {
        if (*kc % c.groups != 0)
          fail(e.loc, fmt::format("{}() {} = {} are not divisible by groups = {}", e.text, what, *kc, c.groups));
      } else {
        ir_->constraints.push_back({floor_div(w_split, groups) * groups, w_split,
                                    fmt::format("{}() at {} needs w.shape[0] divisible by groups = {}", e.text,
                                                at(e.loc), c.groups),
                                    e.loc});
      }
    }
    const DimExpr k = transposed ? nw.shape[1] * groups : nw.shape[0];
    static const char* const kLabels[3][3] = {{"length"}, {"height", "width"}, {"depth", "height", "width"}};
    Shape spatial;
    for (int i = 0; i < dims; ++i) {
      const DimExpr& in = nx.shape[nhwc ? 1 + static_cast<std::size_t>(i) : 2 + static_cast<std::size_t>(i)];
      const DimExpr& kernel = nw.shape[2 + static_cast<std::size_t>(i)];
      const DimExpr span = DimExpr::constant(c.dilation[i]) * (kernel - DimExpr::constant(1));
      DimExpr out = transposed ? (in - DimExpr::constant(1)) * DimExpr::constant(c.stride[i]) + span +
                                     DimExpr::constant(c.output_padding[i] + 1 - 2 * c.padding[i])
                               : floor_div(in + DimExpr::constant(2 * c.padding[i]) - span - DimExpr::constant(1),
                                           DimExpr::constant(c.stride[i])) +
                                     DimExpr::constant(1);
      if (auto v = out.as_constant(); v && *v < 1)
        fail(e.loc, fmt::format("{}() output {} would be {} (< 1): {}", e.text, kLabels[dims - 1][i], *v,
                                transposed ? "the padding removes more than the transposed conv produces"
                                           : "the input is smaller than the dilated kernel"));
      spatial.push_back(std::move(out));
    }
    Node n;
    n.kind = OpKind::Conv;
    n.dtype = nx.dtype;
    n.shape = {batch};
    if (!nhwc) n.shape.push_back(k);
    n.shape.insert(n.shape.end(), spatial.begin(), spatial.end());
    if (nhwc) n.shape.push_back(k);
    n.operands = {x, w};
    n.conv = c;
    n.precision = precision_kw(e, nx.dtype);
    n.loc = e.loc;
    return node_value(add_node(std::move(n), true), e.loc);
  }

  // [Note: pooling]
  // max_pool{1,2,3}d(x, kernel_size, stride=, padding=, dilation=, ceil_mode=) and
  // avg_pool{1,2,3}d(x, kernel_size, stride=, padding=, ceil_mode=, count_include_pad=,
  // divisor_override=) are PyTorch's F.max_pool*d / F.avg_pool*d: a window over the last d axes
  // of a rank d+1 or d+2 float tensor, with PyTorch's checks and output size (docs/semantics.md,
  // "Pooling"). Per spatial axis, with e = dilation * (kernel - 1) + 1 and A = L + 2 * padding - e:
  //   out = A / stride + 1                                   (floor division)
  //   out = min(ceil(A / stride), (L + padding - 1) / stride) + 1         (ceil_mode)
  // The min is PyTorch's "drop the last window when it starts in the right padding", written as
  // one expression so a symbolic L keeps a symbolic size (it never drops more than one window,
  // since padding <= kernel / 2).
  void pool_axes(const Expr& e, const Expr* value, SourceLoc loc, const char* name, int dims, std::int64_t min,
                 std::int64_t out[3]) {
    if (!value) return;
    const std::vector<std::int64_t> v = int_list(*value, fmt::format("{} of {}()", name, e.text));
    if (v.size() != 1 && v.size() != static_cast<std::size_t>(dims))
      fail(loc, fmt::format("{} of {}() is an int or a list of {}, got {} values", name, e.text, dims, v.size()));
    for (int i = 0; i < dims; ++i) {
      out[i] = v.size() == 1 ? v[0] : v[static_cast<std::size_t>(i)];
      if (out[i] < min || out[i] >= (std::int64_t{1} << 31))
        fail(loc, fmt::format("{} of {}() must be in {}..2147483647, got {}", name, e.text, min, out[i]));
    }
  }

  Value pool(const Expr& e, OpKind kind, int dims) {
    const bool is_max = kind == OpKind::MaxPool;
    expect_args(e, 1, 2,
                is_max ? std::vector<std::string>{"kernel_size", "stride", "padding", "dilation", "ceil_mode"}
                       : std::vector<std::string>{"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                                                  "divisor_override"},
                "x, kernel_size");
    const ast::KeywordArg* kernel_kw = keyword(e, "kernel_size");
    if ((e.args.size() == 2) == (kernel_kw != nullptr))
      fail(kernel_kw ? kernel_kw->loc : e.loc,
           fmt::format("{}() needs its kernel_size once: as the second argument or as kernel_size=", e.text));
    const Expr& kernel_value = kernel_kw ? *kernel_kw->value : *e.args[1];
    NodeId x = tensor_arg(e, 0);
    need_float(e, x);
    const Node& nx = node(x);
    const std::size_t rank = nx.shape.size();
    if (rank != static_cast<std::size_t>(dims) + 1 && rank != static_cast<std::size_t>(dims) + 2) {
      static const char* const kAxes[] = {"L", "H, W", "D, H, W"};
      fail(e.args[0]->loc, fmt::format("{}() needs a rank-{} or rank-{} input ([C, {}] or [N, C, {}]), got {}", e.text,
                                       dims + 1, dims + 2, kAxes[dims - 1], kAxes[dims - 1], type_text(nx.dtype, nx.shape)));
    }
    ir::PoolAttrs a;
    a.dims = dims;
    pool_axes(e, &kernel_value, kernel_value.loc, "kernel_size", dims, 1, a.kernel);
    std::copy(a.kernel, a.kernel + 3, a.stride);   // PyTorch: stride defaults to the kernel size
    auto kw_value = [&](const char* name) -> const Expr* {
      const ast::KeywordArg* kw = keyword(e, name);
      return kw ? kw->value.get() : nullptr;
    };
    pool_axes(e, kw_value("stride"), kw_loc(e, "stride"), "stride", dims, 1, a.stride);
    pool_axes(e, kw_value("padding"), kw_loc(e, "padding"), "padding", dims, 0, a.padding);
    if (is_max) pool_axes(e, kw_value("dilation"), kw_loc(e, "dilation"), "dilation", dims, 1, a.dilation);
    a.ceil_mode = bool_kw(e, "ceil_mode").value_or(false);
    if (!is_max) {
      a.count_include_pad = bool_kw(e, "count_include_pad").value_or(true);
      if (auto d = int_kw(e, "divisor_override")) {
        if (*d == 0 || *d <= -(std::int64_t{1} << 31) || *d >= (std::int64_t{1} << 31))
          fail(kw_loc(e, "divisor_override"),
               fmt::format("divisor_override of {}() must be a nonzero int32, got {}", e.text, *d));
        a.divisor = *d;
      }
    }
    for (int i = 0; i < dims; ++i)
      if (a.padding[i] > a.kernel[i] / 2)
        fail(keyword(e, "padding") ? kw_loc(e, "padding") : e.loc,
             fmt::format("padding of {}() must be at most half the kernel size (kernel {}: padding <= {}), got {}",
                         e.text, a.kernel[i], a.kernel[i] / 2, a.padding[i]));
    Node n;
    n.kind = kind;
    n.dtype = nx.dtype;
    n.shape = Shape(nx.shape.begin(), nx.shape.end() - dims);
    for (int i = 0; i < dims; ++i) {
      const DimExpr& len = nx.shape[rank - static_cast<std::size_t>(dims) + static_cast<std::size_t>(i)];
      const std::int64_t span = a.dilation[i] * (a.kernel[i] - 1) + 1;
      const DimExpr stride = DimExpr::constant(a.stride[i]);
      const DimExpr room = len + DimExpr::constant(2 * a.padding[i] - span);
      DimExpr out = a.ceil_mode ? min(floor_div(room + DimExpr::constant(a.stride[i] - 1), stride),
                                      floor_div(len + DimExpr::constant(a.padding[i] - 1), stride)) +
                                      DimExpr::constant(1)
                                : floor_div(room, stride) + DimExpr::constant(1);
      if (auto v = out.as_constant(); v && *v < 1)
        fail(e.loc, fmt::format("{}() output size along spatial axis {} would be {} (< 1): the {}input ({}{}) is "
                                "smaller than the {}window ({})",
                                e.text, i, *v, a.padding[i] ? "padded " : "", len.str(),
                                a.padding[i] ? fmt::format(" + 2 * {}", a.padding[i]) : "",
                                a.dilation[i] > 1 ? "dilated " : "", span));
      n.shape.push_back(std::move(out));
    }
    n.operands = {x};
    n.pool = a;
    n.loc = e.loc;
    return node_value(add_node(std::move(n), true), e.loc);
  }

  const ast::OpDecl& op_;
  const Consts& consts_;
  Diagnostics& diag_;
  std::shared_ptr<ir::Ir> ir_;
  std::map<std::string, Symbol> symbols_;
  std::vector<bool> from_tensor_;   // per node: depends on a tensor input (else scalar-only)
};

}  // namespace

std::shared_ptr<ir::Ir> check(const ast::OpDecl& op, std::shared_ptr<const SourceFile> source, const Consts& consts,
                              Diagnostics& diagnostics) {
  return Checker(op, std::move(source), consts, diagnostics).run();
}

}  // namespace kiln
