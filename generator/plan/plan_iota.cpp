// Planning of the iota family: iota(d0, ..., axis=k) -> iota.cuh. One kernel writes the index
// tensor through the fused epilogue chain (`f32(iota(N, axis=0)) * step + start` is one kernel).
// It has no operands, so nothing is inlined into it (prologue = false).
#include "generator/plan/planner.h"

namespace kiln {

namespace {

void plan_iota(Planner& p, PlannedKernel& kn) {
  const auto& node = p.node(kn.anchor);
  const auto& shape = p.shape(kn.anchor);
  const std::size_t axis = static_cast<std::size_t>(node.axis);
  std::int64_t numel = 1, inner = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    numel *= shape[d];
    if (d > axis) inner *= shape[d];
  }
  IotaConfig config;
  config.len = shape[axis];
  config.inner = inner;
  kn.template_name = "iota";
  kn.config = config;
  kn.set_launch(iota_geometry(config, numel));
  kn.reason = fmt::format("iota along axis {} of {} elements: coordinate = (e / {}) % {}", axis, numel, inner,
                          config.len);
}

const AnchorRule kIota{"iota", /*prologue=*/false, /*epilogue=*/true, plan_iota, nullptr, nullptr};

}  // namespace

const AnchorRule* iota_rule(ir::OpKind kind) { return kind == ir::OpKind::Iota ? &kIota : nullptr; }

}  // namespace kiln
