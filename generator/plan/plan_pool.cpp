// Planning of the pooling family: max_pool{1,2,3}d / avg_pool{1,2,3}d -> pool.cuh. One kernel
// writes the pooled tensor: the operand may be an inlined elementwise expression (read per window
// position), and the elementwise chain after it is fused into its store, so
// `relu(max_pool2d(x * s + b, 2))` is one kernel.
//
// [Note: dyn pool planes]
// The planes (the axes before the pooled ones: batch, channels) may be dyn, as a memory-bound
// family's rows ([Note: dyn rows] in plan_memory.cpp, rows_of): the config holds planes = 0, the
// kernel computes them from its dim_ arguments, and each launch takes pool_geometry at its planes
// (launch_for). Vectors, runs and rows follow from the pooled axes alone, so the planes add no
// size classes.
//
// [Note: dyn pooled axes]
// A pooled axis may be dyn too, where its input extent is a whole dyn dim (x: f32[N, C, H, W] with
// dyn H and W; a pool of a pool's output, whose extent is an expression, is refused). Its output
// extent is then an expression of the dim (floor((H + 2p - span) / s) + 1, with ceil_mode's
// min). The config holds 0 for the axis's in and out extents, and the kernel takes them per
// launch as KernelArg::DynValue arguments (kiln::DynDim, with division constants computed on the
// host), with the step counts along w and h that the flat step index is divided by: a dyn extent
// costs a multiply-high and a shift per division, not a run-time division. The picks that follow
// from the extents change only where an output extent crosses 2, kPoolRows (4) or a vector (up to
// 8): those values, as values of the dim, are its size classes, and a vector run over a dyn w
// needs rows of whole vectors, keyed by the bucket or the row alignment ([Note: dyn row alignment]
// in plan.h). The output's extents are expressions of dyn dims, which only this kernel reads (its
// fused epilogue through them, Planner::refuse_dyn_compound_extents): a kernel after the pool
// that reads its output refuses the dyn dim, located.
#include "generator/plan/planner.h"

namespace kiln {

namespace {

// The pool's dyn pooled axes ([Note: dyn pooled axes]), right-aligned into (d, h, w) slots.
struct DynPoolAxes {
  int dims = 0;           // pooled axes
  std::string dim[3];     // the dyn dim that is the slot's input extent ("" static)
  ir::DimExpr in[3], out[3];
  std::string text;       // for the reason: the classes and keys assumed

