// kiln/config/iota.h — the iota family (iota.cuh): an index tensor, element e holding its
// coordinate along one axis, through an optional fused epilogue. See config.h for the pattern.
#pragma once

#include "kiln/config/elementwise.h"

namespace kiln {

// The shape seen as [outer, len, inner] around the axis: coordinate = (e / inner) % len.
#define KILN_IOTA_FIELDS(X)                                   \
  X(int, threads, 256)   /* block size */                     \
  X(long long, len, 1)   /* extent of the axis */             \
  X(long long, inner, 1) /* elements after the axis (its stride) */
KILN_CONFIG(IotaConfig, KILN_IOTA_FIELDS);

// The launch: one element per thread step, grid-stride, sized as the elementwise family's
// scalar loop (the same occupancy argument holds: a store stream with no loads).
KILN_RULE constexpr launch::Geometry iota_geometry(const IotaConfig& c, long long numel) {
  return launch::stream_geometry(numel, c.threads);
}

}  // namespace kiln
