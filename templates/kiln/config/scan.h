// kiln/config/scan.h — the scan family (scan.cuh): its typed config and the launch rules that
// pick the variant and its numbers. See config.h for the pattern.
//
// One ScanConfig for all five kernels: a contiguous-row scan (block per row or decoupled
// look-back), the strided-axis scan with its optional first phase (scan_strided_totals, then
// scan_strided with the same config but the kStrided variant), and the strided look-back
// (scan_strided_lookback: chunk is its tile's rows, chunks its tiles down a column; the rows
// look-back: chunks is its persistent grid's most blocks). The fields a variant does not use keep
// their defaults (vecs for the strided scans, unroll and chunk for the row scans, chunks for the
// block-per-row scan).
#pragma once

#include "kiln/config/config.h"

namespace kiln {

enum class ScanVariant {
  kRowsBlock,       // scan_rows_block: a block per contiguous row
  kRowsLookback,    // scan_rows_lookback: a persistent grid claiming tiles, decoupled look-back (zeroed workspace)
  kStridedTotals,   // scan_strided_totals: phase 1 of a chunked strided scan, the chunk totals
  kStrided,         // scan_strided: a thread per column (after kStridedTotals when chunks > 1)
  kStridedLookback, // scan_strided_lookback: a block per tile of rows x columns, look-back per column
};

#if !defined(__CUDACC_RTC__)
inline const char* enum_name(ScanVariant v) {
  switch (v) {
    case ScanVariant::kRowsBlock: return "kRowsBlock";
    case ScanVariant::kRowsLookback: return "kRowsLookback";
    case ScanVariant::kStridedTotals: return "kStridedTotals";
    case ScanVariant::kStrided: return "kStrided";
    case ScanVariant::kStridedLookback: return "kStridedLookback";
  }
  return "?";
}
#endif

// The scanned tensor viewed as [outer, len, inner] (inner == 1: contiguous rows).
#define KILN_SCAN_FIELDS(X)                                                                           \
  X(ScanVariant, variant, ScanVariant::kRowsBlock)                                                    \
  X(long long, outer, 1)                                                                              \
  X(long long, len, 1)                                                                                \
  X(long long, inner, 1)                                                                              \
  X(int, threads, 256)     /* block size */                                                           \
  X(int, vecs, 1)          /* rows: 16-byte vectors a thread per tile */                              \
  X(int, unroll, 1)        /* strided: loads in flight a thread */                                    \
  X(long long, chunks, 1)  /* strided: chunks along the axis (grid.y; look-back: tiles a column); */  \
                           /* rows look-back: the persistent grid's most blocks */                    \
  X(long long, chunk, 0)   /* strided: scan steps a chunk (look-back: a tile's rows) */               \
  X(int, chunk_sms, 0)     /* strided, > 0: chunks per launch (scan_launch_chunks) on this many SMs */\
  X(bool, aligned, false)  /* rows: every row 16-byte vectorizable at every launch ([Note: rows */    \
                           /* known vectorizable] in plan_memory.cpp): no element-wise path */     \
  X(int, stages, 0)        /* rows look-back: shared stages (one tile each) a block */
KILN_CONFIG(ScanConfig, KILN_SCAN_FIELDS);

namespace launch {

// ---------------------------------------------------------------- scan_rows
// Tile = threads * items elements (items = vecs_per_thread * 16/elem_bytes); scan.cuh's
// kTile is this rule of its own kThreads, kVecs and sizeof(T).
KILN_RULE constexpr long long scan_rows_tile(int threads, int vecs, int elem_bytes) {
  return (long long)threads * vecs * vec_elems(elem_bytes);
}
// Look-back (scan_rows_lookback) when the rows are too few to give every SM two
// blocks and each row has several tiles; else a block per row (scan_rows_block).
KILN_RULE constexpr bool scan_use_lookback(long long rows, long long len, long long tile, int sm_count) {
  return rows < 2LL * sm_count && ceil_div(len, tile) >= 4;
}
KILN_RULE constexpr Geometry scan_rows_block_geometry(long long rows, int threads) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = min_ll(rows, kMaxGridX);
  return g;
}
// [Note: look-back tile status]
// The look-back workspace holds each tile's status; zero it (cuMemsetD32Async) before every
// launch. For values of at most 4 bytes (f32, i32 and the half types' f32) a status is one
// 8-byte word, the value's bits above a 4-byte flag, written and read whole
// (st/ld.relaxed.gpu.u64: a single access, so the value comes with its flag). Wider values keep a
// 4-byte flag a tile, then the aggregates and the inclusive prefixes (value_bytes each), the flag
// released after its value is stored and acquired before it is read: a second dependent load.
// scan.cuh's TileStatus lays the workspace out with these functions.
// Tiles are numbered in the order they are claimed from a counter after the statuses (row
// look-back: [Note: the warp-specialized look-back]), or by blockIdx (the strided look-back:
// blocks start in blockIdx order, as CUB's single-pass scan relies on). Either way the tiles a
// tile waits on were claimed (started) before it, and publish without waiting: the walk ends.
// A walking warp reads kScanLookbackDepth tiles a lane a round (128 tiles a round trip). Deeper
// rounds (8, 16) and a __nanosleep back-off between reads of an empty status were slower or no
// faster (bench/results/2026-11-29-h200-run3/).
constexpr int kScanLookbackDepth = 4;
KILN_RULE constexpr bool scan_lookback_packed(int value_bytes) { return value_bytes <= 4; }
KILN_RULE constexpr long long scan_lookback_flag_bytes(long long tiles) { return ceil_div(tiles * 4, 16) * 16; }
KILN_RULE constexpr long long scan_lookback_value_bytes(long long tiles, int value_bytes) {
  return ceil_div(tiles * value_bytes, 16) * 16;
}
KILN_RULE constexpr long long scan_lookback_status_bytes(long long tiles, int value_bytes) {
  return scan_lookback_packed(value_bytes) ? ceil_div(tiles * 8, 16) * 16
                                           : scan_lookback_flag_bytes(tiles) + 2 * scan_lookback_value_bytes(tiles, value_bytes);
}
// The row look-back's workspace: the statuses, then the 4-byte tile counter (16 bytes).
KILN_RULE constexpr long long scan_lookback_workspace_bytes(long long rows, long long len, long long tile, int value_bytes) {
  return scan_lookback_status_bytes(rows * ceil_div(len, tile), value_bytes) + 16;
}
// [Note: the warp-specialized look-back]
// A look-back tile must wait through its walk (a few L2 round trips, each 1-2 us while the scan
// streams at full bandwidth) before its stores, and a block that holds the tile through the walk
// holds its shared memory idle: at 6 blocks of 32 KiB an SM that scan ran at 69-70% of copy
// along 4 x 2^26 f32 on an H200 (CUB's DeviceScan::InclusiveSum 73-74% on 2^28 floats, the same
// GPU). So the walk has its own warp and the data warps go on:
// - A persistent grid (at most `chunks` blocks: the SMs times scan_lookback_blocks_per_sm) of
//   kScanLookbackThreads data threads and one walker warp, with kScanLookbackStages stages of
//   one tile each in dynamic shared memory (a tile's converted values fill
//   kScanLookbackStageBytes).
// - The data warps claim a tile from the workspace's counter (an atomicAdd, claims in order),
//   copy it into the next stage (16-byte cp.async where the rows are whole vectors, else 4- and
//   8-byte element copies, else loads through registers), convert it there in place, reduce it,
//   publish its aggregate (a row's first tile its prefix), and hand it to the walker (mbarriers,
//   one pair a stage: [Note: the look-back handshake] in kiln/scan.cuh). They store a stage's tile when they come back to that stage, its
//   prefix by then walked and published.
// - A tile is claimed only when its stage is free, so a tile's aggregate never waits on a walk
//   and walks never chain. Letting it wait (a second copy in flight, or claiming a step early),
//   or several walkers, were slower.
// Measured on an H200 (the prototype: bench/results/2026-11-29-h200-run5/; this template:
// -run6/): 78% of copy along 4 x 2^26 f32 (the block-per-tile scan before it 69%, CUB 73-74% on
// 2^28), 73% on 2^25 (64%), 63% on 2 x 2^22 (57%); 47% for cummax of 4 rows of 1000003 (element
// copies; 49% before: 492 tiles on 264 blocks take two rounds). 256 x 8 vectors with 3 stages at
// 2 blocks an SM was the best of the tiles and stages tried (1-6 stages, 128-512 data threads,
// 4-8 vectors).
constexpr int kScanLookbackThreads = 256;       // data threads; the block has a walker warp more
constexpr int kScanLookbackStages = 3;
constexpr int kScanLookbackStageBytes = 32768;  // a stage: one tile of converted values
KILN_RULE constexpr int scan_lookback_blocks_per_sm(int) { return 2; }
// Vectors a thread: a tile of converted values fills kScanLookbackStageBytes (at least 1).
KILN_RULE constexpr int scan_lookback_vecs(int elem_bytes, int value_bytes) {
  return int(max_ll(1, kScanLookbackStageBytes / ((long long)kScanLookbackThreads * vec_elems(elem_bytes) * value_bytes)));
}
// `threads` data threads; at most `blocks` blocks (a persistent grid: every block claims tiles
// until none is left); `stages` tiles of shared memory a block.
KILN_RULE constexpr Geometry scan_rows_lookback_geometry(long long rows, long long len, long long tile, int threads,
                                                         int value_bytes, long long blocks,
                                                         int stages = kScanLookbackStages) {
  Geometry g;
  g.block.x = threads + 32;
  g.grid.x = min_ll(min_ll(rows * ceil_div(len, tile), blocks), kMaxGridX);
  g.shared_bytes = stages * tile * value_bytes;
  g.workspace_bytes = scan_lookback_workspace_bytes(rows, len, tile, value_bytes);
  g.zero_workspace = true;
  return g;
}

// ---------------------------------------------------------------- scan_strided
// A scan along a non-last axis ([outer, len, inner], inner > 1): a thread per column, a block
// of 256 threads (fewer, >= 32, when inner is narrow), like reduce_outer with kVec = 1.
constexpr int kScanStridedMaxThreads = 256;
KILN_RULE constexpr int scan_strided_threads(long long inner) {
  return inner >= kScanStridedMaxThreads ? kScanStridedMaxThreads : int(max_ll(32, ceil_div(inner, 32) * 32));
}
struct ScanChunks {
  long long chunks = 1;
  long long chunk = 0;   // scan steps per chunk
};
// Cut len into chunks when outer*tiles blocks are fewer than one full wave, as [Note: cutting an
// axis against wave quantization] (launch_rules.h) picks; each chunk keeps >= 8*unroll steps, and
// at most 128 chunks (each thread combines the totals before its chunk).
KILN_RULE constexpr ScanChunks scan_strided_chunks(long long outer, long long len, long long inner, int threads,
                                                   int unroll, int sm_count) {
  const long long blocks = outer * ceil_div(inner, threads);
  const long long wave = (long long)sm_count * (2048 / threads);
  const long long chunks = wave_filling_parts(blocks, wave, min_ll(128, max_ll(1, len / (8LL * unroll))));
  const long long chunk = ceil_div(len, chunks);
  return ScanChunks{ceil_div(len, chunk), chunk};
}
// Both kernels (scan_strided_totals when chunks > 1, then scan_strided) use this grid; the
// workspace holds chunks*outer*inner totals of value_bytes each.
KILN_RULE constexpr Geometry scan_strided_geometry(long long outer, long long inner, const ScanChunks& s, int threads,
                                                   int value_bytes) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = outer * ceil_div(inner, threads);
  g.grid.y = s.chunks;
  g.workspace_bytes = s.chunks > 1 ? s.chunks * outer * inner * value_bytes : 0;
  return g;
}


