// The checked op graph (Ir) and its shape-bound form (BoundIr).
//
// [Note: two stages of the op graph]
// `check` turns one parsed op into an Ir with its consts already substituted
// (consts are compile-time parameters, like tl.constexpr: a different const value
// is a different program, so the checker sees concrete axis lists, strides and
// probabilities) while dims stay symbolic: every node's shape is a list of
// DimExpr over the op's dim names. `bind` then gives every dim a value (from
// tensor shapes, -D, or the defaults) and yields a BoundIr with concrete shapes.
// The planner and the reference interpreter only ever see a BoundIr.
#pragma once

#include <cstdint>
#include <map>
#include <functional>
#include <set>
#include <unordered_set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "generator/support/source.h"
#include "kiln/kiln.h"

namespace kiln {

namespace ir {

using NodeId = int;
using kiln::SourceLoc;   // generator/support/source.h

// A symbolic dimension: a constant, a dim name, or integer arithmetic on those
// (conv output sizes). Immutable value type; build with the factories and
// operators, which fold constants.
class DimExpr {
 public:
  enum class Kind : std::uint8_t { Const, Dim, Add, Sub, Mul, FloorDiv, Min };

  DimExpr() : DimExpr(constant(0)) {}
  DimExpr(const DimExpr&) = default;
  DimExpr(DimExpr&&) = default;
  DimExpr& operator=(const DimExpr&) = default;
  DimExpr& operator=(DimExpr&&) = default;
  ~DimExpr();   // iterative: a chain of 100,000 convs nests sizes that deep
  static DimExpr constant(std::int64_t value);
  static DimExpr dim(std::string name);

