// kiln/config/reduce.h — the reduction family (reduce.cuh): its typed configs and the launch
// rules that pick the variant and its numbers. See config.h for the pattern.
//
// [Note: three configs for one family]
// A single reduction is one kernel (ReduceConfig: reduce_inner warp/block, reduce_outer and its
// whole-row sweeps), followed by reduce_finish when the reduced axis is split
// (ReduceFinishConfig). A reduction over non-adjacent axes is a chain of unsplit stages
// (ReduceChainConfig). The follow-up and the chain stages are separate types rather than more
// kinds of ReduceConfig because their fields differ: reduce_finish has no loads to unroll and no
// split of its own, but an output count; a chain stage carries its place in the chain and the
// total count a mean divides by. Keeping them apart keeps every field of a config meaningful
// (a ReduceConfig never prints stage=0 stages=1).
//
// [Note: how the numbers are chosen]
// H100 needs ~20-30 KB of loads in flight per SM to cover DRAM latency at full
// bandwidth. The templates put 16 bytes * kUnroll in flight per thread, so 2048
// resident threads (full occupancy) hold 64 KB with kUnroll = 4, and 1024 threads
// still hold 32 KB. The rules below therefore aim first at enough resident threads
// (rows or columns to fill every SM), and split the reduced axis across blocks only
// when the natural grid cannot fill the GPU, because a split costs a second launch.
#pragma once

#include "kiln/config/config.h"

