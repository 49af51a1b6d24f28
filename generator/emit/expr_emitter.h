// Inlines the elementwise part of an op graph into generated device code.
//
// [Note: values at coordinates]
// Every inlined node is evaluated "at coordinates": one C++ index expression
// per dim of that node's shape. An operand's coordinates follow from its user's:
// numpy broadcasting drops leading coordinates and pins extent-1 dims to 0, and
// a Permute view reorders them. Leaves (nodes stored in a buffer) become loads
// at the flat row-major index of their coordinates; dropout hashes the flat
// index of its own output, so the mask never depends on how a kernel tiles the
// work. Each (node, coordinates) pair is emitted once per scope as a named
// `const` value; the C++ compiler removes what ends up unused.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "generator/emit/code_writer.h"
#include "generator/plan/plan.h"

namespace kiln {

using Coords = std::vector<std::string>;

// C++ spelling of the type values of `dtype` are computed in (f16/bf16 -> float).
const char* compute_type(DType dtype);
// C++ spelling of the type `dtype` is stored as in memory.
const char* storage_type(DType dtype);
// A literal of `dtype` spelled so that it means the same on every machine.
// `expr` (an f32 value) as a value of `dtype`: f16/bf16 round to their bits, as PyTorch eager
// materializes every 16-bit op result; other types are unchanged.
std::string rounded_to(DType dtype, const std::string& expr);
std::string literal(DType dtype, double value);
// An IR literal (Node::literal): integers exact over the whole i64/u64 range.
std::string literal(DType dtype, const ConstValue& value);

// The dyn dim that extent `dim` of `node` is, when it is exactly one (the kernel reads it as an
// argument, so the source must not hold its value), else nullptr.
const std::string* dyn_extent(const Plan& plan, ir::NodeId node, std::size_t dim);
// Extent `dim` of `node` when it is computed from dyn dims without being one (a dyn pool's output,
// pad's N + 3: the source must not hold its value either), else nullptr.
const ir::DimExpr* computed_dyn_extent(const Plan& plan, ir::NodeId node, std::size_t dim);
// An extent that reads dyn dims (a dyn pool's output, [Note: dyn pooled axes] in plan_pool.cpp)
// as a long long C++ expression: each dyn dim as dyn_name(dim), every other one its value.
std::string dyn_extent_code(const Plan& plan, const ir::DimExpr& e,
                            const std::function<std::string(const std::string&)>& dyn_name);

class ExprEmitter {
 public:
  ExprEmitter(const Plan& plan, CodeWriter& out);

  // How a leaf is loaded: its pointer's name in scope, per buffer.
  void set_pointer(int buffer, std::string name) { pointers_[buffer] = std::move(name); }
  void set_scalar(int param, std::string name);
  // An extent of dyn dims that a member holds (a DynValue argument), by which extent() divides.
  void set_dyn_value(const ir::DimExpr& extent, std::string name) { dyn_values_[extent.str()] = std::move(name); }
  // Gives a node's value at given coordinates directly (the anchor inside an epilogue).
  void bind_value(ir::NodeId node, const Coords& coords, std::string var);
  // Gives a node's value wherever its coordinates are those of flat index `flat` (declare_coords'
  // and a reshape's decomposition of it): the anchor inside an epilogue that reshapes it.
  void bind_value_at_flat(ir::NodeId node, std::string flat, std::string var) {
    flat_bound_[node] = {std::move(flat), std::move(var)};
  }
  // `node` is stored by the kernel being emitted: value() computes it from its
  // operands instead of loading it back from its own buffer.
  // (The end of an anchor's fused epilogue, or an elementwise kernel's own store.)
  void compute_here(ir::NodeId node) { computed_here_.insert(node); }
  // Lets the caller serve some leaf loads itself (vector registers); return nullopt to decline.
  std::function<std::optional<std::string>(ir::NodeId, const Coords&)> leaf_hook;
  // Lets the caller give a dropout's 32 random bits at `coords` itself (a word of a Philox block
  // it drew for several lanes: [Note: four-lane epilogue] in gemm_store.cuh); `seed` is the seed's
  // expression. Return nullopt to decline: the dropout then draws for its own flat index.
  std::function<std::optional<std::string>(ir::NodeId, const Coords&, const std::string& seed)> dropout_bits_hook;
  // The C++ spelling of a dim extent of a node (a number, or the dyn dim's name).
  std::function<std::string(const std::string& dim)> dyn_dim_name;

