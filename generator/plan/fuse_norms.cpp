// The planner's composition pass: norms written out become one Normalize node.
//
// [Note: norm compositions]
// Users write a layer norm as `d * rsqrt(mean(d * d) + eps)` with `d = x - mean(x)`, an RMS norm
// as `x * rsqrt(mean(x * x) + eps)`, an L2 norm as `x / sqrt(sum(x * x))`, and group_norm is
// desugared by the checker into the first over a reshape. Planned node by node these are two or
// three kernels (a reduction per mean, then the elementwise rest), reading x three times. This
// pass finds the pattern and replaces its last node (the product or quotient) by a Normalize
// node over x (ir.h, NormAttrs), which the rownorm family plans as one kernel: a row is read
// once, its mean and the sum of squared deviations taken from registers (or from a second
// streaming pass for rows longer than a block's registers), and y written once, with the
// affine and whatever else follows fused as its epilogue.
//
// What matches (each node of the same float dtype, d of the result's shape):
//   y = d * rsqrt(a) | rsqrt(a) * d | d / sqrt(a)
//   a = v + eps | eps + v | v        eps: one element, from literals and scalars only
//   v = mean(q, axes, keepdims) | sum(q, axes, keepdims)   axes: adjacent ones, or a leading and
//                                                          a trailing run around the kept ones (a
//                                                          batch norm's 0, 2, 3: a split norm; any
//                                                          other set matches, and the plan says it
//                                                          is not fused); adjacent but not the
//                                                          trailing ones: strided rows, fused
//                                                          when their columns fill the GPU
//   q = d * d | pow(d, 2)               each d the same value (written once, or the same expression
//                                        again: same_value)
//   d = x - mean(x, axes, keepdims) (centered), else d is x itself (uncentered)
// Intermediates used elsewhere (an output `mu`, say) keep their own kernels; only the final
// product is replaced, and nodes nothing reads any more are dropped. The rewritten graph lives
// in the Plan only: the reference (and `kiln run --check`) evaluates the op as written, so a GPU
// check compares the fused kernel against the composition; for f16 and bf16, whose composition
// rounds every step, against the fused graph's reference ([Note: the oracle of a fused 16-bit
// norm] in runtime/op_check.cpp).
//
// Whether a match is fused, and how, is norm_layout's answer from the template library's rules
// (launch::rownorm_normalize_fuses, rownorm_strided_normalize_fuses, rownorm_split_fuses); a match
// not fused, and why, is a line of the plan's `fusions` like one fused. Few long rows, and the
// leading-and-trailing form, become a split norm: two kernels, x read twice ([Note: split norms]
// in kiln/config/rownorm.h), or one where a block takes a whole row ([Note: a block per row of
// short segments]).
#include <algorithm>
#include <limits>
#include <set>
#include <unordered_set>

#include "generator/support/assert.h"
#include "generator/plan/planner.h"
#include "templates/kiln/config/rownorm.h"

namespace kiln {

namespace {

using ir::NodeId;
using ir::OpKind;

struct NormMatch {
  NodeId x = -1, eps = -1;
  std::vector<int> axes;
  ir::NormAttrs attrs;
};

bool is_float(DType d) { return d == DType::f16 || d == DType::bf16 || d == DType::f32 || d == DType::f64; }

class Matcher {
 public:
  explicit Matcher(const ir::BoundIr& bound) : bound_(bound) {}

  std::optional<NormMatch> match(NodeId id) const {
    const ir::Node& n = node(id);
    if (!is_float(n.dtype)) return std::nullopt;
    if (n.kind == OpKind::Mul) {
      for (int side = 0; side < 2; ++side) {
        const NodeId d = n.operands[static_cast<std::size_t>(side)], r = n.operands[static_cast<std::size_t>(1 - side)];
        if (node(r).kind != OpKind::Rsqrt || !same_type(r, id)) continue;
        if (auto m = match_scale(id, d, node(r).operands[0])) return m;
      }
      return std::nullopt;
    }
    if (n.kind == OpKind::Div) {
      const NodeId d = n.operands[0], s = n.operands[1];
      if (node(s).kind != OpKind::Sqrt || !same_type(s, id)) return std::nullopt;
      auto m = match_scale(id, d, node(s).operands[0]);
      if (m) m->attrs.divide = true;
      return m;
    }
    return std::nullopt;
  }