namespace kiln {

// Which template of reduce.cuh runs a single reduction.
enum class ReduceVariant {
  kInnerWarp,    // reduce_inner_warp: a warp per contiguous row
  kInnerBlock,   // reduce_inner_block: a block per contiguous row, maybe split along it
  kOuter,        // reduce_outer: kVec columns a thread, threads along the inner axis
  kOuterRows,    // reduce_outer_rows: 4-byte columns, a block sweeps whole rows (kCols a thread)
  kOuterV4,      // reduce_outer_rows_v4: 16-byte aligned loads + lane shuffles over misaligned rows
};
// Which template a stage of a chained reduction runs (never split).
enum class ReduceChainVariant { kInnerWarp, kInnerBlock, kOuter };

#if !defined(__CUDACC_RTC__)
inline const char* enum_name(ReduceVariant v) {
  switch (v) {
    case ReduceVariant::kInnerWarp: return "kInnerWarp";
    case ReduceVariant::kInnerBlock: return "kInnerBlock";
    case ReduceVariant::kOuter: return "kOuter";
    case ReduceVariant::kOuterRows: return "kOuterRows";
    case ReduceVariant::kOuterV4: return "kOuterV4";
  }
  return "?";
}
inline const char* enum_name(ReduceChainVariant v) {
  switch (v) {
    case ReduceChainVariant::kInnerWarp: return "kInnerWarp";
    case ReduceChainVariant::kInnerBlock: return "kInnerBlock";
    case ReduceChainVariant::kOuter: return "kOuter";
  }
  return "?";
}
#endif

// The operand viewed as [outer, red, inner] (inner == 1: contiguous rows).
#define KILN_REDUCE_FIELDS(X)                                                                          \
  X(ReduceVariant, variant, ReduceVariant::kInnerWarp)                                                 \
  X(long long, outer, 1)                                                                               \
  X(long long, red, 1)                                                                                 \
  X(long long, inner, 1)                                                                               \
  X(int, threads, 256)     /* block size */                                                            \
  X(int, unroll, 4)        /* loads in flight a thread (rows of loads for kOuterV4) */                 \
  X(int, vec, 1)           /* columns a thread of reduce_outer (4 for kOuterV4); kInnerBlock: the */    \
                           /* elements of a 16-byte load (a split's chunk is a multiple); 1 otherwise */ \
  X(int, cols, 1)          /* kOuterRows: columns a thread, threads apart; 1 otherwise */              \
  X(long long, splits, 1)  /* blocks along the reduced axis (> 1: reduce_finish follows) */          \
  X(long long, chunk, 0)   /* elements (inner) or steps (outer) of the reduced axis a split */         \
  X(int, acc_bytes, 4)     /* sizeof(Op::Acc): the partial states in the workspace when split */       \
  X(int, split_sms, 0)     /* > 0: splits per launch (reduce_launch_split), filling this many SMs */ \
  X(int, waves, 2)         /* kOuterV4: waves of resident threads its split aims at (kOuterV4Waves) */
KILN_CONFIG(ReduceConfig, KILN_REDUCE_FIELDS);

// reduce_finish: combines `splits` partial states per output in a fixed order (by `lanes` threads
// each; reduce_finish in reduce.cuh), and stores.
#define KILN_REDUCE_FINISH_FIELDS(X)                                                                   \
  X(long long, outer, 1)   /* the split reduction's [outer, red, inner] view */                        \
  X(long long, red, 1)                                                                                 \
  X(long long, inner, 1)                                                                               \
  X(int, threads, 256)     /* block size: a thread per output */                                       \
  X(long long, n_out, 1)   /* outputs */                                                               \
  X(long long, splits, 2)  /* partial states per output */                                             \
  X(int, acc_bytes, 4)     /* sizeof(Op::Acc) */                                                        \
  X(int, lanes, 1)         /* threads per output (reduce_finish_lanes) */
KILN_CONFIG(ReduceFinishConfig, KILN_REDUCE_FINISH_FIELDS);

// One stage of a reduction over non-adjacent axes (see [Note: reductions over non-adjacent
// axes] in generator/plan/plan_memory.cpp).
#define KILN_REDUCE_CHAIN_FIELDS(X)                                                                    \
  X(ReduceChainVariant, variant, ReduceChainVariant::kInnerWarp)                                       \
  X(int, stage, 0)         /* 0-based, innermost axis group first */                                   \
  X(int, stages, 1)                                                                                    \
  X(long long, outer, 1)   /* this stage's [outer, red, inner] view */                                 \
  X(long long, red, 1)                                                                                 \
  X(long long, inner, 1)                                                                               \
  X(long long, count, 1)   /* elements reduced per output over all stages (a mean divides by it) */    \
  X(int, threads, 256)                                                                                 \
  X(int, unroll, 4)                                                                                    \
  X(int, vec, 1)           /* columns a thread of reduce_outer */
KILN_CONFIG(ReduceChainConfig, KILN_REDUCE_CHAIN_FIELDS);

namespace launch {

// ---------------------------------------------------------------- reduce_inner
// Template choice: a warp per row when there are enough rows to give every SM
// 32 warps (1024 threads), or the row is short (kReduceInnerWarpLen); else a block per
// row, split along the row when even that leaves SMs idle.
constexpr long long kReduceInnerWarpLen = 2048;
KILN_RULE constexpr bool reduce_inner_use_warp(long long rows, long long len, int sm_count) {
  return rows >= 32LL * sm_count || len <= kReduceInnerWarpLen;
}

// reduce_inner_warp<kThreads, ...>: grid-strided rows, so any grid >= 1 is correct.
KILN_RULE constexpr Geometry reduce_inner_warp_geometry(long long rows, int threads) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = min_ll(ceil_div(rows, threads / 32), kMaxGridX);
  return g;
}

// Splits of one row for reduce_inner_block: enough blocks for ~2 per SM at 512
// threads, each split at least one full unrolled sweep of the block.
struct InnerSplit {
  long long splits = 1;
  long long chunk = 0;   // elements per split, a multiple of the vector width
};
KILN_RULE constexpr InnerSplit reduce_inner_split(long long rows, long long len, int threads, int unroll, int elem_bytes,
                                        int sm_count) {
  const long long v = vec_elems(elem_bytes);
  const long long target_blocks = 2LL * sm_count;
  const long long min_chunk = (long long)threads * unroll * v;
  long long splits = rows >= target_blocks ? 1 : ceil_div(target_blocks, rows);
  splits = min_ll(splits, max_ll(1, len / min_chunk));
  splits = min_ll(splits, kMaxGridY);
  long long chunk = ceil_div(ceil_div(len, splits), v) * v;
  splits = ceil_div(len, chunk);
  return InnerSplit{splits, chunk};
}

// A dyn length ([Note: dyn lengths] in generator/plan/plan_memory.cpp): the planner looks for the
// lengths where a split rule's count changes up to kDynSplitLen (past every count's bound) and
// plans each class at its lowest length; each launch then cuts its own length into the class's
// count of chunks, whole `multiple`s (reduce_inner's vector width; 1 for reduce_outer's steps). A
// length near the class's lowest may leave the last chunks empty (their partial state is the
// identity).
constexpr long long kDynSplitLen = 1LL << 40;
KILN_RULE constexpr long long reduce_dyn_chunk(long long len, long long splits, long long multiple) {
  return max_ll(multiple, ceil_div(ceil_div(len, splits), multiple) * multiple);
}

// reduce_inner_block: grid (min(rows, 2^31-1), splits); workspace = splits*rows
// partial states when split (then reduce_finish runs over n_out = rows).
KILN_RULE constexpr Geometry reduce_inner_block_geometry(long long rows, const InnerSplit& s, int threads, int acc_bytes) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = min_ll(rows, kMaxGridX);
  g.grid.y = s.splits;
  g.workspace_bytes = s.splits > 1 ? s.splits * rows * acc_bytes : 0;
  return g;
}

