// Planning of the pooling family: max_pool{1,2,3}d / avg_pool{1,2,3}d -> pool.cuh. One kernel
// writes the pooled tensor: the operand may be an inlined elementwise expression (read per window
// position), and the elementwise chain after it is fused into its store, so
// `relu(max_pool2d(x * s + b, 2))` is one kernel.
//
// [Note: dyn pool planes]
// The planes (the axes before the pooled ones: batch, channels) may be dyn, as a memory-bound
// family's rows ([Note: dyn rows] in plan_memory.cpp, rows_of): the config holds planes = 0, the
// kernel computes them from its dim_ arguments, and each launch takes pool_geometry at its planes
// (launch_for). Vectors, runs and rows follow from the pooled axes alone, so there are no size
// classes. A dyn pooled axis is refused where it is declared.
#include "generator/plan/planner.h"

namespace kiln {

namespace {

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
  // template reads at run time (planes 0); nothing the plan picks depends on them.
  const Rows rows = rows_of(p, kn, node.operands[0], static_cast<int>(rank - d), planes, "pool");
  config.planes = rows.config_outer();
  // Right-aligned into (d, h, w): spatial axis i of a d-axis pool is slot 3 - d + i.
  long long* in_ext[3] = {&config.in_d, &config.in_h, &config.in_w};
  long long* out_ext[3] = {&config.out_d, &config.out_h, &config.out_w};
  int* kernel[3] = {&config.kernel_d, &config.kernel_h, &config.kernel_w};
  int* stride[3] = {&config.stride_d, &config.stride_h, &config.stride_w};
  int* padding[3] = {&config.padding_d, &config.padding_h, &config.padding_w};
  int* dilation[3] = {&config.dilation_d, &config.dilation_h, &config.dilation_w};
  std::string window;
  for (std::size_t i = 0; i < d; ++i) {
    const std::size_t slot = 3 - d + i;
    *in_ext[slot] = in[rank - d + i];
    *out_ext[slot] = out[rank - d + i];
    // The checker keeps every window parameter below 2^31.
    *kernel[slot] = static_cast<int>(a.kernel[i]);
    *stride[slot] = static_cast<int>(a.stride[i]);
    *padding[slot] = static_cast<int>(a.padding[i]);
    *dilation[slot] = static_cast<int>(a.dilation[i]);
    window += fmt::format("{}{}", i ? "x" : "", a.kernel[i]);
  }
  config.include_pad = a.count_include_pad;
  config.divisor = static_cast<int>(a.divisor);
  config.vec = pool_vec(element_bytes(p.plan(), node.operands[0]), p.target().aligned16, config.in_w, config.out_w,
                        config.kernel_w, config.stride_w, config.dilation_w, config.padding_w);
  config.run = pool_run(config.vec, config.out_w, config.kernel_w, config.stride_w, config.dilation_w);
  config.rows = pool_rows(config.max, config.out_h, config.kernel_h, config.stride_h, config.dilation_h,
                          pool_run_span(config));
  const std::string rows_text =
      config.rows > 1 ? fmt::format(" x {} rows along h (their {} input rows each loaded once)", config.rows,
                                    pool_rows_loaded(config.rows, config.kernel_h, config.stride_h, config.dilation_h))
                      : std::string();
  kn.template_name = "pool";
  kn.config = config;
  PoolConfig planned = config;   // the launch at the bound planes (a dyn kernel's: each launch's)
  planned.planes = planes;
  kn.set_launch(pool_geometry(planned));
  if (rows.dynamic) kn.dyn_outer = rows.factors;
  kn.reason = fmt::format("{} {} window over [{}, ...] planes: {} ({} outputs), the windows read through L1/L2{}",
                          config.max ? "max" : "average", window, rows.text,
                          config.run > 1 || config.rows > 1 ? fmt::format("a thread per {} adjacent outputs along w{}, which load their {} input "
                                                       "columns a row once, {}",
                                                       config.run, rows_text, pool_run_span(config),
                                                       config.vec > 1  ? "in aligned 16-byte vectors"
                                                       : config.run > 1 ? "element by element (stride 1 along w)"
                                                                        : "element by element")
                                         : std::string("a thread per output element"),
                          rows.dynamic ? fmt::format("{} x {}", rows.text, pool_outputs(planned) / planes)
                                       : std::to_string(pool_outputs(planned)),
                          config.max ? "" : config.divisor ? fmt::format(", divided by {}", config.divisor)
                                        : config.include_pad ? ", divided by the padded window's size"
                                                             : ", divided by the in-bounds count");
}

const AnchorRule kPool{"pool", /*prologue=*/true, /*epilogue=*/true, plan_pool, nullptr, nullptr, /*dyn=*/true};

}  // namespace

const AnchorRule* pool_rule(ir::OpKind kind) { return ir::is_pool(kind) ? &kPool : nullptr; }

}  // namespace kiln