// ---------------------------------------------------------------- scan_strided_lookback
// [Note: the strided look-back]
// The chunked strided scan reads x twice (chunk totals, then the scan): at most 2/3 of copy,
// 57% measured on an H200 for cumsum down the columns of 32768^2. The strided look-back reads it
// once: a block owns a tile of `chunk` rows by `threads` columns (a thread a column), copies it
// into shared memory (16-byte cp.async where every row is whole 16-byte vectors, else element by
// element), folds each column's aggregate, and chains the tiles down each column with a decoupled
// look-back per column: every column of every tile has its own status (TileStatus, the row
// look-back's: one 8-byte word, flag and value, for values of at most 4 bytes), so a thread
// publishes and walks its own column with no barrier, reading kScanLookbackDepth statuses down
// its column a round. Tile (o, r, ct) is block (o * chunks + r) * col_tiles + ct, so a tile's
// predecessors down its columns started before it. The workspace (the statuses of tiles *
// threads columns, scan_lookback_workspace_bytes) is zeroed before each launch.
// Statuses a tile rather than a column (a flag released by one thread after a barrier, a value
// a column, read after warp 0 found the flags: two round trips, two barriers, 12 bytes a column
// of each tile against 24 and an 8-byte memset here) ran at 80% of copy on 32768^2 and 69% on
// 8192 x 4096, against 86% and 77% with the packed column statuses (run 4, experiments/4); the
// tile pipeline without any look-back 97-98%.
// A tile's rows fill kScanStridedLookbackStageBytes with its converted values (and the raw ones
// beside them where the conversion widens), at most kScanStridedLookbackMaxRows: fewer rows mean
// more status traffic (two statuses written, at least one read, a column of each tile), and
// registers are capped for kScanStridedLookbackBlocksPerSm blocks an SM (what the stage lets
// 228 KiB hold).
// Measured on an H200 (bench/results/2026-11-29-h200-run4/scan_check.txt), cumsum down the
// columns of 32768^2 f32 against a copy: 86% at 40 rows and 5 blocks an SM, 83% at 32 rows and 6,
// 72% at 16; the chunked scan 58%. (With the tile statuses: 80%, 77%, 59%; a __threadfence before
// each flag's release cost 2-4 points more.)
// The look-back replaces the chunked scan only where its tiles are a whole block wide (inner >=
// 256) and fill two waves: the chunked scan was faster on 2048 x 1000 (208 tiles; 59% of copy
// against 51%), 513 x 3000 (156 tiles; 70% against 62%) and 4 x 65536 x 32 (tiles 32 columns
// wide; 34% against 27%), the look-back on 8 x 3000 x 999 (64% against 50%) and 8192 x 4096
// (75% against 59%).
constexpr int kScanStridedLookbackThreads = 256;
constexpr int kScanStridedLookbackStageBytes = 40960;
constexpr int kScanStridedLookbackMaxRows = 64;
constexpr int kScanStridedLookbackBlocksPerSm = 5;
// Shared-memory bytes a tile row of `threads` columns takes: the converted values, plus the raw
// ones where they differ in width (converted in place where they do not).
KILN_RULE constexpr long long scan_strided_lookback_row_bytes(int threads, int elem_bytes, int value_bytes) {
  return (long long)threads * (value_bytes + (elem_bytes == value_bytes ? 0 : elem_bytes));
}
KILN_RULE constexpr int scan_strided_lookback_rows(int threads, int elem_bytes, int value_bytes) {
  return int(max_ll(1, min_ll(kScanStridedLookbackMaxRows,
                              kScanStridedLookbackStageBytes /
                                  scan_strided_lookback_row_bytes(threads, elem_bytes, value_bytes))));
}
KILN_RULE constexpr long long scan_strided_lookback_tiles(long long outer, long long len, long long inner, int threads,
                                                          long long rows) {
  return outer * ceil_div(len, rows) * ceil_div(inner, threads);
}
KILN_RULE constexpr bool scan_strided_use_lookback(long long outer, long long len, long long inner, long long rows,
                                                   int sm_count) {
  return inner >= kScanStridedLookbackThreads &&
         scan_strided_lookback_tiles(outer, len, inner, kScanStridedLookbackThreads, rows) >=
             2LL * sm_count * kScanStridedLookbackBlocksPerSm;
}
// The grid, and the statuses of every column of every tile as the (zeroed) workspace.
KILN_RULE constexpr Geometry scan_strided_lookback_geometry(long long outer, long long len, long long inner, int threads,
                                                            long long rows, int value_bytes) {
  Geometry g;
  const long long tiles = scan_strided_lookback_tiles(outer, len, inner, threads, rows);
  g.block.x = threads;
  g.grid.x = tiles;
  g.workspace_bytes = scan_lookback_status_bytes(tiles * threads, value_bytes);
  g.zero_workspace = true;
  return g;
}

}  // namespace launch