// ---------------------------------------------------------------- reduce_outer
// kVec: one 16-byte vector of columns per thread when inner allows it.
KILN_RULE constexpr int reduce_outer_vec(long long inner, int elem_bytes) {
  return inner % vec_elems(elem_bytes) == 0 ? vec_elems(elem_bytes) : 1;
}
// Block size: 256, or fewer (a multiple of 32, >= 32) when inner is narrow.
KILN_RULE constexpr int reduce_outer_threads(long long inner, int vec) {
  const long long cols = ceil_div(inner, vec);
  return cols >= 256 ? 256 : int(max_ll(32, ceil_div(cols, 32) * 32));
}
struct OuterSplit {
  long long splits = 1;
  long long chunk = 0;   // steps of the reduced axis per split
};
// `want` splits of red steps, as equal chunks (the count is what those chunks need: <= want).
KILN_RULE constexpr OuterSplit outer_split_of(long long red, long long want) {
  const long long chunk = ceil_div(red, want);
  return OuterSplit{ceil_div(red, chunk), chunk};
}
// Split the reduced axis when outer*tiles blocks are fewer than one full wave (sm_count *
// 2048/threads resident blocks), as [Note: cutting an axis against wave quantization]
// (launch_rules.h) picks; each split keeps >= 8*unroll steps. 512 blocks against a wave of 1056
// split 2 ways (0.97 of a wave), not 3 (1.45 waves: sums over the middle axis of 512x512x1024
// ran at 96% of copy, 98% split 2 ways; bench/results/2026-11-28-h100-run16).
KILN_RULE constexpr OuterSplit reduce_outer_split(long long outer, long long red, long long inner, int threads, int vec,
                                        int unroll, int sm_count) {
  const long long blocks = outer * ceil_div(inner, (long long)threads * vec);
  const long long wave = (long long)sm_count * (2048 / threads);
  const long long most = min_ll(kMaxGridY, max_ll(1, red / (8LL * unroll)));
  return outer_split_of(red, wave_filling_parts(blocks, wave, most));
}
// `vec`: columns a thread, kVec of reduce_outer or kCols of reduce_outer_rows (a tile is threads*vec wide).
KILN_RULE constexpr Geometry reduce_outer_geometry(long long outer, long long inner, const OuterSplit& s, int threads, int vec,
                                         int acc_bytes) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = outer * ceil_div(inner, (long long)threads * vec);
  g.grid.y = s.splits;
  g.workspace_bytes = s.splits > 1 ? s.splits * outer * inner * acc_bytes : 0;
  return g;
}

