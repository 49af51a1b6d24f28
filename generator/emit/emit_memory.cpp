// Emission of the memory-bound template family: one instantiation unit per planned
// reduce_inner / reduce_outer / reduce_finish / reduce_chain / scan_* / rownorm kernel, chosen
// by the kernel's config (ReduceConfig, ReduceFinishConfig, ReduceChainConfig, ScanConfig,
// RownormConfig: templates/kiln/config/{reduce,scan,rownorm}.h). Each unit declares the
// planner's config as kConfig, names its constants from it, and ends with static_asserts that
// the template library's rules give the planner's launch (and workspace, where there is one).
//
// [Note: Load and Store functors]
// The templates stream one tensor `in` (T elements) and call `Load{}(x, flat)` on
// every element and `Store{}(r, flat)` on every result (see the headers of
// templates/kiln/reduce.cuh, scan.cuh, rownorm.cuh). The emitter writes both:
//  - Load evaluates the anchor's operand at the coordinates of `flat` in the
//    operand's shape. The operand may be an inlined elementwise expression: `in`
//    is its *primary* leaf (one stored tensor of the operand's shape), whose
//    element at those coordinates is `x` itself; any other leaf is loaded by index.
//  - Store binds the anchor's value to `r` at the coordinates of the output index
//    and evaluates the end of the fused epilogue chain there.
// Both functors carry every kernel argument as a member, so either can read any
// leaf or scalar (dropout's seed).
#include <initializer_list>
#include <string_view>
#include <vector>

#include "generator/support/assert.h"
#include "generator/emit/emitter.h"

