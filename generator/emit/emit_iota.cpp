// Emission of the iota family (kiln/iota.cuh): the config's [len, inner] view of the shape, the
// Store functor (the fused epilogue) and the call.
#include "generator/emit/emitter.h"

namespace kiln {

void emit_family(const Plan& plan, const PlannedKernel& kernel, const IotaConfig& config, UnitParts& unit) {
  const auto& shape = plan.bound->shape(kernel.anchor);
  std::int64_t numel = 1;
  for (auto d : shape) numel *= d;
  unit.includes = "#include \"kiln/iota.cuh\"";
  if (unit.op_has_dropout) unit.includes += "\n#include \"kiln/philox.cuh\"";

  CodeWriter c;
  c.line("using Index = {};", kernel.index64 ? "long long" : "int");
  c.line("{}", UnitParts::config_line(config));
  c.line("constexpr Index kNumel = {};  // {}, the coordinate along axis {}", numel, dims_text(shape),
         plan.ir().node(kernel.anchor).axis);
  unit.constants = c.str();

  CodeWriter w;
  write_store(plan, kernel, "long long", w);
  unit.functors = w.str();

  unit.body = fmt::format("  kiln::iota<Index>({}, kNumel, Index(kConfig.len), Index(kConfig.inner), Store{{{}}});",
                          UnitParts::pointer_name(plan, kernel.stores[0].buffer), UnitParts::member_inits(plan, kernel));
  unit.launch_check(kernel, "kiln::iota_geometry(kConfig, kNumel)");
}

}  // namespace kiln