// ---------------------------------------------------------------- reduce_outer_rows
// The whole-row sweep (reduce_outer_rows) replaces 4-byte column strips when inner is not a
// multiple of the vector width and a row is wide enough to give each thread of a 256-thread
// block at least two columns: strips of such rows start off sector boundaries and their edge
// sectors are read twice (see reduce.cuh). Multiples of the vector width keep reduce_outer's
// 16-byte columns (already at copy speed).
constexpr int kOuterRowsThreads = 256;
constexpr int kOuterRowsMaxCols = 16;
// The narrowest row either whole-row sweep (this one or reduce_outer_rows_v4 below) takes.
constexpr long long kOuterSweepMinInner = 2 * kOuterRowsThreads;
KILN_RULE constexpr bool reduce_outer_use_rows(long long inner, int vec) {
  return vec == 1 && inner >= kOuterSweepMinInner;
}
// Columns per thread: the whole row in one tile when it fits kMaxCols registers, else the
// fewest tiles, balanced (4097 columns: two tiles of 9 columns a thread, not 16 + 1).
KILN_RULE constexpr int reduce_outer_rows_cols(long long inner, int threads) {
  const long long tiles = ceil_div(inner, (long long)threads * kOuterRowsMaxCols);
  return int(max_ll(1, ceil_div(inner, tiles * threads)));
}
// Blocks of a whole-row sweep are few and long, so the split count is chosen against wave
// quantization: the fewest splits whose blocks fill at least 90% of the resident-block slots
// of their last wave, assuming 4 resident 256-thread blocks per SM (<= 64 registers a thread;
// 1024 threads with kCols loads each keep ~64 KB in flight per SM). Each split keeps >= 16 rows.
KILN_RULE constexpr OuterSplit reduce_outer_rows_split(long long outer, long long red, long long inner, int threads, int cols,
                                                       int sm_count) {
  const long long tiles = ceil_div(inner, (long long)threads * cols);
  const long long blocks = outer * tiles;
  const long long slots = (long long)sm_count * max_ll(1, 1024 / threads);
  const long long max_splits = min_ll(kMaxGridY, max_ll(1, red / 16));
  long long splits = 1;
  for (long long s = 1; s <= max_splits; ++s) {
    const long long b = blocks * s;
    const long long waves = ceil_div(b, slots);
    splits = s;
    if (b * 10 >= waves * slots * 9) break;
  }
  return outer_split_of(red, splits);
}
// Geometry: reduce_outer_geometry with cols as the columns a thread (the tile is threads*cols wide).