  bool any() const { return !dim[0].empty() || !dim[1].empty() || !dim[2].empty(); }
  // Whether a vector run over w may assume rows of whole `vec`-element vectors: a static w, a dyn
  // one in the bucket "multiple of 16", or one keyed by its row alignment (4 or 8 elements).
  bool w_rows_keyed(Planner& p, int vec) const {
    if (dim[2].empty()) return true;
    if (dyn_bucket(p.bound().dims.at(dim[2])) == DynBucket::Div16) return true;
    return (vec == 4 || vec == 8) && p.add_dyn_row_align(dim[2], vec);
  }
  // The outputs per plane, "((H + -2) / 2 + 1) x 32".
  std::string outputs_text() const {
    std::vector<std::string> parts;
    for (int s = 3 - dims; s < 3; ++s) parts.push_back(out[s].str());
    return fmt::format("{}", fmt::join(parts, " x "));
  }
  // Zeroes the dyn extents in the config and adds the arguments the kernel reads them from.
  void make_dyn(PoolConfig& c, PlannedKernel& kn) const {
    if (!any()) return;
    // kPoolDynFields: the in extents (slots 0-2), the out extents (3-5), the steps along w and h.
    auto add = [&](int field, const ir::DimExpr& value) {
      kn.add_dyn_value(fmt::format("pool_{}", kPoolDynFields[field]), value);
    };
    for (int s = 0; s < 3; ++s) {
      if (dim[s].empty()) continue;
      pool_in_extent(c, s) = 0;
      pool_out_extent(c, s) = 0;
      add(s, in[s]);
      add(3 + s, out[s]);
    }
    auto steps = [](const ir::DimExpr& e, int per) {
      return per == 1 ? e : floor_div(e + ir::DimExpr::constant(per - 1), ir::DimExpr::constant(per));
    };
    if (!dim[2].empty()) add(6, steps(out[2], c.run));
    if (!dim[1].empty()) add(7, steps(out[1], c.rows));
  }
};

// The lowest value of `dim` at which extent `e` (nondecreasing in it) reaches `at_least`, 0 if none
// below 2^31.
std::int64_t lowest_reaching(const Planner& p, const ir::DimExpr& e, const std::string& dim, std::int64_t at_least) {
  std::map<std::string, std::int64_t> dims = p.bound().dims;
  auto value = [&](std::int64_t v) {
    dims[dim] = v;
    return e.evaluate(dims);
  };
  std::int64_t lo = 1, hi = std::int64_t{1} << 31;
  if (value(hi) < at_least) return 0;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (value(mid) >= at_least) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// [Note: dyn pooled axes]: the dyn input extents among the pooled axes (refusing, located, a dyn
// dim inside an expression), each with the size classes of its output extent.
DynPoolAxes dyn_pool_axes(Planner& p, const PlannedKernel& kn) {
  const auto& ir = *p.bound().ir;
  const auto& node = ir.node(kn.anchor);
  const auto& in = ir.node(node.operands[0]).shape;
  const auto& out = node.shape;
  const std::size_t d = static_cast<std::size_t>(node.pool.dims), rank = in.size();
  DynPoolAxes axes;
  axes.dims = static_cast<int>(d);
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < d; ++i) {
    const std::size_t slot = 3 - d + i, axis = rank - d + i;
    const std::string found = p.dyn_in(in[axis]);
    if (found.empty()) continue;
    if (in[axis].kind() != ir::DimExpr::Kind::Dim)
      p.refuse_dyn(found, kn.anchor, "the pool template",
                   fmt::format("takes a dyn pooled axis only as a whole dim, not inside {} (axis {})", in[axis].str(),
                               axis));
    axes.dim[slot] = found;
    axes.in[slot] = in[axis];
    axes.out[slot] = out[axis];
    // The output extents at which the picks change (pool_vec, pool_run, pool_rows): 2, 4, 8.
    std::vector<std::int64_t> at;
    for (std::int64_t t : {std::int64_t{2}, std::int64_t{kPoolRows}, std::int64_t{8}})
      if (const std::int64_t v = lowest_reaching(p, out[axis], found, t)) at.push_back(v);
    p.add_dyn_thresholds(found, at);
    texts.push_back(fmt::format("{} -> {} (dyn)", found, out[axis].str()));
  }
  for (std::size_t slot = 0; slot < 3; ++slot)
    if (axes.dim[slot].empty()) axes.in[slot] = axes.out[slot] = ir::DimExpr::constant(1);
  if (axes.any()) {
    for (std::size_t i = 0; i < d; ++i) {   // the static pooled axes, for outputs_text
      const std::size_t slot = 3 - d + i;
      if (axes.dim[slot].empty()) axes.out[slot] = ir::DimExpr::constant(p.shape(kn.anchor)[rank - d + i]);
    }
    axes.text = fmt::format("; pooled axes {}: extents read per launch, size classes where an output extent "
                            "reaches 2, 4 or 8",
                            fmt::join(texts, ", "));
  }
  return axes;
}

// [Note: pool picks]
// A pool over static pooled axes has picks ([Note: tuned picks] in plan.h): blocks of 128, 256 or
// 512 threads; a thread step's outputs along w one, a run of 4 loaded element by element, or a
// vector run (16 bytes of outputs, loaded as aligned 16-byte vectors), each where the template can
// take it (pool_run_fits, pool_vec_width); and for a max pool 1 or kPoolRows output rows along h
// (pool_rows_fit). The heuristic's (pool_threads, pool_vec, pool_run, pool_rows: what paid on an
// H200 and an H100 for a few KernelBench pools, config/pool.h) is one of them; `kiln tune` times the others
// for a shape those measurements did not cover. Dyn pooled axes (their runs and rows planned by
// size class, a vector run keyed per launch) have no picks.
std::vector<PoolPick> pool_candidates(const PoolConfig& c, int elem_bytes, bool aligned16) {
  const int v = pool_vec_width(elem_bytes, aligned16, c.in_w, c.out_w, c.kernel_w, c.stride_w, c.dilation_w);
  std::vector<std::pair<int, int>> runs = {{1, 1}};   // (run, vec)
  if (pool_run_fits(4, c.out_w, c.kernel_w, c.stride_w, c.dilation_w)) runs.push_back({4, 1});
  if (v > 1) runs.push_back({v, v});
  std::vector<PoolPick> out;
  for (int threads : {128, 256, 512})
    for (const auto& [run, vec] : runs)
      for (int rows : {1, kPoolRows})
        if (pool_rows_fit(rows, c.max, c.out_h, c.kernel_h, c.stride_h, c.dilation_h,
                          pool_span(run, c.kernel_w, c.stride_w, c.dilation_w)))
          out.push_back({threads, run, vec, rows});
  return out;
}

void plan_pool(Planner& p, PlannedKernel& kn) {
  const auto& node = p.node(kn.anchor);
  const ir::PoolAttrs& a = node.pool;
  const auto& in = p.shape(node.operands[0]);
  const auto& out = p.shape(kn.anchor);
  const std::size_t d = static_cast<std::size_t>(a.dims), rank = in.size();
  PoolConfig config;
  config.max = node.kind == ir::OpKind::MaxPool;
  std::int64_t planes = 1;
  for (std::size_t i = 0; i + d < rank; ++i) planes *= in[i];
  // [Note: dyn pool planes]: dyn dims may size the planes (the leading axes: a batch), which the
  // template reads at run time (planes 0); nothing the plan picks depends on them. The pooled axes
  // may be dyn too ([Note: dyn pooled axes]).
  const Rows rows = rows_of(p, kn, node.operands[0], static_cast<int>(rank - d), planes, "pool",
                            static_cast<int>(rank) - 1);
  const DynPoolAxes dyn = dyn_pool_axes(p, kn);
  config.planes = rows.config_outer();
  // Right-aligned into (d, h, w): spatial axis i of a d-axis pool is slot 3 - d + i.
  int* kernel[3] = {&config.kernel_d, &config.kernel_h, &config.kernel_w};
  int* stride[3] = {&config.stride_d, &config.stride_h, &config.stride_w};
  int* padding[3] = {&config.padding_d, &config.padding_h, &config.padding_w};
  int* dilation[3] = {&config.dilation_d, &config.dilation_h, &config.dilation_w};
  std::string window;
  for (std::size_t i = 0; i < d; ++i) {
    const std::size_t slot = 3 - d + i;
    pool_in_extent(config, static_cast<int>(slot)) = in[rank - d + i];
    pool_out_extent(config, static_cast<int>(slot)) = out[rank - d + i];
    // The checker keeps every window parameter below 2^31.
    *kernel[slot] = static_cast<int>(a.kernel[i]);
    *stride[slot] = static_cast<int>(a.stride[i]);
    *padding[slot] = static_cast<int>(a.padding[i]);
    *dilation[slot] = static_cast<int>(a.dilation[i]);
    window += fmt::format("{}{}", i ? "x" : "", a.kernel[i]);
  }
  config.include_pad = a.count_include_pad;
  config.divisor = static_cast<int>(a.divisor);
  const int elem_bytes = element_bytes(p.plan(), node.operands[0]);
  // A dyn w: the vector run as if its rows were whole vectors, kept where the key says they are.
  const long long w_for_vec = dyn.dim[2].empty() ? config.in_w : 16 / elem_bytes;
  config.vec = pool_vec(elem_bytes, p.target().aligned16, w_for_vec, config.out_w, config.kernel_w, config.stride_w,
                        config.dilation_w, config.padding_w);
  if (config.vec > 1 && !dyn.w_rows_keyed(p, config.vec)) config.vec = 1;
  config.run = pool_run(config.vec, config.out_w, config.kernel_w, config.stride_w, config.dilation_w);
  config.rows = pool_rows(config.max, config.out_h, config.kernel_h, config.stride_h, config.dilation_h,
                          pool_run_span(config));
  config.threads = pool_threads(config.kernel_d);
  std::string note;
  if (!dyn.any()) {
    note = "; config: heuristic";
    const PoolPick chosen = p.offer_picks(
        kn.anchor,
        fmt::format("{}{}d: {} window over {} planes{} of {}", ir::op_kind_name(node.kind), d, window, rows.text,
                    rows.class_suffix(), fmt::join(std::vector<std::int64_t>(in.end() - static_cast<long>(d), in.end()), "x")),
        PoolPick{config.threads, config.run, config.vec, config.rows},
        pool_candidates(config, elem_bytes, p.target().aligned16), note, "pool");
    config.threads = chosen.threads;
    config.run = chosen.run;
    config.vec = chosen.vec;
    config.rows = chosen.rows;
  }
  config.wide_stores = pool_wide_stores(config.max, p.target().aligned16, config.run);
  const std::string rows_text =
      config.rows > 1 ? fmt::format(" x {} rows along h (their {} input rows each loaded once)", config.rows,
                                    pool_rows_loaded(config.rows, config.kernel_h, config.stride_h, config.dilation_h))
                      : std::string();
  kn.template_name = "pool";
  PoolConfig planned = config;   // the launch at the bound extents (a dyn kernel's: each launch's)
  planned.planes = planes;
  kn.set_launch(pool_geometry(planned));
  dyn.make_dyn(config, kn);
  kn.config = config;
  if (rows.dynamic) kn.dyn_outer = rows.factors;
  const std::string stores_text = config.wide_stores ? ", each run stored as aligned vectors" : "";
  kn.reason = fmt::format("{} {} window over [{}, ...] planes: {}{} ({} outputs), the windows read through L1/L2{}{}{}",
                          config.max ? "max" : "average", window, rows.text,
                          config.run > 1 || config.rows > 1 ? fmt::format("a thread per {} adjacent outputs along w{}, which load their {} input "
                                                       "columns a row once, {}",
                                                       config.run, rows_text, pool_run_span(config),
                                                       config.vec > 1  ? "in aligned 16-byte vectors"
                                                       : config.run > 1 ? "element by element (stride 1 along w)"
                                                                        : "element by element")
                                         : std::string("a thread per output element"),
                          stores_text,
                          rows.dynamic || dyn.any()
                              ? fmt::format("{} x {}", rows.text,
                                            dyn.any() ? dyn.outputs_text() : std::to_string(pool_outputs(planned) / planes))
                                                    : std::to_string(pool_outputs(planned)),
                          config.max ? "" : config.divisor ? fmt::format(", divided by {}", config.divisor)
                                        : config.include_pad ? ", divided by the padded window's size"
                                                             : ", divided by the in-bounds count",
                          dyn.text, note);
}

const AnchorRule kPool{"pool", /*prologue=*/true, /*epilogue=*/true, plan_pool, nullptr, nullptr, /*dyn=*/true};

}  // namespace

const AnchorRule* pool_rule(ir::OpKind kind) { return ir::is_pool(kind) ? &kPool : nullptr; }

}  // namespace kiln
