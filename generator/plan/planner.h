// Internals of the planner shared by the per-template planning files
// (plan_*.cpp). Not part of any public interface.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "generator/plan/plan.h"

namespace kiln {

// How a template takes part in fusion, and how it plans its kernel(s).
struct AnchorRule {
  const char* template_family;
  bool prologue;   // operands may be elementwise expressions (inlined per load)
  bool epilogue;   // a following elementwise chain may be fused into the store
  // Fills template_name, reason, params, geometry of `kernel` (whose anchor,
  // stores and leaves are set); may add workspace buffers and follow-up kernels.
  std::function<void(class Planner&, PlannedKernel& kernel)> plan;
  // Optional. With prologue == false, an inlinable operand is normally stored
  // first; return true for one the template reads in place as a view (a
  // transposed leaf, say), so it is not copied.
  std::function<bool(const class Planner&, ir::NodeId anchor, ir::NodeId operand)> takes_view;
  // Optional. `next` is the single consumer of the end of the anchor's epilogue
  // chain and an anchor itself (a softmax after a matmul): return true when this
  // rule plans it in its own kernels (then the kernel's stores[0].node is `next`).
  std::function<bool(const class Planner&, ir::NodeId anchor, ir::NodeId next)> claims;
  // The rule plans anchors whose tensors a dyn dim sizes (and refuses, located, the dyn dims it
  // cannot take); false: run() refuses every such anchor.
  bool dyn = false;
  // The epilogue chain may pass through a reshape (the same element at the same flat index, so a
  // template that stores by flat index stores the reshaped value): group_norm's desugaring ends
  // in one before the affine.
  bool epilogue_reshape = false;
};

// Returns nullptr when no template handles this anchor kind yet. Dispatches to
// the families below, each defined in its own file.
const AnchorRule* anchor_rule(ir::OpKind kind);
const AnchorRule* memory_bound_rule(ir::OpKind kind);   // plan_memory.cpp: reductions, scans, rownorms
const AnchorRule* contraction_rule(ir::OpKind kind);    // plan_contraction.cpp: matmul, conv2d
const AnchorRule* pool_rule(ir::OpKind kind);           // plan_pool.cpp: max_pool, avg_pool
// plan_memory.cpp: the launch (and workspace bytes) of a memory-family kernel with dyn rows at a
// launch's row count ([Note: dyn rows]); `len` > 0: a look-back scan's at a launch's dyn length.
launch::Geometry memory_launch(const Plan& plan, const PlannedKernel& kernel, std::int64_t outer, std::int64_t len = 0,
                               std::int64_t inner = 0);
// plan_contraction.cpp: the launch of a matmul kernel whose M or batches are dyn at a launch's
// extent ([Note: dyn matmul]).
launch::Geometry gemm_launch(const Plan& plan, const PlannedKernel& kernel, std::int64_t extent);
// plan_contraction.cpp: the launch of a conv kernel with a dyn batch or dyn spatial extents at a
// launch's dims ([Note: dyn conv], [Note: dyn conv spatial extents]).
launch::Geometry conv_launch(const Plan& plan, const PlannedKernel& kernel, const std::map<std::string, std::int64_t>& dims);
launch::Geometry conv_prep_launch(const Plan& plan, const PlannedKernel& kernel,
                                  const std::map<std::string, std::int64_t>& dims);
// plan_contraction.cpp: a fused attention kernel's extents at a launch's dims, and its launch
// there ([Note: dyn attention]).
AttentionExtents attention_extents(const ir::Ir& ir, const PlannedKernel& kernel,
                                   const std::map<std::string, std::int64_t>& dims);
launch::Geometry attention_launch(const Plan& plan, const PlannedKernel& kernel,
                                  const std::map<std::string, std::int64_t>& dims);
// plan_contraction.cpp: the largest dynamic shared memory one block may use on the target, and how
// many blocks of `bytes` dynamic shared memory fit on one of its SMs (the driver reserves 1 KB a
// block), at least 1 and at most `want`.
std::int64_t smem_limit(const Target& t);
std::int64_t ctas_by_smem(const Target& t, std::int64_t bytes, std::int64_t want);
// plan.cpp: a byte count for reasons ("16.0 MiB", "512 B").
std::string bytes_text(std::int64_t bytes);
// plan_memory.cpp: bytes of one element of the tensor a template streams for an anchor's operand
// (Plan::streamed_leaf): its type is the template's T, which sizes its vectors and tiles. An
// operand with no such leaf is refused by the emitter; its own type stands in until then.
int element_bytes(const Plan& plan, ir::NodeId operand);

// How the rownorm family lays out a norm over sorted `axes` of `shape` (fuse_norms.cpp, [Note: norm
// compositions]; [Note: split norms] in kiln/config/rownorm.h): rows of `len` ([rows, len, inner],
// inner > 1 for strided rows) for adjacent axes; for axes that are a leading and a trailing run
// around the kept ones, [lead, rows, len]. `split` when the family takes it as a split norm (rows
// long and too few for a block each, or the leading-and-trailing form); `fuses` when the family
// takes it at all (`why_not` says why not); `whole` when the rule gives a split norm a block per
// row (one kernel: launch::rownorm_split_whole; a tuned pick may differ, the kernels say).
// rows_known: false when a dyn dim sizes the rows.
struct NormLayout {
  std::int64_t lead = 1, rows = 1, len = 1, inner = 1;
  bool adjacent = true, split = false, fuses = false, whole = false;
  std::string why_not;
};
NormLayout norm_layout(const std::vector<std::int64_t>& shape, const std::vector<int>& axes, bool rows_known,
                       int sm_count);

// The graph with every node nothing reads dropped (inputs stay: they are the op's signature), ids
// renumbered: what the composition passes (fuse_norms.cpp, fuse_attention.cpp) return.
ir::BoundIr without_dead_nodes(const ir::BoundIr& bound, std::shared_ptr<ir::Ir> ir);

// A tensor an Input holds, read in place: the Input itself, a reshape of it that only adds or drops
// extents of 1, or Permutes of either, as extents and element strides per dim of the view (0 for
// an extent of 1; fuse_attention.cpp); nullopt for anything else.
struct StridedView {
  ir::NodeId leaf = -1;
  std::vector<std::int64_t> shape, strides;
  std::vector<int> leaf_dims;   // per view dim: the leaf's dim whose stride it takes (-1: an extent of 1)
};
std::optional<StridedView> strided_view(const ir::BoundIr& bound, ir::NodeId id);
// A tensor of `shape` stored row-major at `leaf`.
StridedView row_major(ir::NodeId leaf, const std::vector<std::int64_t>& shape);
// Whether the attention kernel maps an operand where it is (a StridedView with its contiguous dim
// where the kernel wants it: the head dim, dim r - 2 of kᵀ and r - 1 of q and v); else the planner
// stores it first, row-major.
bool attention_reads_in_place(const ir::BoundIr& bound, ir::NodeId operand, bool kt);

class Planner {
 public:
  Planner(std::shared_ptr<const ir::BoundIr> bound, const Target& target);
  Plan run();