// [Note: chunks per launch]
// A chunked strided scan over a dyn row count or a dyn inner extent ([Note: dyn rows], [Note: dyn
// inner extents] in generator/plan/plan_memory.cpp) is planned with the rule's count at its
// class's fewest blocks (`chunks`, the most any launch of the class takes). Each launch chunks as
// the rule does at its own rows and inner (chunk_sms > 0), at most that count: as many blocks as
// the specialized scan at those extents. Both kernels read the launch's count
// (KernelArg::Kind::LaunchSplits: scan_strided_totals' grid.y) and cut the axis by it
// (scan_launch_chunk), and the totals' workspace is sized by the launch. A launch whose blocks
// fill the GPU unchunked (a count of 1) has no totals to write: the totals kernel's grid is empty
// (grid.x 0), the runtime does not launch it, and scan_strided runs in one pass.
// (outer or inner 0: a dyn config's own, no launch's extents: the planned count.)
KILN_RULE constexpr launch::ScanChunks scan_launch_chunks(const ScanConfig& c) {
  if (c.chunk_sms <= 0 || c.outer <= 0 || c.inner <= 0) return launch::ScanChunks{c.chunks, c.chunk};
  const launch::ScanChunks s = launch::scan_strided_chunks(c.outer, c.len, c.inner, c.threads, c.unroll, c.chunk_sms);
  const long long chunk = launch::ceil_div(c.len, launch::min_ll(s.chunks, c.chunks));
  return launch::ScanChunks{launch::ceil_div(c.len, chunk), chunk};
}
// The steps of a chunk when the axis of `len` is cut into a launch's `chunks` (the kernels' body).
KILN_RULE constexpr long long scan_launch_chunk(long long len, long long chunks) { return launch::ceil_div(len, chunks); }