  // Emits what computes `node` at `coords`; returns the variable holding it.
  std::string value(ir::NodeId node, const Coords& coords);
  // Declares the coordinates of flat index `flat` in the shape of `node` (`const Index
  // <prefix>0 = ...;` per dim, innermost by modulo) and returns their names. With `lead` (the
  // names of the node's leading coordinates, known already), only the axes after them come from
  // `flat`, and each leading one is declared as its name in `lead` (the pooling template's Load
  // and Store, whose planes precede the pooled axes: see lead_coords).
  Coords declare_coords(ir::NodeId node, const std::string& flat, const std::string& prefix,
                        const Coords& lead = {});
  // The coordinates of `node`'s axes before its last `inner` (`const Index <prefix>d = ...;`) from
  // `plane`, the row-major index over those axes; returns their names. One division chain per
  // plane rather than per element: the pooling template computes them once a thread step.
  Coords lead_coords(ir::NodeId node, const std::string& plane, const std::string& prefix, std::size_t inner);
  // Starts a new scope (forgets emitted values): call at each new loop body.
  void reset() { memo_.clear(); }

  // Flat row-major index of `coords` in the shape of `node`.
  std::string flat_index(ir::NodeId node, const Coords& coords) const;
  // Extent `dim` of `node` in C++: the bound number, dyn_dim_name's for a dyn dim, or an
  // expression of them for an extent computed from dyn dims (pad, concat, a dyn pool's output).
  std::string extent(ir::NodeId node, std::size_t dim) const;
  // Where the first `parts` operands of `concat` end along `axis` (a number, or an expression).
  std::string concat_end(const ir::Node& concat, std::size_t parts, std::size_t axis) const;
  // Coordinates of an operand of `user` evaluated at `coords`.
  Coords operand_coords(ir::NodeId user, ir::NodeId operand, const Coords& coords) const;
  std::string load(ir::NodeId leaf, const Coords& coords);
  // The flat index of `coords` in the shape of `node`: the name it was declared from when the
  // coordinates came from declare_coords or a Reshape's decomposition of it, else flat_index.
  std::string flat_of(ir::NodeId node, const Coords& coords) const;

 private:
  std::string fresh(ir::NodeId node);
  // Declares c[d] = <prefix>d for the axes d in [first, last) of `node` from `index`, the
  // row-major index over its axes [0, last): innermost by modulo, the outermost declared one
  // without (axis 0) or by modulo too.
  void declare_axes(ir::NodeId node, const std::string& index, const std::string& prefix, std::size_t first,
                    std::size_t last, Coords& c);
  // The value of (node, coords) when no operand needs a visit first (memoized, a scalar, a
  // leaf load, a literal); nullopt for a Permute or an elementwise node to compute.
  std::optional<std::string> known_value(ir::NodeId node, const Coords& coords);
  // Declares `expr` as a named const (after a spec-line comment) and memoizes it.
  std::string declare(ir::NodeId node, const Coords& coords, const std::string& expr);
  std::string apply(const ir::Node& node, ir::NodeId id, const std::vector<std::string>& args,
                    const Coords& coords);
  // [Note: index views] (ir.h): a view's value from its operands' values.
  std::string view_value(const ir::Node& node, ir::NodeId id, const std::vector<std::string>& args,
                         const Coords& coords);
  Coords gathered_coords(ir::NodeId gather, const Coords& coords, const std::string& index) const;

  const Plan& plan_;
  CodeWriter& out_;
  std::map<int, std::string> pointers_;
  std::map<ir::NodeId, std::string> scalars_;   // by the scalar param's node
  std::map<std::string, std::string> dyn_values_;   // by the extent's text (set_dyn_value)
  std::set<ir::NodeId> computed_here_;
  std::map<std::pair<ir::NodeId, Coords>, std::string> memo_;
  std::map<ir::NodeId, std::pair<std::string, std::string>> flat_bound_;   // node -> (flat, var)
  // Coordinates (in a shape) whose flat index has a name: see flat_of.
  mutable std::map<std::pair<Coords, std::vector<std::int64_t>>, std::string> flat_of_coords_;
  int counter_ = 0;
  int last_line_ = -1;
};

}  // namespace kiln