  // ---- used by the anchor rules
  const ir::BoundIr& bound() const { return *plan_.bound; }
  const Plan& plan() const { return plan_; }   // as planned so far: buffers, leaves, earlier kernels
  // The index in Plan::kernels that the kernel being planned will have (its followups come after it).
  int planning_position() const { return static_cast<int>(plan_.kernels.size()); }
  const ir::Node& node(ir::NodeId id) const { return plan_.bound->node(id); }
  const std::vector<std::int64_t>& shape(ir::NodeId id) const { return plan_.bound->shape(id); }
  const Target& target() const { return plan_.target; }
  const std::vector<ir::NodeId>& consumers(ir::NodeId id) const { return consumers_[static_cast<std::size_t>(id)]; }
  const Buffer& buffer(int b) const { return plan_.buffers[static_cast<std::size_t>(b)]; }
  bool is_output(ir::NodeId id) const { return is_output_[static_cast<std::size_t>(id)]; }
  // `dyn_dim`: the workspace's first extent is that dyn dim (Buffer::dyn_dim), sized by each launch.
  int add_workspace(const std::string& name, DType dtype, std::vector<std::int64_t> shape, const std::string& dyn_dim = "");
  // The workspace is sized at each launch by the geometry of the kernel being planned
  // (Buffer::launch_kernel).
  void size_by_launch(int buffer) {
    plan_.buffers.at(static_cast<std::size_t>(buffer)).launch_kernel = planning_position();
  }
  // The buffer an operand is loaded from when it is a leaf; -1 when it is an
  // inlined elementwise expression.
  int leaf_buffer(ir::NodeId id) const;
  // Appends a kernel after the one being planned (a second pass, say). Its
  // arguments come from finish_args unless the rule set args_done.
  PlannedKernel& add_followup(PlannedKernel kernel);
  // The follow-ups the running rule has added so far (it may revise them before run() places them).
  std::vector<PlannedKernel>& pending_followups() { return followups_; }
  // The kernel's argument list from its stores and the leaves its expressions read.
  void finish_args(PlannedKernel& kernel) const;
  // Declares values of dyn dim `dim` at which a kernel's plan changes ([Note: dyn size classes]).
  void add_dyn_thresholds(const std::string& dim, const std::vector<std::int64_t>& values);
  // [Note: dyn row alignment] in plan.h: whether a plan may take `dim`'s rows of 16 bytes of
  // `elements` elements as aligned (the bound value's are, and the runtime keys the dim by it);
  // records the assumption.
  bool add_dyn_row_align(const std::string& dim, std::int64_t elements);
  // A located UnsupportedError: "<dim's declaration>: op O: dim 'D' is dyn, but <what> (for line
  // <at's line>) <why>".
  [[noreturn]] void refuse_dyn(const std::string& dim, ir::NodeId at, const std::string& what, const std::string& why) const;
  // Refuses (refuse_dyn) a kernel that stores or reads a tensor with an extent that divides dyn
  // dims (a dyn pool's output) unless it is that pool's own kernel.
  void refuse_dyn_compound_extents(const PlannedKernel& kernel, const std::set<int>& read_buffers) const;
  // The first dyn dim other than `allowed` that sizes a tensor of the anchor's kernel (its node,
  // operands, the epilogue chain up to `end` and the expressions inlined into them); nullptr: none.
  const ir::DimDecl* dyn_dim_of_anchor(ir::NodeId anchor, ir::NodeId end, const std::string& allowed = "") const;
  // The same, allowing every dim of `allowed`.
  const ir::DimDecl* dyn_dim_of_anchor(ir::NodeId anchor, ir::NodeId end, const std::set<std::string>& allowed) const;
  // The first dyn dim an extent reads, "" for none (its size nodes walked once per planner, as
  // dyn_dim_of_anchor's: a chain of convs nests them thousands deep).
  std::string dyn_in(const ir::DimExpr& extent) const;
  // Whether a shape reads `dim`, its size nodes walked once per planner and dim (finish_args asks
  // it for every kernel and dyn dim).
  bool mentions_dim(const ir::Shape& shape, const std::string& dim) const;
  // Records what the tuner may vary for `anchor` ([Note: tuned picks]): `what` it is, the
  // heuristic's pick and every legal one (the heuristic's among them: asserted), and takes the
  // target's pick for the anchor where it is one of the candidates. Returns the chosen pick and
  // sets `note` (the kernel reason's config note so far) to "; config: <the pick's origin>", or
  // where the stored pick is not a candidate "; config: heuristic (the pick P, <origin>, is not
  // legal for this <family>)", else leaves it.
  template <class P>
  P offer_picks(int anchor, std::string what, const P& heuristic, const std::vector<P>& candidates, std::string& note,
                const char* family) {
    Plan::Tunable t;
    t.anchor = anchor;
    t.what = std::move(what);
    t.heuristic = t.chosen = heuristic;
    t.candidates.assign(candidates.begin(), candidates.end());
    t.origin = "heuristic";
    note = apply_tuned_pick(t, note, family);
    const P chosen = std::get<P>(t.chosen);
    plan_.tunables.push_back(std::move(t));
    return chosen;
  }

