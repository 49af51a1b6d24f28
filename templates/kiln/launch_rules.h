// kiln/launch_rules.h — host-side launch geometry of the memory-bound templates
// (reduce.cuh, scan.cuh, rownorm.cuh). Plain constexpr C++ with no includes, so the
// planner (generator/, no CUDA headers), the example units in tests/templates and
// bench/standalone/memtpl_check.cu all use the same numbers.
//
// [Note: how the numbers are chosen]
// H100 needs ~20-30 KB of loads in flight per SM to cover DRAM latency at full
// bandwidth. The templates put 16 bytes * kUnroll in flight per thread, so 2048
// resident threads (full occupancy) hold 64 KB with kUnroll = 4, and 1024 threads
// still hold 32 KB. The rules below therefore aim first at enough resident threads
// (rows or columns to fill every SM), and split the reduced axis across blocks only
// when the natural grid cannot fill the GPU, because a split costs a second launch.
#pragma once

// Host-only for the planner; host+device under nvcc/NVRTC so a unit may evaluate the rules in
// constant expressions (NVRTC rejects unannotated functions).
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KILN_RULE __host__ __device__
#else
#define KILN_RULE
#endif

namespace kiln {
namespace launch {

struct Dim3L {
  long long x = 1, y = 1, z = 1;
};

struct Geometry {
  Dim3L grid;
  Dim3L block;
  long long shared_bytes = 0;      // dynamic shared memory
  long long workspace_bytes = 0;   // scratch the planner allocates (0: none)
  bool zero_workspace = false;     // the workspace must be zeroed before every launch
};

// A generated unit's check that its own copy of a rule gives the launch the planner computed
// (the grid only when `with_grid`: with dyn dims it is a run-time value).
KILN_RULE constexpr bool same_launch(const Geometry& g, bool with_grid, long long gx, long long gy, long long gz,
                                     long long bx, long long by, long long bz, long long shared_bytes) {
  return (!with_grid || (g.grid.x == gx && g.grid.y == gy && g.grid.z == gz)) && g.block.x == bx &&
         g.block.y == by && g.block.z == bz && g.shared_bytes == shared_bytes;
}

KILN_RULE constexpr long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }
KILN_RULE constexpr long long min_ll(long long a, long long b) { return a < b ? a : b; }
KILN_RULE constexpr long long max_ll(long long a, long long b) { return a > b ? a : b; }
constexpr long long kMaxGridX = 2147483647LL;
constexpr long long kMaxGridY = 65535LL;

// Elements of a type of `elem_bytes` in one 16-byte vector.
KILN_RULE constexpr int vec_elems(int elem_bytes) { return 16 / elem_bytes; }

// ---------------------------------------------------------------- reduce_inner
// Template choice: a warp per row when there are enough rows to give every SM
// 32 warps (1024 threads), or the row is short; else a block per row, split
// along the row when even that leaves SMs idle.
KILN_RULE constexpr bool reduce_inner_use_warp(long long rows, long long len, int sm_count) {
  return rows >= 32LL * sm_count || len <= 2048;
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
// Split the reduced axis when outer*tiles blocks are fewer than one full wave
// (sm_count * 2048/threads resident blocks); each split keeps >= 8*unroll steps.
KILN_RULE constexpr OuterSplit reduce_outer_split(long long outer, long long red, long long inner, int threads, int vec,
                                        int unroll, int sm_count) {
  const long long tiles = ceil_div(inner, (long long)threads * vec);
  const long long blocks = outer * tiles;
  const long long wave = (long long)sm_count * (2048 / threads);
  long long splits = blocks >= wave ? 1 : ceil_div(wave, blocks);
  splits = min_ll(splits, max_ll(1, red / (8LL * unroll)));
  splits = min_ll(splits, kMaxGridY);
  return outer_split_of(red, splits);
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
KILN_RULE constexpr bool reduce_outer_use_rows(long long inner, int vec) { return vec == 1 && inner >= 2 * kOuterRowsThreads; }
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
  return elem_bytes == 4 && inner % 4 != 0 && inner >= 512 && aligned16;
}
// Threads: one tile (4 columns a thread) covers the row where 1024 threads can, else the fewest
// tiles, balanced (4097 columns: two tiles of 544 threads, not 1024 + a tile of one column).
// A multiple of 32 (whole warps shuffle).
KILN_RULE constexpr int reduce_outer_v4_threads(long long inner) {
  const long long tiles = ceil_div(inner, 4LL * kOuterV4MaxThreads);
  return int(min_ll(kOuterV4MaxThreads, ceil_div(ceil_div(inner, 4 * tiles), 32) * 32));
}
// Splits: about 4 blocks per SM (two 1024-thread blocks are resident per SM at <= 32
// registers), the number of rows of loads in flight being what bounds this sweep. On the H100
// (bench/results/2026-11-22-h100-run6, 128x4096x4095 at 1024 threads, unroll 2): 1 split
// 3.60 ms, 2 splits 3.08, 4 splits 3.01 (copy of the same bytes 2.84).
KILN_RULE constexpr OuterSplit reduce_outer_v4_split(long long outer, long long red, long long inner, int threads,
                                                    int sm_count) {
  const long long blocks = outer * ceil_div(inner, (long long)threads * 4);
  const long long max_splits = min_ll(kMaxGridY, max_ll(1, red / 16));
  const long long want = max_ll(1, min_ll(max_splits, (4LL * sm_count + blocks / 2) / blocks));
  return outer_split_of(red, want);
}

// reduce_finish: one thread per output.
KILN_RULE constexpr Geometry reduce_finish_geometry(long long n_out, int threads) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = min_ll(ceil_div(n_out, threads), kMaxGridX);
  return g;
}

// ---------------------------------------------------------------- scan_rows
// Tile = threads * items elements (items = vecs_per_thread * 16/elem_bytes).
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
KILN_RULE constexpr long long scan_lookback_workspace_bytes(long long rows, long long len, long long tile, int value_bytes) {
  const long long tiles = rows * ceil_div(len, tile);
  const long long flags = ceil_div(tiles * 4, 16) * 16;
  return 16 + flags + 2 * ceil_div(tiles * value_bytes, 16) * 16;
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
// Cut len into chunks when outer*tiles blocks are fewer than one full wave; each chunk keeps
// >= 8*unroll steps, and at most 128 chunks (each thread combines the totals before its chunk).
KILN_RULE constexpr ScanChunks scan_strided_chunks(long long outer, long long len, long long inner, int threads,
                                                   int unroll, int sm_count) {
  const long long blocks = outer * ceil_div(inner, threads);
  const long long wave = (long long)sm_count * (2048 / threads);
  long long chunks = blocks >= wave ? 1 : ceil_div(wave, blocks);
  chunks = min_ll(chunks, max_ll(1, len / (8LL * unroll)));
  chunks = min_ll(chunks, 128);
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
KILN_RULE constexpr long long round_up_ll(long long x, long long m) { return ceil_div(x, m) * m; }
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
KILN_RULE constexpr Geometry rownorm_block_geometry(long long rows, int threads) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = min_ll(rows, kMaxGridX);
  return g;
}
// Strided rows ([outer, len, inner], normalize along len): one thread per column.
KILN_RULE constexpr Geometry rownorm_strided_geometry(long long outer, long long inner, int threads) {
  Geometry g;
  g.block.x = threads;
  g.grid.x = min_ll(ceil_div(outer * inner, threads), kMaxGridX);
  return g;
}

}  // namespace launch
}  // namespace kiln