// The launch of a ScanConfig's kernel, for a streamed tensor of elem_bytes elements (it sets the
// look-back tile) and values (the combiner's C) of value_bytes.
KILN_RULE constexpr launch::Geometry scan_geometry(const ScanConfig& c, int elem_bytes, int value_bytes) {
  switch (c.variant) {
    case ScanVariant::kRowsBlock: return launch::scan_rows_block_geometry(c.outer, c.threads);
    case ScanVariant::kRowsLookback:
      return launch::scan_rows_lookback_geometry(c.outer, c.len, launch::scan_rows_tile(c.threads, c.vecs, elem_bytes),
                                                 c.threads, value_bytes, c.chunks, c.stages);
    case ScanVariant::kStridedLookback:
      return launch::scan_strided_lookback_geometry(c.outer, c.len, c.inner, c.threads, c.chunk, value_bytes);
    default: {   // kStridedTotals, kStrided: the same grid
      const launch::ScanChunks s = scan_launch_chunks(c);
      launch::Geometry g = launch::scan_strided_geometry(c.outer, c.inner, s, c.threads, value_bytes);
      if (c.variant == ScanVariant::kStridedTotals && s.chunks == 1) g.grid.x = 0;   // no totals to write
      return g;
    }
  }
}

}  // namespace kiln