// ---------------------------------------------------------------- reduce_outer_rows_v4
// 4-byte elements with inner % 4 != 0 on a 16-byte aligned base: the whole-row sweep with 16-byte
// aligned loads and lane shuffles (reduce_outer_rows_v4; 4-byte loads stay ~25% under copy speed
// on an H100, see reduce.cuh). Rows narrower than 512 keep the 4-byte paths.
constexpr int kOuterV4MaxThreads = 1024;
constexpr int kOuterV4Unroll = 2;   // rows of 16-byte loads issued before the shuffles
KILN_RULE constexpr bool reduce_outer_use_v4(long long inner, int elem_bytes, bool aligned16) {
  return elem_bytes == 4 && inner % 4 != 0 && inner >= kOuterSweepMinInner && aligned16;
}
// Threads: one tile (4 columns a thread) covers the row where 1024 threads can, else the fewest
// tiles, balanced (4097 columns: two tiles of 544 threads, not 1024 + a tile of one column).
// A multiple of 32 (whole warps shuffle).
KILN_RULE constexpr int reduce_outer_v4_threads(long long inner) {
  const long long tiles = ceil_div(inner, 4LL * kOuterV4MaxThreads);
  return int(min_ll(kOuterV4MaxThreads, ceil_div(ceil_div(inner, 4 * tiles), 32) * 32));
}
// The blocks of `threads` an SM holds at once, which the kernel's __launch_bounds__ asks for (so
// at most 32 registers a thread): 2048 threads. The split rule below counts on them. (Unasked,
// the dyn-rows kernel of 128x4096x4095 took 34 registers, one 1024-thread block per SM, and ran
// at 1.44x the specialized kernel's 32; bench/results/2026-12-02-h200-run15.)
constexpr int kOuterV4ResidentThreads = 2048;
KILN_RULE constexpr int reduce_outer_v4_blocks_per_sm(int threads) { return kOuterV4ResidentThreads / threads; }
// Splits: about `waves` x 2048 threads per SM (kOuterV4Waves = 2 by default: two waves of the
// 2048 resident at <= 32 registers), the number of rows of loads in flight being what bounds this
// sweep. On the H100 (bench/results/2026-11-22-h100-run6, 128x4096x4095 at 1024 threads, unroll
// 2): 1 split 3.60 ms, 2 splits 3.08, 4 splits 3.01 (copy of the same bytes 2.84); a tuned pick
// may aim at 1 or 4 waves instead ([Note: reduction picks]). Counted in threads, not blocks: rows
// of 1001 take 256-thread blocks, and 512 of them unsplit (about 1000 threads an SM) ran at 64% of
// copy speed on an H200 (bench/results/2026-12-04-h200-run1).
constexpr int kOuterV4Waves = 2;
KILN_RULE constexpr OuterSplit reduce_outer_v4_split(long long outer, long long red, long long inner, int threads,
                                                    int waves, int sm_count) {
  const long long threads_total = outer * ceil_div(inner, (long long)threads * 4) * threads;
  const long long max_splits = min_ll(kMaxGridY, max_ll(1, red / 16));
  const long long wanted = (long long)waves * kOuterV4ResidentThreads * sm_count;
  const long long want = max_ll(1, min_ll(max_splits, (wanted + threads_total / 2) / threads_total));
  return outer_split_of(red, want);
}

// reduce_finish: a thread per output, or `lanes` threads per output where the outputs are too few
// to give the GPU a wave of threads (2048 an SM) and each has many partial states: the largest
// power of two up to kFinishMaxLanes that leaves each lane at least a batch of states (the
// kFinishBatch a thread has in flight; see reduce_finish in reduce.cuh) and keeps to one wave.
constexpr int kFinishBatch = 8;
constexpr int kFinishMaxLanes = 32;
KILN_RULE constexpr int reduce_finish_lanes(long long n_out, long long splits, int threads, int sm_count) {
  int lanes = 1;
  while (lanes * 2 <= kFinishMaxLanes && lanes * 2 <= threads && splits >= (long long)kFinishBatch * lanes * 2 &&
         n_out * lanes * 2 <= 2048LL * sm_count)
    lanes *= 2;
  return lanes;
}
KILN_RULE constexpr Geometry reduce_finish_geometry(long long n_out, int threads, int lanes) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = min_ll(ceil_div(n_out, threads / lanes), kMaxGridX);
  return g;
}

}  // namespace launch

// ---------------------------------------------------------------- the configs' launches
// The split rule of a config's variant over its outer, red and inner (the planner's, and each
// launch's where split_sms > 0), on `sm_count` SMs: reduce_inner_block's (vec: the elements of a
// 16-byte load, a chunk's multiple) or one of reduce_outer's three. reduce_inner_warp never splits.
KILN_RULE constexpr launch::OuterSplit reduce_split_rule(const ReduceConfig& c, int sm_count) {
  switch (c.variant) {
    case ReduceVariant::kInnerWarp: return launch::OuterSplit{1, c.red};
    case ReduceVariant::kInnerBlock: {
      const launch::InnerSplit s = launch::reduce_inner_split(c.outer, c.red, c.threads, c.unroll, 16 / c.vec, sm_count);
      return launch::OuterSplit{s.splits, s.chunk};
    }
    case ReduceVariant::kOuterRows:
      return launch::reduce_outer_rows_split(c.outer, c.red, c.inner, c.threads, c.cols, sm_count);
    case ReduceVariant::kOuterV4:
      return launch::reduce_outer_v4_split(c.outer, c.red, c.inner, c.threads, c.waves, sm_count);
    default: return launch::reduce_outer_split(c.outer, c.red, c.inner, c.threads, c.vec, c.unroll, sm_count);
  }
}

