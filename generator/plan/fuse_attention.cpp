// The planner's composition pass for attention: softmax(q·kᵀ · scale [masked]) · v written out
// becomes one Attention node.
//
// [Note: attention compositions]
// Planned node by node, attention is a matmul whose epilogue takes the scale and the mask, a
// softmax over a score tensor of batch x s x t elements in memory (1 GiB at batch 1024, s = t =
// 4096 in f16), and a second matmul reading it back. This pass finds the pattern and replaces
// the second matmul by an Attention node (ir.h, AttentionAttrs) over q, kᵀ and v, which the
// attention family plans as one flash kernel (attention_sm90.cuh): the scores of a key tile live
// in registers, and the softmax is taken online across the tiles.
//
// What matches (each node of one 16-bit float dtype, every score node of the scores' shape and
// read only by the next node of the chain):
//   o = matmul(p, v)            p = softmax(x, axis=-1)
//   x = a chain over y = matmul(q, kt) of at most one of each:
//         x * c | c * x | x / c         c: a literal or a scalar argument (one element)
//         where(keep, x, fill) | where(drop, fill, x)
//             fill: -inf or at most the dtype's lowest finite value;
//             keep: col <= row | row >= col; drop: col > row | row < col, where row and col are
//             iota over the scores' last two axes (causal, top-left aligned: key j of query i is
//             excluded when j > i, as PyTorch's is_causal)
// A mask written below the scale (the fill times the scale) matches only with a positive literal
// scale. What the kernel takes is the template library's rule (config/attention.h): sm_90a, head
// dims of 64, 128 or 256, dyn dims only in the batch dims and the query and key rows ([Note:
// dyn attention] in plan_contraction.cpp), at most two batch dims, kt a view of an input
// with the head dim contiguous, and q and v stored with it contiguous (a view of an input, or
// stored first by the planner). A match not fused says why in the plan's `fusions`.
//
// Semantics: the fused node computes the scores in f32 and rounds only P (to the inputs' dtype,
// for the second product) and the output. The composition as written rounds the scores, the
// scaled scores and P to 16 bits. So the oracle of a fused 16-bit attention is the fused graph's
// reference (runtime/op_check.cpp, [Note: the oracle of a fused 16-bit norm]); the CPU tests
// check the rewritten graph against the composition.
#include <algorithm>
#include <cmath>

#include "generator/support/assert.h"
#include "generator/plan/planner.h"
#include "templates/kiln/config/attention.h"

namespace kiln {

namespace {

using ir::NodeId;
using ir::OpKind;

struct AttentionMatch {
  NodeId q = -1, kt = -1, v = -1, scores = -1, scale = -1;   // scale: a Scalar operand, or -1
  ir::AttentionAttrs attrs;
};

class Matcher {
 public:
  Matcher(const ir::BoundIr& bound, std::vector<int> uses) : bound_(bound), uses_(std::move(uses)) {}

