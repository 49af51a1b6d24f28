// The planner's last graph pass: a matmul operand that has only some of the product's batch dims
// is expanded to all of them.
//
// [Note: matmul operands with some batch dims]
// torch.matmul broadcasts batch dims by numpy's rule: w: [H, K, N] against a: [B, H, M, K] is the
// product of a's batch (b, h) with w's batch h. The gemm templates address an operand's batch with
// one stride (matmul_operand in plan_contraction.cpp): a stride of 0 for an operand with no batch
// (every batch dim 1 or absent), the packed stride rows x cols for one with all of the output's
// batch dims in order (right-aligned, the output's extra leading dims extents of 1):
// batch_addressable. Any other operand (some dims, or extents of 1 among them: [H, K, N],
// [B, 1, K, N], [1, H, K, N] against [B, H, ., .]) is made `expand(operand, [out batch dims...,
// its last two dims])` here, as PyTorch's matmul expands and copies such an operand: an index view
// ([Note: index views] in ir.h), which the planner stores at the full batch (an elementwise
// kernel; a transposed input is stored row-major by it) before the GEMM reads it. So the
// product plans rather than being refused; the cost is that copy (B times w's bytes, written and
// read once), named in the plan's `fusions`. A stride per batch dim in the engines would read the
// operand where it is; not built.
//
// The decision is by the bound extents, as matmul_operand's: a dyn batch dim's buckets (1, or
// more) are planned apart ([Note: dyn matmul]), so an operand whose dims are 1 at the bound value
// is the broadcast one of that bucket. The pass runs after the attention pass, which takes a
// partly broadcast kᵀ or v itself where its kernel can (a match it refuses is planned as written,
// through here).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "generator/plan/planner.h"

namespace kiln {

using ir::NodeId;
using ir::OpKind;

std::shared_ptr<const ir::BoundIr> expand_matmul_batches(std::shared_ptr<const ir::BoundIr> bound,
                                                         std::vector<std::string>& fusions) {
  const ir::Ir& source = *bound->ir;
  const auto needs = [&](std::size_t i, std::size_t k) {
    const ir::Node& n = source.nodes[i];
    return n.kind == OpKind::Matmul && !batch_addressable(bound->shape(n.operands[k]), bound->shapes[i]);
  };
  bool any = false;
  for (std::size_t i = 0; i < source.nodes.size(); ++i) any = any || needs(i, 0) || needs(i, 1);
  if (!any) return bound;

  // The nodes again, each expand just before its matmul (the order stays topological).
  auto ir = std::make_shared<ir::Ir>(source);
  ir->nodes.clear();
  ir::BoundIr out;
  out.dims = bound->dims;
  std::vector<NodeId> renumber(source.nodes.size(), -1);
  for (std::size_t i = 0; i < source.nodes.size(); ++i) {
    ir::Node n = source.nodes[i];
    for (NodeId& op : n.operands) op = renumber[static_cast<std::size_t>(op)];
    for (std::size_t k = 0; k < 2 && n.kind == OpKind::Matmul; ++k) {
      const ir::Node& m = source.nodes[i];
      if (!needs(i, k)) continue;
      const NodeId operand = m.operands[k];
      const ir::Node& o = source.node(operand);
      const auto& concrete = bound->shape(operand);
      const auto& out_concrete = bound->shape(static_cast<NodeId>(i));
      ir::Node e;
      e.kind = OpKind::Expand;
      e.dtype = o.dtype;
      e.shape.assign(m.shape.begin(), m.shape.end() - 2);
      e.shape.insert(e.shape.end(), o.shape.end() - 2, o.shape.end());
      e.operands = {n.operands[k]};
      e.loc = m.loc;
      std::vector<std::int64_t> shape(out_concrete.begin(), out_concrete.end() - 2);
      shape.insert(shape.end(), concrete.end() - 2, concrete.end());
      std::vector<std::string> dims;
      for (const auto& d : e.shape) dims.push_back(d.str());
      fusions.push_back(fmt::format("line {}: matmul operand {} ({}) has only some of the product's batch dims: "
                                    "expanded to [{}] and stored first (one elementwise kernel), as torch.matmul does",
                                    m.loc.line, k == 0 ? "a" : "b", fmt::join(concrete, " x "), fmt::join(dims, ", ")));
      n.operands[k] = static_cast<NodeId>(ir->nodes.size());
      ir->nodes.push_back(std::move(e));
      out.shapes.push_back(std::move(shape));
    }
    renumber[i] = static_cast<NodeId>(ir->nodes.size());
    ir->nodes.push_back(std::move(n));
    out.shapes.push_back(bound->shapes[i]);
  }
  for (auto& p : ir->params) p.node = renumber[static_cast<std::size_t>(p.node)];
  for (auto& o : ir->outputs) o.node = renumber[static_cast<std::size_t>(o.node)];
  out.ir = std::move(ir);
  return std::make_shared<const ir::BoundIr>(std::move(out));
}

}  // namespace kiln
