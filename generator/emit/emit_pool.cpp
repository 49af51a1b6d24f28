// Emission of the pooling family (kiln/pool.cuh): the config, the compute type, the Load functor
// (the operand at an input index: the streamed tensor's element, or an inlined expression) and
// the Store functor (the fused epilogue), then the call.
#include <algorithm>

#include "generator/emit/emitter.h"
#include "generator/support/assert.h"

namespace kiln {

void emit_family(const Plan& plan, const PlannedKernel& kernel, const PoolConfig& config, UnitParts& unit) {
  const auto& bound = *plan.bound;
  const auto& anchor = bound.node(kernel.anchor);
  const ir::NodeId operand = anchor.operands[0];
  const ir::NodeId primary = primary_leaf(plan, operand);
  KILN_CHECK(kernel.stores.size() == 1, UnsupportedError,
             "{}: a pooled value stored to {} outputs is not supported yet", plan.ir().where(anchor.loc),
             kernel.stores.size());
  CodeWriter c;
  begin_unit(kernel, "pool.cuh", unit, c);
  c.line("{}", UnitParts::config_line(config));
  c.line("// {} of {} over its last {} axes into {}", ir::op_kind_name(anchor.kind), dims_text(plan, operand),
         anchor.pool.dims, dims_text(plan, kernel.anchor));
  c.line("using C = {};  // {}", compute_type(anchor.dtype),
         config.max ? "compared in" : "summed and divided in");
  unit.constants = c.str();

  // Load and Store take the plane too: the coordinates of the axes before the pooled ones come
  // from it, once per thread step, not from each element's flat index (a division chain per
  // element, by dyn extents where the pooled axes are dyn).
  unit.functors = load_store_functors(plan, kernel, primary, "C", static_cast<std::size_t>(anchor.pool.dims));

  // Dyn planes ([Note: dyn pool planes] in plan_pool.cpp): this launch's; dyn pooled axes ([Note:
  // dyn pooled axes]): the extents the config holds as 0, from the kernel's DynValue arguments.
  std::string extents;
  for (const char* field : kPoolDynFields) {
    const std::string name = fmt::format("pool_{}", field);
    extents += fmt::format("{}{}", extents.empty() ? "" : ", ", kernel.has_dyn_value(name) ? name : "{}");
  }
  const bool dyn_axes = config.in_d == 0 || config.in_h == 0 || config.in_w == 0;
  const bool dyn_planes = !kernel.dyn_outer.empty();
  unit.body = dyn_extent_statement(plan, kernel, "Index", "planes", "dyn planes") +
              fmt::format("  kiln::pool<kConfig, C, Index>({0}, {1}, Load{{{2}}}, Store{{{2}}}{3}{4});",
                          UnitParts::pointer_name(plan, plan.leaves.at(primary)),
                          UnitParts::pointer_name(plan, kernel.stores[0].buffer), UnitParts::member_inits(plan, kernel),
                          dyn_planes ? ", planes" : dyn_axes ? ", 0" : "",
                          dyn_axes ? fmt::format(", kiln::PoolDyn{{{}}}", extents) : "");
  unit.launch_check(kernel, "kiln::pool_geometry(kConfig)", !dyn_planes && !dyn_axes);
}

}  // namespace kiln
