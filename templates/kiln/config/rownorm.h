// kiln/config/rownorm.h — the row-normalization family (rownorm.cuh: softmax, log_softmax): its
// typed config and the launch rules that pick the variant and its numbers. See config.h.
#pragma once

#include "kiln/config/config.h"
#include "kiln/config/reduce.h"   // launch::reduce_inner_warp_geometry (a warp per row)

namespace kiln {

enum class RownormVariant {
  kWarpRows,    // rownorm_rows with kGroup = 32: a warp per contiguous row
  kBlockRows,   // rownorm_rows with kGroup = kThreads: a block per contiguous row
  kStrided,     // rownorm_strided: a thread per column of [outer, len, inner]
  kSplitStats,  // rownorm_split_stats: a block per chunk of a long row, its partial statistics
  kSplitApply,  // rownorm_split_apply: the same chunks, the row's statistics combined, then y
  kSplitWhole,  // rownorm_split_whole: a block per row of a split norm's layout, its statistics, then y
};

#if !defined(__CUDACC_RTC__)
inline const char* enum_name(RownormVariant v) {
  switch (v) {
    case RownormVariant::kWarpRows: return "kWarpRows";
    case RownormVariant::kBlockRows: return "kBlockRows";
    case RownormVariant::kStrided: return "kStrided";
    case RownormVariant::kSplitStats: return "kSplitStats";
    case RownormVariant::kSplitApply: return "kSplitApply";
    case RownormVariant::kSplitWhole: return "kSplitWhole";
  }
  return "?";
}
#endif

// The normalized tensor viewed as [outer, len, inner] (inner == 1: contiguous rows). The split
// variants view it as [lead, outer, len] instead: a norm over the leading `lead` and the trailing
// `len` of a row of outer (a batch norm over N, H, W of NCHW: lead N, outer C, len H*W); lead 1
// for a norm over trailing axes ([Note: split norms]).
#define KILN_ROWNORM_FIELDS(X)                                                                         \
  X(RownormVariant, variant, RownormVariant::kWarpRows)                                                \
  X(long long, outer, 1)                                                                               \
  X(long long, len, 1)                                                                                 \
  X(long long, inner, 1)                                                                               \
  X(int, threads, 256)     /* block size */                                                            \
  X(int, group, 32)        /* rows: threads a row (32 or threads); 0 for kStrided */                   \
  X(long long, items, 0)   /* rows: elements a thread holds in registers; 0 for kStrided */            \
  X(int, unroll, 1)        /* kStrided: loads in flight a thread */                                    \
  X(long long, lead, 1)    /* split: the leading normalized extent */                                  \
  X(long long, splits, 1)  /* split: chunks a segment of len (kSplitWhole: 1) */                         \
  X(long long, chunk, 0)   /* split: elements of a segment a chunk (the last one may be shorter) */    \
  X(long long, gang, 1)    /* split: whole segments a chunk (> 1: short segments; splits 1, chunk len; */\
                           /* kSplitWhole: lead, the whole row) */                                     \
  X(long long, min_len, 0) /* rows over a dyn length (len 0): its class's lowest length; else 0 */     \
  X(bool, rows_fastest, false) /* split: block s takes row s % outer (rownorm_split_rows_fastest) */   \
  X(bool, aligned, false)  /* rows: every row 16-byte vectorizable at every launch ([Note: rows */     \
                           /* known vectorizable] in plan_memory.cpp): no element-wise path */
KILN_CONFIG(RownormConfig, KILN_ROWNORM_FIELDS);

namespace launch {

// ---------------------------------------------------------------- rownorm
// Contiguous rows: a warp per row when the row fits in a warp's registers
// (32 * items) and rows are plentiful; else a block per row (registers when the
// row fits in threads*items, else the streaming two-pass path, chosen inside).
KILN_RULE constexpr bool rownorm_use_warp(long long rows, long long len, int warp_items, int sm_count) {
  return len <= 32LL * warp_items && rows >= 8LL * sm_count;
}
KILN_RULE constexpr Geometry rownorm_warp_geometry(long long rows, int threads) {
  return reduce_inner_warp_geometry(rows, threads);
}
// Items (elements a lane holds) of a warp per row: the row spread over 32 lanes, whole vectors.
KILN_RULE constexpr long long rownorm_warp_items(long long len, int vec) {
  return max_ll(vec, round_up_ll(ceil_div(len, 32), vec));
}
// Block per row: at most kRowNormMaxItems elements a thread in registers (16 floats: 54
// registers on sm_90 for softmax, two 512-thread blocks an SM, 64 KB of loads in flight).
// The fewest threads (256, 512, 1024) that hold the row, so each thread has many loads in
// flight and the two block reductions span few warps. When rows are too few to give each SM
// two blocks, the row is spread wider (4 a thread) since no other block hides its latency.
// Longer rows take the two-pass path with 1024 threads.
constexpr int kRowNormMaxItems = 16;
KILN_RULE constexpr int rownorm_block_threads(long long rows, long long len, int sm_count) {
  const long long per_thread = rows < 2LL * sm_count ? 4 : kRowNormMaxItems;
  for (int t = 256; t < 1024; t *= 2)
    if (len <= t * per_thread) return t;
  return 1024;
}
KILN_RULE constexpr long long rownorm_block_items(long long len, int threads, int vec) {
  return min_ll(max_ll(kRowNormMaxItems, vec), max_ll(vec, round_up_ll(ceil_div(len, threads), vec)));
}
// A row is held in registers (one read, one write) when its group's items cover it; rownorm.cuh
// branches on this rule, the planner's reason text reports it.
KILN_RULE constexpr bool rownorm_row_in_registers(long long len, int group, long long items) {
  return len <= group * items;
}
// A norm composition (mean, variance, scale: generator/plan/fuse_norms.cpp) becomes one rownorm
// kernel when its row fits a block's registers (one read of x, one write of y), or, for longer
// rows, when the rows give every SM two blocks (a block per row streams the row twice: the
// statistics, then the normalized row). Fewer long rows keep the split reductions, which spread
// a row over many blocks (three reads, but every SM busy). `rows` is 0 when a dyn dim sizes them.
KILN_RULE constexpr bool rownorm_normalize_fuses(long long rows, long long len, int sm_count) {
  return len <= 1024LL * kRowNormMaxItems || rows >= 2LL * sm_count;
}
KILN_RULE constexpr Geometry rownorm_block_geometry(long long rows, int threads) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = min_ll(rows, kMaxGridX);
  return g;
}
// A norm over strided rows ([outer, len, inner], inner > 1, the normalized axes adjacent but not
// the trailing ones: an RMS norm over the channels of NCHW) is fused into kStrided when its
// columns give every SM a full complement of threads (2048 an SM): a thread per column streams its
// column twice (the statistics, then the normalized values) and the unfused plan, a reduce_outer
// then an elementwise kernel, moves the same bytes in two launches. Fewer columns keep the split
// reduction, which spreads a column over several blocks.
constexpr long long kRowNormStridedThreadsPerSm = 2048;
KILN_RULE constexpr bool rownorm_strided_normalize_fuses(long long columns, int sm_count) {
  return columns >= kRowNormStridedThreadsPerSm * sm_count;
}
// With a dyn dim among the rows, `columns_per_value` columns for each unit of it: its lowest value
// at which the norm fuses ([Note: strided norms over dyn rows] in generator/plan/fuse_norms.cpp).
KILN_RULE constexpr long long rownorm_strided_fuse_min_value(long long columns_per_value, int sm_count) {
  return ceil_div(kRowNormStridedThreadsPerSm * sm_count, columns_per_value);
}
// [Note: split norms]
// A norm whose rows are long and few (KernelBench's layer norm over C, H, W: 16 rows of 4M; a
// group norm: 128 rows of 512K) or whose normalized axes are the leading and the trailing ones
// around the kept ones (a batch norm over N, H, W) cannot give every SM a block per row. It takes
// two kernels over the same chunks instead, each a block: rownorm_split_stats reads its chunk once
// for its (count, mean, squared deviations) and writes them to a workspace; rownorm_split_apply
// combines the row's partial states in a fixed order (every block of a row gets the same mean and
// scale, whatever the launch order) and writes its chunk of y. That is two reads of x and one
// write, where the unfused plan (a split reduction for the mean, another for the variance, then
// the elementwise rest) reads x three times. The apply pass walks the chunks in reverse, so the
// first it reads are the last the stats pass read, which L2 may still hold (tens of MiB out of
// the hundreds these norms stream: a few percent at most; not measured apart).
// A chunk is at most kRowNormSplitItems elements a thread of kRowNormSplitThreads, fewer where that
// leaves under two waves of blocks (kRowNormSplitThreadsPerSm an SM, each twice; not under one
// 16-byte vector of f32 a thread), then evened out over the segment's chunks (2400 is two of 1200,
// not 2048 and 352), in whole vectors: a segment that is a multiple of the vector width streams
// vectors in every chunk.
// A segment shorter than that least chunk (kRowNormSplitMinLen: a batch norm over 28x28 images)
// is not split; a chunk gangs `gang` whole segments of its row instead (the segments l0 .. l0 +
// gang - 1, outer * len apart in memory), as many as the target asks, evened out over the row's
// lead segments (20 segments where the target asks for 8: chunks of 7, 7 and 6, not 8, 8 and 4).
// These norms are small (a 7x7 batch norm of 128 x 512 is 12.8 MB), so the target is one wave of
// blocks of kRowNormGangThreads: on an H200 (bench/results/2026-11-29-h200-run2) that took 0.054 /
// 0.034 / 0.029 ms on 128 x 128 x 28 x 28, 128 x 256 x 14 x 14, 128 x 512 x 7 x 7 where two waves
// of 512 took 0.060 / 0.038 / 0.038 (each block reads its chunk in one or two rounds of loads,
// then reduces: fewer, fuller blocks hide that latency better).
// A thread walks the chunk's elements in order, each mapped to its segment: 16-byte vectors where
// a segment is whole vectors, so a warp's loads cover a few whole segments. Segments under
// kRowNormGangMinLen elements (a batch norm over [N, C, 16]) would fetch more of each 32-byte
// sector's neighbours than of their own at the segment edges: they keep the unfused plan (a
// bound chosen, not measured).
constexpr int kRowNormSplitThreads = 512;
constexpr int kRowNormGangThreads = 256;
constexpr long long kRowNormSplitItems = 64;
constexpr int kRowNormSplitThreadsPerSm = 2048;
// The least chunk: one 16-byte vector of f32 a thread. Shorter segments are ganged.
constexpr long long kRowNormSplitMinLen = 4LL * kRowNormSplitThreads;
constexpr long long kRowNormGangMinLen = 32;
KILN_RULE constexpr bool rownorm_split_fuses(long long len) { return len >= kRowNormGangMinLen; }
KILN_RULE constexpr bool rownorm_split_ganged(long long len) { return len < kRowNormSplitMinLen; }
KILN_RULE constexpr int rownorm_split_threads(long long len) {
  return rownorm_split_ganged(len) ? kRowNormGangThreads : kRowNormSplitThreads;
}
// The elements a chunk aims at, of `elements` in all: `waves` waves of blocks of `threads`, from 4
// to kRowNormSplitItems elements a thread.
KILN_RULE constexpr long long rownorm_split_target(long long elements, int threads, int waves, int sm_count) {
  const long long blocks = 1LL * waves * (kRowNormSplitThreadsPerSm / threads) * sm_count;
  return max_ll(4LL * threads, min_ll(kRowNormSplitItems * threads, ceil_div(elements, blocks)));
}
// The waves of blocks the chunks aim at: one of ganged segments, two of split ones.
KILN_RULE constexpr int rownorm_split_waves(long long len) { return rownorm_split_ganged(len) ? 1 : 2; }
// Whole segments a chunk: 1 for segments of at least kRowNormSplitMinLen (split instead). `threads`
// and `waves`: the block and waves the chunks aim at (the tuner's picks; by default the rules').
KILN_RULE constexpr long long rownorm_split_gang(long long lead, long long outer, long long len, int sm_count,
                                                 int threads = kRowNormGangThreads, int waves = 1) {
  if (!rownorm_split_ganged(len)) return 1;
  const long long target = rownorm_split_target(lead * outer * len, threads, waves, sm_count);
  const long long want = min_ll(lead, ceil_div(target, len));
  return ceil_div(lead, ceil_div(lead, want));
}
// Elements of a segment a chunk (the whole segment where segments are ganged).
KILN_RULE constexpr long long rownorm_split_chunk(long long segments, long long len, int vec, int sm_count,
                                                  int threads = kRowNormSplitThreads, int waves = 2) {
  if (rownorm_split_ganged(len)) return len;
  const long long target = round_up_ll(rownorm_split_target(segments * len, threads, waves, sm_count), vec);
  // As many chunks a segment as the target asks, of one size (not a full one and a sliver).
  return round_up_ll(ceil_div(len, ceil_div(len, target)), vec);
}
KILN_RULE constexpr long long rownorm_split_splits(long long len, long long chunk) { return ceil_div(len, chunk); }
// Chunks in all, a block each (and a partial state each): the row's lead segments in gangs, each
// segment in splits.
KILN_RULE constexpr long long rownorm_split_blocks(long long lead, long long gang, long long outer, long long splits) {
  return ceil_div(lead, gang) * outer * splits;
}
// [Note: split norm block order]
// Block s takes chunk s % splits of its row's gang by default: the blocks in flight stream one row
// (or a few) from end to end, whole DRAM pages at a time. Where the apply pass's epilogue reads an
// operand every row reads alike (a layer norm's gamma and beta over its normalized C, H, W), a row
// re-reads it from DRAM once a whole row's traffic has gone through L2 since the row before read
// it. With `rows_fastest` block s takes row s % outer instead, the blocks in flight take the same
// chunk of every row, and the shared operand is read from DRAM once and from L2 by the other rows.
// On an H100 (2026-12-06), 16x64x256x256 f32: the layer norm over C, H, W with 16 MiB each of
// gamma and beta took 0.298 ms rows-fastest against 0.385 by chunks (x 16 MiB a row: a row's
// apply pass moves 64 MiB, more than the 50 MiB of L2, before the next row reads gamma again); a
// layer norm of 16 x 1M with 4 MiB each (16 MiB a row's pass: the next row finds them in L2)
// 0.1223 against 0.1205 (no gain); the group norm (8 groups, gamma and beta of [C]: nothing
// shared worth L2) 0.2839 against 0.2834. So rows go fastest where the shared operands are at
// least kRowNormSharedMinBytes, a bound between the 8 and the 32 MiB measured (not swept; on a
// GPU with a smaller L2 it may be late).
constexpr long long kRowNormSharedMinBytes = 16LL << 20;
KILN_RULE constexpr bool rownorm_split_rows_fastest(long long shared_bytes) {
  return shared_bytes >= kRowNormSharedMinBytes;
}
// [Note: a block per row of short segments]
// A split norm's rows may each fit one block: a batch norm over small images (128 x 512 x 7 x 7:
// 512 rows of 128 segments of 49, 6272 elements a row; 128 x 256 x 14 x 14: 25088) has many rows
// of few elements. Its two kernels then spend more on their launches, their tails and the
// partial states than on the bytes. kSplitWhole takes a whole row a block (the chunk of
// split_chunk with gang = lead, splits = 1): its statistics, as the stats pass folds a chunk, then
// y, re-reading the row it just streamed (from L2). One kernel, no workspace, x read from DRAM once.
// The rule takes it where the rows give every SM a block (rows >= SMs) and a row is at most
// kRowNormWholeMaxLen elements (a bound chosen so that a wave's rows stay in L2 for the re-read,
// measured at 6272 and 25088); the block is the fewest of 256, 512, 1024 threads that hold the row
// at kRowNormSplitItems a thread (7x7: 256, 14x14: 512). On an H100 (2026-12-06, kiln tune, every
// pick in one process; bench/results/2026-12-06-h100-run10/): 128 x 512 x 7 x 7 took 0.0202 ms a
// block a row of 256 (512: 0.0214, 1024: 0.0258) against 0.0308 for the best split pick; 128 x
// 256 x 14 x 14 0.0231 a block a row of 512 (1024: 0.0301) against 0.0354. Its pick is waves 0
// (kRowNormWholeWaves); the tuner offers it for any ganged row of at most kRowNormSplitItems a
// thread of the pick's block.
constexpr long long kRowNormWholeMaxLen = 32768;
constexpr int kRowNormWholeWaves = 0;   // SplitNormPick::waves of a block per row
KILN_RULE constexpr bool rownorm_split_whole_fits(long long lead, long long len, int threads) {
  return rownorm_split_ganged(len) && lead * len <= kRowNormSplitItems * threads;
}
KILN_RULE constexpr bool rownorm_split_whole(long long lead, long long outer, long long len, int sm_count) {
  return outer >= sm_count && rownorm_split_ganged(len) && lead * len <= kRowNormWholeMaxLen;
}
KILN_RULE constexpr int rownorm_split_whole_threads(long long lead, long long len) {
  for (int t = 256; t < 1024; t *= 2)
    if (rownorm_split_whole_fits(lead, len, t)) return t;
  return 1024;
}
KILN_RULE constexpr Geometry rownorm_split_geometry(long long blocks, int threads) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = min_ll(blocks, kMaxGridX);
  return g;
}
// Bytes of the partial states: (count, mean, squared deviations) of `c`-byte values a chunk.
KILN_RULE constexpr long long rownorm_split_workspace_bytes(long long blocks, int c) { return blocks * 3LL * c; }

// Strided rows ([outer, len, inner], normalize along len): one thread per column.
KILN_RULE constexpr Geometry rownorm_strided_geometry(long long outer, long long inner, int threads) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = min_ll(ceil_div(outer * inner, threads), kMaxGridX);
  return g;
}

}  // namespace launch

KILN_RULE constexpr launch::Geometry rownorm_geometry(const RownormConfig& c) {
  switch (c.variant) {
    case RownormVariant::kWarpRows: return launch::rownorm_warp_geometry(c.outer, c.threads);
    case RownormVariant::kBlockRows: return launch::rownorm_block_geometry(c.outer, c.threads);
    case RownormVariant::kSplitStats:
    case RownormVariant::kSplitApply:
    case RownormVariant::kSplitWhole:   // (gang lead, splits 1: a block a row)
      return launch::rownorm_split_geometry(launch::rownorm_split_blocks(c.lead, c.gang, c.outer, c.splits), c.threads);
    default: return launch::rownorm_strided_geometry(c.outer, c.inner, c.threads);
  }
}

}  // namespace kiln