 private:
  const ir::Node& node(NodeId id) const { return bound_.node(id); }
  bool same_type(NodeId a, NodeId b) const { return node(a).dtype == node(b).dtype; }

  // a = v + eps | eps + v | v, for the product `id` of d.
  std::optional<NormMatch> match_scale(NodeId id, NodeId d, NodeId a) const {
    if (!same_type(a, id) || bound_.shape(d) != bound_.shape(id) || !same_type(d, id)) return std::nullopt;
    if (node(a).kind == OpKind::Add) {
      for (int side = 0; side < 2; ++side) {
        const NodeId v = node(a).operands[static_cast<std::size_t>(side)];
        const NodeId eps = node(a).operands[static_cast<std::size_t>(1 - side)];
        if (!row_constant(eps)) continue;
        if (auto m = match_stat(id, d, v)) {
          m->eps = eps;
          return m;
        }
      }
      return std::nullopt;
    }
    return match_stat(id, d, a);
  }

  // v = mean|sum(d * d | pow(d, 2), axes, keepdims) (the caller checks the axes are adjacent).
  std::optional<NormMatch> match_stat(NodeId id, NodeId d, NodeId v) const {
    const ir::Node& stat = node(v);
    if ((stat.kind != OpKind::Mean && stat.kind != OpKind::Sum) || !stat.keepdims || stat.axes.empty() ||
        !same_type(v, id))
      return std::nullopt;
    const ir::Node& q = node(stat.operands[0]);
    const bool square = (q.kind == OpKind::Mul && same_value(q.operands[0], d) && same_value(q.operands[1], d)) ||
                        (q.kind == OpKind::Pow && same_value(q.operands[0], d) && is_two(q.operands[1]));
    if (!square || !same_type(stat.operands[0], id)) return std::nullopt;
    NormMatch m;
    m.axes = stat.axes;
    m.attrs.mean = stat.kind == OpKind::Mean;
    m.x = d;
    m.attrs.centered = false;
    // d = x - mean(x, same axes, keepdims): the centered form.
    const ir::Node& dn = node(d);
    if (dn.kind == OpKind::Sub) {
      const NodeId x = dn.operands[0], mu = dn.operands[1];
      const ir::Node& mn = node(mu);
      if (mn.kind == OpKind::Mean && mn.keepdims && mn.axes == stat.axes && same_value(mn.operands[0], x) &&
          bound_.shape(x) == bound_.shape(d) && same_type(x, id) && same_type(mu, id)) {
        m.x = x;
        m.attrs.centered = true;
      }
    }
    return m;
  }

  // Whether a and b compute the same value: one node, or the same op on operands that do (a spec
  // that writes `x - mean(x)` twice). Elementwise ops (not dropout), literals and mean/sum only;
  // kMaxDepth levels deep, so the walk stays small however deep the graph.
  bool same_value(NodeId a, NodeId b, int depth = kMaxDepth) const {
    if (a == b) return true;
    const ir::Node& na = node(a);
    const ir::Node& nb = node(b);
    if (depth == 0 || na.kind != nb.kind || na.dtype != nb.dtype || na.operands.size() != nb.operands.size() ||
        bound_.shape(a) != bound_.shape(b))
      return false;
    if (na.kind == OpKind::Literal) return na.literal.str() == nb.literal.str();
    const bool reduction = na.kind == OpKind::Mean || na.kind == OpKind::Sum;
    if (reduction && (na.axes != nb.axes || na.keepdims != nb.keepdims)) return false;
    if (!reduction && (!ir::is_elementwise(na.kind) || na.kind == OpKind::Dropout)) return false;
    for (std::size_t k = 0; k < na.operands.size(); ++k)
      if (!same_value(na.operands[k], nb.operands[k], depth - 1)) return false;
    return true;
  }
  static constexpr int kMaxDepth = 4;