// [Note: splits per launch]
// With dyn rows, a split reduction is planned per size class of the rows ([Note: dyn rows] in
// generator/plan/plan_memory.cpp): `splits` is the rule's count at the class's lowest row count,
// and the workspace holds that many partial states for each of the class's most rows. A launch
// over more rows than the lowest splits as the rule does at its own rows (split_sms > 0): as many
// blocks as the specialized kernel at that row count, not the lowest's count times more rows,
// which ran a 3-row sum at 1.31x the specialized time (2026-12-02, H200). The count never exceeds
// `splits` (so the workspace always suffices); its chunk is the body's (reduce_dyn_chunk over the
// launch's count), and the kernel and its reduce_finish read the count from the launch
// (KernelArg::Kind::LaunchSplits): the split kernel's grid.y.
// A dyn inner extent ([Note: dyn inner extents] in generator/plan/plan_memory.cpp) splits each
// launch the same way, as the rule at the launch's rows and inner. The count is at least 2: the
// split kernel stores partial states only (reduce_finish applies the epilogue), and the rule gives
// 1 past the rows or inner where the blocks fill the GPU (a class of dyn rows ends below them; a
// class of a dyn inner may not, and its widest launches then split 2 ways).
// (outer or inner 0: a dyn config's own, no launch's extents: the planned count.)
KILN_RULE constexpr launch::OuterSplit reduce_launch_split(const ReduceConfig& c) {
  if (c.split_sms <= 0 || c.outer <= 0 || c.inner <= 0) return launch::OuterSplit{c.splits, c.chunk};
  const launch::OuterSplit s = reduce_split_rule(c, c.split_sms);
  return launch::OuterSplit{launch::max_ll(2, launch::min_ll(s.splits, c.splits)), 0};
}

// What the planner launches and what a generated unit checks against (launch_check). The
// workspace of a split reduction holds splits * outputs partial states of acc_bytes each.
KILN_RULE constexpr launch::Geometry reduce_geometry(const ReduceConfig& c) {
  const launch::OuterSplit split = reduce_launch_split(c);
  switch (c.variant) {
    case ReduceVariant::kInnerWarp: return launch::reduce_inner_warp_geometry(c.outer, c.threads);
    case ReduceVariant::kInnerBlock:
      return launch::reduce_inner_block_geometry(c.outer, launch::InnerSplit{split.splits, split.chunk}, c.threads,
                                                 c.acc_bytes);
    case ReduceVariant::kOuterRows:
      return launch::reduce_outer_geometry(c.outer, c.inner, split, c.threads, c.cols, c.acc_bytes);
    default:   // kOuter, kOuterV4 (vec == 4)
      return launch::reduce_outer_geometry(c.outer, c.inner, split, c.threads, c.vec, c.acc_bytes);
  }
}
KILN_RULE constexpr launch::Geometry reduce_finish_geometry(const ReduceFinishConfig& c) {
  return launch::reduce_finish_geometry(c.n_out, c.threads, c.lanes);
}
// Chain stages are unsplit and have no workspace of partial states (their handover buffers
// are planned as tensors).
KILN_RULE constexpr launch::Geometry reduce_chain_geometry(const ReduceChainConfig& c) {
  switch (c.variant) {
    case ReduceChainVariant::kInnerWarp: return launch::reduce_inner_warp_geometry(c.outer, c.threads);
    case ReduceChainVariant::kInnerBlock:
      return launch::reduce_inner_block_geometry(c.outer, launch::InnerSplit{1, c.red}, c.threads, 0);
    default:
      return launch::reduce_outer_geometry(c.outer, c.inner, launch::OuterSplit{1, c.red}, c.threads, c.vec, 0);
  }
}

}  // namespace kiln