 private:
  // offer_picks' lookup of the stored pick (t's anchor, heuristic and candidates set).
  std::string apply_tuned_pick(Plan::Tunable& t, const std::string& note, const char* family) const;
  void find_consumers();
  bool has_stream_source(ir::NodeId operand) const;
  void choose_leaves();
  // Stores `node` into `buffer` from an elementwise kernel; returns that kernel's position.
  int add_elementwise_root(ir::NodeId node, int buffer);
  bool is_leaf(ir::NodeId id) const;   // loaded from a buffer, or a scalar argument
  void collect_leaves(ir::NodeId node, std::vector<ir::NodeId>& out, std::unordered_set<ir::NodeId>& seen) const;
  int dependency_position(ir::NodeId node);

  Plan plan_;
  std::vector<std::vector<ir::NodeId>> consumers_;
  std::vector<bool> is_output_;
  std::vector<ir::NodeId> epilogue_end_;   // anchor -> last node of its fused epilogue (or itself)
  std::vector<bool> forced_leaf_;          // an anchor operand stored by an elementwise kernel
  std::vector<int> producer_;              // leaf node -> index of the kernel that stores it
  std::vector<int> dependency_;            // inlined node -> dependency_position memo (-2: not yet)
  std::vector<int> param_of_node_;         // Input/Scalar node -> index into Ir::params (-1: none)
  std::map<std::vector<std::int64_t>, int> last_elementwise_;   // shape -> latest elementwise kernel
  std::vector<PlannedKernel> followups_;
  mutable std::unordered_set<const ir::DimExpr*> dyn_free_;   // dyn_dim_of_anchor's walked size nodes
  mutable std::map<std::string, std::unordered_set<const ir::DimExpr*>> free_of_;   // mentions_dim's, by dim
};

// The rows of a memory-bound anchor: the axes before those it works along, which dyn dims may size
// ([Note: dyn rows] in plan_memory.cpp; the pooling family's planes too). The same for the length
// of the axes it works along ([Note: dyn lengths] in plan_memory.cpp).
struct Rows {
  bool dynamic = false;
  std::vector<ir::DimExpr> factors;   // the extents' expressions (when dynamic)
  std::string dim;                    // the one dyn dim among them ("" when none or several)
  std::int64_t fixed = 1;             // the product of the static extents
  std::int64_t planned = 1;           // the count the rules see
  std::int64_t most = 0;              // dyn: the class's largest count (0: no largest)
  std::string text;                   // "4096", or "B*12 (dyn)"
  std::string class_text;             // after thresholds: "B in [264, 1056)"
  // The size class in parentheses after a space, where there is one: " (B in [264, 1056))".
  std::string class_suffix() const { return class_text.empty() ? "" : " (" + class_text + ")"; }

