// kiln/config/scan.h — the scan family (scan.cuh): its typed config and the launch rules that
// pick the variant and its numbers. See config.h for the pattern.
//
// One ScanConfig for all four kernels: a contiguous-row scan (block per row or decoupled
// look-back) and the strided-axis scan with its optional first phase (scan_strided_totals, then
// scan_strided with the same config but the kStrided variant). The fields a variant does not
// use keep their defaults (vecs for the strided scans, unroll and chunks for the row scans).
#pragma once

#include "kiln/config/config.h"

namespace kiln {

enum class ScanVariant {
  kRowsBlock,       // scan_rows_block: a block per contiguous row
  kRowsLookback,    // scan_rows_lookback: a block per tile, decoupled look-back (zeroed workspace)
  kStridedTotals,   // scan_strided_totals: phase 1 of a chunked strided scan, the chunk totals
  kStrided,         // scan_strided: a thread per column (after kStridedTotals when chunks > 1)
};

#if !defined(__CUDACC_RTC__)
inline const char* enum_name(ScanVariant v) {
  switch (v) {
    case ScanVariant::kRowsBlock: return "kRowsBlock";
    case ScanVariant::kRowsLookback: return "kRowsLookback";
    case ScanVariant::kStridedTotals: return "kStridedTotals";
    case ScanVariant::kStrided: return "kStrided";
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
  X(long long, chunks, 1)  /* strided: chunks along the axis (grid.y) */                               \
  X(long long, chunk, 0)   /* strided: scan steps a chunk */
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
// Workspace of the look-back scan: a 16-byte header (tile counter), then per tile a
// 4-byte flag, then the aggregates and inclusive prefixes (value_bytes each).
// Zero it (cudaMemsetAsync / cuMemsetD8Async) before every launch.
// scan.cuh's lookback_workspace lays the workspace out with the same two functions.
KILN_RULE constexpr long long scan_lookback_flag_bytes(long long tiles) { return ceil_div(tiles * 4, 16) * 16; }
KILN_RULE constexpr long long scan_lookback_value_bytes(long long tiles, int value_bytes) {
  return ceil_div(tiles * value_bytes, 16) * 16;
}
KILN_RULE constexpr long long scan_lookback_workspace_bytes(long long rows, long long len, long long tile, int value_bytes) {
  const long long tiles = rows * ceil_div(len, tile);
  return 16 + scan_lookback_flag_bytes(tiles) + 2 * scan_lookback_value_bytes(tiles, value_bytes);
}
KILN_RULE constexpr Geometry scan_rows_lookback_geometry(long long rows, long long len, long long tile, int threads,
                                               int value_bytes) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = rows * ceil_div(len, tile);
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

}  // namespace launch

// The launch of a ScanConfig's kernel, for a streamed tensor of elem_bytes elements (it sets the
// look-back tile) and values (the combiner's C) of value_bytes.
KILN_RULE constexpr launch::Geometry scan_geometry(const ScanConfig& c, int elem_bytes, int value_bytes) {
  switch (c.variant) {
    case ScanVariant::kRowsBlock: return launch::scan_rows_block_geometry(c.outer, c.threads);
    case ScanVariant::kRowsLookback:
      return launch::scan_rows_lookback_geometry(c.outer, c.len, launch::scan_rows_tile(c.threads, c.vecs, elem_bytes),
                                                 c.threads, value_bytes);
    default:   // kStridedTotals, kStrided: the same grid
      return launch::scan_strided_geometry(c.outer, c.inner, launch::ScanChunks{c.chunks, c.chunk}, c.threads,
                                           value_bytes);
  }
}

}  // namespace kiln
