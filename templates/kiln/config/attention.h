// kiln/config/attention.h — the fused attention family (attention_sm90.cuh): its typed config and
// the rules the planner, the emitter and the template share. See config.h for the pattern.
//
// One kernel computes softmax(q·kᵀ · scale [causal]) · v for every query row block of every
// batch: a producer warpgroup loads the q block once and the k and v tiles through a ring, two
// consumer warpgroups each own 64 query rows (scores, online softmax and the output accumulator
// in registers). Buffers (q, k, v, the output) are the kernel's arguments, not config.
#pragma once

#include "kiln/config/config.h"

namespace kiln {

#define KILN_ATTENTION_FIELDS(X)                                                                   \
  X(int, elem_bytes, 2)            /* q, k, v element size: 2 (f16, bf16) */                       \
  X(long long, s, 1)               /* query rows (s, t, batch, inner: 0 is a dyn extent) */        \
  X(long long, t, 1)               /* keys */                                                      \
  X(int, d, 64)                    /* head dim of q and k (the scores' k) */                       \
  X(int, dv, 64)                   /* head dim of v and the output */                              \
  X(long long, batch, 1)           /* output batches, all batch dims flattened */                  \
  X(long long, inner, 1)           /* extent of the innermost batch dim (batch = outer x inner) */ \
  X(int, q_bcast, 0)               /* q's broadcast batch dims: bit 0 outer, bit 1 inner */        \
  X(int, k_bcast, 0)                                                                               \
  X(int, v_bcast, 0)                                                                               \
  X(bool, causal, false)           /* key j > query i excluded */                                  \
  X(int, bm, 128)                  /* query rows a CTA: 64 per consumer warpgroup */               \
  X(int, bn, 128)                  /* keys a tile */                                               \
  X(int, stages, 2)                /* k, v tile ring depth */                                      \
  X(bool, vec_out, false)          /* 8-byte stores of four outputs (dv and the row aligned) */
KILN_CONFIG(AttentionConfig, KILN_ATTENTION_FIELDS);

// [Note: dyn attention extents]
// A kernel whose config holds 0 for s, t, batch or inner reads that extent at run time: the
// entry passes an AttentionExtents (the launch's dyn dims) to run(), and attention_at fills the
// config's zeros from it. The head dims, the tiles and the broadcast bits stay baked in; the
// planner's side is [Note: dyn attention] in plan_contraction.cpp.
struct AttentionExtents {
  long long s = 0, t = 0, batch = 0, inner = 0;
};
KILN_RULE constexpr AttentionConfig attention_at(AttentionConfig c, const AttentionExtents& e) {
  if (c.s == 0) c.s = e.s;
  if (c.t == 0) c.t = e.t;
  if (c.batch == 0) c.batch = e.batch;
  if (c.inner == 0) c.inner = e.inner;
  return c;
}

// The head dims the kernel takes: whole 128-byte swizzle rows of 16-bit elements, and an
// accumulator a wgmma shape holds (m64n64, n128, n256).
KILN_RULE constexpr bool attention_head_dim(long long d) { return d == 64 || d == 128 || d == 256; }
// Keys a tile: the score accumulator (64 x bn a consumer) and the output's (64 x dv) in registers.
KILN_RULE constexpr int attention_bn(long long d, long long dv) { return d > 128 || dv > 128 ? 64 : 128; }
KILN_RULE constexpr int attention_consumers(const AttentionConfig& c) { return c.bm / 64; }
KILN_RULE constexpr int attention_threads(const AttentionConfig& c) { return 128 * (attention_consumers(c) + 1); }
// Shared memory: the q block, the ring of k and v tiles, 1 KB to align them to the swizzle period,
// the mbarriers (q full and empty, unit full and empty of two unit slots; k full, v full and
// empty per stage) and the two unit slots (8 bytes each).
KILN_RULE constexpr int attention_q_bytes(const AttentionConfig& c) { return c.bm * c.d * c.elem_bytes; }
KILN_RULE constexpr int attention_k_bytes(const AttentionConfig& c) { return c.bn * c.d * c.elem_bytes; }
KILN_RULE constexpr int attention_v_bytes(const AttentionConfig& c) { return c.bn * c.dv * c.elem_bytes; }
KILN_RULE constexpr int attention_smem(const AttentionConfig& c) {
  return attention_q_bytes(c) + c.stages * (attention_k_bytes(c) + attention_v_bytes(c)) + 1024 + 8 * (6 + 3 * c.stages) + 16;
}
// Query row blocks of s rows (scalars: the template calls it with a launch's s).
KILN_RULE constexpr long long attention_blocks(long long s, long long bm) { return (s + bm - 1) / bm; }
KILN_RULE constexpr long long attention_row_blocks(const AttentionConfig& c) { return attention_blocks(c.s, c.bm); }
// Key tiles of query row block `mb`: all of them, or (causal) those at or left of its last row.
// (Scalars, not the config: the template calls it from device code.)
KILN_RULE constexpr long long attention_key_tiles(bool causal, long long bm, long long bn, long long t, long long mb) {
  const long long keys = causal && (mb + 1) * bm < t ? (mb + 1) * bm : t;
  return (keys + bn - 1) / bn;
}
// [Note: the attention unit order]
// Persistent CTAs take work units (one 128-query block of one batch) in a fixed order: batch by
// batch, within a batch by block, longest (causal) first. CTA i takes unit i first, then whichever
// comes next when it needs one (a counter in a zeroed workspace): the next unit goes to the CTA
// that frees first, as longest-first greedy scheduling does, and the units running at once are
// neighbours, a few batches whose k and v stay in L2. A static round-robin (CTA i: i, i + grid,
// ...) measured 11.3 ms against 9.7 for one CTA a unit on the causal benchmark
// (bench/results/2026-11-28-h100-run11): with 132 CTAs over 32 blocks a batch, CTA i saw only
// blocks of one residue mod 4, and the heaviest residue class did 10% more than the mean.
struct AttentionUnit {
  long long batch, block;
};
KILN_RULE constexpr AttentionUnit attention_unit(long long row_blocks, long long u) {
  return {u / row_blocks, row_blocks - 1 - u % row_blocks};
}
KILN_RULE constexpr long long attention_grid(const AttentionConfig& c, int sm_count) {
  const long long units = attention_row_blocks(c) * c.batch;
  return units < sm_count ? units : sm_count;
}
// Persistent CTAs, one per SM at most, over the work units ([Note: the attention unit order]).
KILN_RULE constexpr launch::Geometry attention_geometry(const AttentionConfig& c, int sm_count) {
  launch::Geometry g;
  g.grid.x = attention_grid(c, sm_count);
  g.block.x = attention_threads(c);
  g.shared_bytes = attention_smem(c);
  return g;
}

}  // namespace kiln