  long long config_outer() const { return dynamic ? 0 : planned; }
  // Workspaces sized by the row count are possible: static rows, or a class with a largest value.
  bool bounded() const { return !dynamic || most > 0; }
  // The row count a workspace is sized for.
  std::int64_t workspace_rows() const { return dynamic ? most : planned; }
  // With one dyn dim: declares the counts at which the rule's choice changes (as values of the
  // dim), and plans at the lowest count of the bound value's class.
  void thresholds(Planner& p, const std::vector<std::int64_t>& counts);
};

// The rows of `node` viewed as [outer, len, inner] with len starting at axis `first` (`outer` their
// bound count); refuses, located, a dyn dim inside a compound extent, and one in axis `first` or
// later, but for the axes up to `dyn_last` when the caller takes their dyn length (len_of).
// `family` names the template in the messages.
// dyn_after: the caller takes a dyn dim after the worked axes too ([Note: dyn inner extents]).
Rows rows_of(Planner& p, const PlannedKernel& kn, ir::NodeId node, int first, std::int64_t outer, const char* family,
             int dyn_last = -1, bool dyn_after = false);
// The length of `node`'s axes [first, last] (`len` their bound product), the axes a memory-bound
// anchor works along ([Note: dyn lengths] in plan_memory.cpp); refuses, located, a dyn dim inside a
// compound extent. rows_of with dyn_last = last has refused dyn dims after them.
Rows len_of(Planner& p, const PlannedKernel& kn, ir::NodeId node, int first, int last, std::int64_t len,
            const char* family);

}  // namespace kiln