namespace kiln {

namespace {

const ir::Node& anchor_of(const Plan& plan, const PlannedKernel& kernel) { return plan.ir().node(kernel.anchor); }

std::string combiner(ir::OpKind kind, const std::string& c) {
  switch (kind) {
    case ir::OpKind::Sum:
    case ir::OpKind::Cumsum: return fmt::format("kiln::SumOp<{}>", c);
    case ir::OpKind::Mean: return fmt::format("kiln::MeanOp<{}>", c);
    case ir::OpKind::Prod:
    case ir::OpKind::Cumprod: return fmt::format("kiln::ProdOp<{}>", c);
    case ir::OpKind::Min:
    case ir::OpKind::Cummin: return fmt::format("kiln::MinOp<{}>", c);
    case ir::OpKind::Max:
    case ir::OpKind::Cummax: return fmt::format("kiln::MaxOp<{}>", c);
    case ir::OpKind::Argmin: return fmt::format("kiln::ArgMinOp<{}, Index>", c);
    case ir::OpKind::Argmax: return fmt::format("kiln::ArgMaxOp<{}, Index>", c);
    case ir::OpKind::Logsumexp: return fmt::format("kiln::LogSumExpOp<{}>", c);
    default: KILN_ASSERT(false, "no combiner for {}", ir::op_kind_name(kind));
  }
  return "";
}

}  // namespace

// The stored tensor the template streams as `in` (Plan::streamed_leaf).
ir::NodeId primary_leaf(const Plan& plan, ir::NodeId operand) {
  const ir::NodeId leaf = plan.streamed_leaf(operand);
  KILN_CHECK(leaf >= 0, UnsupportedError, "{}: the operand of this op reads no stored tensor of its own size; "
             "kiln cannot stream it yet", plan.ir().where(plan.bound->node(operand).loc));
  return leaf;
}

Coords write_lead(ExprEmitter& ex, CodeWriter& w, const Plan& plan, ir::NodeId node, const char* prefix,
                  std::size_t inner) {
  const std::size_t rank = plan.bound->shape(node).size();
  Coords names;
  for (std::size_t d = 0; d < rank - std::min(inner, rank); ++d) names.push_back(fmt::format("{}{}", prefix, d));
  w.line("// The coordinates of the axes before the pooled ones, from a thread step's plane: once a step.");
  w.line("struct Lead {{{}}};", names.empty() ? "" : fmt::format(" Index {}; ", fmt::join(names, ", ")));
  w.open_block("__device__ __forceinline__ Lead lead(Index plane) const");
  const Coords declared = ex.lead_coords(node, "plane", prefix, inner);
  KILN_ASSERT(declared == names, "the plane's coordinates are named differently from Lead's members");
  if (names.empty()) w.line("(void)plane;");
  w.line("return Lead{{{}}};", fmt::join(names, ", "));
  w.close_block();
  Coords at;
  for (const std::string& n : names) at.push_back("at." + n);
  return at;
}

// struct Load: the operand at the coordinates of flat index `flat` of `in`.
void write_load(const Plan& plan, const PlannedKernel& kernel, ir::NodeId primary, CodeWriter& w, std::size_t pooled) {
  const auto& bound = *plan.bound;
  const auto& anchor = anchor_of(plan, kernel);
  const ir::NodeId operand = anchor.operands[0];
  ExprEmitter ex(plan, w);
  w.line("// spec line {}: the {} operand, per loaded element", bound.node(operand).loc.line,
         ir::op_kind_name(anchor.kind));
  w.open_block("struct Load");
  UnitParts::declare_members(plan, kernel, w, ex);
  const DType t = bound.node(primary).dtype;
  const Coords lead = pooled ? write_lead(ex, w, plan, operand, "c", pooled) : Coords{};
  w.open_block(fmt::format("__device__ __forceinline__ C operator()({} elem, Index flat{}) const", storage_type(t),
                           pooled ? ", const Lead& at" : ""));
  Coords coords = ex.declare_coords(operand, "flat", "c", lead);
  // The primary leaf at the operand's own coordinates is the element the template loaded, and so
  // is its element at the same flat index through reshapes (ExprEmitter::flat_of).
  const Coords identity = coords;
  ex.leaf_hook = [&](ir::NodeId leaf, const Coords& at) -> std::optional<std::string> {
    const bool same = bound.shape(leaf) == bound.shape(operand) ? at == identity : ex.flat_of(leaf, at) == "flat";
    if (leaf != primary || !same) return std::nullopt;
    return t == DType::f16 || t == DType::bf16 ? std::string("kiln::to_float(elem)") : std::string("elem");
  };
  const std::string v = ex.value(operand, coords);
  w.line("(void)elem;");
  if (pooled) w.line("(void)at;");
  w.line("return static_cast<C>({});", v);
  w.close_block();
  w.close_block(";");
}

std::string load_store_functors(const Plan& plan, const PlannedKernel& kernel, ir::NodeId primary,
                                const std::string& result_type, std::size_t pooled, bool flat_lanes) {
  CodeWriter w;
  write_load(plan, kernel, primary, w, pooled);
  w.blank();
  write_store(plan, kernel, result_type, w, pooled, flat_lanes);
  return w.str();
}

namespace {

std::string pointer_of_store(const Plan& plan, const PlannedKernel& kernel) {
  KILN_CHECK(kernel.stores.size() == 1, UnsupportedError, "{}: an anchor stored to {} outputs is not supported yet",
             plan.ir().where(anchor_of(plan, kernel).loc), kernel.stores.size());
  return UnitParts::pointer_name(plan, kernel.stores[0].buffer);
}

// The kernel's workspace buffer that it writes (or reads), -1 when none.
int workspace_buffer(const Plan& plan, const PlannedKernel& kernel, bool writes) {
  for (const auto& a : kernel.args)
    if (a.kind == KernelArg::Kind::Buffer && a.writes == writes &&
        plan.buffers[static_cast<std::size_t>(a.buffer)].kind == BufferKind::Workspace)
      return a.buffer;
  return -1;
}

std::string workspace_pointer(const Plan& plan, const PlannedKernel& kernel, bool writes) {
  const int b = workspace_buffer(plan, kernel, writes);
  return b < 0 ? "" : UnitParts::pointer_name(plan, b);
}

// A static_assert that the template library's rule `geometry` sizes the workspace the planner
// allocated (`writes`: the one the kernel writes) exactly.
void workspace_check(const Plan& plan, const PlannedKernel& kernel, const std::string& geometry, bool writes,
                     UnitParts& unit) {
  const int b = workspace_buffer(plan, kernel, writes);
  KILN_ASSERT(b >= 0, "{}: no workspace to check", kernel.template_name);
  unit.checks += fmt::format("static_assert({}.workspace_bytes == {},\n"
                             "              \"the planner's workspace differs from the template library's layout\");\n",
                             geometry, plan.buffers[static_cast<std::size_t>(b)].bytes);
}

// The element type the template streams as `in` (its T).
std::string streamed_type(const Plan& plan, ir::NodeId primary) { return storage_type(plan.bound->node(primary).dtype); }

// [Note: dyn rows] (plan_memory.cpp): a kernel whose rows are dyn computes them at the top of its
// body from its dim_ arguments (the config's outer is 0); otherwise they are kConfig's.
bool dyn_rows(const PlannedKernel& kernel) { return !kernel.dyn_outer.empty(); }
std::string rows_name(const PlannedKernel& kernel, const char* constant) { return dyn_rows(kernel) ? "rows" : constant; }
std::string rows_statement(const Plan& plan, const PlannedKernel& kernel) {
  return dyn_extent_statement(plan, kernel, "Index", "rows", "dyn rows");
}
// [Note: dyn lengths] (plan_memory.cpp): a kernel whose length (the extent of the axes it works
// along) is dyn computes it at the top of its body too (`red` or `len`); the config's is 0.
bool dyn_len(const PlannedKernel& kernel) { return !kernel.dyn_len.empty(); }
std::string len_statement(const Plan& plan, const PlannedKernel& kernel, const char* name) {
  return dyn_extent_statement(plan, kernel.dyn_len, "Index", name, "dyn length");
}
// [Note: dyn inner extents] (plan_memory.cpp): a strided reduction whose inner extent is dyn
// computes it at the top of its body too (`inner`); the config's is 0.
bool dyn_inner(const PlannedKernel& kernel) { return !kernel.dyn_inner.empty(); }
std::string inner_name(const PlannedKernel& kernel) { return dyn_inner(kernel) ? "inner" : "kInner"; }
// The extents the body computes: its rows, its length, then its inner extent.
std::string extent_statements(const Plan& plan, const PlannedKernel& kernel, const char* len) {
  return rows_statement(plan, kernel) + len_statement(plan, kernel, len) +
         dyn_extent_statement(plan, kernel.dyn_inner, "Index", "inner", "dyn inner extent");
}
// An extent constant of a unit: `name = kConfig.field`.
struct ExtentConstant {
  const char* name;
  const char* field;
};
// The unit's extent constants: `outer` (kOuter or kRows) from kConfig's outer, then `rest`. A dyn
// one is left out, with a comment that the body's variable stands for it: with dyn rows the
// outer (`rows`, for `what`), with a dyn length the constant of field `len` and with a dyn inner
// extent the field `inner` (the body's variable has the field's name: `red`, `len`, `inner`).
void extent_constants(const PlannedKernel& kernel, CodeWriter& c, const char* outer, const char* what,
                      std::initializer_list<ExtentConstant> rest, const char* len) {
  std::vector<std::string> constants, notes;
  if (dyn_rows(kernel)) notes.push_back(fmt::format("{}: dyn, the body's `rows`", what));
  else constants.push_back(fmt::format("{} = kConfig.outer", outer));
  for (const ExtentConstant& e : rest) {
    const std::string_view field(e.field);
    if ((dyn_len(kernel) && field == len) || (dyn_inner(kernel) && field == "inner"))
      notes.push_back(fmt::format("{}: dyn, the body's `{}`", e.name, e.field));
    else
      constants.push_back(fmt::format("{} = kConfig.{}", e.name, e.field));
  }
  KILN_ASSERT(notes.size() == std::size_t{dyn_rows(kernel)} + dyn_len(kernel) + dyn_inner(kernel),
              "{}: a dyn extent the unit does not name", kernel.template_name);
  if (constants.empty()) c.line("// {}", fmt::join(notes, "; "));
  else if (notes.empty()) c.line("constexpr Index {};", fmt::join(constants, ", "));
  else c.line("constexpr Index {};  // {}", fmt::join(constants, ", "), fmt::join(notes, "; "));
}
// The launch check: the grid too unless the rows or the inner extent are dyn.
void rows_launch_check(const PlannedKernel& kernel, const std::string& geometry, UnitParts& unit) {
  unit.launch_check(kernel, geometry, !dyn_rows(kernel) && !dyn_inner(kernel));
}

std::string functors(const Plan& plan, const PlannedKernel& kernel) {
  return fmt::format("Load{{{0}}}, Store{{{0}}}", UnitParts::member_inits(plan, kernel));
}

// ---------------------------------------------------------------- reductions

bool is_arg(ir::OpKind k) { return k == ir::OpKind::Argmin || k == ir::OpKind::Argmax; }

// The config line, the [outer, red, inner] view (from kConfig), C and Op.
template <class Config>
void reduction_constants(const Plan& plan, const PlannedKernel& kernel, const Config& config, CodeWriter& c) {
  const auto& anchor = anchor_of(plan, kernel);
  const ir::NodeId operand = anchor.operands[0];
  const std::string cty = compute_type(plan.bound->node(operand).dtype);
  c.line("{}", UnitParts::config_line(config));
  c.line("// {} of {}{} over axes viewed as [outer, red, inner]", ir::op_kind_name(anchor.kind),
         dims_text(plan, operand), anchor.keepdims ? " (keepdims)" : "");
  extent_constants(kernel, c, "kOuter", "outer", {{"kRed", "red"}, {"kInner", "inner"}}, "red");
  c.line("using C = {};  // accumulation type", cty);
  c.line("using Op = {};", combiner(anchor.kind, cty));
}

// Split partial states: the template's Op::Acc is the size the planner gave the workspace.
void acc_check(UnitParts& unit) {
  unit.checks += "static_assert(sizeof(Op::Acc) == kConfig.acc_bytes,\n"
                 "              \"the planner sized the partial states differently from the combiner's Acc\");\n";
}

// A split reduction that splits each launch into its own count ([Note: splits per launch] in
// kiln/config/reduce.h): the kernel and its reduce_finish take it as `launch_splits`. A count past
// the workspace's (kSplits) would write past it: never given by the runtime, it traps.
bool launch_splits(const PlannedKernel& kernel) {
  return std::any_of(kernel.args.begin(), kernel.args.end(),
                     [](const KernelArg& a) { return a.kind == KernelArg::Kind::LaunchSplits; });
}
// `count` (at most `most`, the workspace's) from the launch's `launch_splits`.
std::string launch_count_statement(const char* count = "splits", const char* most = "kSplits") {
  return fmt::format("  const Index {0} = static_cast<Index>(launch_splits);  // this launch's count\n"
                     "  if ({0} < 1 || {0} > {1}) __trap();  // past the workspace\n",
                     count, most);
}

std::string result_type(const Plan& plan, const PlannedKernel& kernel) {
  return is_arg(anchor_of(plan, kernel).kind) ? "Index" : "C";
}

}  // namespace

void emit_family(const Plan& plan, const PlannedKernel& kernel, const ReduceConfig& config, UnitParts& unit) {
  const ir::NodeId operand = anchor_of(plan, kernel).operands[0];
  const ir::NodeId primary = primary_leaf(plan, operand);
  CodeWriter c;
  begin_unit(kernel, "reduce.cuh", unit, c);
  reduction_constants(plan, kernel, config, c);
  const bool warp = config.variant == ReduceVariant::kInnerWarp;
  const bool outer = config.variant == ReduceVariant::kOuter;
  const bool rows = config.variant == ReduceVariant::kOuterRows;
  const bool v4 = config.variant == ReduceVariant::kOuterV4;
  c.line("constexpr int kThreads = kConfig.threads, kUnroll = kConfig.unroll;");
  if (v4)
    c.line("// 4 columns per thread: 16-byte aligned loads + lane shuffles over misaligned rows");
  else if (rows)
    c.line("constexpr int kCols = kConfig.cols;  // columns per thread, kThreads apart: a block sweeps whole rows");
  else if (outer)
    c.line("constexpr int kVec = kConfig.vec;  // columns per thread (16-byte loads when > 1)");
  const bool per_launch = launch_splits(kernel);   // [Note: splits per launch]
  if (per_launch)
    c.line("constexpr Index kSplits = kConfig.splits;  // split: partial states to the workspace, reduce_finish "
           "follows; this launch's count is the body's `splits` (at most kSplits), its `chunk` too");
  else if (!warp && dyn_len(kernel))
    c.line("constexpr Index kSplits = kConfig.splits;  // {}",
           config.splits > 1 ? "split: partial states to the workspace, reduce_finish follows; the body's `chunk`"
                             : "no split: a block's chunk is the whole axis, `red`");
  else if (!warp)
    c.line("constexpr Index kSplits = kConfig.splits, kChunk = kConfig.chunk;  // {}",
           config.splits > 1 ? "split: partial states to the workspace, reduce_finish follows" : "no split");
  unit.constants = c.str();

  unit.functors = load_store_functors(plan, kernel, primary, result_type(plan, kernel));

  const std::string in = UnitParts::pointer_name(plan, plan.leaves.at(primary));
  const bool split = !warp && config.splits > 1;
  const std::string out_type = storage_type(plan.bound->node(store_node(kernel)).dtype);
  const std::string out = split ? fmt::format("static_cast<{}*>(nullptr)", out_type) : pointer_of_store(plan, kernel);
  const std::string partials = split ? fmt::format("reinterpret_cast<Op::Acc*>({})", workspace_pointer(plan, kernel, true))
                                     : "static_cast<Op::Acc*>(nullptr)";
  const std::string n = rows_name(kernel, "kOuter");
  const std::string red = dyn_len(kernel) ? "red" : "kRed";
  // A split over a dyn length, or into the launch's count: this launch's chunks ([Note: dyn
  // lengths]), whole vectors along a row.
  const bool body_chunk = per_launch || (dyn_len(kernel) && split);
  const std::string chunk = body_chunk ? "chunk" : dyn_len(kernel) ? "red" : "kChunk";
  const std::string splits = per_launch ? "splits" : "kSplits";
  const std::string chunk_statement =
      (per_launch ? launch_count_statement() : std::string()) +
      (body_chunk
           ? fmt::format("  const Index chunk = Index(kiln::launch::reduce_dyn_chunk({}, {}, {}));  // this launch's\n",
                         red, splits,
                         config.variant == ReduceVariant::kInnerBlock
                             ? fmt::format("kiln::launch::vec_elems(int(sizeof({})))", streamed_type(plan, primary))
                             : std::string("1"))
           : std::string());
  if (warp) {
    unit.body = fmt::format("  kiln::reduce_inner_warp<kThreads, kUnroll, Op>({}, {}, {}, {}, {});", in, out, n, red,
                            functors(plan, kernel));
  } else if (config.variant == ReduceVariant::kInnerBlock) {
    unit.body = fmt::format("  kiln::reduce_inner_block<kThreads, kUnroll, Op>({}, {}, {}, {}, {}, {}, {}, {});", in,
                            out, partials, n, red, splits, chunk, functors(plan, kernel));
  } else if (v4) {
    unit.body = fmt::format("  kiln::reduce_outer_rows_v4<kThreads, kUnroll, Op>({}, {}, {}, {}, {}, {}, {}, {}, {});",
                            in, out, partials, n, red, inner_name(kernel), splits, chunk, functors(plan, kernel));
  } else if (rows) {
    unit.body = fmt::format(
        "  kiln::reduce_outer_rows<kThreads, kCols, kUnroll, Op>({}, {}, {}, {}, {}, {}, {}, {}, {});", in, out,
        partials, n, red, inner_name(kernel), splits, chunk, functors(plan, kernel));
  } else {
    unit.body = fmt::format("  kiln::reduce_outer<kThreads, kUnroll, kVec, Op>({}, {}, {}, {}, {}, {}, {}, {}, {});",
                            in, out, partials, n, red, inner_name(kernel), splits, chunk, functors(plan, kernel));
  }
  unit.body = extent_statements(plan, kernel, "red") + chunk_statement + unit.body;
  rows_launch_check(kernel, "kiln::reduce_geometry(kConfig)", unit);
  if (split) {
    acc_check(unit);
    // With dyn rows the workspace is sized for the class's most rows, with a dyn inner by each
    // launch, not by kConfig's extents (0).
    if (!dyn_rows(kernel) && !dyn_inner(kernel))
      workspace_check(plan, kernel, "kiln::reduce_geometry(kConfig)", true, unit);
  }
}

void emit_family(const Plan& plan, const PlannedKernel& kernel, const ReduceFinishConfig& config, UnitParts& unit) {
  CodeWriter c;
  begin_unit(kernel, "reduce.cuh", unit, c);
  reduction_constants(plan, kernel, config, c);
  c.line("constexpr int kFinishThreads = kConfig.threads, kLanes = kConfig.lanes;  // {}",
         config.lanes > 1 ? "threads per output" : "a thread per output");
  const bool dyn_out = dyn_rows(kernel) || dyn_inner(kernel);
  const std::string n_out = fmt::format("{} * {}", rows_name(kernel, "kOuter"), inner_name(kernel));
  if (launch_splits(kernel))
    c.line("constexpr Index kSplits = kConfig.splits;  // outputs: {}; partial states per output: this launch's "
           "`splits` (at most kSplits)", n_out);
  else if (dyn_out) c.line("constexpr Index kSplits = kConfig.splits;  // outputs: {}", n_out);
  else c.line("constexpr Index kNumOut = kConfig.n_out, kSplits = kConfig.splits;");
  unit.constants = c.str();
  CodeWriter w;
  write_store(plan, kernel, result_type(plan, kernel), w);
  unit.functors = w.str();
  const bool per_launch = launch_splits(kernel);
  unit.body = extent_statements(plan, kernel, "red") + (per_launch ? launch_count_statement() : std::string()) +
              fmt::format("  kiln::reduce_finish<kFinishThreads, kLanes, Op>(reinterpret_cast<const Op::Acc*>({}), {}, {}, {}, "
                          "{}, Store{{{}}});",
                          workspace_pointer(plan, kernel, false), pointer_of_store(plan, kernel),
                          dyn_out ? n_out : "kNumOut", per_launch ? "splits" : "kSplits",
                          dyn_len(kernel) ? "red" : "kRed", UnitParts::member_inits(plan, kernel));
  rows_launch_check(kernel, "kiln::reduce_finish_geometry(kConfig)", unit);
  acc_check(unit);
}

// ---------------------------------------------------------------- scans

namespace {

// The direction flags, the value type and the combiner every scan unit declares.
void scan_op_constants(const ir::Node& anchor, CodeWriter& c) {
  const std::string cty = compute_type(anchor.dtype);
  c.line("constexpr bool kExclusive = {}, kReverse = {};", anchor.exclusive, anchor.reverse);
  c.line("using C = {};", cty);
  c.line("using Op = {};", combiner(anchor.kind, cty));
}

// scan_rows_block and scan_rows_lookback.
void emit_scan_rows(const Plan& plan, const PlannedKernel& kernel, const ScanConfig& config, UnitParts& unit) {
  const auto& anchor = anchor_of(plan, kernel);
  const ir::NodeId operand = anchor.operands[0];
  const ir::NodeId primary = primary_leaf(plan, operand);
  CodeWriter c;
  begin_unit(kernel, "scan.cuh", unit, c);
  c.line("{}", UnitParts::config_line(config));
  c.line("// {} of {} along axis {}{}{}", ir::op_kind_name(anchor.kind), dims_text(plan, operand), anchor.axis,
         anchor.exclusive ? ", exclusive" : "", anchor.reverse ? ", reverse" : "");
  extent_constants(kernel, c, "kRows", "rows", {{"kLen", "len"}}, "len");
  c.line("constexpr int kThreads = kConfig.threads, kVecs = kConfig.vecs;  // 16-byte vectors per thread per tile");
  scan_op_constants(anchor, c);
  unit.constants = c.str();
  unit.functors = load_store_functors(plan, kernel, primary, "C", 0, /*flat_lanes=*/true);
  const std::string in = UnitParts::pointer_name(plan, plan.leaves.at(primary));
  // The template's tile follows its T: the launch check holds the planner to the same width.
  const std::string geometry = fmt::format("kiln::scan_geometry(kConfig, sizeof({}), sizeof(C))", streamed_type(plan, primary));
  if (config.variant == ScanVariant::kRowsLookback) {
    // With dyn rows or a dyn length the workspace is sized for the class's largest, the launch's
    // part zeroed, and the grid the launch's ([Note: dyn lengths]).
    const bool dyn = dyn_rows(kernel) || dyn_len(kernel);
    unit.launch_check(kernel, geometry, !dyn);
    if (!dyn) workspace_check(plan, kernel, geometry, true, unit);
    // The workspace (statuses, then the tile counter) is zeroed by the runtime right before this launch.
    unit.body = fmt::format(
        "  // {} (tile statuses and counter) was zeroed on this stream before the launch\n"
        "{}  kiln::scan_rows_lookback<kThreads, kVecs, kConfig.stages, kExclusive, kReverse, "
        "kConfig.aligned, Op>({}, {}, {}, {}, {}, {});",
        workspace_pointer(plan, kernel, true), extent_statements(plan, kernel, "len"), in,
        pointer_of_store(plan, kernel), workspace_pointer(plan, kernel, true), rows_name(kernel, "kRows"),
        dyn_len(kernel) ? "len" : "kLen", functors(plan, kernel));
    return;
  }
  rows_launch_check(kernel, geometry, unit);
  unit.body = extent_statements(plan, kernel, "len") +
              fmt::format("  kiln::scan_rows_block<kThreads, kVecs, kExclusive, kReverse, kConfig.aligned, Op>({}, {}, {}, "
                          "{}, {});",
                          in, pointer_of_store(plan, kernel), rows_name(kernel, "kRows"),
                          dyn_len(kernel) ? "len" : "kLen", functors(plan, kernel));
}

// scan_strided_totals (phase 1 of a chunked strided scan) and scan_strided.
void emit_scan_strided(const Plan& plan, const PlannedKernel& kernel, const ScanConfig& config, UnitParts& unit) {
  const auto& anchor = anchor_of(plan, kernel);
  const ir::NodeId operand = anchor.operands[0];
  const ir::NodeId primary = primary_leaf(plan, operand);
  const bool totals = config.variant == ScanVariant::kStridedTotals;
  CodeWriter c;
  begin_unit(kernel, "scan.cuh", unit, c);
  c.line("{}", UnitParts::config_line(config));
  c.line("// {} of {} along axis {}{}{}, viewed as [outer, len, inner]", ir::op_kind_name(anchor.kind),
         dims_text(plan, operand), anchor.axis, anchor.exclusive ? ", exclusive" : "", anchor.reverse ? ", reverse" : "");
  extent_constants(kernel, c, "kOuter", "outer", {{"kLen", "len"}, {"kInner", "inner"}}, "len");
  c.line("constexpr int kThreads = kConfig.threads, kUnroll = kConfig.unroll;  // a thread per column, kUnroll loads "
         "in flight");
  const bool per_launch = launch_splits(kernel);   // [Note: chunks per launch]
  if (dyn_len(kernel))   // one pass ([Note: dyn lengths])
    c.line("// one chunk along the axis: the whole of `len`");
  else if (per_launch)
    c.line("constexpr Index kChunks = kConfig.chunks;  // at most; this launch's count (grid.y) is the body's "
           "`chunks`, its `chunk` too");
  else
    c.line("constexpr Index kChunk = kConfig.chunk;  // {} chunk(s) along the axis{}", config.chunks,
           config.chunks > 1 ? " (grid.y)" : "");
  scan_op_constants(anchor, c);
  unit.constants = c.str();
  CodeWriter w;
  write_load(plan, kernel, primary, w);
  if (!totals) {
    w.blank();
    write_store(plan, kernel, "C", w);
  }
  unit.functors = w.str();
  const std::string in = UnitParts::pointer_name(plan, plan.leaves.at(primary));
  const std::string inits = UnitParts::member_inits(plan, kernel);
  const std::string geometry = fmt::format("kiln::scan_geometry(kConfig, sizeof({}), sizeof(C))", streamed_type(plan, primary));
  rows_launch_check(kernel, geometry, unit);
  // The chunk totals (with dyn rows sized for the class's most rows, with a dyn inner by each
  // launch, not kConfig's 0).
  if (config.chunks > 1 && !dyn_rows(kernel) && !dyn_inner(kernel))
    workspace_check(plan, kernel, geometry, totals, unit);
  // The launch's chunks ([Note: chunks per launch]).
  const std::string chunk_statements =
      per_launch ? launch_count_statement("chunks", "kChunks") +
                       "  const Index chunk = Index(kiln::scan_launch_chunk(kLen, chunks));  // this launch's\n"
                 : std::string();
  if (totals) {
    KILN_ASSERT(!dyn_len(kernel), "chunk totals over a dyn length ([Note: dyn lengths]: one pass)");
    unit.body = extent_statements(plan, kernel, "len") + chunk_statements +
                fmt::format("  kiln::scan_strided_totals<kThreads, kUnroll, kReverse, Op>({}, {}, {}, kLen, {}, "
                            "{}, Load{{{}}});",
                            in, workspace_pointer(plan, kernel, true), rows_name(kernel, "kOuter"), inner_name(kernel),
                            per_launch ? "chunk" : "kChunk", inits);
    return;
  }
  const std::string ws = workspace_pointer(plan, kernel, false);
  const bool dyn = dyn_len(kernel);
  unit.body = extent_statements(plan, kernel, "len") + chunk_statements +
              fmt::format("  kiln::scan_strided<kThreads, kUnroll, kExclusive, kReverse, Op>({}, {}, {}, {}, {}, "
                          "{}, {}, {});",
                          in, pointer_of_store(plan, kernel), ws.empty() ? "static_cast<const C*>(nullptr)" : ws,
                          rows_name(kernel, "kOuter"), dyn ? "len" : "kLen", inner_name(kernel),
                          dyn ? "len" : per_launch ? "chunk" : "kChunk", functors(plan, kernel));
}

// scan_strided_lookback: its zeroed workspace holds a status a column of each tile.
void emit_scan_strided_lookback(const Plan& plan, const PlannedKernel& kernel, const ScanConfig& config,
                                UnitParts& unit) {
  const auto& anchor = anchor_of(plan, kernel);
  const ir::NodeId operand = anchor.operands[0];
  const ir::NodeId primary = primary_leaf(plan, operand);
  KILN_ASSERT(!dyn_rows(kernel) && !dyn_len(kernel), "the strided look-back is planned for static extents only");
  CodeWriter c;
  begin_unit(kernel, "scan.cuh", unit, c);
  c.line("{}", UnitParts::config_line(config));
  c.line("// {} of {} along axis {}{}{}, viewed as [outer, len, inner]", ir::op_kind_name(anchor.kind),
         dims_text(plan, operand), anchor.axis, anchor.exclusive ? ", exclusive" : "", anchor.reverse ? ", reverse" : "");
  c.line("constexpr Index kOuter = kConfig.outer, kLen = kConfig.len, kInner = kConfig.inner;");
  c.line("constexpr int kThreads = kConfig.threads, kRows = int(kConfig.chunk);  // a tile: kRows rows x kThreads "
         "columns, a thread a column");
  scan_op_constants(anchor, c);
  unit.constants = c.str();
  unit.functors = load_store_functors(plan, kernel, primary, "C");
  const std::string streamed = streamed_type(plan, primary);
  const std::string geometry = fmt::format("kiln::scan_geometry(kConfig, sizeof({}), sizeof(C))", streamed);
  rows_launch_check(kernel, geometry, unit);
  workspace_check(plan, kernel, geometry, true, unit);
  unit.checks += fmt::format(
      "static_assert(kRows == kiln::launch::scan_strided_lookback_rows(kThreads, sizeof({}), sizeof(C)),\n"
      "              \"the planner's tile rows differ from the template library's rule\");\n",
      streamed);
  const std::string ws = workspace_pointer(plan, kernel, true);
  unit.body = fmt::format(
      "  // {} (a status a column of each tile) was zeroed on this stream before the launch\n"
      "  kiln::scan_strided_lookback<kThreads, kRows, kExclusive, kReverse, Op>({}, {}, {}, kOuter, kLen, kInner, {});",
      ws, UnitParts::pointer_name(plan, plan.leaves.at(primary)), pointer_of_store(plan, kernel), ws,
      functors(plan, kernel));
}

}  // namespace

void emit_family(const Plan& plan, const PlannedKernel& kernel, const ScanConfig& config, UnitParts& unit) {
  if (config.variant == ScanVariant::kRowsBlock || config.variant == ScanVariant::kRowsLookback)
    emit_scan_rows(plan, kernel, config, unit);
  else if (config.variant == ScanVariant::kStridedLookback)
    emit_scan_strided_lookback(plan, kernel, config, unit);
  else
    emit_scan_strided(plan, kernel, config, unit);
}

// ---------------------------------------------------------------- chained reductions

// One stage of a reduction over non-adjacent axes (see [Note: reductions over non-adjacent
// axes] in plan_memory.cpp): the first stage loads the operand through the prologue, later
// ones the previous stage's workspace; the last stores through the epilogue, earlier ones
// store the stage's values to their workspace.
void emit_family(const Plan& plan, const PlannedKernel& kernel, const ReduceChainConfig& config, UnitParts& unit) {
  const auto& anchor = anchor_of(plan, kernel);
  const ir::NodeId operand = anchor.operands[0];
  const auto& bound = *plan.bound;
  const int stage = config.stage, stages = config.stages;
  const bool first = stage == 0, last = stage == stages - 1;
  const std::string cty = compute_type(bound.node(operand).dtype);
  CodeWriter c;
  begin_unit(kernel, "reduce.cuh", unit, c);
  std::string axes;
  for (int a : anchor.axes) axes += (axes.empty() ? "" : ", ") + std::to_string(a);
  c.line("{}", UnitParts::config_line(config));
  c.line("// {} of {} over axes ({}){}: stage {} of {}, viewed as [outer, red, inner]", ir::op_kind_name(anchor.kind),
         dims_text(plan, operand), axes, anchor.keepdims ? " (keepdims)" : "", stage + 1, stages);
  c.line("constexpr Index kOuter = kConfig.outer, kRed = kConfig.red, kInner = kConfig.inner;");
  c.line("constexpr int kThreads = kConfig.threads, kUnroll = kConfig.unroll, kVec = kConfig.vec;");
  c.line("using C = {};  // accumulation type, and the type stages hand over", cty);
  if (anchor.kind == ir::OpKind::Mean) {
    c.line("constexpr Index kCount = kConfig.count;  // elements reduced per output over all stages");
    if (last) {
      c.open_block("struct Op : kiln::SumOp<C>");
      c.line("template <class J> static __device__ __forceinline__ C finalize(C a, J) {{ return a / C(kCount); }}");
      c.close_block(";");
    } else {
      c.line("using Op = kiln::SumOp<C>;  // the mean divides once, in the last stage");
    }
  } else {
    c.line("using Op = {};", combiner(anchor.kind, cty));
  }
  unit.constants = c.str();

  CodeWriter w;
  const ir::NodeId primary = first ? primary_leaf(plan, operand) : -1;
  auto pass_through = [&](const char* name, const char* comment) {
    ExprEmitter ex(plan, w);
    w.line("// {}", comment);
    w.open_block(fmt::format("struct {}", name));
    UnitParts::declare_members(plan, kernel, w, ex);
    w.line("__device__ __forceinline__ C operator()(C value, Index flat) const {{ (void)flat; return value; }}");
    w.close_block(";");
  };
  if (first) write_load(plan, kernel, primary, w);
  else pass_through("Load", "the previous stage's values, as they are");
  w.blank();
  if (last) write_store(plan, kernel, "C", w);
  else pass_through("Store", "this stage's values, to the next stage's workspace");
  unit.functors = w.str();

  // A later stage reads the previous stage's workspace; an earlier one writes its own.
  const std::string in = first ? UnitParts::pointer_name(plan, plan.leaves.at(primary))
                               : workspace_pointer(plan, kernel, false);
  const std::string out = last ? pointer_of_store(plan, kernel) : workspace_pointer(plan, kernel, true);
  const std::string none = "static_cast<Op::Acc*>(nullptr)";
  switch (config.variant) {
    case ReduceChainVariant::kInnerWarp:
      unit.body = fmt::format("  kiln::reduce_inner_warp<kThreads, kUnroll, Op>({}, {}, kOuter, kRed, {});", in, out,
                              functors(plan, kernel));
      break;
    case ReduceChainVariant::kInnerBlock:
      unit.body = fmt::format(
          "  kiln::reduce_inner_block<kThreads, kUnroll, Op>({}, {}, {}, kOuter, kRed, Index(1), kRed, {});", in, out,
          none, functors(plan, kernel));
      break;
    case ReduceChainVariant::kOuter:
      unit.body = fmt::format(
          "  kiln::reduce_outer<kThreads, kUnroll, kVec, Op>({}, {}, {}, kOuter, kRed, kInner, Index(1), kRed, {});", in,
          out, none, functors(plan, kernel));
  }
  unit.launch_check(kernel, "kiln::reduce_chain_geometry(kConfig)");
}

// ---------------------------------------------------------------- rownorm

// struct Scale of a Normalize anchor: the multiplier of a row's deviations from q, their sum of
// squares, as the composition wrote it (rsqrt(q / len + eps), or 1 / sqrt(...) for a quotient).
void write_norm_scale(const Plan& plan, const PlannedKernel& kernel, CodeWriter& w) {
  const auto& anchor = anchor_of(plan, kernel);
  ExprEmitter ex(plan, w);
  w.line("// spec line {}: the scale of a row's {} from q, their sum of squares", anchor.loc.line,
         anchor.norm.centered ? "deviations from its mean" : "values");
  w.open_block("struct Scale");
  UnitParts::declare_members(plan, kernel, w, ex);
  w.open_block("__device__ __forceinline__ C operator()(C q) const");
  // Over a dyn length the count is this launch's (the members hold its dyn dims).
  const std::string count =
      dyn_len(kernel) ? fmt::format("C({})", dyn_extent_expression(plan, kernel.dyn_len, "Index")) : "C(kCount)";
  std::string a = anchor.norm.mean ? "q / " + count : "q";
  if (anchor.operands.size() > 1) {
    const ir::NodeId eps = anchor.operands[1];
    const Coords at(plan.bound->shape(eps).size(), "0");   // one element
    a += fmt::format(" + static_cast<C>({})", ex.value(eps, at));
  }
  const bool dbl = anchor.dtype == DType::f64;
  if (anchor.norm.divide) w.line("return C(1) / sqrt{}({});", dbl ? "" : "f", a);
  else w.line("return rsqrt{}({});", dbl ? "" : "f", a);
  w.close_block();
  w.close_block(";");
}

void emit_family(const Plan& plan, const PlannedKernel& kernel, const RownormConfig& config, UnitParts& unit) {
  const auto& anchor = anchor_of(plan, kernel);
  const ir::NodeId operand = anchor.operands[0];
  const ir::NodeId primary = primary_leaf(plan, operand);
  const bool norm = anchor.kind == ir::OpKind::Normalize;
  CodeWriter c;
  begin_unit(kernel, "rownorm.cuh", unit, c);
  c.line("{}", UnitParts::config_line(config));
  if (norm) {
    c.line("// {} normalize of {} over axes ({}): the composition on line {} (fuse_norms)",
           anchor.norm.centered ? "centered" : "uncentered", dims_text(plan, operand), fmt::join(anchor.axes, ", "),
           anchor.loc.line);
  } else {
    c.line("// {} of {} along axis {}", ir::op_kind_name(anchor.kind), dims_text(plan, operand), anchor.axis);
  }
  const bool whole = config.variant == RownormVariant::kSplitWhole;
  const bool split =
      config.variant == RownormVariant::kSplitStats || config.variant == RownormVariant::kSplitApply || whole;
  if (split)
    extent_constants(kernel, c, "kOuter", "outer",
                     {{"kLead", "lead"}, {"kLen", "len"}, {"kGang", "gang"}, {"kSplits", "splits"}, {"kChunk", "chunk"}},
                     "len");
  else
    extent_constants(kernel, c, "kOuter", "outer", {{"kLen", "len"}, {"kInner", "inner"}}, "len");
  KILN_ASSERT(!dyn_len(kernel) || !split, "a split norm over a dyn length (fuse_norms does not fuse one)");
  const std::string len = dyn_len(kernel) ? "len" : "kLen";
  if (norm && !dyn_len(kernel))   // else Scale computes it from its dyn dims
    c.line("constexpr Index kCount = {};  // elements a row is normalized over", split ? "kLead * kLen" : "kLen");
  const bool strided = config.variant == RownormVariant::kStrided;
  if (whole) {
    c.line("constexpr int kThreads = kConfig.threads;  // a block a row: its kLead segments of kLen");
  } else if (split) {
    c.line("constexpr int kThreads = kConfig.threads;  // a block a chunk: kChunk of a segment, or kGang segments");
  } else if (strided) {
    c.line("constexpr int kThreads = kConfig.threads, kUnroll = kConfig.unroll;");
  } else {
    c.line("constexpr int kThreads = kConfig.threads, kGroup = kConfig.group, kItems = kConfig.items;  // a row in "
           "registers when {} <= kGroup * kItems", len);
  }
  const char* kind = norm ? (anchor.norm.centered ? "kLayerNorm" : "kRmsNorm")
                          : anchor.kind == ir::OpKind::Softmax ? "kSoftmax" : "kLogSoftmax";
  c.line("constexpr kiln::RowNormKind kKind = kiln::RowNormKind::{};", kind);
  c.line("using C = {};", compute_type(anchor.dtype));
  unit.constants = c.str();
  unit.functors = load_store_functors(plan, kernel, primary, "C", 0, /*flat_lanes=*/true);
  std::string fs = functors(plan, kernel);
  if (norm) {
    CodeWriter w;
    w.blank();
    write_norm_scale(plan, kernel, w);
    unit.functors += w.str();
    fs += fmt::format(", Scale{{{}}}", UnitParts::member_inits(plan, kernel));
  }
  const std::string in = UnitParts::pointer_name(plan, plan.leaves.at(primary));
  const std::string n = rows_name(kernel, "kOuter");
  const std::string partials =
      split && !whole ? fmt::format("reinterpret_cast<{}kiln::WelfordAcc<C>*>({})",
                          config.variant == RownormVariant::kSplitApply ? "const " : "",
                          workspace_pointer(plan, kernel, config.variant == RownormVariant::kSplitStats))
            : std::string();
  if (config.variant == RownormVariant::kSplitStats)
    unit.body = fmt::format("  kiln::rownorm_split_stats<kThreads, kKind, C, kConfig.aligned, kConfig.rows_fastest>({}, {}, kOuter, kLead, "
                            "kLen, kGang, kSplits, kChunk, Load{{{}}});",
                            in, partials, UnitParts::member_inits(plan, kernel));
  else if (config.variant == RownormVariant::kSplitApply)
    unit.body = fmt::format("  kiln::rownorm_split_apply<kThreads, kKind, C, kConfig.aligned, kConfig.rows_fastest>({}, {}, {}, kOuter, "
                            "kLead, kLen, kGang, kSplits, kChunk, {});",
                            in, pointer_of_store(plan, kernel), partials, fs);
  else if (whole)
    unit.body = fmt::format("  kiln::rownorm_split_whole<kThreads, kKind, C, kConfig.aligned>({}, {}, kOuter, kLead, kLen, {});",
                            in, pointer_of_store(plan, kernel), fs);
  else if (strided)
    unit.body = fmt::format("  kiln::rownorm_strided<kThreads, kUnroll, kKind, C>({}, {}, {}, {}, {}, {});", in,
                            pointer_of_store(plan, kernel), n, len, inner_name(kernel), fs);
  else
    unit.body = fmt::format("  kiln::rownorm_rows<kThreads, kGroup, kItems, kKind, C, kConfig.aligned{}>({}, {}, {}, {}, "
                            "{});",
                            // a dyn length: its class's rows in registers, whole vectors or not, the
                            // slots below its lowest length unchecked (rownorm.cuh)
                            dyn_len(kernel) ? ", /*kDynMinLen=*/kConfig.min_len" : "", in,
                            pointer_of_store(plan, kernel), n, len, fs);
  unit.body = extent_statements(plan, kernel, "len") + unit.body;
  rows_launch_check(kernel, "kiln::rownorm_geometry(kConfig)", unit);
}

}  // namespace kiln