  // The match ending at matmul `id`, or a refusal (why not) when the shape is attention but the
  // chain is not one the node holds; nullopt and "" when `id` is no attention at all.
  std::optional<AttentionMatch> match(NodeId id, std::string& refusal) const {
    refusal.clear();
    const ir::Node& o = node(id);
    if (o.kind != OpKind::Matmul) return std::nullopt;
    const NodeId p = o.operands[0];
    const ir::Node& pn = node(p);
    const auto& ps = bound_.shape(p);
    if (pn.kind != OpKind::Softmax || ps.size() < 2) return std::nullopt;
    const int axis = pn.axis < 0 ? pn.axis + static_cast<int>(ps.size()) : pn.axis;
    if (axis != static_cast<int>(ps.size()) - 1) return std::nullopt;
    AttentionMatch m;
    m.v = o.operands[1];
    if (uses_[static_cast<std::size_t>(p)] != 1) {
      refusal = "the softmax is read elsewhere too (it would have to be stored)";
      return std::nullopt;
    }
    bool mask_below_scale = false, masked = false;
    NodeId x = pn.operands[0];
    while (node(x).kind != OpKind::Matmul) {
      const ir::Node& n = node(x);
      if (uses_[static_cast<std::size_t>(x)] != 1 || bound_.shape(x) != ps) {
        refusal = fmt::format("the {} on line {} between the product and the softmax is read elsewhere or "
                              "broadcasts the scores", ir::node_kind_name(n), n.loc.line);
        return std::nullopt;
      }
      if ((n.kind == OpKind::Mul || n.kind == OpKind::Div) && !m.attrs.has_scale) {
        const int side = n.kind == OpKind::Div ? 1 : one_element(n.operands[1]) ? 1 : 0;
        const NodeId c = n.operands[static_cast<std::size_t>(side)];
        if (!one_element(c)) {
          refusal = fmt::format("the {} on line {} is not by one literal or scalar", ir::node_kind_name(n), n.loc.line);
          return std::nullopt;
        }
        m.attrs.has_scale = true;
        m.attrs.divide = n.kind == OpKind::Div;
        if (node(c).kind == OpKind::Scalar) m.scale = c;
        else m.attrs.scale = node(c).literal.to_double();
        x = n.operands[static_cast<std::size_t>(1 - side)];
        continue;
      }
      if (n.kind == OpKind::Where && !masked) {
        const NodeId cond = n.operands[0], a = n.operands[1], b = n.operands[2];
        const int causal_keep = causal_relation(cond);
        if (is_fill(b, n.dtype) && causal_keep == 1) {
          x = a;
        } else if (is_fill(a, n.dtype) && causal_keep == -1) {
          x = b;
        } else {
          refusal = fmt::format("the where on line {} is not a causal mask (where(col <= row, x, -inf) with col and "
                                "row iota over the scores' last two axes)", n.loc.line);
          return std::nullopt;
        }
        masked = true;
        mask_below_scale = m.attrs.has_scale;   // the walk goes down from the softmax: the scale is outside
        m.attrs.causal = true;
        continue;
      }
      refusal = fmt::format("the {} on line {} between the product and the softmax is not a scale or a causal mask",
                            ir::node_kind_name(n), n.loc.line);
      return std::nullopt;
    }
    if (mask_below_scale && (m.scale >= 0 || !(m.attrs.scale > 0))) {
      refusal = "the mask is applied before a scale that is not a positive literal (-inf times it)";
      return std::nullopt;
    }
    m.scores = x;
    const ir::Node& qk = node(x);
    if (uses_[static_cast<std::size_t>(x)] != 1) {
      refusal = "the scores are read elsewhere too (they would have to be stored)";
      return std::nullopt;
    }
    m.q = qk.operands[0];
    m.kt = qk.operands[1];
    return m;
  }

 private:
  const ir::Node& node(NodeId id) const { return bound_.node(id); }

  // One element: a literal or a scalar argument.
  bool one_element(NodeId id) const {
    const auto k = node(id).kind;
    return (k == OpKind::Literal || k == OpKind::Scalar) && bound_.numel(id) == 1;
  }

  // -inf, or a literal at most the lowest finite value of `dtype` (exp of it minus any finite
  // score is 0, as -inf's).
  bool is_fill(NodeId id, DType dtype) const {
    const ir::Node& n = node(id);
    if (n.kind != OpKind::Literal || bound_.numel(id) != 1) return false;
    const double v = n.literal.to_double();
    const double lowest = dtype == DType::f16 ? -65504.0 : -3.3895313892515355e38;   // f16; bf16 and f32
    return v <= lowest;
  }

  // Which axis of the scores (rank r) an iota counts along: 0 the rows (r - 2), 1 the columns
  // (r - 1), -1 neither.
  int iota_axis(NodeId id, std::size_t r) const {
    const ir::Node& n = node(id);
    if (n.kind != OpKind::Iota) return -1;
    const auto& shape = bound_.shape(id);
    if (shape.size() > r) return -1;
    const std::size_t a = static_cast<std::size_t>(n.axis) + (r - shape.size());
    return a == r - 2 ? 0 : a == r - 1 ? 1 : -1;
  }

  // +1: cond keeps key col of query row exactly when col <= row; -1: cond is true exactly when
  // col > row (the excluded keys); 0: neither.
  int causal_relation(NodeId cond) const {
    const ir::Node& n = node(cond);
    if (n.operands.size() != 2) return 0;
    const std::size_t r = bound_.shape(cond).size();
    if (r < 2) return 0;
    const int a = iota_axis(n.operands[0], r), b = iota_axis(n.operands[1], r);
    if (a < 0 || b < 0 || a == b) return 0;
    const bool col_first = a == 1;   // (col OP row) or (row OP col)
    switch (n.kind) {
      case OpKind::Le: return col_first ? 1 : 0;    // col <= row
      case OpKind::Ge: return col_first ? 0 : 1;    // row >= col
      case OpKind::Gt: return col_first ? -1 : 0;   // col > row
      case OpKind::Lt: return col_first ? 0 : -1;   // row < col
      default: return 0;
    }
  }

