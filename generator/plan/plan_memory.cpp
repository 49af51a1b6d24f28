// Planning of the memory-bound template family: reductions (reduce_inner,
// reduce_outer, reduce_finish; reduce_chain over non-adjacent axes), scans (scan_rows
// block or look-back along the last axis, scan_strided[_totals] along any other) and row
// normalizations (rownorm).
//
// [Note: every anchor is a [outer, len, inner] view]
// A reduction over adjacent axes, a scan along an axis and a softmax along an
// axis all see their input as a row-major [outer, len, inner] box: `len` is the
// product of the axes the op works along, `outer`/`inner` the products before and
// after. inner == 1 means the rows are contiguous (reduce_inner, scan_rows,
// rownorm_rows); else the template walks columns (reduce_outer, rownorm_strided).
// The rules live beside the configs in templates/kiln/config/{reduce,scan,rownorm}.h so the
// planner, the templates and the hand-written example units agree on every number. The
// planner's choice goes into PlannedKernel::config (ReduceConfig, ReduceFinishConfig,
// ReduceChainConfig, ScanConfig, RownormConfig: the emitter writes it into the unit as kConfig)
// and the reason text says which variant was chosen and why.
#include <algorithm>
#include <array>
#include <numeric>
#include <unordered_set>

#include "generator/support/assert.h"
#include "generator/plan/planner.h"
#include "templates/kiln/config/reduce.h"
#include "templates/kiln/config/rownorm.h"
#include "templates/kiln/config/scan.h"

