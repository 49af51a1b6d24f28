// Planning of the memory-bound template family: reductions (reduce_inner,
// reduce_outer, reduce_finish), scans (scan_rows) and row normalizations (rownorm).
//
// [Note: every anchor is a [outer, len, inner] view]
// A reduction over adjacent axes, a scan along an axis and a softmax along an
// axis all see their input as a row-major [outer, len, inner] box: `len` is the
// product of the axes the op works along, `outer`/`inner` the products before and
// after. inner == 1 means the rows are contiguous (reduce_inner, scan_rows,
// rownorm_rows); else the template walks columns (reduce_outer, rownorm_strided).
// The geometry rules live in templates/kiln/launch_rules.h so the planner and the
// hand-written example units agree on every number. Parameters go into
// PlannedKernel::params (the emitter turns them into named constants) and the
// reason text says which variant was chosen and why.
#include <algorithm>

#include "generator/assert.h"
#include "generator/planner.h"
#include "templates/kiln/launch_rules.h"

namespace kiln {

namespace {

constexpr std::int64_t kInt32Limit = (std::int64_t{1} << 31) - 1;

struct Box {
  std::int64_t outer = 1, len = 1, inner = 1;
};

Box box_of(const std::vector<std::int64_t>& shape, int first, int last) {
  Box b;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    const std::int64_t e = shape[static_cast<std::size_t>(d)];
    if (d < first) b.outer *= e;
    else if (d <= last) b.len *= e;
    else b.inner *= e;
  }
  return b;
}

std::int64_t numel(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

unsigned narrow(long long v) { return static_cast<unsigned>(v); }

// Bytes of one element of the tensor the template streams (the anchor's operand as stored, or
// computed when it is an inlined expression: its widest leaf decides the vector width).
int element_bytes(const Planner& p, ir::NodeId operand) {
  return static_cast<int>(dtype_size(p.node(operand).dtype == DType::boolean ? DType::f32 : p.node(operand).dtype));
}

// int32 indices unless some tensor the kernel touches has 2^31 elements or more.
std::string index_reason(PlannedKernel& kn, std::int64_t biggest) {
  kn.index64 = biggest > kInt32Limit;
  return kn.index64 ? fmt::format("int64 indices ({} elements >= 2^31)", biggest)
                    : "int32 indices (every tensor < 2^31 elements)";
}

void set_geometry(PlannedKernel& kn, const launch::Geometry& g) {
  kn.grid = {narrow(g.grid.x), narrow(g.grid.y), narrow(g.grid.z)};
  kn.block = {narrow(g.block.x), narrow(g.block.y), narrow(g.block.z)};
  kn.shared_bytes = narrow(g.shared_bytes);
}

// Bytes of the combiner's running state (Op::Acc in reduce_ops.cuh) for a compute type of `c`
// bytes and an index of `index` bytes.
int acc_bytes(ir::OpKind kind, int c, int index) {
  switch (kind) {
    case ir::OpKind::Argmin:
    case ir::OpKind::Argmax: return std::max(c, index) * 2;   // {value, index}, padded
    case ir::OpKind::Logsumexp: return 2 * c;                 // {max, sum}
    default: return c;
  }
}

int compute_bytes(DType d) { return d == DType::f64 || d == DType::i64 || d == DType::u64 ? 8 : 4; }

// A split reduction: the anchor kernel writes partial states to a workspace and a follow-up
// reduce_finish combines them in split order and stores (with the epilogue).
void add_finish(Planner& p, PlannedKernel& kn, std::int64_t n_out, std::int64_t splits, std::int64_t count,
                int acc) {
  const auto& a = p.node(kn.anchor);
  const std::string name = (a.name.empty() ? fmt::format("t{}", kn.anchor) : a.name) + "_partials";
  // Opaque Acc states, as 4-byte words (every Acc is a multiple of 4 bytes).
  const int ws = p.add_workspace(name, DType::f32, {splits * n_out * acc / 4});
  KernelArg arg;
  arg.kind = KernelArg::Kind::Buffer;
  arg.buffer = ws;
  arg.dtype = DType::f32;
  arg.writes = true;
  kn.args.push_back(arg);
  PlannedKernel fin;
  fin.anchor = kn.anchor;
  fin.template_name = "reduce_finish";
  fin.stores = std::move(kn.stores);
  kn.stores.clear();
  fin.params = kn.params;
  fin.params["finish_threads"] = 256;
  fin.params["n_out"] = n_out;
  fin.params["workspace"] = ws;
  fin.params["count"] = count;
  set_geometry(fin, launch::reduce_finish_geometry(n_out, 256));
  fin.index64 = kn.index64;
  fin.reason = fmt::format("combines {} partial states per output in split order (deterministic); {}", splits,
                           fin.index64 ? "int64 indices" : "int32 indices");
  KernelArg read = arg;
  read.writes = false;
  fin.args.push_back(read);
  p.add_followup(std::move(fin));
}

void plan_reduction(Planner& p, PlannedKernel& kn) {
  const auto& a = p.node(kn.anchor);
  const ir::NodeId operand = a.operands[0];
  const auto& shape = p.shape(operand);
  std::vector<int> axes = a.axes;
  std::sort(axes.begin(), axes.end());
  for (std::size_t i = 1; i < axes.size(); ++i)
    KILN_CHECK(axes[i] == axes[i - 1] + 1, Error,
               "{}: line {}: reduction over non-adjacent axes is not supported yet (reduce them one at a time)",
               p.bound().ir->op_name, a.loc.line);
  const Box b = axes.empty() ? Box{1, numel(shape), 1} : box_of(shape, axes.front(), axes.back());
  const int elem = element_bytes(p, operand);
  const int sms = p.target().sm_count;
  std::string idx = index_reason(kn, std::max(numel(shape), numel(p.shape(kn.anchor))));
  const int acc = acc_bytes(a.kind, compute_bytes(a.kind == ir::OpKind::Argmin || a.kind == ir::OpKind::Argmax
                                                      ? p.node(operand).dtype : a.dtype),
                            kn.index64 ? 8 : 4);
  kn.params["outer"] = b.outer;
  kn.params["red"] = b.len;
  kn.params["inner"] = b.inner;
  if (b.inner == 1) {
    kn.template_name = "reduce_inner";
    if (launch::reduce_inner_use_warp(b.outer, b.len, sms)) {
      constexpr int kThreads = 256, kUnroll = 4;
      kn.params["warp"] = 1;
      kn.params["threads"] = kThreads;
      kn.params["unroll"] = kUnroll;
      set_geometry(kn, launch::reduce_inner_warp_geometry(b.outer, kThreads));
      kn.reason = fmt::format("reduced axis contiguous: a warp per row ({} rows of {}; {}), 16-byte loads with "
                              "scalar head/tail; {}",
                              b.outer, b.len, b.len <= 2048 ? "short rows" : "rows fill every SM", idx);
      return;
    }
    constexpr int kThreads = 512, kUnroll = 4;
    const auto split = launch::reduce_inner_split(b.outer, b.len, kThreads, kUnroll, elem, sms);
    kn.params["warp"] = 0;
    kn.params["threads"] = kThreads;
    kn.params["unroll"] = kUnroll;
    kn.params["splits"] = split.splits;
    kn.params["chunk"] = split.chunk;
    set_geometry(kn, launch::reduce_inner_block_geometry(b.outer, split, kThreads, acc));
    kn.reason = fmt::format("reduced axis contiguous: a block per row ({} rows, fewer than 32 per SM, of {} > 2048){}; {}",
                            b.outer, b.len,
                            split.splits > 1 ? fmt::format(", each row split {} ways + reduce_finish", split.splits) : "",
                            idx);
    if (split.splits > 1) add_finish(p, kn, b.outer, split.splits, b.len, acc);
    return;
  }
  kn.template_name = "reduce_outer";
  const int vec = p.target().aligned16 ? launch::reduce_outer_vec(b.inner, elem) : 1;
  if (launch::reduce_outer_use_rows(b.inner, vec)) {
    constexpr int kThreads = launch::kOuterRowsThreads, kUnroll = 1;
    const int cols = launch::reduce_outer_rows_cols(b.inner, kThreads);
    const auto split = launch::reduce_outer_rows_split(b.outer, b.len, b.inner, kThreads, cols, sms);
    kn.params["threads"] = kThreads;
    kn.params["cols"] = cols;
    kn.params["unroll"] = kUnroll;
    kn.params["vec"] = 1;
    kn.params["splits"] = split.splits;
    kn.params["chunk"] = split.chunk;
    set_geometry(kn, launch::reduce_outer_geometry(b.outer, b.inner, split, kThreads, cols, acc));
    const std::int64_t tile = std::int64_t{kThreads} * cols;
    kn.reason = fmt::format(
        "reduced axis strided, inner {} % {} != 0: 4-byte columns; a block sweeps {} rows {}({} threads x {} "
        "columns, {} loads in flight a thread), so its reads are contiguous and no sector is shared between column "
        "strips; {}{} blocks; {}",
        b.inner, 16 / elem, split.chunk, b.inner <= tile ? "whole " : fmt::format("in {}-column tiles ", tile), kThreads,
        cols, cols * kUnroll,
        split.splits > 1 ? fmt::format("reduced axis split {} ways + reduce_finish for ", split.splits) : "",
        kn.grid.x * kn.grid.y, idx);
    if (split.splits > 1) add_finish(p, kn, b.outer * b.inner, split.splits, b.len, acc);
    return;
  }
  const int threads = launch::reduce_outer_threads(b.inner, vec);
  const int unroll = vec == 1 ? 8 : 4;
  const auto split = launch::reduce_outer_split(b.outer, b.len, b.inner, threads, vec, unroll, sms);
  kn.params["threads"] = threads;
  kn.params["unroll"] = unroll;
  kn.params["vec"] = vec;
  kn.params["splits"] = split.splits;
  kn.params["chunk"] = split.chunk;
  set_geometry(kn, launch::reduce_outer_geometry(b.outer, b.inner, split, threads, vec, acc));
  kn.reason = fmt::format(
      "reduced axis strided: threads along the contiguous inner axis ({}), {}{}; {}", b.inner,
      vec > 1 ? fmt::format("{}-byte loads", vec * elem)
              : fmt::format("inner % {} != 0: {}-byte loads, {} in flight per thread", 16 / elem, elem, unroll),
      split.splits > 1 ? fmt::format(", {} blocks cannot fill {} SMs: reduced axis split {} ways + reduce_finish",
                                     kn.grid.x, sms, split.splits)
                       : "",
      idx);
  if (split.splits > 1) add_finish(p, kn, b.outer * b.inner, split.splits, b.len, acc);
}

void plan_scan(Planner& p, PlannedKernel& kn) {
  const auto& a = p.node(kn.anchor);
  const auto& shape = p.shape(kn.anchor);
  const Box b = shape.empty() ? Box{} : box_of(shape, a.axis, a.axis);
  KILN_CHECK(b.inner == 1, Error, "{}: line {}: scan over a non-last axis is not supported yet",
             p.bound().ir->op_name, a.loc.line);
  const std::string idx = index_reason(kn, numel(shape));
  constexpr int kThreads = 256, kVecs = 2;
  const int elem = element_bytes(p, a.operands[0]);
  const std::int64_t tile = std::int64_t{kThreads} * kVecs * (16 / elem);
  kn.template_name = "scan_rows";
  kn.params["rows"] = b.outer;
  kn.params["len"] = b.len;
  kn.params["threads"] = kThreads;
  kn.params["vecs"] = kVecs;
  set_geometry(kn, launch::scan_rows_block_geometry(b.outer, kThreads));
  // The look-back variant needs a workspace zeroed before every launch, which plans cannot
  // express yet: few long rows take the block-per-row path too (correct, fewer SMs busy).
  const bool lookback = launch::scan_use_lookback(b.outer, b.len, tile, p.target().sm_count);
  kn.reason = fmt::format("scan along contiguous rows: a block per row ({} rows of {}, {}-element tiles{}); {}",
                          b.outer, b.len, tile,
                          lookback ? "; few long rows would prefer decoupled look-back, not planned yet" : "", idx);
}

void plan_rownorm(Planner& p, PlannedKernel& kn) {
  const auto& a = p.node(kn.anchor);
  const auto& shape = p.shape(kn.anchor);
  const Box b = box_of(shape, a.axis, a.axis);
  const std::string idx = index_reason(kn, numel(shape));
  const int v = 16 / element_bytes(p, a.operands[0]);
  const int sms = p.target().sm_count;
  kn.template_name = "rownorm";
  kn.params["outer"] = b.outer;
  kn.params["len"] = b.len;
  kn.params["inner"] = b.inner;
  if (b.inner > 1) {
    constexpr int kThreads = 256, kUnroll = 4;
    kn.params["strided"] = 1;
    kn.params["threads"] = kThreads;
    kn.params["unroll"] = kUnroll;
    set_geometry(kn, launch::rownorm_strided_geometry(b.outer, b.inner, kThreads));
    kn.reason = fmt::format("normalized axis strided (inner {}): a thread per column, two passes; {}", b.inner, idx);
    return;
  }
  kn.params["strided"] = 0;
  constexpr int kWarpItems = 32;
  if (launch::rownorm_use_warp(b.outer, b.len, kWarpItems, sms)) {
    constexpr int kThreads = 256;
    const std::int64_t items = launch::rownorm_warp_items(b.len, v);
    kn.params["group"] = 32;
    kn.params["threads"] = kThreads;
    kn.params["items"] = items;
    set_geometry(kn, launch::rownorm_warp_geometry(b.outer, kThreads));
    kn.reason = fmt::format("a warp per row ({} rows of {} in registers: one read, one write); {}", b.outer, b.len, idx);
    return;
  }
  const int threads = launch::rownorm_block_threads(b.outer, b.len, sms);
  const std::int64_t items = launch::rownorm_block_items(b.len, threads, v);
  kn.params["group"] = threads;
  kn.params["threads"] = threads;
  kn.params["items"] = items;
  set_geometry(kn, launch::rownorm_block_geometry(b.outer, threads));
  const bool fits = b.len <= threads * items;
  kn.reason = fmt::format("a block of {} per row ({} rows of {}): {}; {}", threads, b.outer, b.len,
                          fits ? fmt::format("row held in registers ({} a thread), one pass: max, exp kept in place "
                                             "and summed, times 1/sum",
                                             items)
                               : "row longer than the block's registers, two passes (online max/sum by chunks, "
                                 "then re-read and write)",
                          idx);
}

const AnchorRule kReduceRule{"reduce", true, true, plan_reduction};
const AnchorRule kScanRule{"scan_rows", true, true, plan_scan};
const AnchorRule kRowNormRule{"rownorm", true, true, plan_rownorm};

}  // namespace

const AnchorRule* memory_bound_rule(ir::OpKind kind) {
  if (ir::is_reduction(kind)) return &kReduceRule;
  if (ir::is_scan(kind)) return &kScanRule;
  if (ir::is_rownorm(kind)) return &kRowNormRule;
  return nullptr;
}

}  // namespace kiln