  bool is_two(NodeId id) const {
    const ir::Node& n = node(id);
    return n.kind == OpKind::Literal && n.literal.to_double() == 2.0;
  }

  // One element, computed from literals, scalars and dims' values only (the same for every row).
  bool row_constant(NodeId id) const {
    if (bound_.numel(id) != 1) return false;
    std::vector<NodeId> stack{id};
    while (!stack.empty()) {
      const ir::Node& n = node(stack.back());
      stack.pop_back();
      if (n.kind == OpKind::Literal || n.kind == OpKind::Scalar || n.kind == OpKind::DimValue) continue;
      if (!ir::is_elementwise(n.kind) || n.kind == OpKind::Dropout) return false;
      stack.insert(stack.end(), n.operands.begin(), n.operands.end());
    }
    return true;
  }

  const ir::BoundIr& bound_;
};

// Whether sorted `axes` are a run of adjacent axes.
bool adjacent(const std::vector<int>& axes) {
  for (std::size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1) return false;
  return true;
}

const char* norm_name(const ir::NormAttrs& a) {
  if (a.centered) return a.mean ? "layer norm" : "centered L2 norm";
  return a.mean ? "RMS norm" : "L2 norm";
}

}  // namespace

NormLayout norm_layout(const std::vector<std::int64_t>& shape, const std::vector<int>& axes, bool rows_known,
                       int sm_count) {
  NormLayout l;
  const int rank = static_cast<int>(shape.size());
  const auto product = [&](int from, int to) {
    std::int64_t e = 1;
    for (int d = from; d < to; ++d) e *= shape[static_cast<std::size_t>(d)];
    return e;
  };
  l.adjacent = adjacent(axes);
  if (!l.adjacent) {
    // A leading run 0..p-1 and a trailing run q..rank-1 around the kept axes p..q-1.
    std::size_t p = 0;
    while (p < axes.size() && axes[p] == static_cast<int>(p)) ++p;
    const std::vector<int> rest(axes.begin() + static_cast<std::ptrdiff_t>(p), axes.end());
    if (p == 0 || rest.empty() || !adjacent(rest) || rest.back() != rank - 1) {
      l.why_not = "the normalized axes are not adjacent, nor a leading and a trailing run around the kept ones: the "
                  "reductions and the elementwise rest plan as written";
      return l;
    }
    l.lead = product(0, static_cast<int>(p));
    l.rows = product(static_cast<int>(p), rest.front());
    l.len = product(rest.front(), rank);
    l.split = true;
    l.fuses = launch::rownorm_split_fuses(l.len);
    l.whole = l.fuses && launch::rownorm_split_whole(l.lead, l.rows, l.len, sm_count);
    if (!l.fuses)
      l.why_not = fmt::format("the normalized axes are not adjacent and their trailing run is short ({} elements, "
                              "under {}: chunks of whole segments would fetch more of their neighbours than of "
                              "their own): the reductions and the elementwise rest plan as written",
                              l.len, launch::kRowNormGangMinLen);
    return l;
  }
  l.rows = product(0, axes.front());
  l.len = product(axes.front(), axes.back() + 1);
  l.inner = product(axes.back() + 1, rank);
  if (l.inner > 1) {
    l.fuses = launch::rownorm_strided_normalize_fuses(l.rows * l.inner, sm_count);
    if (!l.fuses)
      l.why_not = fmt::format("too few columns for a thread each ({}: fewer than 2048 per SM): the reductions and the "
                              "elementwise rest plan as written",
                              l.rows * l.inner);
    return l;
  }
  if (launch::rownorm_normalize_fuses(rows_known ? l.rows : 0, l.len, sm_count)) {
    l.fuses = true;
  } else if (!rows_known) {
    l.why_not = "rows longer than a block's registers and a dyn dim sizes them (a split norm needs its rows baked in): "
                "the statistics stay split reductions";
  } else {
    l.split = l.fuses = true;
  }
  return l;
}

// The graph with every node nothing reads dropped (inputs stay: they are the op's signature).
ir::BoundIr without_dead_nodes(const ir::BoundIr& bound, std::shared_ptr<ir::Ir> ir) {
  const std::size_t n = ir->nodes.size();
  std::vector<bool> live(n, false);
  std::vector<NodeId> stack;
  for (const auto& o : ir->outputs) stack.push_back(o.node);
  for (const auto& p : ir->params) stack.push_back(p.node);
  while (!stack.empty()) {
    const NodeId id = stack.back();
    stack.pop_back();
    if (live[static_cast<std::size_t>(id)]) continue;
    live[static_cast<std::size_t>(id)] = true;
    for (NodeId op : ir->nodes[static_cast<std::size_t>(id)].operands) stack.push_back(op);
  }
  std::vector<NodeId> renumber(n, -1);
  std::vector<ir::Node> nodes;
  ir::BoundIr out;
  out.dims = bound.dims;
  for (std::size_t id = 0; id < n; ++id) {
    if (!live[id]) continue;
    renumber[id] = static_cast<NodeId>(nodes.size());
    nodes.push_back(std::move(ir->nodes[id]));
    for (NodeId& op : nodes.back().operands) op = renumber[static_cast<std::size_t>(op)];
    out.shapes.push_back(bound.shapes[id]);
  }
  ir->nodes = std::move(nodes);
  for (auto& p : ir->params) p.node = renumber[static_cast<std::size_t>(p.node)];
  for (auto& o : ir->outputs) o.node = renumber[static_cast<std::size_t>(o.node)];
  out.ir = std::move(ir);
  return out;
}

// [Note: long norm rows stay baked in under the generic default]
// A norm over contiguous rows longer than a block's registers fuses into one kernel only where its
// row count is known (a block per row streaming it twice for many rows, a split norm for few:
// norm_layout); with dyn rows its statistics stay split reductions and an elementwise kernel, x read
// up to three times instead of twice. Under the generic default that lost the fused norm of 16
// shipped ops (KernelBench level 1's instance, group, L2 and layer norms, nine level-2 group norms,
// three ops of specs/norms.kiln and specs/views.kiln), so generic_dims keeps such a
// norm's row dims baked in: the matches found in the op bound at its declared values (a length
// bound to another value later keeps the decision made at the declared one).
std::set<std::string> norm_rows_kept_static(const ir::BoundIr& bound) {
  std::set<std::string> kept;
  const Matcher matcher(bound);
  std::unordered_set<const ir::DimExpr*> seen;
  for (std::size_t i = 0; i < bound.ir->nodes.size(); ++i) {
    const std::optional<NormMatch> m = matcher.match(static_cast<NodeId>(i));
    if (!m || !adjacent(m->axes)) continue;
    const auto& shape = bound.shape(static_cast<NodeId>(i));
    std::int64_t len = 1, inner = 1;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (d > static_cast<std::size_t>(m->axes.back())) inner *= shape[d];
      else if (d >= static_cast<std::size_t>(m->axes.front())) len *= shape[d];
    }
    if (inner > 1 || launch::rownorm_normalize_fuses(/*rows=*/0, len, /*sm_count=*/1)) continue;
    const ir::Shape& written = bound.ir->node(static_cast<NodeId>(i)).shape;
    for (int d = 0; d < m->axes.front(); ++d)
      written[static_cast<std::size_t>(d)].walk_dims(seen, [&](const std::string& name) { return kept.insert(name), false; });
  }
  return kept;
}

