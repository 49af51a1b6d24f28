// kiln/config/elementwise.h — the elementwise family (elementwise.cuh): one kernel that computes
// a fused chain of elementwise nodes per output element. See config.h for the pattern.
#pragma once

#include "kiln/config/config.h"

namespace kiln {

#define KILN_ELEMENTWISE_FIELDS(X)                                                        \
  X(int, vec, 1)        /* elements a thread step: a 16-byte vector of the widest type, or 1 */ \
  X(int, threads, 256)  /* block size */                                                  \
  X(bool, flat, false)  /* vectors run along the flat index across rows: every tensor has the output's shape */ \
  X(bool, persistent, false) /* grid capped at kElementwiseBlocksPerSm: it sweeps the output in lockstep */ \
  X(bool, checked, false) /* row vectors only where a launch's innermost extent is a multiple of vec */
KILN_CONFIG(ElementwiseConfig, KILN_ELEMENTWISE_FIELDS);

// [Note: one step a thread, or a persistent grid]
// A stream that reads each input once runs one step a thread, the grid capped only by its limit:
// on an H100, relu over 6 GiB ran at 94% of a device copy with a grid of 32 blocks an SM and at
// 100% uncapped. A kernel that re-reads a broadcast operand (layer norm's [C, H, W] weight and
// bias, for each of N rows) runs a persistent grid of 32 blocks an SM instead: its blocks sweep
// the output in lockstep, one row's worth at a time, so the broadcast operand stays in L2
// between sweeps; uncapped, the blocks run through it once per row and it is read from memory
// each time (level 1's 40 epilogue, 16 x 4194304 with 16 MiB weight and bias: 0.240 ms persistent,
// 0.351 ms uncapped). Both measured by bench/standalone/elementwise_check.cu (2026-11-27 run 38).
// The planner sets `persistent` when a read tensor of kElementwiseReuseMinElems elements or more is
// broadcast along an axis outside all of its own, so the output re-reads it whole only after a
// span of its own size. Re-read sooner (RMS norm's statistics [N, 1, H, W], re-read every H*W
// outputs), or smaller (2^20 elements re-read every 2^20 outputs is about 16 MiB of traffic
// apart), it stays in L2 with either grid, and the uncapped one is faster (level 1's 36: 7.53 ms
// uncapped, 9.30 ms persistent, 2026-11-27 runs 38 and 40).
constexpr long long kElementwiseBlocksPerSm = 32;
constexpr long long kElementwiseReuseMinElems = 1LL << 20;

namespace launch {
// One block per `threads` steps, capped only by the grid's limit (the loops are grid-stride).
KILN_RULE constexpr Geometry stream_geometry(long long steps, int threads) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = min_ll(max_ll(1, ceil_div(steps, threads)), kMaxGridX);
  return g;
}
}  // namespace launch

// [Note: row vectors checked at launch]
// Row vectors (a broadcast row operand loaded 16 bytes at a time beside the output) need the
// innermost extent to be a multiple of the vector width, or a vector would cross a row. A static
// extent is known when the kernel is planned; a dyn one is known by bucket only, and the bucket
// "general" holds both 16388 (a multiple of 4 floats) and 16385. Such a kernel is planned with
// `checked`: it holds both loops, and each launch takes the vector loop where its innermost
// extent allows and the scalar one elsewhere (elementwise_step; a branch uniform over the grid).
// Before, the bucket "general" always ran scalars: relu(a + bias) over 16384 x 16388 floats ran
// 1.052x the specialized kernel (bench/results/2026-11-27-h100-run9/); checked, 1.005x, and over
// 16384 x 16383 (the scalar loop) 1.028x (bench/results/2026-12-02-h200-run10/).
KILN_RULE constexpr int elementwise_step(const ElementwiseConfig& c, long long inner) {
  return c.checked && inner % c.vec != 0 ? 1 : c.vec;
}

// The launch over ceil(numel / step) steps (elementwise.cuh's loop is grid-stride, so any grid >= 1
// is correct), `inner` the innermost extent: see [Note: one step a thread, or a persistent grid].
KILN_RULE constexpr launch::Geometry elementwise_geometry(const ElementwiseConfig& c, long long numel, long long inner,
                                                         int sm_count) {
  launch::Geometry g = launch::stream_geometry(launch::ceil_div(numel, elementwise_step(c, inner)), c.threads);
  if (c.persistent) g.grid.x = launch::min_ll(g.grid.x, sm_count * kElementwiseBlocksPerSm);
  return g;
}

}  // namespace kiln