  const ir::BoundIr& bound_;
  std::vector<int> uses_;   // readers of each node, an output counting as one
};

// Why the kernel cannot take the match's dyn dims ("" when it can): [Note: dyn attention] in
// plan_contraction.cpp. Dyn dims may size the output's batch dims (the inner of two as a whole
// dim: the epilogue divides by it) and the query and key rows, not the head dims; an operand's
// batch dim is the output's or static.
std::string dyn_refusal(const ir::Ir& ir, const AttentionMatch& m, NodeId out) {
  const std::set<std::string> dyn = ir.dyn_dims();
  const ir::Shape& os = ir.node(out).shape;
  const std::size_t r = os.size();
  auto is_dyn = [&](const ir::DimExpr& e) { return e.mentions(dyn); };
  for (const auto& [what, id] : {std::pair<const char*, NodeId>{"q", m.q}, {"kᵀ", m.kt}, {"v", m.v}, {"the output", out}}) {
    const ir::Shape& s = ir.node(id).shape;
    const std::size_t head = id == m.kt ? s.size() - 2 : s.size() - 1;
    if (is_dyn(s[head])) return fmt::format("a dyn dim sizes {}'s head dim (the kernel bakes the head dims in)", what);
    // The batch dims, right-aligned onto the output's: an operand's dyn batch extent is the
    // output's own, and the inner of two a whole dim.
    for (std::size_t d = 0; d + 2 < s.size(); ++d) {
      if (!is_dyn(s[d])) continue;
      const std::size_t od = d + r - s.size();
      if (od != 0 && s[d].kind() != ir::DimExpr::Kind::Dim)
        return fmt::format("{}'s inner batch extent {} is dyn and not a whole dim", what, s[d].str());
      if (s[d] != os[od]) return fmt::format("{}'s dyn batch extent {} is not the output's {}", what, s[d].str(), os[od].str());
    }
  }
  return "";
}

// Why the attention kernel cannot take a match ("" when it can).
std::string kernel_refusal(const ir::BoundIr& bound, const AttentionMatch& m, NodeId out, const Target& target) {
  const ir::Ir& ir = *bound.ir;
  const DType t = ir.node(out).dtype;
  if (t != DType::f16 && t != DType::bf16)
    return fmt::format("{} attention has no fused kernel yet (f16 and bf16 only)", dtype_name(t));
  for (NodeId id : {m.q, m.kt, m.v, m.scores})
    if (ir.node(id).dtype != t) return "the operands and scores are not all of one dtype";
  if (target.arch != "sm_90a") return fmt::format("the fused kernel needs sm_90a (wgmma, TMA), the target is {}", target.arch);
  if (const std::string why = dyn_refusal(ir, m, out); !why.empty()) return why;
  const auto& os = bound.shape(out);
  const auto& qs = bound.shape(m.q);
  const std::int64_t d = qs.back(), dv = os.back();
  if (!attention_head_dim(d) || !attention_head_dim(dv))
    return fmt::format("head dims {} and {}: the kernel takes 64, 128 or 256", d, dv);
  if (os.size() > 4) return fmt::format("{} batch dims: the kernel takes at most two", os.size() - 2);
  const auto kt = strided_view(bound, m.kt);
  if (!kt || kt->strides[kt->strides.size() - 2] != 1)
    return "kᵀ is not a view of an input with the head dim contiguous (transpose(k) of a stored k)";
  for (const auto& [what, id] : {std::pair<const char*, NodeId>{"q", m.q}, {"kᵀ", m.kt}, {"v", m.v}}) {
    const auto view = strided_view(bound, id);
    // q or v without its last dim contiguous is stored first, row-major (attention_reads_in_place)
    if (!view || !attention_reads_in_place(bound, id, id == m.kt)) continue;
    const std::size_t e = dtype_size(t);
    for (std::size_t i = 0; i < view->strides.size(); ++i)
      if (view->strides[i] != 1 && view->shape[i] > 1 && (view->strides[i] * e) % 16 != 0)
        return fmt::format("{}'s stride {} along dim {} is not a multiple of 16 bytes (a TMA map's)", what,
                           view->strides[i], i);
  }
  return "";
}

std::vector<int> use_counts(const ir::Ir& ir) {
  std::vector<int> uses(ir.nodes.size(), 0);
  for (const auto& n : ir.nodes)
    for (NodeId op : n.operands) ++uses[static_cast<std::size_t>(op)];
  for (const auto& o : ir.outputs) ++uses[static_cast<std::size_t>(o.node)];
  return uses;
}

}  // namespace

StridedView row_major(ir::NodeId leaf, const std::vector<std::int64_t>& shape) {
  StridedView s;
  s.leaf = leaf;
  s.shape = shape;
  s.strides.assign(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) s.strides[i - 1] = s.strides[i] * shape[i];
  for (std::size_t i = 0; i < shape.size(); ++i) s.leaf_dims.push_back(static_cast<int>(i));
  return s;
}

std::optional<StridedView> strided_view(const ir::BoundIr& bound, ir::NodeId id) {
  // Permutes compose (transpose(permute(k, ...))): view dim i reads dim perm[i] below them.
  std::vector<int> perm;
  ir::NodeId x = id;
  while (bound.node(x).kind == OpKind::Permute) {
    const ir::Node& p = bound.node(x);
    if (perm.empty())
      for (std::size_t i = 0; i < p.perm.size(); ++i) perm.push_back(static_cast<int>(i));
    for (int& d : perm) d = p.perm[static_cast<std::size_t>(d)];
    x = p.operands[0];
  }
  // A reshape that only adds or drops extents of 1 (reshape(k, [B, 1, S, D])) keeps the strides.
  std::vector<std::int64_t> shape = bound.shape(x);
  if (bound.node(x).kind == OpKind::Reshape) x = bound.node(x).operands[0];
  if (bound.node(x).kind != OpKind::Input) return std::nullopt;
  const auto& sh = bound.shape(x);
  const std::vector<std::int64_t> st = row_major(x, sh).strides;
  std::vector<std::int64_t> view_st(shape.size(), 0);
  std::vector<int> view_dims(shape.size(), -1);
  std::size_t j = 0;   // the input's dim that view dim i reads
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;   // stride of an extent-1 dim: unused
    while (j < sh.size() && sh[j] == 1) ++j;
    if (j == sh.size() || sh[j] != shape[i]) return std::nullopt;   // a reshape that moves elements
    view_dims[i] = static_cast<int>(j);
    view_st[i] = st[j++];
  }
  while (j < sh.size() && sh[j] == 1) ++j;
  if (j != sh.size()) return std::nullopt;
  StridedView s;
  s.leaf = x;
  if (perm.empty()) {
    s.shape = shape;
    s.strides = view_st;
    s.leaf_dims = view_dims;
  } else {
    for (int d : perm) {
      s.shape.push_back(shape[static_cast<std::size_t>(d)]);
      s.strides.push_back(view_st[static_cast<std::size_t>(d)]);
      s.leaf_dims.push_back(view_dims[static_cast<std::size_t>(d)]);
    }
  }
  return s;
}

