// kiln/config/scan.h — the scan family (scan.cuh): its typed config and the launch rules that
// pick the variant and its numbers. See config.h for the pattern.
//
// One ScanConfig for all five kernels: a contiguous-row scan (block per row or decoupled
// look-back), the strided-axis scan with its optional first phase (scan_strided_totals, then
// scan_strided with the same config but the kStrided variant), and the strided look-back
// (scan_strided_lookback: chunk is its tile's rows, chunks its tiles down a column). The fields a
// variant does not use keep their defaults (vecs for the strided scans, unroll and chunks for the
// row scans).
#pragma once

#include "kiln/config/config.h"

namespace kiln {

enum class ScanVariant {
  kRowsBlock,       // scan_rows_block: a block per contiguous row
  kRowsLookback,    // scan_rows_lookback: a block per tile, decoupled look-back (zeroed workspace)
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
#define KILN_SCAN_FIELDS(X)                                                                            \
  X(ScanVariant, variant, ScanVariant::kRowsBlock)                                                     \
  X(long long, outer, 1)                                                                               \
  X(long long, len, 1)                                                                                 \
  X(long long, inner, 1)                                                                               \
  X(int, threads, 256)     /* block size */                                                            \
  X(int, vecs, 1)          /* rows: 16-byte vectors a thread per tile */                               \
  X(int, unroll, 1)        /* strided: loads in flight a thread */                                     \
  X(long long, chunks, 1)  /* strided: chunks along the axis (grid.y; look-back: tiles a column) */    \
  X(long long, chunk, 0)   /* strided: scan steps a chunk (look-back: a tile's rows) */
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
// Tile `id` is block `id`. Blocks start in blockIdx order, so the tiles a block waits on belong
// to blocks that started before it and publish without waiting: the walk ends. CUB's single-pass
// scan relies on the same order. Before 2026-11-29 a block took its tile number from a counter
// in the workspace (an atomicAdd, then a barrier): on an H200 under a full-bandwidth scan that
// round trip took 1.6 us (median) of a block's 9.6 us, before its first load.
// A walking warp reads kScanLookbackDepth tiles a lane a round (128 tiles a round trip). Deeper
// rounds (8, 16) and a __nanosleep back-off between reads of an empty status were slower or no
// faster (bench/results/2026-11-29-h200-run3/).
constexpr int kScanLookbackDepth = 4;
KILN_RULE constexpr bool scan_lookback_packed(int value_bytes) { return value_bytes <= 4; }
KILN_RULE constexpr long long scan_lookback_flag_bytes(long long tiles) { return ceil_div(tiles * 4, 16) * 16; }
KILN_RULE constexpr long long scan_lookback_value_bytes(long long tiles, int value_bytes) {
  return ceil_div(tiles * value_bytes, 16) * 16;
}
KILN_RULE constexpr long long scan_lookback_workspace_bytes(long long rows, long long len, long long tile, int value_bytes) {
  const long long tiles = rows * ceil_div(len, tile);
  return scan_lookback_packed(value_bytes) ? ceil_div(tiles * 8, 16) * 16
                                           : scan_lookback_flag_bytes(tiles) + 2 * scan_lookback_value_bytes(tiles, value_bytes);
}
// [Note: look-back tiles in shared memory]
// A look-back block holds its tile from its loads until its stores, through the walk (a few L2
// round trips, each 1-2 us while the scan streams at full bandwidth). So its bandwidth is the
// tile bytes an SM holds divided by a block's lifetime. Held in registers (a 32 KiB tile, 2 blocks
// an SM at 128 registers a thread) the scan ran at 32-61% of copy on an H200; the same blocks
// without the walk at 96%. So the tile of 16-byte vectorizable rows is copied into shared
// memory with cp.async (no registers while in flight), converted there in place, and a thread
// holds only one slice in registers at a time: kScanLookbackStageBytes of shared memory a block,
// scan_lookback_blocks_per_sm blocks an SM (__launch_bounds__ caps the registers to fit them).
// Measured on an H200, cumsum of 4 x 2^26 f32 (bench/results/2026-11-29-h200-run3/scan_check.txt,
// against a copy at 4.24 TB/s): 0.729 ms (70% of copy) at 6 blocks of 256 x 8 vectors, 0.843 at
// 4, 0.934 with 256 x 4 vectors; the tiles in registers took 1.51-1.70 ms (256 x 2, before),
// 0.83-1.04 (256 x 8, 2-3 blocks an SM); the same tiles without the walk 0.524 (96%).
// 8-byte values (f64, i64) need more registers a slice: 4 blocks an SM (64 registers) keep them
// unspilled, where 6 (40 registers) spilled 128 bytes.
constexpr int kScanLookbackThreads = 256;
constexpr int kScanLookbackStageBytes = 32768;
KILN_RULE constexpr int scan_lookback_blocks_per_sm(int value_bytes) { return value_bytes <= 4 ? 6 : 4; }
// Vectors a thread: a tile of converted values fills kScanLookbackStageBytes (at least 1).
KILN_RULE constexpr int scan_lookback_vecs(int elem_bytes, int value_bytes) {
  return int(max_ll(1, kScanLookbackStageBytes / ((long long)kScanLookbackThreads * vec_elems(elem_bytes) * value_bytes)));
}
KILN_RULE constexpr Geometry scan_rows_lookback_geometry(long long rows, long long len, long long tile, int threads,
                                                         int value_bytes) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = rows * ceil_div(len, tile);   // at most kMaxGridX: tile id = blockIdx.x
  g.workspace_bytes = scan_lookback_workspace_bytes(rows, len, tile, value_bytes);
  g.zero_workspace = true;
  return g;
}

// ---------------------------------------------------------------- scan_strided
// A scan along a non-last axis ([outer, len, inner], inner > 1): a thread per column, a block
// of 256 threads (fewer, >= 32, when inner is narrow), like reduce_outer with kVec = 1.
KILN_RULE constexpr int scan_strided_threads(long long inner) {
  return inner >= 256 ? 256 : int(max_ll(32, ceil_div(inner, 32) * 32));
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
  g.workspace_bytes = scan_lookback_workspace_bytes(1, tiles * threads, 1, value_bytes);
  g.zero_workspace = true;
  return g;
}

}  // namespace launch

// The launch of a ScanConfig's kernel, for a streamed tensor of elem_bytes elements (it sets the
// look-back tile) and values (the combiner's C) of value_bytes.
KILN_RULE constexpr launch::Geometry scan_geometry(const ScanConfig& c, int elem_bytes, int value_bytes) {
  switch (c.variant) {
    case ScanVariant::kRowsBlock: return launch::scan_rows_block_geometry(c.outer, c.threads);
    case ScanVariant::kRowsLookback:
      return launch::scan_rows_lookback_geometry(c.outer, c.len, launch::scan_rows_tile(c.threads, c.vecs, elem_bytes),
                                                 c.threads, value_bytes);
    case ScanVariant::kStridedLookback:
      return launch::scan_strided_lookback_geometry(c.outer, c.len, c.inner, c.threads, c.chunk, value_bytes);
    default:   // kStridedTotals, kStrided: the same grid
      return launch::scan_strided_geometry(c.outer, c.inner, launch::ScanChunks{c.chunks, c.chunk}, c.threads,
                                           value_bytes);
  }
}

}  // namespace kiln