std::shared_ptr<const ir::BoundIr> fuse_norms(std::shared_ptr<const ir::BoundIr> bound, const Target& target,
                                              std::vector<std::string>& fusions, DynThresholds* dyn_thresholds) {
  const ir::Ir& source = *bound->ir;
  const std::set<std::string> dyn = source.dyn_dims();
  const Matcher matcher(*bound);
  std::shared_ptr<ir::Ir> rewritten;
  for (std::size_t i = 0; i < source.nodes.size(); ++i) {
    const auto id = static_cast<NodeId>(i);
    const std::optional<NormMatch> m = matcher.match(id);
    if (!m) continue;
    const ir::Node& n = source.node(id);
    const auto& shape = bound->shape(id);
    const ir::Node& x = source.node(m->x);
    const std::string of = x.name.empty() ? fmt::format("the {} on line {}", ir::node_kind_name(x), x.loc.line) : x.name;
    std::string what = fmt::format("line {}: {} of {} over axes [{}]", n.loc.line, norm_name(m->attrs), of,
                                   fmt::join(m->axes, ", "));
    // The axes before the first normalized one (the rows, for adjacent axes).
    const auto first = static_cast<std::size_t>(m->axes.front());
    const ir::Shape lead_dims(n.shape.begin(), n.shape.begin() + static_cast<std::ptrdiff_t>(first));
    const bool dyn_rows = ir::mentions(lead_dims, dyn);
    const bool dyn_rest = ir::mentions(ir::Shape(n.shape.begin() + static_cast<std::ptrdiff_t>(first), n.shape.end()), dyn);
    if (!adjacent(m->axes) && (dyn_rows || dyn_rest)) {
      fusions.push_back(what + ": not fused, a dyn dim sizes a norm over axes that are not adjacent: the reductions "
                               "and the elementwise rest plan as written");
      continue;
    }
    NormLayout layout = norm_layout(shape, m->axes, !dyn_rows, target.sm_count);
    if (!layout.adjacent) {
      if (layout.split) what += fmt::format(" ({} rows of {} segments of {})", layout.rows, layout.lead, layout.len);
    } else if (layout.inner > 1) {
      what += fmt::format(" (strided: {} x {} columns of {})", dyn_rows ? "dyn" : std::to_string(layout.rows),
                          layout.inner, layout.len);
      if (dyn_rest) {
        fusions.push_back(what + ": not fused, a dyn dim sizes the normalized or the trailing axes: the reductions "
                                 "and the elementwise rest plan as written (a dyn trailing axis as their dyn inner "
                                 "extent)");
        continue;
      }
      if (dyn_rows) {
        // [Note: strided norms over dyn rows]
        // One dyn dim, a whole extent among the rows, fuses in the size classes where the columns
        // fill the GPU (rownorm_strided_normalize_fuses at the class's lowest value), as the
        // specialized plan does at every value of the class; below, the reductions and the
        // elementwise rest plan as written, with their own classes ([Note: thresholds of a fusion
        // decision] in plan.cpp). Before 2026-12-02 dyn rows never fused here, and the generic
        // default made KernelBench's RMS norm over channels (16x64x256x256) two kernels: 0.278 ms
        // against the fused kernel's 0.192 (H100, bench/results/2026-12-02-h100-run2/ and 2026-11-28-h100-run19/).
        std::string dim;
        std::int64_t fixed = 1;
        int dyn_count = 0;
        for (std::size_t d = 0; d < first; ++d) {
          const ir::DimExpr& e = n.shape[d];
          if (!ir::mentions(ir::Shape{e}, dyn)) {
            fixed *= shape[d];
            continue;
          }
          ++dyn_count;
          if (e.kind() == ir::DimExpr::Kind::Dim) dim = e.name();
        }
        if (dyn_count != 1 || dim.empty()) {
          fusions.push_back(what + ": not fused, dyn dims size the columns of a strided norm other than as one whole "
                                   "extent among the rows: the reductions and the elementwise rest plan as written");
          continue;
        }
        const std::int64_t at = launch::rownorm_strided_fuse_min_value(fixed * layout.inner, target.sm_count);
        // The decision never depends on whether the caller collects thresholds: the oracle of a
        // fused 16-bit norm (runtime/op_check.cpp) must see the graph the planner fused.
        if (dyn_thresholds && at > 1) (*dyn_thresholds)[dim].push_back(at);
        const std::int64_t value = bound->dims.at(dim);
        if (value < at) {
          fusions.push_back(what + fmt::format(": not fused, {} in [1, {}) gives too few columns for a thread each "
                                               "(fewer than {} per SM): the reductions and the elementwise rest "
                                               "plan as written",
                                               dim, at, launch::kRowNormStridedThreadsPerSm));
          continue;
        }
        layout.fuses = true;
        what += fmt::format(", {} >= {}", dim, at);
      }
    } else {
      what += fmt::format(" ({} rows of {})", dyn_rows ? "dyn" : std::to_string(layout.rows),
                          dyn_rest ? std::string("a dyn length") : std::to_string(layout.len));
      // A dyn length ([Note: dyn lengths] in plan_memory.cpp) fuses where the specialized plan fuses
      // at every length, so the decision (and the dim's size classes) never depends on its value:
      // rows known and many (the rule at the longest length). Few rows would split long rows across
      // blocks, which needs the length baked in.
      constexpr std::int64_t kLongest = std::numeric_limits<std::int64_t>::max();
      if (dyn_rest && (dyn_rows || !launch::rownorm_normalize_fuses(layout.rows, kLongest, target.sm_count))) {
        fusions.push_back(
            what + fmt::format(": not fused, a dyn dim sizes the normalized axes and {}: the reductions and the "
                               "elementwise rest plan as written",
                               dyn_rows ? "a dyn dim the rows (a fused norm plans its registers from the row length "
                                          "and splits long rows by the row count)"
                                        : fmt::format("the rows are few ({}, under 2 per SM: long rows would split "
                                                      "across blocks, which needs the length baked in)",
                                                      layout.rows)));
        continue;
      }
    }
    if (!layout.fuses) {
      fusions.push_back(what + ": not fused, " + layout.why_not);
      continue;
    }
    if (!rewritten) rewritten = std::make_shared<ir::Ir>(source);
    ir::Node norm;
    norm.kind = OpKind::Normalize;
    norm.dtype = n.dtype;
    norm.shape = n.shape;
    norm.operands = {m->x};
    if (m->eps >= 0) norm.operands.push_back(m->eps);
    norm.name = n.name;
    norm.axes = m->axes;
    norm.norm = m->attrs;
    norm.loc = n.loc;
    rewritten->nodes[i] = std::move(norm);
    if (layout.split && layout.whole)
      fusions.push_back(what + fmt::format(": a split normalize in one kernel, a block a row (the {}, then the scale, "
                                           "y; the rule's: a tuned pick may split the rows, the kernels say)",
                                           m->attrs.centered ? "mean and squared deviations" : "sum of squares"));
    else if (layout.split)
      fusions.push_back(what + fmt::format(": a split normalize, two kernels over chunks of each row (the {} of each "
                                           "chunk; then the row's combined, the scale, y): x read twice",
                                           m->attrs.centered ? "mean and squared deviations" : "sum of squares"));
    else
      fusions.push_back(what + fmt::format(": one normalize kernel ({}{}, then the scale{})",
                                           m->attrs.centered ? "mean, " : "",
                                           m->attrs.centered ? "squared deviations" : "sum of squares",
                                           layout.inner > 1 ? "; a thread per column, two passes over it" : ""));
  }
  if (!rewritten) return bound;
  return std::make_shared<const ir::BoundIr>(without_dead_nodes(*bound, std::move(rewritten)));
}

}  // namespace kiln