bool attention_reads_in_place(const ir::BoundIr& bound, ir::NodeId operand, bool kt) {
  const auto view = strided_view(bound, operand);
  if (!view) return false;
  const std::size_t r = view->strides.size();
  return view->strides[kt ? r - 2 : r - 1] == 1;
}

std::shared_ptr<const ir::BoundIr> fuse_attention(std::shared_ptr<const ir::BoundIr> bound, const Target& target,
                                                  std::vector<std::string>& fusions) {
  const ir::Ir& source = *bound->ir;
  const Matcher matcher(*bound, use_counts(source));
  std::shared_ptr<ir::Ir> rewritten;
  for (std::size_t i = 0; i < source.nodes.size(); ++i) {
    const auto id = static_cast<NodeId>(i);
    std::string refusal;
    const std::optional<AttentionMatch> m = matcher.match(id, refusal);
    const ir::Node& n = source.node(id);
    if (!m && refusal.empty()) continue;
    const auto& shape = bound->shape(id);
    std::string what = fmt::format("line {}: attention, {} queries x {} keys", n.loc.line, shape[shape.size() - 2],
                                   bound->shape(source.node(id).operands[0]).back());
    if (!m) {
      fusions.push_back(what + ": not fused, " + refusal + ": planned as written");
      continue;
    }
    what += fmt::format(", head dims {} and {}{}", bound->shape(m->q).back(), shape.back(), m->attrs.causal ? ", causal" : "");
    refusal = kernel_refusal(*bound, *m, id, target);
    if (!refusal.empty()) {
      fusions.push_back(what + ": not fused, " + refusal + ": planned as written (scores in memory)");
      continue;
    }
    if (!rewritten) rewritten = std::make_shared<ir::Ir>(source);
    ir::Node att;
    att.kind = OpKind::Attention;
    att.dtype = n.dtype;
    att.shape = n.shape;
    att.operands = {m->q, m->kt, m->v};
    if (m->scale >= 0) att.operands.push_back(m->scale);
    att.name = n.name;
    att.attention = m->attrs;
    att.loc = n.loc;
    rewritten->nodes[i] = std::move(att);
    fusions.push_back(what + ": one flash attention kernel (scores and softmax in registers, online across key "
                             "tiles; P rounded to the inputs' type for the second product)");
  }
  if (!rewritten) return bound;
  return std::make_shared<const ir::BoundIr>(without_dead_nodes(*bound, std::move(rewritten)));
}

std::shared_ptr<const ir::BoundIr> fuse_compositions(std::shared_ptr<const ir::BoundIr> bound, const Target& target,
                                                     std::vector<std::string>& fusions, DynThresholds* dyn_thresholds) {
  return expand_matmul_batches(
      fuse_attention(fuse_norms(std::move(bound), target, fusions, dyn_thresholds), target, fusions), fusions);
}

}  // namespace kiln