namespace kiln {

// [Note: dyn rows]
// The memory-bound templates take their [outer, len, inner] extents as run-time arguments, so a
// dyn dim may size the rows: the axes before those the op works along (a batch, a sequence), and
// the axes it works along ([Note: dyn lengths]), but not those after them, since the variant,
// vector width and tile follow from them (a located error says so). With dyn rows the config's
// outer is 0, the kernel computes its rows from its dim_ arguments, and each launch takes its
// grid from the family's geometry rule over that launch's rows (launch_for). What a rule decides
// from the row count (warp or block per row, threads a row) is planned at the lowest value of the
// dim's size class, and the rule declares the thresholds ([Note: dyn size classes]); with two or
// more dyn dims among the rows (as `dyn` marks may declare) there are no classes and the rules see
// the static rows alone (as if every dyn dim were 1), so the generic default makes at most one of
// them dyn (generic_dims). A split of the reduced axis (reduce_inner) and the look-back scan size
// their workspaces by the row count: with dyn rows they are planned only in a class that has a
// largest value (below the rule's threshold), at the class's lowest row count, with the workspace
// sized for its largest (a reduce_finish and the zeroing then cover the launch's rows). The
// strided splits (reduce_outer's variants) and the strided scan's chunks read the row count down
// to where the blocks fill the GPU unsplit (`full`), so their classes are 8 times apart below it
// (the reductions' at full/512, full/64, full/8 and full, the scan's from full/64): a class's
// workspace is at most 8 times what its lowest row count needs (but the first class's), and from
// `full` on, a class without a largest value, they are neither split nor chunked. A split
// reduction's count and a chunked scan's are the class's most: each launch splits or chunks as
// the rule does at its own rows ([Note: splits per launch] in kiln/config/reduce.h, [Note: chunks
// per launch] in kiln/config/scan.h).
// (Rows and rows_of are declared in planner.h: the pooling family's planes are rows too.)
void Rows::thresholds(Planner& p, const std::vector<std::int64_t>& counts) {
  if (dim.empty()) return;
  std::vector<std::int64_t> at;
  for (std::int64_t t : counts) at.push_back((t + fixed - 1) / fixed);
  normalize_thresholds(at);
  p.add_dyn_thresholds(dim, at);
  const int klass = dyn_class(at, p.bound().dims.at(dim));
  planned = fixed * dyn_class_low(at, klass);
  most = klass < static_cast<int>(at.size()) ? fixed * (at[static_cast<std::size_t>(klass)] - 1) : 0;
  if (!at.empty()) class_text = fmt::format("{} in {}", dim, dyn_class_text(at, klass));
}

// [Note: dyn lengths]
// A dyn dim may also size the axes a reduction, a scan or a softmax works along (a sum or a softmax
// over a sequence whose length varies), each as a whole extent; the axes after them (a strided
// op's inner axes) stay static, since the variant and vector width follow from them. The
// templates read the length at run time, and a row's alignment is checked per row (16-byte loads
// with a scalar head and tail), so any value is correct; the config's red or len is 0 and the
// kernel computes the length from its dim_ arguments (PlannedKernel::dyn_len). What the rules
// decide from the length is planned per size class of the dim ([Note: dyn size classes] in
// plan.h):
// - reduce_inner: a warp per row up to 2048 elements, a block per row above (when the rows do not
//   fill the GPU with warps). Splits (reduce_inner_block, and reduce_outer's three variants, with
//   static rows): a class starts at each power of two where the rule's split count changes
//   (split_steps), and a class is planned at its lowest length, as the specialized reduction
//   there; each launch cuts its length into that many chunks (reduce_dyn_chunk, in the body: the
//   config's chunk is 0), so the grid and the workspace (splits x outputs) stay the class's, and
//   reduce_finish reads the length for a mean's count. With dyn rows too, nothing is split.
// - rownorm rows: a class starts wherever the rules' pick changes (rownorm_len_steps: warp or
//   block, threads, items; for f32 rows that fill the GPU with warps, every 128 elements to 1024,
//   then 2048, 3072, 4096, 6144, 8192, 12288 and 16384); each class is planned at its largest
//   length, so the items a thread holds cover every row of the class in registers (one read, one
//   write) and each length gets the specialized plan of that longest row; the kernel compiles no
//   two-pass path beside the register one (rownorm_rows' kDynMinLen: rows that are not whole
//   aligned vectors load an element at a time in the same layout), and the class's lowest length
//   (the config's min_len) spares the register slots below it their bound checks (1.12-1.23x the
//   specialized kernel before, 1.01-1.02x after, bench/results/2026-12-02-h200-run3/). Rows
//   past 1024 x kRowNormMaxItems take
//   the block's two-pass path (a class of its own, items 0), as a static plan of such rows does.
//   Strided rows (kStrided) depend on the length only at run time.
// - scans over contiguous rows: with few static rows (under 2 per SM), the look-back from 4 of
//   the block's tiles on, as the specialized scan; its classes run from 3 tiles x 2^k to twice
//   that, each planned for its longest row (its workspace, zeroed before each launch, and its
//   grid), and each launch takes its grid and zeroes the part of the workspace it lays out by its
//   length (launch_for). Past kDynSplitLen, and with dyn rows too, a block per row. The strided
//   scan runs in one pass (no chunks).
// A norm composition over a dyn length is fused into a rownorm (fuse_norms) where the specialized
// plan fuses at every length: static rows, at least 2 per SM (longer rows than the registers hold
// stream twice in a block); else its reductions and the elementwise rest plan as written. A chain
// over non-adjacent axes refuses dyn dims. The grid depends on the rows only, but for the
// look-back scan's.

namespace {

// The extents of `node`'s axes [begin, end) as a Rows (`bound` their bound product): dynamic
// where a dyn dim sizes one of them, as a whole extent (else refused, located, naming `what`).
Rows extent_rows(Planner& p, const PlannedKernel& kn, ir::NodeId node, int begin, int end, std::int64_t bound,
                 const std::string& what, const char* role) {
  Rows r;
  r.planned = bound;
  r.text = std::to_string(bound);
  const ir::Shape& shape = p.bound().ir->node(node).shape;
  end = std::min(end, static_cast<int>(shape.size()));
  int dyn_factors = 0;
  for (int d = begin; d < end; ++d) {
    const std::string found = p.dyn_in(shape[static_cast<std::size_t>(d)]);
    if (found.empty()) {
      r.fixed *= p.bound().shape(node)[static_cast<std::size_t>(d)];
      continue;
    }
    const auto& e = shape[static_cast<std::size_t>(d)];
    if (e.kind() != ir::DimExpr::Kind::Dim)
      p.refuse_dyn(found, kn.anchor, what, fmt::format("takes a dyn dim among {} only as a whole extent, not inside {}",
                                                       role, e.str()));
    r.dynamic = true;
    r.dim = found;
    ++dyn_factors;
  }
  if (!r.dynamic) return r;
  if (dyn_factors > 1) r.dim.clear();
  std::vector<std::string> names;
  for (int d = begin; d < end; ++d) {
    r.factors.push_back(shape[static_cast<std::size_t>(d)]);
    names.push_back(shape[static_cast<std::size_t>(d)].str());
  }
  r.planned = r.fixed;
  r.text = fmt::format("{} (dyn)", fmt::join(names, "*"));
  return r;
}

}  // namespace

Rows rows_of(Planner& p, const PlannedKernel& kn, ir::NodeId node, int first, std::int64_t outer, const char* family,
             int dyn_last, bool dyn_after) {
  const std::string what = fmt::format("the {} template", family);
  const ir::Shape& shape = p.bound().ir->node(node).shape;
  const int free_to = dyn_after ? static_cast<int>(shape.size()) - 1 : std::max(first - 1, dyn_last);
  for (int d = free_to + 1; d < static_cast<int>(shape.size()); ++d) {
    const std::string found = p.dyn_in(shape[static_cast<std::size_t>(d)]);
    if (found.empty()) continue;
    p.refuse_dyn(found, kn.anchor, what,
                 dyn_last >= first
                     ? fmt::format("takes dyn dims only among the rows and the axes it works along (axis {} here is "
                                   "after them)",
                                   d)
                     : fmt::format("takes dyn dims only among the rows, the axes before those it works along (axis {} "
                                   "here is one it works along or one after them)",
                                   d));
  }
  return extent_rows(p, kn, node, 0, first, outer, what, "the rows");
}

Rows len_of(Planner& p, const PlannedKernel& kn, ir::NodeId node, int first, int last, std::int64_t len,
            const char* family) {
  return extent_rows(p, kn, node, first, last + 1, len, fmt::format("the {} template", family),
                     "the axes it works along");
}

// [Note: dyn inner extents]
// A reduction, a scan or a row norm along a strided axis (reduce_outer's variants,
// scan_strided[_totals], rownorm_strided) may
// also take one dyn dim among the axes after the worked ones (the columns of `sum(x: f32[B, R,
// C], axis=1)`), as a whole extent that sizes nothing else the op sees as rows or length. The
// templates read `inner` at run time (their tiles, bounds and flat indices), so what the planner
// decides from it follows the dim's bucket and size class. For reductions:
// - the vector width (reduce_outer's kVec): 16-byte columns where every value of the bucket keeps
//   inner a multiple of the vector (the static factors, the bucket `multiple of 16`, or the row
//   alignment the runtime keys a row length by: [Note: dyn buckets] in plan.h); else 1;
// - the variant: with 16-byte columns reduce_outer at every width; else reduce_outer under 512
//   columns and from 512 on the whole-row sweep (reduce_outer_rows_v4 for 4-byte elements on
//   aligned bases, reduce_outer_rows otherwise), as the static rules pick at widths that are not
//   multiples of the vector (the v4 sweep is correct at any width);
// - the block: classes at 32, 64 and 128 columns of threads (and 256 without vectors; then 1024
//   and 2048 columns for the sweeps' threads or columns a thread), each planned for its widest
//   row, so one tile covers a row of the class as the static plan at that width does (the top
//   class takes the rules' widest pick);
// - splits, with a static length: planned at the class's narrowest inner and the fewest rows (1
//   where they are dyn): the fewest blocks, the most splits; each launch splits as the rule at its
//   own rows and inner, at least 2 ways and at most that count ([Note: splits per launch] in
//   kiln/config/reduce.h), into partial states its geometry sizes (Buffer::launch_kernel). With a
//   dyn length as well, nothing is split.
// A strided scan has classes past 32, 64 and 128 columns (its block, sized for the widest) and,
// with static rows and length, at the width from which the rule no longer cuts the axis into
// chunks and below it at the powers of two where the rule's count changes; a chunked class is
// planned with the rule's count at its narrowest, and each launch cuts the axis as the rule at
// its own width, at most that count, the chunk totals sized by the launch ([Note: chunks per
// launch] in kiln/config/scan.h). With dyn rows too, the plan's count is the rule's at the fewest
// rows and the class's narrowest inner, each launch's the rule's at its own rows and inner (one
// chunk where its blocks fill the GPU: the totals kernel is not launched). Never the strided
// look-back; with a dyn length, one pass.
// A softmax or log_softmax down a strided axis (rownorm_strided: a thread a column, 256 threads)
// decides nothing from inner: one class, the grid each launch's. (A norm composition with a dyn
// trailing axis is not fused: its reductions take the dyn inner, fuse_norms.cpp.)
// The bucket `one` is planned as the static extent. A chain over non-adjacent axes keeps every
// dim baked in (a located error says so).
namespace {
Rows inner_of(Planner& p, const PlannedKernel& kn, ir::NodeId node, int first, std::int64_t inner, const Rows& rows,
              const Rows& len, const char* family) {
  const std::string what = fmt::format("the {} template", family);
  const int rank = static_cast<int>(p.bound().ir->node(node).shape.size());
  Rows r = extent_rows(p, kn, node, first, rank, inner, what, "the axes after those it works along");
  if (!r.dynamic) return r;
  if (r.dim.empty()) {   // several dyn factors
    std::string found;
    for (const auto& e : r.factors)
      if (found.empty()) found = p.dyn_in(e);
    p.refuse_dyn(found, kn.anchor, what, "takes one dyn dim among the axes after those it works along");
  }
  for (const Rows* other : {&rows, &len})
    for (const auto& e : other->factors)
      if (e.kind() == ir::DimExpr::Kind::Dim && e.name() == r.dim)
        p.refuse_dyn(r.dim, kn.anchor, what,
                     fmt::format("takes a dyn dim after the axes it works along only where it sizes nothing else, and "
                                 "'{}' also sizes {}",
                                 r.dim, other == &rows ? "its rows" : "the axes it works along"));
  if (p.plan().dyn_buckets.at(r.dim) == DynBucket::One) {   // every launch of the bucket: the static extent
    Rows fixed;
    fixed.planned = inner;
    fixed.text = std::to_string(inner);
    return fixed;
  }
  return r;
}

// What the one dyn dim of a dyn extent must be a multiple of for the extent (its static factors
// times the dim) to be a multiple of v.
std::int64_t dyn_dim_multiple(const Rows& r, std::int64_t v) { return v / std::gcd(r.fixed, v); }

// Whether every value of a dyn extent's bucket keeps it a multiple of v: by its static factors or
// the bucket `multiple of 16`.
bool dyn_bucket_keeps_multiple(const Planner& p, const Rows& r, std::int64_t v) {
  const std::int64_t need = dyn_dim_multiple(r, v);
  return need == 1 || (p.plan().dyn_buckets.at(r.dim) == DynBucket::Div16 && 16 % need == 0);
}

// Whether every value of a dyn inner's bucket (and row class) keeps inner a multiple of the
// 16-byte vector of `elem`-byte elements: through its static factors, the bucket `multiple of 16`,
// or the row alignment the runtime keys the dim by where it is a row length (add_dyn_row_align).
bool dyn_inner_aligned(Planner& p, const Rows& inner, int elem) {
  const std::int64_t v = launch::vec_elems(elem);
  if (dyn_bucket_keeps_multiple(p, inner, v)) return true;
  if (p.plan().dyn_buckets.at(inner.dim) == DynBucket::Div16) return false;
  const std::int64_t need = dyn_dim_multiple(inner, v);
  return need <= 8 && p.add_dyn_row_align(inner.dim, need <= 4 ? 4 : 8);
}

// The inner widths at which a dyn inner's size class starts (Rows::thresholds' counts) where a
// block of one thread a column group of `vec` (reduce_outer_threads, scan_strided_threads) grows:
// past 32, 64 and 128 threads, each class sized for its widest.
std::vector<std::int64_t> dyn_block_widths(int vec) {
  std::vector<std::int64_t> at;
  for (std::int64_t threads : {32, 64, 128}) at.push_back(threads * vec + 1);
  return at;
}
// A strided reduction's: dyn_block_widths, and without vectors past 256 threads, at the whole-row
// sweeps (kOuterSweepMinInner) and where their block or columns a thread double
// (reduce_outer_v4_threads, reduce_outer_rows_cols).
std::vector<std::int64_t> dyn_inner_widths(int vec) {
  std::vector<std::int64_t> at = dyn_block_widths(vec);
  if (vec == 1)
    for (std::int64_t w : {std::int64_t{257}, std::int64_t{launch::kOuterSweepMinInner},
                           std::int64_t{2 * launch::kOuterSweepMinInner + 1},
                           std::int64_t{4 * launch::kOuterSweepMinInner + 1}})
      at.push_back(w);
  return at;
}
// What a reason says of a dyn inner: "C (dyn, C in [33, 65))", or without classes "C (dyn)".
std::string dyn_inner_text(const Rows& inner) {
  std::vector<std::string> names;
  for (const auto& e : inner.factors) names.push_back(e.str());
  return inner.class_text.empty() ? fmt::format("{} (dyn)", fmt::join(names, "*"))
                                  : fmt::format("{} (dyn, {})", fmt::join(names, "*"), inner.class_text);
}
// The width the top class (no widest row) is planned for: its rules' widest picks (256 threads
// of reduce_outer; 1024 threads of the v4 sweep, 16 columns a thread of reduce_outer_rows).
constexpr std::int64_t kDynInnerWidest = std::int64_t{launch::kOuterV4MaxThreads} * 4;
static_assert(kDynInnerWidest == std::int64_t{launch::kOuterRowsThreads} * launch::kOuterRowsMaxCols,
              "both sweeps take their widest pick from the same width");

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

int element_bytes(const Planner& p, ir::NodeId operand) { return element_bytes(p.plan(), operand); }

// int32 indices unless some tensor the kernel touches has more than kIndex32Limit elements (with
// dyn rows, the runtime keys executables by that too, so the count stays out of the text).
std::string index_reason(PlannedKernel& kn, std::int64_t biggest, bool dynamic = false) {
  kn.index64 = biggest > kIndex32Limit;
  if (!kn.index64) return fmt::format("int32 indices (every tensor < {} elements)", kIndex32Bound);
  return dynamic ? fmt::format("int64 indices (some tensor has >= {} elements)", kIndex32Bound)
                 : fmt::format("int64 indices ({} elements >= {})", biggest, kIndex32Bound);
}

// A kernel with dyn rows: the factors launch_for multiplies.
void set_rows(PlannedKernel& kn, const Rows& rows) {
  if (rows.dynamic) kn.dyn_outer = rows.factors;
}
// A kernel with a dyn length: the factors its body multiplies ([Note: dyn lengths]).
void set_len(PlannedKernel& kn, const Rows& len) {
  if (len.dynamic) kn.dyn_len = len.factors;
}
// What a reason says of a dyn length's class: nothing for a static one.
std::string len_class_text(const Rows& len) {
  if (!len.dynamic) return "";
  if (len.dim.empty()) return " (several dyn dims: no size classes, planned as if each were 1)";
  return len.class_suffix();
}

// The kernel's config and its launch as planned: the launch at the bound rows (kiln gen shows
// it), the config with rows.config_outer() (0 with dyn rows).
template <class Config, class GeometryRule>
void set_config(PlannedKernel& kn, Config c, const Rows& rows, std::int64_t bound_outer, GeometryRule geometry) {
  c.outer = bound_outer;
  kn.set_launch(geometry(c));
  c.outer = rows.config_outer();
  kn.config = c;
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

KernelArg workspace_arg(int buffer, DType dtype, bool writes) {
  KernelArg arg;
  arg.kind = KernelArg::Kind::Buffer;
  arg.buffer = buffer;
  arg.dtype = dtype;
  arg.writes = writes;
  return arg;
}

// The count a launch computes for the kernel being planned (its grid.y at that launch: a split
// reduction's splits, a chunked scan's chunks), an argument of it and of its follow-up.
KernelArg launch_count_arg(Planner& p) {
  KernelArg count;
  count.kind = KernelArg::Kind::LaunchSplits;
  count.kernel = p.planning_position();
  count.dtype = DType::i64;
  count.name = "launch_splits";
  return count;
}

// A follow-up of kn's anchor that takes over kn's stores: kn then writes only a workspace, which
// the follow-up reads (`ws` of `dtype`) to store the anchor's values.
PlannedKernel storing_followup(PlannedKernel& kn, const char* template_name, int ws, DType dtype) {
  PlannedKernel f;
  f.anchor = kn.anchor;
  f.template_name = template_name;
  f.stores = std::move(kn.stores);
  kn.stores.clear();
  f.args.push_back(workspace_arg(ws, dtype, false));
  return f;
}

// A split reduction: the anchor kernel writes partial states to a workspace and a follow-up
// reduce_finish combines them in a fixed order and stores (with the epilogue).
// With dyn rows, `n_out` is the most outputs of the class (the workspace's size) and `bound_out`
// the outputs of the bound rows (the plan's launch); reduce_finish counts its outputs at launch.
// `planned_out`: the outputs the rules see (the class's lowest with dyn rows), which pick the
// finish's threads per output (reduce_finish_lanes).
void add_finish(Planner& p, PlannedKernel& kn, const ReduceConfig& split, std::int64_t n_out, std::int64_t bound_out,
                std::int64_t planned_out, const Rows& inner) {
  const std::int64_t splits = split.splits;
  const int acc = split.acc_bytes;
  const auto& a = p.node(kn.anchor);
  const std::string name = (a.name.empty() ? fmt::format("t{}", kn.anchor) : a.name) + "_partials";
  // Opaque Acc states, as 4-byte words (every Acc is a multiple of 4 bytes); with a dyn inner
  // ([Note: dyn inner extents]) as many as each launch's geometry asks for.
  const int ws = p.add_workspace(name, DType::f32, {splits * n_out * acc / 4});
  if (inner.dynamic) p.size_by_launch(ws);
  kn.args.push_back(workspace_arg(ws, DType::f32, true));
  PlannedKernel fin = storing_followup(kn, "reduce_finish", ws, DType::f32);
  if (split.split_sms > 0) {   // both read the launch's count ([Note: splits per launch])
    kn.args.push_back(launch_count_arg(p));
    fin.args.push_back(launch_count_arg(p));
  }
  ReduceFinishConfig config;
  config.outer = split.outer;
  config.red = split.red;
  config.inner = inner.dynamic ? 0 : split.inner;
  config.threads = 256;
  config.n_out = bound_out;
  config.splits = splits;
  config.acc_bytes = acc;
  config.lanes = launch::reduce_finish_lanes(planned_out, splits, config.threads, p.target().sm_count);
  fin.set_launch(reduce_finish_geometry(config));
  if (!kn.dyn_outer.empty() || inner.dynamic) config.n_out = 0;   // the launch's outer * inner
  fin.dyn_outer = kn.dyn_outer;
  fin.dyn_inner = kn.dyn_inner;
  fin.dyn_len = kn.dyn_len;   // a mean's count ([Note: dyn lengths])
  fin.config = config;
  fin.index64 = kn.index64;
  fin.reason = fmt::format(
      "combines {} partial states per output {} (deterministic); {}",
      split.split_sms > 0 ? fmt::format("the launch's count of (at most {})", splits) : std::to_string(splits),
      config.lanes > 1 ? fmt::format("over {} threads each ({} outputs, fewer than a wave of threads; thread l "
                                     "combines states l, l + {}, ... in order, then the threads in order)",
                                     config.lanes, planned_out, config.lanes)
                       : std::string("in split order"),
      fin.index64 ? "int64 indices" : "int32 indices");
  p.add_followup(std::move(fin));
}

// True when every stored tensor that the expression `n` reads has elements of `bytes` bytes:
// then the template's tile (counted in 16-byte vectors of the streamed tensor) is the one
// the planner computes from the operand's type.
// (A walk with a seen-set: the expression may be a deep chain of lets or a wide DAG.)
bool leaves_have_width(const Planner& p, ir::NodeId root, std::size_t bytes) {
  std::vector<ir::NodeId> stack{root};
  std::unordered_set<ir::NodeId> seen;
  while (!stack.empty()) {
    const ir::NodeId n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (const int b = p.leaf_buffer(n); b >= 0) {
      if (dtype_size(p.buffer(b).dtype) != bytes) return false;
      continue;
    }
    const auto& node = p.node(n);
    if (node.kind == ir::OpKind::Scalar || node.kind == ir::OpKind::Literal) continue;
    stack.insert(stack.end(), node.operands.begin(), node.operands.end());
  }
  return true;
}

// [Note: rows known vectorizable]
// A row family whose rows are 16-byte vectorizable only at some launches compiles two paths and
// picks one per launch: 16-byte vectors, and an element-wise path for rows whose length is not a
// multiple of the vector or whose bases are not aligned. Where the plan knows every launch's rows
// are vectorizable, its config says so (ScanConfig::aligned for the contiguous-row scans,
// RownormConfig::aligned for rownorm_rows and the split norms) and the template compiles the
// vector path only. The
// element-wise path was about half the code: cold NVRTC compiles on the dev machine (2026-12-05,
// medians of 3) went from 156 to 74 ms for a block-per-row cumsum, 748 to 345 ms for the look-back
// cumsum, 154 to 87 ms for a softmax, 172 to 95 ms for a layer norm, 329 to 117 ms for a softmax
// with dropout; the vector path itself is the same code. The target's pointers are 16-byte
// aligned (an Op keys its executables by that, an Executable assumes it: docs/design-notes.md,
// "Alignment"); the length is a multiple of the streamed tensor's vector, statically or by its
// dyn dim's static factors or bucket `multiple of 16` (no row-alignment key is added for it);
// every leaf the operand reads has the streamed width (the template's T). A row of the output then
// starts on a multiple of its vector of V results, so at the alignment its store needs (the
// vector's size up to 16 bytes: kVecStoreAlign in kiln/common.cuh; 8 f32 results of f16 rows are
// stored as 16-byte halves).
bool rows_known_vectorizable(const Planner& p, ir::NodeId operand, const Rows& len, int elem) {
  if (!p.target().aligned16 || !leaves_have_width(p, operand, static_cast<std::size_t>(elem))) return false;
  const std::int64_t v = launch::vec_elems(elem);
  if (!len.dynamic) return len.planned % v == 0;
  return !len.dim.empty() && dyn_bucket_keeps_multiple(p, len, v);
}

// The type of the values a chained stage hands to the next (the combiner's C).
DType chain_dtype(DType operand) { return operand == DType::f16 || operand == DType::bf16 ? DType::f32 : operand; }


// [Note: reductions over non-adjacent axes]
// sum over axes (0, 2) of [A, B, C] cannot be one [outer, red, inner] box. kiln plans it as a
// chain: the axes split into runs of adjacent axes ("groups"), and one kernel per group
// reduces it, innermost group first, each stage reading the previous stage's result from a
// workspace: [A, B, C] -> (axis 2) -> [A, B] -> (axis 0) -> [B]. Every stage is an ordinary
// box reduction (reduce_inner warp/block or reduce_outer, picked by the same rules as a
// single reduction, never split), so the work is one full read of the input plus reads and
// writes of intermediates that are each at most 1/extent(group) of it. This is exact in
// structure for every combiner that composes: sum, prod, min, max chain as they are (NaN
// propagates through min/max stages); mean chains sums and divides by the total count once,
// in the last stage; logsumexp chains exactly, since logsumexp over a union of groups is the
// logsumexp of the groups' logsumexps (an all -inf group gives -inf, which adds nothing; a
// +inf or NaN survives). The prologue (an inlined elementwise operand) runs in the first
// stage, the epilogue in the last. argmin/argmax take one axis (the checker), so they never
// get here; their multi-axis flat index would not chain.
std::vector<ReducePick> reduce_pick_candidates(const ReducePick& h, std::int64_t cols, std::int64_t inner);

void plan_reduction_chain(Planner& p, PlannedKernel& kn, const std::vector<int>& axes) {
  const auto& a = p.node(kn.anchor);
  KILN_CHECK(a.kind != ir::OpKind::Argmin && a.kind != ir::OpKind::Argmax, UnsupportedError,
             "{}: {} over several non-adjacent axes is not supported (its index does not chain); reduce "
             "over one axis, or over all of them", p.bound().ir->where(a.loc), ir::op_kind_name(a.kind));
  const ir::NodeId operand = a.operands[0];
  rows_of(p, kn, operand, 0, 1, "reduce (a chain over non-adjacent axes)");   // refuses every dyn dim
  std::vector<std::pair<int, int>> groups;   // [first, last] runs of adjacent axes, ascending
  for (int ax : axes) {
    if (!groups.empty() && groups.back().second + 1 == ax) groups.back().second = ax;
    else groups.emplace_back(ax, ax);
  }
  std::vector<std::int64_t> cur = p.shape(operand);
  const DType cdt = chain_dtype(p.node(operand).dtype);
  const int sms = p.target().sm_count;
  std::int64_t count = 1;
  for (int ax : axes) count *= cur[static_cast<std::size_t>(ax)];
  const std::string base = a.name.empty() ? fmt::format("t{}", kn.anchor) : a.name;
  const auto stores = std::move(kn.stores);
  kn.stores.clear();
  const int stages = static_cast<int>(groups.size());
  int src = -1;
  for (int st = 0; st < stages; ++st) {
    const auto [first, last] = groups[static_cast<std::size_t>(stages - 1 - st)];
    const Box b = box_of(cur, first, last);
    cur.erase(cur.begin() + first, cur.begin() + last + 1);
    const bool final_stage = st == stages - 1;
    PlannedKernel stage;
    PlannedKernel& k = st == 0 ? kn : stage;
    k.anchor = kn.anchor;
    k.template_name = "reduce_chain";
    ReduceChainConfig config;
    config.stage = st;
    config.stages = stages;
    config.outer = b.outer;
    config.red = b.len;
    config.inner = b.inner;
    config.count = count;
    const int elem = st == 0 ? element_bytes(p, operand) : static_cast<int>(dtype_size(cdt));
    // 16-byte column vectors are sized by the streamed tensor's type: only when it is the operand's.
    const bool vectors = p.target().aligned16 && (st > 0 || leaves_have_width(p, operand, static_cast<std::size_t>(elem)));
    std::string how;
    if (b.inner == 1) {
      const bool warp = launch::reduce_inner_use_warp(b.outer, b.len, sms);
      const int threads = warp ? 256 : 512;
      config.variant = warp ? ReduceChainVariant::kInnerWarp : ReduceChainVariant::kInnerBlock;
      config.threads = threads;
      config.unroll = 4;
      config.vec = 1;
      how = fmt::format("reduce_inner {} ({} rows of {})", warp ? "warp" : "block", b.outer, b.len);
    } else {
      const int vec = vectors ? launch::reduce_outer_vec(b.inner, elem) : 1;
      const int threads = launch::reduce_outer_threads(b.inner, vec);
      config.variant = ReduceChainVariant::kOuter;
      config.threads = threads;
      config.unroll = vec == 1 ? 8 : 4;
      config.vec = vec;
      how = fmt::format("reduce_outer ([{}, {}, {}], {} columns per thread)", b.outer, b.len, b.inner, vec);
    }
    // [Note: chain picks] The first stage reads the whole input (each later one an intermediate
    // at most 1/extent of it): it has a reduction's picks of its variant ([Note: reduction
    // picks]): a warp or a block per contiguous row, or threads along a strided inner axis.
    std::string pick_note;
    if (st == 0) {
      const ReducePick::Kind kind = config.variant == ReduceChainVariant::kInnerWarp    ? ReducePick::Kind::warp
                                    : config.variant == ReduceChainVariant::kInnerBlock ? ReducePick::Kind::block
                                                                                        : ReducePick::Kind::outer;
      const ReducePick heuristic{kind, config.threads, config.unroll};
      pick_note = "; config: heuristic";
      const ReducePick chosen = p.offer_picks(
          kn.anchor, fmt::format("{} over non-adjacent axes, stage 1 of {}: {}", ir::op_kind_name(a.kind), stages, how),
          heuristic, reduce_pick_candidates(heuristic, launch::ceil_div(b.inner, config.vec), b.inner), pick_note,
          "reduction chain");
      config.threads = chosen.threads;
      config.unroll = chosen.unroll;
    }
    k.config = config;
    k.set_launch(reduce_chain_geometry(config));
    // The emitter finds the stage's source and destination among its workspace arguments.
    const int read = src;
    if (!final_stage) {
      const int dst = p.add_workspace(fmt::format("{}_stage{}", base, st), cdt, cur);
      k.args.push_back(workspace_arg(dst, cdt, true));
      src = dst;
    } else {
      k.stores = stores;
    }
    if (st > 0) k.args.push_back(workspace_arg(read, cdt, false));
    k.reason = fmt::format("stage {} of {} of a reduction over non-adjacent axes (chained, innermost group first, "
                           "unsplit): axes {}..{} by {}",
                           st + 1, stages, first, last, how) + pick_note;
    if (st > 0) p.add_followup(std::move(stage));
  }
  kn.reason += fmt::format("; {} elements reduced per output; {}", count, index_reason(kn, numel(p.shape(operand))));
}

// A dyn length's split classes ([Note: dyn lengths]): the powers of two at which a split rule's
// count (`splits_at(length)`) changes, up to kDynSplitLen. A class is planned at its lowest
// length, so its count is the specialized plan's there.
template <class SplitsAt>
std::vector<std::int64_t> split_steps(SplitsAt splits_at) {
  std::vector<std::int64_t> at;
  std::int64_t last = splits_at(1);
  for (std::int64_t length = 2; length <= launch::kDynSplitLen; length *= 2) {
    const std::int64_t splits = splits_at(length);
    if (splits != last) at.push_back(length);
    last = splits;
  }
  return at;
}

// [Note: reduction picks]
// A reduction has picks ([Note: tuned picks] in plan.h): the block size and the loads a thread
// keeps in flight, within the heuristic's variant.
// - Contiguous rows (reduce_inner). A warp per row: blocks of 128, 256 or 512 threads (rows a
//   block: threads / 32), 2, 4 or 8 16-byte loads in flight; a block per row: 256, 512 or 1024
//   threads, 2, 4 or 8 loads, the row's split recomputed by the rule for the pick (each split at
//   least one unrolled sweep of the block), only at a static length (a dyn length's classes are
//   cut where the heuristic block's split count changes). The heuristic (256 threads and 4 loads a
//   warp per row, 512 and 4 a block per row) is one of them: [Note: how the numbers are chosen] in
//   kiln/config/reduce.h says why those. Dyn rows take any pick (the warp variant strides over
//   rows; the block variant splits per launch by the rule at the pick's numbers).
// - Strided, threads along the inner axis (reduce_outer's plain variant): blocks of 64 to 512
//   threads (powers of two, none wider than the row's columns round up to whole warps, and the
//   heuristic's), and half, the same and twice the heuristic's loads in flight (4, 8 or 16 4-byte
//   loads down a column; 2, 4 or 8 16-byte ones); the split along the reduced axis recomputed by
//   the rule at the pick's numbers. Only at a static inner extent and length (their classes are
//   the heuristic's rule's); dyn rows keep the heuristic's size classes, and each class and launch
//   splits by the rule at the pick's numbers.
// - The whole-row sweep of 16-byte loads (reduce_outer_rows_v4): a row in the heuristic's number
//   of column tiles, twice or four times as many (threads: the balanced tile's 4-column groups in
//   whole warps, at least 64), 1 or 2 rows of loads in flight (the kernel keeps to 32 registers
//   for kOuterV4ResidentThreads in kiln/config/reduce.h; at 3 rows the sm_90a kernel spills), and
//   the reduced axis split as the rule says at the pick's block for 1, 2 (the heuristic's,
//   kOuterV4Waves) or 4 waves of resident threads (ReduceConfig::waves, which each launch's split
//   reads too, so dyn rows take any pick): on the seed min over axis 1, 1, 2 and 4 splits took
//   3.60, 3.08 and 3.01 ms, the rule's 4 for two waves, and its target is 2.95. Not at a dyn inner
//   or length (their classes are the heuristic's rule's).
// - The whole-row sweep of single elements (reduce_outer_rows: 2-byte elements, or a base not
//   16-byte aligned): blocks of 128, 256 (the heuristic's, kOuterRowsThreads), 512 or 1024
//   threads, each thread's columns by the rule at the pick's block (reduce_outer_rows_cols: the
//   fewest balanced tiles of at most kOuterRowsMaxCols), 1 (the heuristic's) or 2 rows of loads
//   in flight, the split by the rule at the pick's block and columns (each launch's too, so dyn
//   rows take any pick). Not at a dyn inner or length, as above.
// - A chain's first stage (a reduction over non-adjacent axes, reduce_chain; [Note: chain picks]
//   in plan_reduction_chain): its variant's picks above (warp, block or strided), unsplit.
std::vector<ReducePick> reduce_candidates(ReducePick::Kind kind) {
  static constexpr int kWarpThreads[] = {128, 256, 512}, kBlockThreads[] = {256, 512, 1024};
  std::vector<ReducePick> out;
  for (int threads : kind == ReducePick::Kind::block ? kBlockThreads : kWarpThreads)
    for (int unroll : {2, 4, 8}) out.push_back({kind, threads, unroll});
  return out;
}

// The block sizes a strided kernel with a thread per column offers around its heuristic's
// `heuristic` threads over rows of `cols` thread columns: the powers of two from 64 to `most`
// none wider than the columns in whole warps (or the heuristic's block), and the heuristic's.
std::set<int> column_block_sizes(int heuristic, std::int64_t cols, int most) {
  std::set<int> threads = {heuristic};
  const std::int64_t widest = std::max<std::int64_t>(heuristic, launch::round_up_ll(cols, 32));
  for (int t = 64; t <= most; t *= 2)
    if (t <= widest) threads.insert(t);
  return threads;
}

// The strided candidates around the heuristic's pick `h` over rows of `cols` thread columns.
std::vector<ReducePick> reduce_outer_candidates(const ReducePick& h, std::int64_t cols) {
  std::vector<ReducePick> out;
  for (int t : column_block_sizes(h.threads, cols, 512))
    for (int unroll : {h.unroll / 2, h.unroll, 2 * h.unroll}) out.push_back({ReducePick::Kind::outer, t, unroll});
  return out;
}

// The single-element whole-row sweep's candidates: its blocks and rows of loads in flight.
std::vector<ReducePick> reduce_rows_candidates() {
  std::vector<ReducePick> out;
  for (int threads : {128, 256, 512, 1024})
    for (int unroll : {1, 2}) out.push_back({ReducePick::Kind::rows, threads, unroll});
  return out;
}

// The whole-row sweep's candidates around its heuristic pick `h` over rows `inner` wide.
std::vector<ReducePick> reduce_v4_candidates(const ReducePick& h, std::int64_t inner) {
  std::vector<ReducePick> out;
  const std::int64_t tiles = launch::ceil_div(inner, 4LL * h.threads);
  std::set<int> blocks;
  for (std::int64_t t : {tiles, 2 * tiles, 4 * tiles}) {
    const int threads = static_cast<int>(launch::round_up_ll(launch::ceil_div(inner, 4 * t), 32));
    if (threads < 64 || !blocks.insert(threads).second) continue;
    for (int unroll : {1, 2})
      for (int waves : {1, 2, 4}) out.push_back({ReducePick::Kind::v4, threads, unroll, waves});
  }
  if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  return out;
}

// The candidates around the heuristic's pick `h` of its variant: a strided one's over rows of
// `cols` thread columns, a 16-byte sweep's over rows `inner` wide.
std::vector<ReducePick> reduce_pick_candidates(const ReducePick& h, std::int64_t cols, std::int64_t inner) {
  switch (h.kind) {
    case ReducePick::Kind::outer: return reduce_outer_candidates(h, cols);
    case ReducePick::Kind::v4: return reduce_v4_candidates(h, inner);
    case ReducePick::Kind::rows: return reduce_rows_candidates();
    default: return reduce_candidates(h.kind);
  }
}

// Lists the picks of a reduction whose heuristic config is `c` (a reduce_inner variant,
// reduce_outer's plain one over rows of `cols` thread columns, or either whole-row sweep),
// applies a stored one to `c` (but a sweep's columns a thread, which follow from its block by the
// rule: the caller's), and returns the reason's note ("; config: ...").
std::string apply_reduce_pick(Planner& p, const PlannedKernel& kn, ReduceConfig& c, const Rows& rows, const Rows& len,
                              std::int64_t cols = 0) {
  const ReducePick::Kind kind = c.variant == ReduceVariant::kInnerBlock ? ReducePick::Kind::block
                                : c.variant == ReduceVariant::kOuter    ? ReducePick::Kind::outer
                                : c.variant == ReduceVariant::kOuterV4  ? ReducePick::Kind::v4
                                : c.variant == ReduceVariant::kOuterRows ? ReducePick::Kind::rows
                                                                        : ReducePick::Kind::warp;
  const bool v4 = kind == ReducePick::Kind::v4;
  const bool sweep = kind == ReducePick::Kind::rows;
  const ReducePick heuristic{kind, c.threads, c.unroll, v4 ? c.waves : 0};
  const std::vector<ReducePick> candidates = reduce_pick_candidates(heuristic, cols, c.inner);
  std::string note = "; config: heuristic";
  const ReducePick chosen = p.offer_picks(
      kn.anchor,
      fmt::format("{}: {} rows{} of {}{}", ir::op_kind_name(p.node(kn.anchor).kind), rows.text, rows.class_suffix(),
                  len.text,
                  kind == ReducePick::Kind::outer ? fmt::format(", strided, {} columns", c.inner)
                  : v4                            ? fmt::format(", strided, {} columns, 16-byte sweep", c.inner)
                  : sweep                         ? fmt::format(", strided, {} columns, scalar sweep", c.inner)
                                                  : ""),
      heuristic, candidates, note, "reduction");
  c.threads = chosen.threads;
  c.unroll = chosen.unroll;
  if (v4) c.waves = chosen.waves;
  return note;
}

// A split config's rule (reduce_split_rule) at `outer` rows of `length`.
launch::OuterSplit split_rule_at(ReduceConfig c, std::int64_t outer, std::int64_t length, int sms) {
  c.outer = outer;
  c.red = length;
  return reduce_split_rule(c, sms);
}

// The fewest rows from which a strided split rule (`splits_at(outer)`, at a static length) no
// longer splits: the row count where its blocks fill the GPU. With dyn rows the strided reductions
// have classes 8 times apart below it ([Note: dyn rows]).
template <class SplitsAt>
std::int64_t unsplit_rows(SplitsAt splits_at) {
  std::int64_t hi = 1;
  while (splits_at(hi) > 1 && hi < (std::int64_t{1} << 40)) hi *= 2;
  if (hi == 1) return 1;
  std::int64_t lo = hi / 2;   // splits there
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (splits_at(mid) > 1 ? lo : hi) = mid;
  }
  return hi;
}

void plan_reduction(Planner& p, PlannedKernel& kn) {
  const auto& a = p.node(kn.anchor);
  const ir::NodeId operand = a.operands[0];
  const auto& shape = p.shape(operand);
  std::vector<int> axes = a.axes;
  std::sort(axes.begin(), axes.end());
  for (std::size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1) return plan_reduction_chain(p, kn, axes);
  const Box b = axes.empty() ? Box{1, numel(shape), 1} : box_of(shape, axes.front(), axes.back());
  const int first = axes.empty() ? 0 : axes.front();
  const int last = axes.empty() ? static_cast<int>(shape.size()) - 1 : axes.back();
  Rows rows = rows_of(p, kn, operand, first, b.outer, "reduce", last, /*dyn_after=*/true);
  Rows len = len_of(p, kn, operand, first, last, b.len, "reduce");
  Rows inner = inner_of(p, kn, operand, last + 1, b.inner, rows, len, "reduce");
  set_rows(kn, rows);
  set_len(kn, len);
  if (inner.dynamic) kn.dyn_inner = inner.factors;
  const int elem = element_bytes(p, operand);
  const int sms = p.target().sm_count;
  std::string idx = index_reason(kn, std::max(numel(shape), numel(p.shape(kn.anchor))),
                                 rows.dynamic || len.dynamic || inner.dynamic);
  const int acc = acc_bytes(a.kind, compute_bytes(a.kind == ir::OpKind::Argmin || a.kind == ir::OpKind::Argmax
                                                      ? p.node(operand).dtype : a.dtype),
                            kn.index64 ? 8 : 4);
  // The split rules read the row count: with dyn rows, reduce_inner_block and the strided rules
  // split in a class with a largest row count ([Note: dyn rows]). A dyn length splits as the rules
  // do at its class's lowest length, its chunks cut at each launch ([Note: dyn lengths]); with dyn
  // rows too, nothing is split.
  auto dyn_chunks = [&](std::int64_t splits) {
    return len.dynamic && splits > 1 ? " (each launch cuts its length into that many chunks)" : "";
  };
  ReduceConfig config;
  config.outer = rows.config_outer();
  config.red = len.config_outer();
  config.inner = b.inner;
  config.acc_bytes = acc;
  // The launch at the bound extents (kiln gen shows it); a dyn inner's config holds 0.
  auto launch_with = [&](ReduceConfig c) {
    c.inner = b.inner;
    set_config(kn, c, rows, b.outer, reduce_geometry);
    if (inner.dynamic) std::get<ReduceConfig>(kn.config).inner = 0;
  };
  // A split with dyn rows: each launch splits as the rule at its rows, at most the class's count
  // ([Note: splits per launch] in kiln/config/reduce.h).
  auto set_launch_splits = [&](ReduceConfig& c) {
    c.split_sms = sms;
    c.chunk = 0;   // the body's, from the launch's count
  };
  auto per_launch_text = [&] {
    return fmt::format(" (dyn rows: each launch splits as the rule at its rows, planned for {} rows, partial "
                       "states for up to {})",
                       rows.planned, rows.most);
  };
  if (b.inner == 1) {
    kn.template_name = "reduce_inner";
    ReduceConfig block = config;   // reduce_inner_block's, if the rule picks it
    block.variant = ReduceVariant::kInnerBlock;
    block.threads = 512;
    block.unroll = 4;
    block.vec = launch::vec_elems(elem);
    auto inner_split = [&](std::int64_t length) { return split_rule_at(block, rows.planned, length, sms); };
    // The step of reduce_inner_use_warp in the length, unless the rows always fill every SM with
    // warps; with static rows, the steps of the split count too.
    if (rows.dynamic || b.outer < 32LL * sms) {
      std::vector<std::int64_t> steps{launch::kReduceInnerWarpLen + 1};
      if (len.dynamic && !rows.dynamic)
        for (std::int64_t l : split_steps([&](std::int64_t length) { return inner_split(length).splits; }))
          if (l > launch::kReduceInnerWarpLen) steps.push_back(l);
      len.thresholds(p, steps);
    }
    const std::int64_t planned_len = len.planned;
    // The steps of reduce_inner_use_warp and of reduce_inner_split (which splits under 2 rows an SM).
    if (planned_len > launch::kReduceInnerWarpLen) rows.thresholds(p, {2LL * sms, 32LL * sms});
    if (launch::reduce_inner_use_warp(rows.planned, planned_len, sms)) {
      config.variant = ReduceVariant::kInnerWarp;
      config.threads = 256;
      config.unroll = 4;
      const std::string pick_note = apply_reduce_pick(p, kn, config, rows, len);
      launch_with(config);
      kn.reason = fmt::format("reduced axis contiguous: a warp per row ({} rows of {}{}; {}), 16-byte loads with "
                              "scalar head/tail; {}{}",
                              rows.text, len.text, len_class_text(len),
                              planned_len <= launch::kReduceInnerWarpLen ? "short rows" : "rows fill every SM",
                              idx, pick_note);
      return;
    }
    // (A dyn length's classes were cut at the heuristic block's split counts: no picks there.)
    const std::string pick_note = len.dynamic ? "" : apply_reduce_pick(p, kn, block, rows, len);
    config = block;
    // (A dyn length with dyn rows: never split, as the strided splits.)
    auto split = rows.bounded() && !(len.dynamic && rows.dynamic)
                     ? inner_split(planned_len)
                     : launch::OuterSplit{1, launch::round_up_ll(b.len, block.vec)};
    if (len.dynamic) split.chunk = 0;   // the body's, from its length
    config.splits = split.splits;
    config.chunk = split.chunk;
    if (rows.dynamic && split.splits > 1) set_launch_splits(config);
    launch_with(config);
    kn.reason = fmt::format(
        "reduced axis contiguous: a block per row ({} rows, fewer than 32 per SM, of {} > {}{}){}{}; {}", rows.text,
        len.text, launch::kReduceInnerWarpLen, len_class_text(len),
        split.splits > 1 ? fmt::format(", each row split {} ways + reduce_finish{}{}",
                                       rows.dynamic ? fmt::format("at most {}", split.splits)
                                                    : std::to_string(split.splits),
                                       rows.dynamic ? per_launch_text() : "", dyn_chunks(split.splits))
                         : "",
        len.dynamic && rows.dynamic ? "; dyn rows and length: never split"
        : rows.bounded()            ? ""
                                    : "; dyn rows without a largest class: never split",
        idx);
    kn.reason += pick_note;
    if (split.splits > 1) add_finish(p, kn, config, rows.workspace_rows(), b.outer, rows.planned, inner);
    return;
  }
  kn.template_name = "reduce_outer";
  // The variant, vector width and block from inner, or from a dyn inner's bucket and size class,
  // each class sized for its widest row (`sized`; the top class: the rules' widest pick) and split
  // for its narrowest ([Note: dyn inner extents]).
  int vec = p.target().aligned16 ? launch::reduce_outer_vec(b.inner, elem) : 1;
  bool v4 = launch::reduce_outer_use_v4(b.inner, elem, p.target().aligned16) && leaves_have_width(p, operand, 4);
  bool sweep = launch::reduce_outer_use_rows(b.inner, vec);
  std::int64_t sized = b.inner;
  std::string inner_text = std::to_string(b.inner);
  if (inner.dynamic) {
    vec = p.target().aligned16 && dyn_inner_aligned(p, inner, elem) ? launch::vec_elems(elem) : 1;
    inner.thresholds(p, dyn_inner_widths(vec));
    const bool wide = vec == 1 && inner.planned >= launch::kOuterSweepMinInner;
    v4 = wide && elem == 4 && p.target().aligned16 && leaves_have_width(p, operand, 4);
    sweep = wide && !v4;
    sized = inner.most > 0 ? inner.most : kDynInnerWidest;
    inner_text = dyn_inner_text(inner);
    config.inner = inner.planned;   // the split rules' (the class's narrowest)
  }
  auto not_multiple = [&](int v) {
    return inner.dynamic ? fmt::format("not known to be a multiple of {}", v) : fmt::format("% {} != 0", v);
  };
  auto grid_text = [&] {
    return rows.dynamic    ? std::string("blocks over the launch's rows")
           : inner.dynamic ? std::string("blocks over the launch's inner")
                           : fmt::format("{} blocks", kn.grid.x * kn.grid.y);
  };
  // Splits the variant's config `c` (its variant and numbers set) by its rule (reduce_split_rule):
  // with a dyn inner, at the class's narrowest and the fewest rows ([Note: dyn inner extents]);
  // at the bound rows and length; with a dyn length, at its class's lowest (the classes where the
  // count changes), the chunk cut at each launch (0 here); with dyn rows, classes 8 times apart
  // below the rows that fill the GPU unsplit (`full`), each planned as the specialized reduction
  // at its lowest row count, its workspace sized for its most (at most 8 times what its lowest
  // needs, but for the first class), and each launch split as the rule at its rows ([Note: splits
  // per launch]); from `full` on unsplit.
  // `classes`: the config whose rule cuts dyn rows' size classes (a pick's config keeps the
  // heuristic's classes, [Note: reduction picks]); `c` itself by default.
  std::string unsplit;
  auto split_by = [&](ReduceConfig& c, const ReduceConfig* classes = nullptr) {
    auto rule = [&](std::int64_t outer, std::int64_t length) { return split_rule_at(c, outer, length, sms); };
    auto class_rule = [&](std::int64_t outer, std::int64_t length) {
      return split_rule_at(classes != nullptr ? *classes : c, outer, length, sms);
    };
    launch::OuterSplit split{1, b.len};
    if (inner.dynamic && len.dynamic) {
      unsplit = "; dyn inner and length: never split";
      split.chunk = 0;
    } else if (inner.dynamic) {   // the fewest blocks of the classes: the most splits
      split = rule(rows.planned, b.len);
      if (split.splits > 1)
        unsplit = fmt::format(" (dyn {0}: each launch splits as the rule at its {0}, 2 to {1} ways, into partial "
                              "states it sizes)",
                              rows.dynamic ? "rows and inner" : "inner", split.splits);
    } else if (rows.dynamic && len.dynamic) {
      unsplit = "; dyn rows and length: never split";
      split.chunk = 0;
    } else if (rows.dynamic) {
      const std::int64_t full = unsplit_rows([&](std::int64_t outer) { return class_rule(outer, b.len).splits; });
      rows.thresholds(p, {launch::ceil_div(full, 512), launch::ceil_div(full, 64), launch::ceil_div(full, 8), full});
      if (!rows.bounded()) {
        unsplit = rows.dim.empty() ? "; dyn rows of several dyn dims (no classes): never split"
                  : full > 1       ? fmt::format("; dyn rows, {} or more (a full wave of blocks): unsplit", full)
                                   : "; dyn rows: unsplit";
      } else {
        split = rule(rows.planned, b.len);
        if (split.splits > 1) unsplit = per_launch_text();
      }
    } else if (!len.dynamic) {
      split = rule(b.outer, b.len);
    } else {
      len.thresholds(p, split_steps([&](std::int64_t length) { return rule(b.outer, length).splits; }));
      split = rule(b.outer, len.planned);
      split.chunk = 0;
    }
    c.splits = split.splits;
    c.chunk = split.chunk;
    if ((rows.dynamic || inner.dynamic) && split.splits > 1) set_launch_splits(c);
    launch_with(c);
  };
  // The outputs the workspace holds (after split_by: with dyn rows, its class's most rows).
  auto finish_outputs = [&] { return rows.workspace_rows() * b.inner; };
  auto finish = [&] {
    if (inner.dynamic)   // the bound launch's outputs (the workspace is each launch's)
      add_finish(p, kn, config, b.outer * b.inner, b.outer * b.inner, rows.planned * inner.planned, inner);
    else
      add_finish(p, kn, config, finish_outputs(), b.outer * b.inner, rows.planned * b.inner, inner);
  };
  // The reduced steps a split block sweeps, in the reason.
  auto swept = [&] {
    return config.splits <= 1                                ? len.text
           : len.dynamic || rows.dynamic || inner.dynamic ? "its chunk of"
                                                          : std::to_string(config.chunk);
  };
  auto split_text = [&] {
    return config.splits <= 1 ? std::string()
           : rows.dynamic || inner.dynamic ? fmt::format("at most {}", config.splits)
                              : std::to_string(config.splits);
  };
  // A strided variant's stored pick applied to `c` (apply_reduce_pick), and its reason's note. A
  // dyn inner's or length's classes are cut by the heuristic's rule: no picks there.
  auto pick_strided = [&](ReduceConfig& c, std::int64_t cols = 0) {
    return inner.dynamic || len.dynamic ? std::string() : apply_reduce_pick(p, kn, c, rows, len, cols);
  };
  // The streamed tensor itself must be 4-byte (a cast prologue from f16 streams 2-byte elements).
  if (v4) {
    config.variant = ReduceVariant::kOuterV4;
    config.threads = launch::reduce_outer_v4_threads(sized);
    config.unroll = launch::kOuterV4Unroll;
    config.vec = 4;
    config.waves = launch::kOuterV4Waves;
    const ReduceConfig heuristic = config;
    const std::string pick_note = pick_strided(config);
    kn.min_blocks = launch::reduce_outer_v4_blocks_per_sm(config.threads);
    split_by(config, &heuristic);
    const std::int64_t tile = std::int64_t{config.threads} * 4;
    kn.reason = fmt::format(
        "reduced axis strided, inner {} {}: a block sweeps {} rows {}({} threads x 4 columns) with 16-byte "
        "aligned loads + lane shuffles (rows start misaligned; 4-byte loads stay under copy speed), {} rows of "
        "loads in flight; {}{}{}; {}",
        inner_text, not_multiple(4), swept(),
        sized <= tile ? "whole " : fmt::format("in {}-column tiles ", tile), config.threads,
        config.unroll,
        config.splits > 1 ? fmt::format("reduced axis split {} ways{} + reduce_finish for ", split_text(),
                                        dyn_chunks(config.splits))
                          : "",
        grid_text(), unsplit, idx);
    kn.reason += pick_note;
    if (config.splits > 1) finish();
    return;
  }
  if (sweep) {
    config.variant = ReduceVariant::kOuterRows;
    config.threads = launch::kOuterRowsThreads;
    config.cols = launch::reduce_outer_rows_cols(sized, config.threads);
    config.unroll = 1;
    config.vec = 1;
    const ReduceConfig heuristic = config;
    const std::string pick_note = pick_strided(config);
    config.cols = launch::reduce_outer_rows_cols(sized, config.threads);
    split_by(config, &heuristic);
    const std::int64_t tile = std::int64_t{config.threads} * config.cols;
    kn.reason = fmt::format(
        "reduced axis strided, inner {} {}: {}-byte columns; a block sweeps {} rows {}({} threads x {} "
        "columns, {} loads in flight a thread), so its reads are contiguous and no sector is shared between column "
        "strips; {}{}{}; {}",
        inner_text, not_multiple(16 / elem), elem, swept(),
        sized <= tile ? "whole " : fmt::format("in {}-column tiles ", tile),
        config.threads, config.cols, config.cols * config.unroll,
        config.splits > 1 ? fmt::format("reduced axis split {} ways{} + reduce_finish for ", split_text(),
                                        dyn_chunks(config.splits))
                          : "",
        grid_text(), unsplit, idx);
    kn.reason += pick_note;
    if (config.splits > 1) finish();
    return;
  }
  config.variant = ReduceVariant::kOuter;
  config.threads = launch::reduce_outer_threads(sized, vec);
  config.unroll = vec == 1 ? 8 : 4;
  config.vec = vec;
  const ReduceConfig heuristic = config;
  const std::string pick_note = pick_strided(config, launch::ceil_div(b.inner, vec));
  split_by(config, &heuristic);
  kn.reason = fmt::format(
      "reduced axis strided: threads along the contiguous inner axis ({}), {}{}{}; {}{}", inner_text,
      vec > 1 ? fmt::format("{}-byte loads", vec * elem)
              : fmt::format("inner {}: {}-byte loads, {} in flight per thread", not_multiple(16 / elem), elem,
                            config.unroll),
      config.splits > 1 ? fmt::format(", {} cannot fill {} SMs: reduced axis split {} ways{} + reduce_finish",
                                      rows.dynamic || inner.dynamic ? std::string("the blocks")
                                                                    : fmt::format("{} blocks", kn.grid.x),
                                      sms, split_text(), dyn_chunks(config.splits))
                        : "",
      unsplit, idx, pick_note);
  if (config.splits > 1) finish();
}

// The strided look-back ([Note: the strided look-back] in templates/kiln/config/scan.h): a block
// per tile of `tile_rows` rows by kScanStridedLookbackThreads columns, the tiles chained down each
// column through a status a column of each tile, zeroed before the launch.
void plan_scan_strided_lookback(Planner& p, PlannedKernel& kn, const Box& b, int tile_rows, const std::string& what,
                                const std::string& idx) {
  const auto& a = p.node(kn.anchor);
  const int elem = element_bytes(p, a.operands[0]);
  const int value_bytes = static_cast<int>(dtype_size(chain_dtype(a.dtype)));
  ScanConfig config;
  config.variant = ScanVariant::kStridedLookback;
  config.outer = b.outer;
  config.len = b.len;
  config.inner = b.inner;
  config.threads = launch::kScanStridedLookbackThreads;
  config.chunk = tile_rows;
  config.chunks = launch::ceil_div(b.len, tile_rows);
  const auto geo = scan_geometry(config, elem, value_bytes);
  KILN_ASSERT(geo.zero_workspace && geo.grid.x <= launch::kMaxGridX, "strided look-back of {} tiles", geo.grid.x);
  const std::string name = (a.name.empty() ? fmt::format("t{}", kn.anchor) : a.name) + "_column_statuses";
  const int ws = p.add_workspace(name, DType::i32, {geo.workspace_bytes / 4});
  kn.template_name = "scan_strided_lookback";
  kn.config = config;
  kn.args.push_back(workspace_arg(ws, DType::i32, true));
  kn.zero_before.push_back(ws);
  kn.min_blocks = launch::kScanStridedLookbackBlocksPerSm;
  kn.set_launch(geo);
  kn.reason = fmt::format("{}; the columns cannot fill {} SMs, and a chunked scan reads x twice: decoupled look-back "
                          "down the columns instead, a block per tile of {} rows x {} columns ({} tiles), each copied "
                          "into shared memory, {} blocks an SM; a status a column of each tile, zeroed before the "
                          "launch; {}",
                          what, p.target().sm_count, tile_rows, config.threads, geo.grid.x, kn.min_blocks, idx);
}

// [Note: strided scan picks]
// A scan along a strided axis over static extents that does not take the strided look-back has
// picks ([Note: tuned picks] in plan.h): blocks of 64, 128 or 256 threads (kScanStridedMaxThreads;
// none wider than the columns in whole warps, but the heuristic's), each thread 4, 8 or 16 loads
// in flight down its column (the heuristic: scan_strided_threads and kScanStridedUnroll). The axis
// is cut into chunks by the rule at the pick's numbers. Whether it takes the look-back, decided at
// the heuristic's numbers, stays the heuristic's; dyn extents keep their classes and no picks.
constexpr int kScanStridedUnroll = 8;

std::vector<StridedScanPick> scan_strided_candidates(std::int64_t inner, int heuristic_threads) {
  std::vector<StridedScanPick> out;
  for (int threads : column_block_sizes(heuristic_threads, inner, launch::kScanStridedMaxThreads))
    for (int unroll : {4, 8, 16}) out.push_back({threads, unroll});
  return out;
}

// Scans along a non-last axis: a thread per column, chunked along the axis when the columns
// cannot fill the GPU (then scan_strided_totals runs first), or the strided look-back where the
// tensor is large enough for it. See [Note: the strided-axis scan] in templates/kiln/scan.cuh.
void plan_scan_strided(Planner& p, PlannedKernel& kn, const Box& b, Rows& rows, const Rows& len, Rows& inner,
                       const std::string& idx) {
  const auto& a = p.node(kn.anchor);
  const int sms = p.target().sm_count;
  int threads = launch::scan_strided_threads(b.inner);
  int unroll = kScanStridedUnroll;
  // A dyn inner ([Note: dyn inner extents]): classes past 32, 64 and 128 columns (the block, sized
  // for the class's widest) and, with static rows and length, where the rule's count of chunks
  // changes; each class is chunked as the rule at its narrowest (its totals sized by each launch).
  // With dyn rows or a dyn length too, one pass.
  std::int64_t chunk_inner = b.inner;   // the width the chunk rule sees
  std::string inner_text = std::to_string(b.inner);
  if (inner.dynamic) {
    std::vector<std::int64_t> widths = dyn_block_widths(1);
    if (!rows.dynamic && !len.dynamic) {
      auto chunks_at = [&](std::int64_t w) {   // (monotone in the width)
        return launch::scan_strided_chunks(b.outer, b.len, w, launch::scan_strided_threads(w), kScanStridedUnroll, sms).chunks;
      };
      const std::int64_t full_inner = unsplit_rows(chunks_at);
      widths.push_back(full_inner);
      // Past the widest block, the powers of two where the count changes: a launch's class is
      // cut into at most about twice the chunks the rule asks at its width.
      for (std::int64_t w : split_steps(chunks_at))
        if (w > launch::kScanStridedMaxThreads && w < full_inner) widths.push_back(w);
    }
    inner.thresholds(p, widths);
    threads = launch::scan_strided_threads(inner.most > 0 ? inner.most : launch::kScanStridedMaxThreads);
    chunk_inner = inner.planned;
    inner_text = dyn_inner_text(inner);
  }
  // Chunks read the row count (none from a full wave of blocks, `full` rows on), and the totals'
  // workspace is sized by it: with dyn rows, classes 8 times apart below `full`, so the workspace
  // for a class's most rows is at most 8 times what its lowest needs. With a dyn inner too, no
  // row classes: the plan's count is the rule's at the fewest rows and the class's narrowest inner,
  // and the totals are sized by each launch.
  const std::int64_t full = launch::ceil_div(std::int64_t{sms} * (2048 / threads), launch::ceil_div(b.inner, threads));
  // (A dyn length: one pass, [Note: dyn lengths]; chunk 0 stands for the body's `len`.)
  if (!len.dynamic && !inner.dynamic) rows.thresholds(p, {launch::ceil_div(full, 64), launch::ceil_div(full, 8), full});
  const auto chunks_at = [&](int t, int u) {
    return (rows.bounded() || inner.dynamic) && !len.dynamic
               ? launch::scan_strided_chunks(rows.planned, b.len, chunk_inner, t, u, sms)
               : launch::ScanChunks{1, len.dynamic ? 0 : b.len};
  };
  auto ch = chunks_at(threads, unroll);
  const int elem = element_bytes(p, a.operands[0]);
  const DType cdt = chain_dtype(a.dtype);
  // The look-back instead of the chunks, where it pays (decided at the heuristic's numbers).
  const int tile_rows = launch::scan_strided_lookback_rows(launch::kScanStridedLookbackThreads, elem,
                                                           static_cast<int>(dtype_size(cdt)));
  const bool lookback = ch.chunks > 1 && !rows.dynamic && !inner.dynamic &&
                        launch::scan_strided_use_lookback(b.outer, b.len, b.inner, tile_rows, sms) &&
                        leaves_have_width(p, a.operands[0], static_cast<std::size_t>(elem));
  std::string note;
  if (!lookback && !rows.dynamic && !len.dynamic && !inner.dynamic) {
    note = "; config: heuristic";
    const StridedScanPick chosen = p.offer_picks(
        kn.anchor, fmt::format("{}: [{}, {}, {}] along axis {}", ir::op_kind_name(a.kind), b.outer, b.len, b.inner, a.axis),
        StridedScanPick{threads, unroll}, scan_strided_candidates(b.inner, threads), note, "strided scan");
    threads = chosen.threads;
    unroll = chosen.unroll;
    ch = chunks_at(threads, unroll);
  }
  // A chunked plan over dyn extents: each launch chunks as the rule at its own ([Note: chunks per
  // launch] in kiln/config/scan.h).
  const bool per_launch = ch.chunks > 1 && (rows.dynamic || inner.dynamic);
  ScanConfig config;
  config.variant = ch.chunks == 1 ? ScanVariant::kStrided : ScanVariant::kStridedTotals;
  config.outer = b.outer;
  config.len = len.config_outer();
  config.inner = b.inner;
  config.threads = threads;
  config.unroll = unroll;
  config.chunks = ch.chunks;
  config.chunk = ch.chunk;
  if (per_launch) {
    config.chunk_sms = sms;
    config.chunk = 0;   // the body's, from the launch's count
  }
  const ScanConfig bound = config;   // at the bound extents: the plan's launch (kiln gen shows it)
  const auto geo = scan_geometry(bound, elem, static_cast<int>(dtype_size(cdt)));
  config.outer = rows.config_outer();
  if (inner.dynamic) config.inner = 0;
  kn.config = config;
  kn.set_launch(geo);
  const std::string what = fmt::format(
      "scan along a strided axis ([{}, {}, {}]): a thread per column carrying its running value, {} loads in flight",
      rows.text, len.text, inner_text, unroll);
  if (lookback)
    return plan_scan_strided_lookback(p, kn, b, tile_rows,
                                      fmt::format("scan along a strided axis ([{}, {}, {}])", rows.text, b.len, b.inner),
                                      idx);
  if (ch.chunks == 1) {
    kn.template_name = "scan_strided";
    kn.reason = len.dynamic    ? fmt::format("{}; dyn length: one pass, never chunked; {}", what, idx)
                : rows.dynamic ? fmt::format("{}; dyn rows: one pass{}; {}", what,
                                             inner.dynamic    ? " (a full wave of blocks at the fewest rows and this "
                                                                "class's narrowest inner)"
                                             : rows.bounded() ? " (a full wave of blocks from this class on)"
                                                              : ", never chunked (no largest class)",
                                             idx)
                : inner.dynamic ? fmt::format("{}; the blocks fill the GPU from this class on: one pass; {}", what, idx)
                                : fmt::format("{}; {} blocks fill the GPU: one pass; {}", what, kn.grid.x, idx);
    kn.reason += note;
    return;
  }
  // Chunked: this kernel writes the chunk totals, a follow-up scans with them.
  const std::string name = (a.name.empty() ? fmt::format("t{}", kn.anchor) : a.name) + "_chunk_totals";
  const int ws =
      p.add_workspace(name, cdt, {ch.chunks * (rows.bounded() ? rows.workspace_rows() : b.outer) * b.inner});
  if (inner.dynamic) p.size_by_launch(ws);
  kn.template_name = "scan_strided_totals";
  kn.args.push_back(workspace_arg(ws, cdt, true));
  PlannedKernel scan = storing_followup(kn, "scan_strided", ws, cdt);
  if (per_launch) {   // both read the launch's count, the totals kernel's grid.y
    kn.args.push_back(launch_count_arg(p));
    scan.args.push_back(launch_count_arg(p));
  }
  config.variant = ScanVariant::kStrided;
  scan.config = config;
  ScanConfig bound_scan = bound;
  bound_scan.variant = ScanVariant::kStrided;
  scan.set_launch(scan_geometry(bound_scan, elem, static_cast<int>(dtype_size(cdt))));   // the totals' grid
  scan.dyn_outer = kn.dyn_outer;
  scan.dyn_inner = kn.dyn_inner;
  const std::string blocks =
      rows.dynamic && inner.dynamic
          ? fmt::format("the blocks at the fewest rows ({}) and this class's narrowest inner ({})", rows.planned,
                        inner.planned)
      : rows.dynamic  ? fmt::format("this class's rows (planned for {}, totals for up to {})", rows.planned, rows.most)
      : inner.dynamic ? fmt::format("the blocks of this class (planned for its narrowest, {})", inner.planned)
                      : fmt::format("{} blocks", geo.grid.x);
  const std::string cut =
      per_launch ? fmt::format("each launch cuts the axis as the rule does at its own extents, into at most {} "
                               "chunks{}",
                               ch.chunks, inner.dynamic ? ", its totals sized by the launch" : "")
                 : fmt::format("the axis is cut into {} chunks of {}", ch.chunks, ch.chunk);
  kn.reason = fmt::format("{}; {} cannot fill {} SMs: {}, this kernel writes each chunk's total{}; {}", what, blocks,
                          p.target().sm_count, cut,
                          per_launch ? " (not launched where a launch takes one chunk)" : "", idx);
  kn.reason += note;
  scan.reason = fmt::format("scans each chunk from the combination of the totals before it (chunk order: "
                            "deterministic); {}",
                            idx);
  p.add_followup(std::move(scan));
}

// [Note: scan picks]
// A scan along contiguous rows with a block per row (scan_rows' block variant) has picks ([Note:
// tuned picks] in plan.h): blocks of 128, 256 or 512 threads, each thread 1, 2 or 4 16-byte vectors
// of a tile (the heuristic: 256 and 2, kScanRowsThreads and kScanRowsVecs). Whether a row takes the
// look-back, and dyn rows' size classes, stay the heuristic tile's.
constexpr int kScanRowsThreads = 256, kScanRowsVecs = 2;

std::vector<ScanPick> scan_rows_candidates() {
  std::vector<ScanPick> out;
  for (int threads : {128, 256, 512})
    for (int vecs : {1, 2, 4}) out.push_back({threads, vecs});
  return out;
}

// [Note: look-back scan picks]
// A look-back scan along contiguous rows of a static length has picks ([Note: tuned picks] in
// plan.h): 128, 256 or 512 data threads; half, the heuristic's or twice the heuristic's 16-byte
// vectors a thread per tile (at most kScanLookbackMaxVecs); 2, 3 or 4 stages; 1 or 2 blocks an
// SM, where that many blocks' stages fit one SM's shared memory (ctas_by_smem; the heuristic's
// own even where they do not: sm_80's 164 KiB). The heuristic (kScanLookbackThreads,
// scan_lookback_vecs, kScanLookbackStages, scan_lookback_blocks_per_sm: the best of an H200
// sweep, [Note: the warp-specialized look-back] in config/scan.h) is one of them; its tiles, workspace and grid follow the pick (with dyn rows,
// the workspace still for the class's most rows). Whether a row takes the look-back stays the
// heuristic's. A dyn length (its classes cut at multiples of the block-per-row tile) has none.
constexpr int kScanLookbackMaxVecs = 16;

std::vector<LookbackScanPick> scan_lookback_candidates(const Target& t, int elem, int value_bytes,
                                                       const LookbackScanPick& h) {
  std::vector<LookbackScanPick> out;
  for (int threads : {128, 256, 512})
    for (int vecs : {h.vecs / 2, h.vecs, h.vecs * 2}) {
      if (vecs < 1 || vecs > kScanLookbackMaxVecs) continue;
      for (int stages : {2, 3, 4})
        for (int blocks : {1, 2}) {
          const LookbackScanPick pick{threads, vecs, stages, blocks};
          const std::int64_t bytes = stages * launch::scan_rows_tile(threads, vecs, elem) * value_bytes;
          if (bytes <= smem_limit(t) && (ctas_by_smem(t, bytes, blocks) == blocks || pick == h)) out.push_back(pick);
        }
    }
  return out;
}

void plan_scan(Planner& p, PlannedKernel& kn) {
  const auto& a = p.node(kn.anchor);
  const auto& shape = p.shape(kn.anchor);
  const Box b = shape.empty() ? Box{} : box_of(shape, a.axis, a.axis);
  Rows rows = rows_of(p, kn, kn.anchor, a.axis, b.outer, "scan", a.axis, /*dyn_after=*/true);
  Rows len = len_of(p, kn, kn.anchor, a.axis, a.axis, b.len, "scan");
  Rows inner = inner_of(p, kn, kn.anchor, a.axis + 1, b.inner, rows, len, "scan");
  set_rows(kn, rows);
  set_len(kn, len);
  if (inner.dynamic) kn.dyn_inner = inner.factors;
  const std::string idx = index_reason(kn, numel(shape), rows.dynamic || len.dynamic || inner.dynamic);
  if (b.inner > 1) return plan_scan_strided(p, kn, b, rows, len, inner, idx);
  const int elem = element_bytes(p, a.operands[0]);
  const std::int64_t tile = launch::scan_rows_tile(kScanRowsThreads, kScanRowsVecs, elem);
  kn.template_name = "scan_rows";
  ScanConfig config;
  config.outer = b.outer;
  config.len = len.config_outer();
  config.threads = kScanRowsThreads;
  config.vecs = kScanRowsVecs;
  config.aligned = rows_known_vectorizable(p, a.operands[0], len, elem);
  const int value_bytes = static_cast<int>(dtype_size(chain_dtype(a.dtype)));
  // scan_use_lookback's step; the look-back workspace is sized by the class's largest row count,
  // and its tiles by the length. A dyn length over few static rows ([Note: dyn lengths]): the
  // look-back from 4 tiles on, in classes up to twice their lowest, each planned (its workspace
  // and grid) for its longest row; past kDynSplitLen, and with dyn rows too, a block per row.
  const int sms = p.target().sm_count;
  std::int64_t planned_len = b.len;   // what the look-back's workspace serves
  if (!len.dynamic && launch::ceil_div(b.len, tile) >= 4) rows.thresholds(p, {2LL * sms});
  if (len.dynamic && !rows.dynamic && rows.planned < 2LL * sms) {
    std::vector<std::int64_t> steps;   // (3 tiles x 2^k, 3 tiles x 2^(k+1)]
    for (std::int64_t t = 3 * tile; t <= launch::kDynSplitLen; t *= 2) steps.push_back(t + 1);
    len.thresholds(p, steps);
    planned_len = len.most;   // 0 past the last step: no largest length
  }
  const bool prefer = rows.bounded() && planned_len > 0 && launch::scan_use_lookback(rows.planned, planned_len, tile, sms);
  // The template derives its tile from the streamed tensor's type: plan the look-back grid
  // only when that is the operand's width.
  const bool lookback = prefer && leaves_have_width(p, a.operands[0], static_cast<std::size_t>(elem));
  if (!lookback) {
    config.variant = ScanVariant::kRowsBlock;
    std::string note = "; config: heuristic";
    const ScanPick chosen =
        p.offer_picks(kn.anchor,
                      fmt::format("{}: {} rows{} of {}", ir::op_kind_name(a.kind), rows.text, rows.class_suffix(), len.text),
                      ScanPick{config.threads, config.vecs}, scan_rows_candidates(), note, "scan");
    config.threads = chosen.threads;
    config.vecs = chosen.vecs;
    set_config(kn, config, rows, b.outer, [&](const ScanConfig& c) { return scan_geometry(c, elem, value_bytes); });
    kn.reason = fmt::format("scan along contiguous rows: a block per row ({} rows of {}, {}-element tiles{}{}{}); {}{}",
                            rows.text, len.text, launch::scan_rows_tile(config.threads, config.vecs, elem),
                            prefer ? "; look-back skipped: the operand reads tensors of another width" : "",
                            rows.bounded() ? "" : "; dyn rows without a largest class: no look-back",
                            len.dynamic && rows.dynamic ? "; dyn rows and length: no look-back"
                            : len.dynamic && planned_len == 0
                                ? fmt::format("; dyn length past {}: no look-back (no longest row to size its "
                                              "workspace)",
                                              launch::kDynSplitLen)
                                : "",
                            idx, note);
    return;
  }
  config.variant = ScanVariant::kRowsLookback;
  // [Note: the warp-specialized look-back]: a persistent grid of data warps and a walker warp,
  // each tile's converted values filling a shared stage.
  LookbackScanPick look{launch::kScanLookbackThreads, launch::scan_lookback_vecs(elem, value_bytes),
                        launch::kScanLookbackStages, launch::scan_lookback_blocks_per_sm(value_bytes)};
  std::string note;
  if (!len.dynamic) {
    note = "; config: heuristic";
    look = p.offer_picks(kn.anchor,
                         fmt::format("{} (look-back): {} rows of {}", ir::op_kind_name(a.kind), rows.text, len.text),
                         look, scan_lookback_candidates(p.target(), elem, value_bytes, look), note, "look-back scan");
  }
  config.threads = look.threads;
  config.vecs = look.vecs;
  config.stages = look.stages;
  config.chunks = static_cast<std::int64_t>(p.target().sm_count) * look.blocks;
  const std::int64_t look_tile = launch::scan_rows_tile(config.threads, config.vecs, elem);
  // How the rows reach shared memory: 16-byte copies (whole vectors), 4- or 8-byte element copies,
  // else narrower elements loaded one at a time through registers.
  const bool vectors = b.len % launch::vec_elems(elem) == 0;
  const bool copies = vectors || elem >= 4;
  kn.min_blocks = look.blocks;
  config.outer = rows.workspace_rows();   // the workspace's size
  config.len = planned_len;
  const auto geo = scan_geometry(config, elem, value_bytes);
  config.outer = b.outer;                 // the plan's launch
  config.len = b.len;
  const auto launch_geo = scan_geometry(config, elem, value_bytes);
  config.outer = rows.config_outer();
  config.len = len.config_outer();
  KILN_ASSERT(geo.zero_workspace && geo.workspace_bytes % 4 == 0, "look-back workspace of {} bytes",
              geo.workspace_bytes);
  const std::string name = (a.name.empty() ? fmt::format("t{}", kn.anchor) : a.name) + "_lookback";
  const int ws = p.add_workspace(name, DType::i32, {geo.workspace_bytes / 4});
  kn.config = config;
  kn.args.push_back(workspace_arg(ws, DType::i32, true));
  kn.zero_before.push_back(ws);
  kn.set_launch(launch_geo);
  kn.reason = fmt::format(
      "scan along contiguous rows, few and long ({} rows of {}: fewer than 2 per SM): decoupled look-back over "
      "{}-element tiles ({}), a persistent grid of at most {} blocks ({} an SM) claiming tiles in order, each block "
      "{} data threads copying tiles into {} shared stages ({}) and a walker warp, its statuses and tile counter "
      "zeroed before the launch{}; {}{}",
      rows.text, len.text + len_class_text(len), look_tile,
      rows.dynamic ? fmt::format("workspace for up to {} rows", rows.most)
      : len.dynamic ? fmt::format("workspace for rows of up to {}", planned_len)
                    : fmt::format("{} tiles", b.outer * launch::ceil_div(b.len, look_tile)),
      config.chunks, kn.min_blocks, config.threads, config.stages,
      len.dynamic ? "16-byte copies where a launch's rows are whole vectors, else element copies or loads"
      : copies    ? (vectors ? "16-byte copies" : "element copies: the rows are not whole 16-byte vectors")
                  : "the rows are not whole 16-byte vectors: loaded element by element",
      len.dynamic ? " (the grid and the part zeroed follow each launch's length)" : "", idx, note);
}

// Softmax and log_softmax along `axis`, and Normalize ([Note: norm compositions]) over its adjacent
// axes (strided rows when they are not the trailing ones): the same rows, the same variants; a norm
// takes the mean and the squared deviations from the registers where softmax takes the max and the
// exponentials.
// Bytes of the side operands of a norm's fused epilogue that every row reads alike: an extent of
// 1 (or none: numpy's right-aligned broadcasting) along every axis the norm keeps ([Note: split
// norm block order] in kiln/config/rownorm.h). Side operands past a reshape in the chain are not
// mapped back to the norm's axes: not counted.
std::int64_t row_shared_epilogue_bytes(const Planner& p, const PlannedKernel& kn) {
  const auto& a = p.node(kn.anchor);
  const auto& shape = p.shape(kn.anchor);
  const std::size_t rank = shape.size();
  std::vector<bool> kept(rank, true);
  for (int axis : a.axes) kept[static_cast<std::size_t>(axis)] = false;
  std::int64_t bytes = 0;
  const ir::NodeId end = kn.stores.empty() ? kn.anchor : kn.stores[0].node;
  for (ir::NodeId cur = kn.anchor; cur != end;) {
    const ir::NodeId next = p.consumers(cur)[0];
    const auto& n = p.node(next);
    if (n.kind == ir::OpKind::Reshape) break;
    for (ir::NodeId side : n.operands) {
      if (side == cur) continue;
      const auto& s = p.shape(side);
      const std::size_t skip = rank - s.size();   // the side's dims are the last s.size() of the norm's
      bool shared = true;
      for (std::size_t d = skip; d < rank; ++d) shared = shared && (!kept[d] || s[d - skip] == 1);
      if (shared) bytes += numel(s) * static_cast<std::int64_t>(dtype_size(n.dtype));
    }
    cur = next;
  }
  return bytes;
}

// [Note: split norm picks]
// A split norm has picks ([Note: tuned picks] in plan.h): blocks of 256, 512 or 1024 threads,
// the chunks aimed at 1, 2 or 4 waves of them (each a chunk, or its whole short segments ganged,
// sized by the rules rownorm_split_chunk and rownorm_split_gang at the pick's numbers: at least
// one 16-byte vector of f32 a thread, at most kRowNormSplitItems elements), and where segments are
// ganged, a block per whole row (waves kRowNormWholeWaves: one kernel, [Note: a block per row of
// short segments] in kiln/config/rownorm.h) at each block size that holds a row
// (rownorm_split_whole_fits). The heuristic (a block per row where rownorm_split_whole says so,
// else 256 threads at one wave where segments are ganged, 512 at two where they are split) is one
// of them; the split numbers came from an H200's few shapes ([Note: split norms] in
// kiln/config/rownorm.h). The block order (rows fastest or not) stays the rule's.
std::vector<SplitNormPick> split_norm_candidates(const NormLayout& layout) {
  std::vector<SplitNormPick> out;
  for (int threads : {256, 512, 1024})
    for (int waves : {1, 2, 4}) out.push_back({threads, waves});
  for (int threads : {256, 512, 1024})
    if (launch::rownorm_split_whole_fits(layout.lead, layout.len, threads))
      out.push_back({threads, launch::kRowNormWholeWaves});
  return out;
}

// The rule's pick: a block per row where norm_layout's rule says so (NormLayout::whole).
SplitNormPick split_norm_heuristic(const NormLayout& layout) {
  if (layout.whole)
    return {launch::rownorm_split_whole_threads(layout.lead, layout.len), launch::kRowNormWholeWaves};
  return {launch::rownorm_split_threads(layout.len), launch::rownorm_split_waves(layout.len)};
}

// A split norm ([Note: split norms]): this kernel writes each chunk's statistics to a workspace, a
// follow-up over the same chunks combines a row's and writes y (with the epilogue); or, a block
// per row (kSplitWhole), this kernel takes the statistics and writes y.
void plan_split_norm(Planner& p, PlannedKernel& kn, const NormLayout& layout) {
  const auto& a = p.node(kn.anchor);
  const int elem = element_bytes(p, a.operands[0]);
  const int c = compute_bytes(a.dtype);
  kn.template_name = "rownorm";
  RownormConfig config;
  config.variant = RownormVariant::kSplitStats;
  config.outer = layout.rows;
  config.lead = layout.lead;
  config.len = layout.len;
  config.inner = 1;
  config.group = 0;
  const int sms = p.target().sm_count;
  std::string note = "; config: heuristic";
  const SplitNormPick chosen = p.offer_picks(
      kn.anchor,
      fmt::format("{} norm: {} rows of {}{}", a.norm.centered ? "centered" : "uncentered", layout.rows,
                  layout.lead > 1 ? fmt::format("{} segments of ", layout.lead) : "", layout.len),
      split_norm_heuristic(layout), split_norm_candidates(layout), note, "split norm");
  const bool whole = chosen.waves == launch::kRowNormWholeWaves;
  config.threads = chosen.threads;
  if (whole) {
    config.variant = RownormVariant::kSplitWhole;
    config.gang = layout.lead;
    config.chunk = layout.len;
  } else {
    config.gang = launch::rownorm_split_gang(layout.lead, layout.rows, layout.len, sms, chosen.threads, chosen.waves);
    config.chunk =
        launch::rownorm_split_chunk(layout.lead * layout.rows, layout.len, 16 / elem, sms, chosen.threads, chosen.waves);
  }
  config.splits = launch::rownorm_split_splits(layout.len, config.chunk);
  const std::int64_t shared = row_shared_epilogue_bytes(p, kn);
  config.rows_fastest = !whole && layout.rows > 1 && launch::rownorm_split_rows_fastest(shared);
  // [Note: rows known vectorizable]: every chunk starts on a vector and holds whole ones where the
  // segments (the rows' rule) and the chunks are multiples of it.
  Rows segment;
  segment.planned = layout.len;
  config.aligned = rows_known_vectorizable(p, a.operands[0], segment, elem) &&
                   (config.gang > 1 || config.chunk % launch::vec_elems(elem) == 0);
  kn.config = config;
  kn.set_launch(rownorm_geometry(config));
  const std::string idx = index_reason(kn, numel(p.shape(kn.anchor)), false);
  if (whole) {
    kn.reason = fmt::format("split norm in one kernel: {} rows{} of {}, a block a row ([Note: a block per row of short "
                            "segments]): its {}, then y, re-reading the row it streamed; {}{}",
                            layout.rows, layout.lead > 1 ? fmt::format(" of {} segments", layout.lead) : "",
                            layout.len, a.norm.centered ? "mean and squared deviations" : "sum of squares", idx, note);
    return;
  }
  const std::int64_t blocks = launch::rownorm_split_blocks(layout.lead, config.gang, layout.rows, config.splits);
  const std::int64_t states = blocks / layout.rows;   // partial states a row
  const std::string name = (a.name.empty() ? fmt::format("t{}", kn.anchor) : a.name) + "_partials";
  const std::int64_t bytes = launch::rownorm_split_workspace_bytes(blocks, c);
  const int ws = p.add_workspace(name, DType::f32, {bytes / 4});
  kn.args.push_back(workspace_arg(ws, DType::f32, true));
  std::string chunks;
  if (config.gang > 1) {
    const std::int64_t last = layout.lead - (states - 1) * config.gang;
    chunks = fmt::format("{} rows of {} segments of {}, short segments ganged: chunks of {} whole segments ({} a "
                         "row{}): a block a chunk",
                         layout.rows, layout.lead, layout.len, config.gang, states,
                         last < config.gang ? fmt::format(", the last of {}", last) : "");
  } else {
    chunks = fmt::format("{} rows{} of {}, chunks of {} ({} a row{}): a block a chunk", layout.rows,
                         layout.lead > 1 ? fmt::format(" of {} segments", layout.lead) : "", layout.len, config.chunk,
                         states, layout.lead > 1 ? fmt::format(", {} a segment", config.splits) : "");
  }
  if (config.rows_fastest)
    chunks += fmt::format(", the rows fastest (the epilogue reads {} every row reads alike: once from DRAM)",
                          bytes_text(shared));
  kn.reason = fmt::format("split norm, pass 1 of 2: {}, each chunk's {} to the workspace; {}{}", chunks,
                          a.norm.centered ? "(count, mean, squared deviations)" : "sum of squares", idx, note);
  PlannedKernel apply = storing_followup(kn, "rownorm", ws, DType::f32);
  config.variant = RownormVariant::kSplitApply;
  apply.config = config;
  apply.set_launch(rownorm_geometry(config));
  apply.index64 = kn.index64;
  apply.reason = fmt::format("split norm, pass 2 of 2: the same chunks in reverse (the last read may still be in L2), each "
                             "block combining its row's {} partial state{} in order, then y; {}",
                             states, states == 1 ? "" : "s", idx);
  p.add_followup(std::move(apply));
}

// The rules' pick for `rows` rows of `len` (contiguous): a warp per row where rownorm_use_warp
// says so (blocks of 256 threads), else a block per row of rownorm_block_threads, with the items a
// thread holds.
RownormPick rownorm_heuristic(std::int64_t rows, std::int64_t len, int v, int warp_items, int sms) {
  if (launch::rownorm_use_warp(rows, len, warp_items, sms)) return {256, 32, launch::rownorm_warp_items(len, v)};
  const int threads = launch::rownorm_block_threads(rows, len, sms);
  return {threads, threads, launch::rownorm_block_items(len, threads, v)};
}

// [Note: row norm picks]
// A row norm over contiguous rows of a static length (softmax, log_softmax, a fused norm
// composition; not the split or strided variants, nor a dyn length, whose classes are planned at
// their longest row) has picks ([Note: tuned picks] in plan.h). Dyn rows (the generic default
// makes a softmax's rows dyn) are tuned per size class of the rows, timed at the value tuned at,
// as a dyn matmul is; every pick serves any row count. The picks: a warp per row in blocks of
// 128, 256 or 512 threads where the row fits a warp's registers (rownorm_warp_items), and a block
// per row of 256, 512 or 1024 threads holding rownorm_block_items a thread (the row in registers
// where they cover it, else the two-pass path). The heuristic (rownorm_heuristic) is one of them:
// the warp rule takes 256-thread blocks, the block rule 256 to 1024 threads. The rules were set by
// a few shapes' measurements (rownorm.h); which rows gain from another pick is what `kiln tune`
// finds out.
std::vector<RownormPick> rownorm_candidates(std::int64_t len, int v, int warp_items) {
  std::vector<RownormPick> out;
  if (len <= 32LL * warp_items)
    for (int threads : {128, 256, 512}) out.push_back({threads, 32, launch::rownorm_warp_items(len, v)});
  for (int threads : {256, 512, 1024}) out.push_back({threads, threads, launch::rownorm_block_items(len, threads, v)});
  return out;
}

// The lengths at which the rules' pick for `rows` rows of a row norm changes (a warp or a block
// per row, its threads, the items a thread holds, registers or two passes), up to the last one,
// where rows outgrow the block's registers: a dyn length's classes start at them ([Note: dyn
// lengths]), so each length of a class gets the pick the specialized kernel of the class's longest
// row has. Dyn rows are taken as many (the warp rule's regime); fewer only cost registers.
std::vector<std::int64_t> rownorm_len_steps(std::int64_t rows, int v, int warp_items, int sms) {
  auto pick = [&](std::int64_t len) {
    const RownormPick r = rownorm_heuristic(rows, len, v, warp_items, sms);
    return std::array<std::int64_t, 3>{r.group, r.items, launch::rownorm_row_in_registers(len, r.group, r.items) ? 1 : 0};
  };
  std::vector<std::int64_t> steps;
  auto last = pick(1);
  for (std::int64_t len = 2; len <= 1024LL * launch::kRowNormMaxItems + 1; ++len) {
    const auto here = pick(len);
    if (here != last) steps.push_back(len);
    last = here;
  }
  return steps;
}

void plan_rownorm(Planner& p, PlannedKernel& kn) {
  const auto& a = p.node(kn.anchor);
  const auto& shape = p.shape(kn.anchor);
  const bool norm = a.kind == ir::OpKind::Normalize;
  if (norm) {
    // The layout fuse_norms fused it by; dyn rows were fused only where no split is needed.
    const ir::Shape& dims = a.shape;
    const bool dyn_rows =
        ir::mentions(ir::Shape(dims.begin(), dims.begin() + a.axes.front()), p.bound().ir->dyn_dims());
    const NormLayout layout = norm_layout(shape, a.axes, !dyn_rows, p.target().sm_count);
    KILN_ASSERT(layout.fuses, "a Normalize the rownorm family does not take: {}", layout.why_not);
    if (layout.split) return plan_split_norm(p, kn, layout);
  }
  const int first = norm ? a.axes.front() : a.axis;
  const int last = norm ? a.axes.back() : a.axis;
  const Box b = box_of(shape, first, last);
  // (A Normalize has no dyn trailing axes: fuse_norms leaves such a composition unfused.)
  Rows rows = rows_of(p, kn, kn.anchor, first, b.outer, "rownorm", last, /*dyn_after=*/!norm);
  Rows len = len_of(p, kn, kn.anchor, first, last, b.len, "rownorm");
  Rows inner = norm ? Rows{} : inner_of(p, kn, kn.anchor, last + 1, b.inner, rows, len, "rownorm");
  set_rows(kn, rows);
  set_len(kn, len);
  if (inner.dynamic) kn.dyn_inner = inner.factors;
  const std::string idx = index_reason(kn, numel(shape), rows.dynamic || len.dynamic || inner.dynamic);
  const int v = 16 / element_bytes(p, a.operands[0]);
  const int sms = p.target().sm_count;
  kn.template_name = "rownorm";
  RownormConfig config;
  config.outer = rows.config_outer();
  config.len = len.config_outer();
  config.inner = b.inner;
  auto launch_with = [&](const RownormConfig& c) { set_config(kn, c, rows, b.outer, rownorm_geometry); };
  if (b.inner > 1) {   // a dyn inner only sizes the grid ([Note: dyn inner extents])
    config.variant = RownormVariant::kStrided;
    config.threads = 256;
    config.group = 0;
    config.unroll = 4;
    launch_with(config);
    if (inner.dynamic) std::get<RownormConfig>(kn.config).inner = 0;
    kn.reason = fmt::format("normalized axis strided (inner {}): a thread per column, two passes ({}; then re-read "
                            "and write); {}",
                            inner.dynamic ? dyn_inner_text(inner) : std::to_string(b.inner),
                            norm ? (a.norm.centered ? "mean and squared deviations by chunks, combined as Chan's"
                                                    : "sum of squares")
                                 : "online max and sum",
                            idx);
    return;
  }
  const char* in_registers = norm ? (a.norm.centered ? "mean, then squared deviations from the registers, times the "
                                                       "scale"
                                                     : "sum of squares, times the scale")
                                  : "max, exp kept in place and summed, times 1/sum";
  constexpr int kWarpItems = 32;
  // A dyn length ([Note: dyn lengths]): a class per pick of the rules, each planned at its longest
  // row, so its items hold every row of the class; past the block's registers, one unbounded
  // class (two passes).
  std::int64_t planned_len = b.len;
  if (len.dynamic) {
    len.thresholds(p, rownorm_len_steps(rows.dynamic ? 8LL * sms : rows.planned, v, kWarpItems, sms));
    planned_len = len.most > 0 ? len.most : len.planned;
  }
  // The steps of rownorm_use_warp and rownorm_block_threads in the row count.
  rows.thresholds(p, planned_len <= 32LL * kWarpItems ? std::vector<std::int64_t>{2LL * sms, 8LL * sms}
                                                       : std::vector<std::int64_t>{2LL * sms});
  if (len.dynamic) config.min_len = len.planned;   // the class's lowest length (rownorm_rows' kDynMinLen)
  config.aligned = rows_known_vectorizable(p, a.operands[0], len, element_bytes(p, a.operands[0]));
  RownormPick pick = rownorm_heuristic(rows.planned, planned_len, v, kWarpItems, sms);
  std::string pick_note;
  if (!len.dynamic) {   // [Note: row norm picks]
    pick_note = "; config: heuristic";
    pick = p.offer_picks(kn.anchor,
                         fmt::format("{}: {} rows{} of {}", norm ? "norm" : ir::op_kind_name(a.kind), rows.text,
                                     rows.class_suffix(), planned_len),
                         pick, rownorm_candidates(planned_len, v, kWarpItems), pick_note, "row norm");
  }
  config.threads = pick.threads;
  config.group = pick.group;
  config.items = pick.items;
  if (pick.group == 32) {
    config.variant = RownormVariant::kWarpRows;
    launch_with(config);
    kn.reason = fmt::format("a warp per row ({} rows of {}{} in registers: one read, one write; {}); {}{}", rows.text,
                            len.text, len_class_text(len), in_registers, idx, pick_note);
    return;
  }
  config.variant = RownormVariant::kBlockRows;
  const bool fits = launch::rownorm_row_in_registers(planned_len, config.group, config.items);
  // A dyn length's class past the registers (every row streams twice): no register path compiled,
  // whose live predicates over a run-time length spilled (364 bytes a thread of a layer norm).
  if (len.dynamic && !fits) config.items = 0;
  launch_with(config);
  kn.reason = fmt::format(
      "a block of {} per row ({} rows of {}{}): {}; {}{}", pick.threads, rows.text, len.text, len_class_text(len),
      fits ? fmt::format("row held in registers ({} a thread), one pass: {}", pick.items, in_registers)
           : norm ? std::string("row longer than the block's registers, two passes (mean and squared deviations by "
                                "chunks, combined as Chan's parallel variance; then re-read and write)")
                  : std::string("row longer than the block's registers, two passes (online max/sum by chunks, then "
                                "re-read and write)"),
      idx, pick_note);
}

// dyn: each rule takes dyn rows ([Note: dyn rows]) and lengths ([Note: dyn lengths]), and refuses other dyn dims.
const AnchorRule kReduceRule{"reduce", true, true, plan_reduction, nullptr, nullptr, true};
const AnchorRule kScanRule{"scan", true, true, plan_scan, nullptr, nullptr, true};
const AnchorRule kRowNormRule{"rownorm", true, true, plan_rownorm, nullptr, nullptr, true, true};

}  // namespace

int element_bytes(const Plan& plan, ir::NodeId operand) {
  const ir::NodeId leaf = plan.streamed_leaf(operand);
  return static_cast<int>(dtype_size(plan.bound->node(leaf >= 0 ? leaf : operand).dtype));
}

launch::Geometry memory_launch(const Plan& plan, const PlannedKernel& kn, std::int64_t outer, std::int64_t len,
                               std::int64_t inner) {
  const ir::Node& a = plan.bound->node(kn.anchor);
  return std::visit(
      [&](const auto& c) -> launch::Geometry {
        using C = std::decay_t<decltype(c)>;
        C at = c;
        if constexpr (std::is_same_v<C, ReduceConfig>) {
          at.outer = outer;
          if (inner > 0) at.inner = inner;
          return reduce_geometry(at);
        } else if constexpr (std::is_same_v<C, ReduceFinishConfig>) {
          at.outer = outer;
          if (inner > 0) at.inner = inner;
          at.n_out = outer * at.inner;
          return reduce_finish_geometry(at);
        } else if constexpr (std::is_same_v<C, RownormConfig>) {
          at.outer = outer;
          if (inner > 0) at.inner = inner;
          return rownorm_geometry(at);
        } else if constexpr (std::is_same_v<C, ScanConfig>) {
          // The sizes plan_scan gives the rule: the streamed operand's elements and the values scanned.
          at.outer = outer;
          if (len > 0) at.len = len;   // the look-back over a dyn length
          if (inner > 0) at.inner = inner;
          return scan_geometry(at, element_bytes(plan, a.operands[0]),
                               static_cast<int>(dtype_size(chain_dtype(a.dtype))));
        } else {
          KILN_ASSERT(false, "{}: dyn rows for a kernel of another family", kn.entry);
          return launch::Geometry{};
        }
      },
      kn.config);
}

const AnchorRule* memory_bound_rule(ir::OpKind kind) {
  if (ir::is_reduction(kind)) return &kReduceRule;
  if (ir::is_scan(kind)) return &kScanRule;
  if (ir::is_rownorm(kind) || kind == ir::OpKind::Normalize) return &kRowNormRule;
  return nullptr;
}

}  // namespace kiln
