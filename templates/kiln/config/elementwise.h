// kiln/config/elementwise.h — the elementwise family (elementwise.cuh): one kernel that computes
// a fused chain of elementwise nodes per output element. See config.h for the pattern.
#pragma once

#include "kiln/config/config.h"

namespace kiln {

#define KILN_ELEMENTWISE_FIELDS(X)                                                        \
  X(int, vec, 1)        /* elements a thread step: a 16-byte vector of the widest type, or 1 */ \
  X(int, threads, 256)  /* block size */                                                  \
  X(bool, flat, false)  /* vectors run along the flat index across rows: every tensor has the output's shape */
KILN_CONFIG(ElementwiseConfig, KILN_ELEMENTWISE_FIELDS);

// Enough resident blocks to cover latency (8 per SM, 4 waves), grid-stride beyond that.
constexpr long long kElementwiseBlocksPerSm = 32;

// The launch: a 1-D grid of `threads`-thread blocks over ceil(numel / vec) steps, capped.
// elementwise.cuh's loop is grid-stride, so any grid >= 1 is correct.
KILN_RULE constexpr launch::Geometry elementwise_geometry(const ElementwiseConfig& c, long long numel, int sm_count) {
  launch::Geometry g;
  g.block.x = c.threads;
  const long long steps = launch::ceil_div(numel, c.vec);
  const long long blocks = launch::max_ll(1, launch::ceil_div(steps, c.threads));
  g.grid.x = launch::min_ll(blocks, sm_count * kElementwiseBlocksPerSm);
  return g;
}

}  // namespace kiln