  friend DimExpr operator+(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator-(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator*(const DimExpr& a, const DimExpr& b);
  friend DimExpr floor_div(const DimExpr& a, const DimExpr& b);
  friend DimExpr min(const DimExpr& a, const DimExpr& b);   // ceil_mode pooling's output size
  // Structural equality after constant folding ("N" == "N", "(H - 2)" == "(H - 2)").
  friend bool operator==(const DimExpr& a, const DimExpr& b);
  friend bool operator!=(const DimExpr& a, const DimExpr& b) { return !(a == b); }

  Kind kind() const { return kind_; }
  std::optional<std::int64_t> as_constant() const;
  const std::string& name() const { return name_; }   // Kind::Dim
  // Evaluates with every dim bound; throws kiln::ArgumentError naming an unbound dim.
  std::int64_t evaluate(const std::map<std::string, std::int64_t>& dims) const;
  std::string str() const;   // "N", "1", "((H - 2) / 1 + 1)", "min(a, b)" style, stable
  // The value as a C++ expression of long long (generated kernels): each dim as dim_code(name),
  // a min as kiln::launch::min_ll. Extents are never negative, so `/` (truncating) is the floor.
  std::string code(const std::function<std::string(const std::string&)>& dim_code) const;
  // Whether the expression divides or takes a min anywhere (a conv's or pool's output size).
  bool divides() const;
  // The expression as a flat program (kiln::ShapeExpr, Op::shape_rules): iterative, shared nodes once.
  ShapeExpr flatten() const;
  // Whether the expression reads any of `names` (iterative, like evaluate).
  bool mentions(const std::set<std::string>& names) const;
  // Calls visit(name) for each dim node not in `seen` (adding every node it walks), so callers
  // that share `seen` walk each shared node once in all; stops and returns true when visit does,
  // leaving `seen` as it was before the call (so a set of nodes walked without a find stays one).
  bool walk_dims(std::unordered_set<const DimExpr*>& seen, const std::function<bool(const std::string&)>& visit) const;

 private:
  friend struct DimExprAccess;   // generator/ir/ir.cpp builds and inspects nodes
  std::string print(const std::function<std::string(const std::string&)>* dim_code) const;   // str, code
  DimExpr(Kind kind, std::int64_t value) : kind_(kind), value_(value) {}
  Kind kind_ = Kind::Const;
  std::int64_t value_ = 0;
  std::string name_;
  std::shared_ptr<const DimExpr> lhs_, rhs_;
};

using Shape = std::vector<DimExpr>;
// Whether any extent of `shape` reads one of `dims`.
bool mentions(const Shape& shape, const std::set<std::string>& dims);

enum class OpKind : std::uint8_t {
  // leaves
  Input,      // tensor input (Param)
  Scalar,     // scalar input: a run-time argument (Param)
  Literal,    // numeric literal, value in `literal`, dtype fixed by the checker
  // elementwise, unary
  Neg, Not, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Relu, Gelu, Silu, Log1p, Expm1, Erf, Cast,
  // elementwise, binary (numpy broadcasting)
  Add, Sub, Mul, Div, Pow, Minimum, Maximum, Eq, Ne, Lt, Le, Gt, Ge, And, Or,
  // elementwise, ternary: where(cond, a, b)
  Where,
  // reductions over `axes` (sorted, non-negative), `keepdims`
  Sum, Mean, Min, Max, Prod, Argmin, Argmax, Logsumexp,
  // scans along `axis`, `exclusive`, `reverse`
  Cumsum, Cumprod, Cummax, Cummin,
  // row normalizations along `axis`
  Softmax, LogSoftmax,
  // normalize(x[, eps]) over the trailing `axes`: never written by a user; the planner's
  // composition pass makes it from a norm written out ([Note: norm compositions]); `norm`
  Normalize,
  // attention(q, kt, v[, scale]): softmax(q·kt · scale, masked) · v over the last two axes, batch
  // dims broadcast as matmul's; never written by a user: the planner's composition pass makes it
  // from the product written out ([Note: attention compositions]); `attention`
  Attention,
  // dropout(x, p, seed): operands {x, seed scalar}; `p`
  Dropout,
  // matmul(a, b): batched, batch dims broadcast; operands may be Permute views
  Matmul,
  // a view: output dim i is input dim perm[i]; transpose(x) = swap of the last two
  Permute,
  // conv{1,2,3}d(x, w) and conv_transpose{1,2,3}d(x, w): `conv` (ir::conv_name gives the full name)
  Conv,
  // iota(d0, d1, ..., axis=k): no operands; an i64 tensor whose element is its coordinate along `axis`
  Iota,
  // a dim written as a value (`sum(x) / N`): no operands; a 0-d i64 whose value is the extent the
  // dim `dim` is bound to ([Note: dims as values] in checker.cpp)
  DimValue,
  // max_pool{1,2,3}d(x, kernel) / avg_pool{1,2,3}d(x, kernel): a window over the last `pool.dims`
  // axes; `pool`
  MaxPool, AvgPool,
  // Index views ([Note: index views]): each element of the result is an element of an operand
  // (or pad's constant), found from the result's coordinates.
  Reshape,   // reshape(x, shape): the same elements in row-major order, another shape
  Pad,       // pad(x, ...): `pad`
  Concat,    // concat([a, b, ...], axis): operands along `axis`
  Gather,    // gather(x, index, axis): operands {index, x}; x at the index's value along `axis`
  Expand,    // expand(x, shape): x broadcast to the node's shape (numpy's rules, torch.expand)
};

const char* op_kind_name(OpKind kind);   // "add", "sum", "conv2d", ...
bool is_elementwise(OpKind kind);        // unary, binary, Where, Cast, Dropout
bool is_reduction(OpKind kind);
bool is_scan(OpKind kind);
bool is_rownorm(OpKind kind);            // Softmax, LogSoftmax
bool is_pool(OpKind kind);               // MaxPool, AvgPool
bool is_view(OpKind kind);               // Permute, Reshape, Pad, Concat, Gather, Expand

// [Note: index views]
// Permute, Reshape, Pad, Concat, Gather and Expand copy no data in a plan: whatever reads them evaluates
// their operand at other coordinates (generator/emit/expr_emitter.cpp, operand_coords). Reshape
// keeps the row-major order: the element at flat index f of the result is the operand's element
// at flat index f. Pad reads its operand at the coordinates less the leading pad (reflected or
// clamped into range, or its constant outside); Concat reads the operand whose slice holds the
// coordinate along its axis; Gather reads x at the index's value along its axis (negative values
// count from the end, then every value is clamped into range: docs/semantics.md). None of them Expand reads
// its operand at the broadcast coordinates (numpy's rules: aligned on the right, an extent-1 dim
// read at 0), as a broadcast operand of an elementwise op is read.
// is elementwise, so no anchor takes one into its epilogue; an anchor whose template streams its
// operand takes a view in its prologue when the operand has a stored tensor of its own size to
// stream, and the planner stores the operand first otherwise.

enum class PadMode : std::uint8_t { Constant, Reflect, Replicate };
const char* pad_mode_name(PadMode mode);   // "constant", "reflect", "replicate"

// pad(x, pads, mode=, value=): per axis of x (all of them, outermost first), the elements added
// before and after. In constant mode the node's second operand is the value (a Literal).
struct PadAttrs {
  std::vector<std::int64_t> before, after;
  PadMode mode = PadMode::Constant;
};

enum class Layout : std::uint8_t { NCHW, NHWC };

// A convolution over the last `dims` axes of x (docs/semantics.md, "Convolution"); entries past
// `dims` are unused. Index i is spatial axis i (outermost first), as in PoolAttrs.
struct ConvAttrs {
  int dims = 2;                                // 1, 2 or 3
  bool transposed = false;                     // conv_transpose: w is [C, K/groups, kernel...]
  std::int64_t stride[3] = {1, 1, 1};
  std::int64_t padding[3] = {0, 0, 0};
  std::int64_t dilation[3] = {1, 1, 1};
  std::int64_t output_padding[3] = {0, 0, 0};  // transposed only
  std::int64_t groups = 1;
  Layout layout = Layout::NCHW;   // conv2d only: x is [N,C,H,W] or [N,H,W,C]; w is always [K, C/groups, R, S]
};
// "conv2d", "conv_transpose3d", ...
const char* conv_name(const ConvAttrs& c);


// A pooling window over the last `dims` axes of x (docs/semantics.md, "Pooling"); entries past
// `dims` are unused. Index i is spatial axis i (outermost first).
struct PoolAttrs {
  int dims = 2;                          // 1, 2 or 3
  std::int64_t kernel[3] = {1, 1, 1};
  std::int64_t stride[3] = {1, 1, 1};
  std::int64_t padding[3] = {0, 0, 0};
  std::int64_t dilation[3] = {1, 1, 1};  // max_pool only (avg_pool has none: 1)
  bool ceil_mode = false;
  bool count_include_pad = true;         // avg_pool only
  std::int64_t divisor = 0;              // avg_pool's divisor_override; 0: none
};

// A normalization the planner recognized in a composition (generator/plan/fuse_norms.cpp):
//   centered: y = d * s(sum(d * d) over the axes), d = x - mean(x) over the same axes
//   else:     y = d * s(...) with d = x itself (RMS and L2 norms)
// s(q) = rsqrt(q / len + eps) for `mean`, rsqrt(q + eps) for a sum; `divide` is the written form
// d / sqrt(...), which rounds as 1 / sqrt(...); eps is operand 1 when there is one (a scalar).
struct NormAttrs {
  bool centered = true;
  bool mean = true;
  bool divide = false;
};

// An attention the planner recognized (generator/plan/fuse_attention.cpp): scores = q·kt, times
// the scale (a literal `scale`, or operand 3, a scalar; `divide`: divided by it instead), the
// causal mask (`causal`: key j > query i reads as -inf), softmax over the keys, times v.
struct AttentionAttrs {
  bool causal = false;
  bool divide = false;
  bool has_scale = false;      // false: scale 1
  double scale = 1.0;          // the literal scale (operand 3 absent)
};

// Per-op precision request for f32 matmul/conv; nullopt = the runtime's default.
using PrecisionChoice = std::optional<Precision>;

struct Node {
  OpKind kind = OpKind::Literal;
  DType dtype = DType::f32;
  Shape shape;                       // [] for scalars
  std::vector<NodeId> operands;
  std::string name;                  // Input/Scalar: param name; else the let/out name that defined it, if any
  ConstValue literal;                // Literal: an integer for integer dtypes (exact), a float for float dtypes
  std::vector<int> axes;             // reductions
  bool keepdims = false;
  int axis = 0;                      // scans, rownorms, iota, concat, gather
  std::string dim;                   // DimValue: the dim's name
  bool exclusive = false, reverse = false;
  double p = 0;                      // Dropout
  std::vector<int> perm;             // Permute
  ConvAttrs conv;                    // Conv
  PoolAttrs pool;                    // MaxPool, AvgPool
  PadAttrs pad;                      // Pad
  NormAttrs norm;                    // Normalize (its axes in `axes`)
  AttentionAttrs attention;          // Attention
  PrecisionChoice precision;         // Matmul, Conv
  SourceLoc loc;                     // the expression this node came from
};

// op_kind_name, but a conv names its dims and direction ("conv_transpose3d")
const char* node_kind_name(const Node& n);

struct DimDecl {
  std::string name;
  std::optional<std::int64_t> default_value;
  bool dynamic = false;              // `dyn`: a run-time kernel argument, not baked in
  SourceLoc loc;
  bool fixed = false;                // `static`: baked in whatever Options::shapes says (generic_dims skips it)
};

struct ConstDecl {
  std::string name;
  DType dtype = DType::i64;          // `int` is i64; f32; f64; bool
  ConstValue value;                  // the value this Ir was checked with (exact for ints)
  SourceLoc loc;
};

struct Param {                       // an `in`, in declaration order
  std::string name;
  NodeId node = -1;
  bool is_tensor = true;
  DType dtype = DType::f32;
  Shape shape;                       // tensors only
  SourceLoc loc;
};

struct OutputDecl {                  // an `out`, in declaration order
  std::string name;
  NodeId node = -1;
  SourceLoc loc;
};

// A relation between dims that the checker could not decide symbolically
// (conv2d's channels against w.shape[1] * groups, K divisible by groups);
// bind() checks it with concrete values and reports `message` on failure.
struct DimConstraint {
  DimExpr lhs, rhs;            // must be equal once bound
  std::string message;         // what the user must fix
  SourceLoc loc;
};

struct Ir {
  std::string op_name;
  std::shared_ptr<const SourceFile> source;   // for locations and spec-line comments
  SourceLoc loc;
  std::vector<DimDecl> dims;
  std::vector<ConstDecl> consts;
  std::vector<Param> params;
  std::vector<OutputDecl> outputs;
  std::vector<Node> nodes;                    // topological: operands precede users
  std::vector<DimConstraint> constraints;     // checked by bind()

  const Node& node(NodeId id) const { return nodes.at(static_cast<std::size_t>(id)); }
  const DimDecl* find_dim(const std::string& name) const;
  std::set<std::string> dyn_dims() const;     // the names of the `dyn` dims
  // "cumsum_exclusive(x: f32[B, N]) -> y: f32[B, N]"
  std::string signature() const;
  // "scan.kiln:5:11: op cumsum_exclusive": where a plan-time refusal (an UnsupportedError) points,
  // in the form of the checker's locations (the op's name for a spec without a file).
  std::string where(SourceLoc at) const;
};

// Stable, readable text form (golden-tested):
//   op cumsum_exclusive(x: f32[B, N]) -> (y: f32[B, N])
//     %0 = input x : f32[B, N]
//     %1 = cumsum(%0, axis=1, exclusive) : f32[B, N]   # line 5
//     out y = %1
std::string print(const Ir& ir);

// ---------------------------------------------------------------- bound form
struct BoundIr {
  std::shared_ptr<const Ir> ir;
  std::map<std::string, std::int64_t> dims;              // every dim of the op
  std::vector<std::vector<std::int64_t>> shapes;        // per node, concrete

  const Node& node(NodeId id) const { return ir->node(id); }
  const std::vector<std::int64_t>& shape(NodeId id) const { return shapes.at(static_cast<std::size_t>(id)); }
  std::int64_t numel(NodeId id) const;
  bool is_dynamic(const std::string& dim) const;
  // The extent a DimValue node stands for ([Note: dims as values]); an UnsupportedError for a dyn
  // dim (bind() has refused an extent past the i32 the dim took).
  std::int64_t dim_value(NodeId id) const;
};

// Where a dim's value came from, for conflict messages:
// "x.shape[1]", "-D N=4096", "the default (dims N = 4096)".
struct DimValue {
  std::int64_t value = 0;
  std::string source;
};

// A binding error that has a place in the spec (the dim's declaration, the node whose
// size is wrong): `kiln check --ir` shows it as `file:line:col: error: ...`.
class BindError : public ShapeError {
 public:
  BindError(const std::string& message, SourceLoc loc) : ShapeError(message), loc_(loc) {}
  SourceLoc loc() const { return loc_; }

 private:
  SourceLoc loc_;
};

// Binds every dim. `given` wins over defaults; a dim with neither is an error.
// Values must be >= 1 (0-size tensors are rejected with a clear message).
// Throws kiln::ArgumentError naming the dim, both values and both sources on a conflict;
// errors about the spec's own dims, constraints and sizes are BindErrors with a location.
BoundIr bind(std::shared_ptr<const Ir> ir, const std::map<std::string, DimValue>& given);

// Binds from the shapes of the tensor params (in `params` order, scalars skipped
// by passing an empty vector), then defaults. Dims that appear only as
// expressions (conv outputs) are checked after binding.
BoundIr bind_from_shapes(std::shared_ptr<const Ir> ir,
                         const std::vector<std::vector<std::int64_t>>& param_shapes,
                         const std::vector<std::vector<std::int64_t>>& output_shapes);

// The bound form printed: the Ir text with every shape concrete, plus "dims: B=32768 N=32768".
std::string print(const BoundIr& bound);

}  // namespace ir
}  // namespace kiln

// `{}` of a ConstValue is its exact text.
template <>
struct fmt::formatter<kiln::ConstValue> : fmt::formatter<std::string> {
  template <class Context>
  auto format(const kiln::ConstValue& v, Context& ctx) const {
    return fmt::formatter<std::string>::format(v.str(), ctx);
  }
};
