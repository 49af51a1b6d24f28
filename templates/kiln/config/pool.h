// kiln/config/pool.h — the pooling family (pool.cuh): max_pool / avg_pool over the last 1, 2 or 3
// axes, a run of outputs a thread step ([Note: pool runs], [Note: pool rows]), through an
// optional prologue (the operand inlined per load) and the fused epilogue. See config.h for the
// pattern.
#pragma once

#include "kiln/config/elementwise.h"

namespace kiln {

// The input seen as [planes, in_d, in_h, in_w] and the output as [planes, out_d, out_h, out_w],
// right-aligned: a 2-d pool has in_d = out_d = 1 (and kernel_d = stride_d = dilation_d = 1,
// padding_d = 0), a 1-d pool also in_h = out_h = 1. Window positions along an axis:
// o * stride - padding + j * dilation for j < kernel ([Note: pooling] in checker.cpp).
#define KILN_POOL_FIELDS(X)                                                                          \
  X(int, threads, 256)         /* block size */                                                      \
  X(bool, max, true)           /* max_pool (NaN-propagating), else avg_pool */                       \
  X(long long, planes, 1)      /* elements of the leading (batch, channel) axes */                   \
  X(long long, in_d, 1) X(long long, in_h, 1) X(long long, in_w, 1)                                  \
  X(long long, out_d, 1) X(long long, out_h, 1) X(long long, out_w, 1)                               \
  X(int, kernel_d, 1) X(int, kernel_h, 1) X(int, kernel_w, 1)                                        \
  X(int, stride_d, 1) X(int, stride_h, 1) X(int, stride_w, 1)                                        \
  X(int, padding_d, 0) X(int, padding_h, 0) X(int, padding_w, 0)                                    \
  X(int, dilation_d, 1) X(int, dilation_h, 1) X(int, dilation_w, 1)                                  \
  X(bool, include_pad, true)   /* avg: divide by the window clipped to the padded input */           \
  X(int, divisor, 0)           /* avg: divisor_override, 0 for none */                               \
  X(int, run, 1)               /* adjacent outputs along w a thread step computes (pool_run) */   \
  X(int, vec, 1)               /* elements of one 16-byte load of a run's columns (pool_vec); 1: element loads */ \
  X(int, rows, 1)              /* adjacent output rows along h a thread step computes (pool_rows) */   \
  X(bool, wide_stores, false)  /* a run's outputs stored as aligned vectors (pool_wide_stores) */
KILN_CONFIG(PoolConfig, KILN_POOL_FIELDS);

KILN_RULE constexpr long long pool_outputs(const PoolConfig& c) { return c.planes * c.out_d * c.out_h * c.out_w; }
// The block size: 512 threads for a window over three axes, else 256. `kiln tune` on an H100
// (bench/results/2026-12-06-h100-run7 and -run8: every candidate's output the heuristic's, byte
// for byte) found 512 faster for every 3x3x3 pool it timed and 256 within 3% of the best
// elsewhere: max_pool3d 1.057x (16x32 planes of 64³) and 1.087x (KernelBench 43, 1.871 -> 1.722
// ms), avg_pool3d 1.151-1.212x (64³) and 1.085x (KernelBench 46, 4.673 -> 4.306 ms).
KILN_RULE constexpr int pool_threads(int kernel_d) { return kernel_d > 1 ? 512 : 256; }
// Slot s of the right-aligned (d, h, w) extents: spatial axis i of a k-axis pool is slot 3 - k + i.
constexpr long long& pool_in_extent(PoolConfig& c, int s) { return s == 0 ? c.in_d : s == 1 ? c.in_h : c.in_w; }
constexpr long long& pool_out_extent(PoolConfig& c, int s) { return s == 0 ? c.out_d : s == 1 ? c.out_h : c.out_w; }
// kiln::PoolDyn's members (pool.cuh), in order: a dyn pool's KernelArg::DynValue arguments are named
// "pool_" and the member ([Note: dyn pooled axes] in plan_pool.cpp).
constexpr const char* kPoolDynFields[8] = {"in_d", "in_h", "in_w", "out_d", "out_h", "out_w", "runs_w", "rows_h"};

// Window extents up to kPoolUnrolled are unrolled whole (every load of a window in flight);
// longer ones loop, 4 positions a step: NVRTC took 4 minutes to unroll a 16384-wide window.
// A run's columns are held in registers only up to kPoolUnrolled of them.
constexpr int kPoolUnrolled = 64;
KILN_RULE constexpr int pool_unroll(int extent) { return extent <= kPoolUnrolled ? extent : 4; }
// Input columns (or rows) a run of `run` outputs along an axis spans: (run - 1) * stride + dilation * (kernel - 1) + 1.
KILN_RULE constexpr long long pool_span(int run, int kernel_w, int stride_w, int dilation_w) {
  return (run - 1) * (long long)stride_w + dilation_w * (long long)(kernel_w - 1) + 1;
}
// [Note: pool runs] Outputs along w per thread step, and how a run's columns are loaded.
// A run of adjacent outputs loads each input column of its windows once a row, into registers,
// instead of once per window. Loaded element by element, a run's loads are run * stride * 4 bytes
// apart across a warp, not contiguous. pool_vec: where every row starts 16-byte aligned (aligned
// pointers, in_w a multiple of the vector), a run is 16 bytes of outputs (vec elements) and loads
// its columns as aligned 16-byte vectors: a run's first column is ow0 * stride - padding with ow0
// a multiple of vec, so it sits the same (-padding mod vec) columns past an aligned one in every
// run, and a vector is wholly inside a row or wholly outside. A run computes all its outputs
// before it stores the first, so its stores issue back to back.
// Measured on an H200 (bench/standalone/pool_check.cu, 2026-11-28; ms, against a copy at 4.23
// TB/s; docs/notes/session-28.md has the whole table):
//   problem                         thread per output   run 4 by element   vector run 4
//   KB 41 max 1-d k8 s1 p4 d3             3.704              3.194              2.274
//   KB 42 max 2-d k4 s1 p1                4.834              2.274              2.262
//   KB 43 max 3-d k3 s2 p1 d3             2.054              3.055              1.329
//   KB 44 avg 1-d k8 s1 p4                2.342              1.187              1.116
//   KB 45 avg 2-d k11 s11                 4.042              9.237             13.853
//   KB 46 avg 3-d k3 s2 p1                4.103              5.410              2.509
//   max 2-d k3 s2 p1, 4096 x 256²         0.459              0.502              0.308
//   avg 2-d k8 s8, 4096 x 256²            0.274              1.078              0.375
// So vector runs wherever a row of a run loads at most kPoolRunVectors vectors (KB 41 loads 7
// and wins, avg k8 s8 loads 8 and KB 45 11, and lose: a warp's runs then spread over 32 lines a
// row), runs by element for stride 1 along w otherwise, and a thread per output for the rest.
// Storing each output as it was computed (between the divisions), KB 44's vector runs took
// 2.63 ms and held L2 at 97% of its throughput (4-byte stores 16 bytes apart, not merged).
constexpr int kPoolRunVectors = 7;
// The columns a vector run's first vector holds before the run's first one: -padding mod vec.
KILN_RULE constexpr int pool_misalignment(int vec, int padding_w) { return ((-padding_w) % vec + vec) % vec; }
// The vectors one row of a run loads: its misalignment, then its span, rounded up to whole vectors.
KILN_RULE constexpr long long pool_row_vectors(int vec, int padding_w, long long span) {
  return (pool_misalignment(vec, padding_w) + span + vec - 1) / vec;
}
// What the template can take (the tuner's picks: [Note: pool picks] in generator/plan/plan_pool.cpp),
// apart from what pays: vector runs of `16 / elem_bytes` where every row starts 16-byte aligned and
// a run's columns fit the registers (else 1); a run of `run` outputs loaded element by element
// where the row has them and their columns fit the registers.
KILN_RULE constexpr int pool_vec_width(int elem_bytes, bool aligned16, long long in_w, long long out_w, int kernel_w,
                                       int stride_w, int dilation_w) {
  const int v = 16 / elem_bytes;
  return aligned16 && v > 1 && in_w % v == 0 && out_w >= v && pool_span(v, kernel_w, stride_w, dilation_w) <= kPoolUnrolled
             ? v
             : 1;
}
KILN_RULE constexpr bool pool_run_fits(int run, long long out_w, int kernel_w, int stride_w, int dilation_w) {
  return run == 1 || (out_w >= run && pool_span(run, kernel_w, stride_w, dilation_w) <= kPoolUnrolled);
}
KILN_RULE constexpr int pool_vec(int elem_bytes, bool aligned16, long long in_w, long long out_w, int kernel_w,
                                 int stride_w, int dilation_w, int padding_w) {
  const int v = pool_vec_width(elem_bytes, aligned16, in_w, out_w, kernel_w, stride_w, dilation_w);
  return v > 1 && pool_row_vectors(v, padding_w, pool_span(v, kernel_w, stride_w, dilation_w)) <= kPoolRunVectors ? v : 1;
}
KILN_RULE constexpr int pool_run(int vec, long long out_w, int kernel_w, int stride_w, int dilation_w) {
  if (vec > 1) return vec;
  return stride_w == 1 && pool_run_fits(4, out_w, kernel_w, stride_w, dilation_w) ? 4 : 1;
}
KILN_RULE constexpr long long pool_run_span(const PoolConfig& c) {
  return pool_span(c.run, c.kernel_w, c.stride_w, c.dilation_w);
}
// [Note: pool rows] Where the windows of adjacent output rows overlap along h (KernelBench 42:
// k4 s1), a thread step computes `rows` output rows of its run: each input row they read is loaded
// once, folded along w per output, and folded into each output row whose window holds it. For max
// pools only: a max fold gives the same value in any grouping (the first maximum, the last NaN,
// of the window in row-major order, both ways), where a sum's rounding would change. Taken where
// it loads at most half the rows a thread per output row would. Measured on an H200
// (bench/results/2026-11-28-h200-run10/pool_check.txt, ms, vector runs of 1 row against 4):
// KB 42 (7 rows loaded for 16 read) 2.320 -> 1.492; max k3 s2 p1 (9 for 12) 0.308 -> 0.348 and
// KB 43 (11 for 12) 1.339 -> 1.891, both left at 1 row.
constexpr int kPoolRows = 4;
// Whether row t of the input rows a run of `rows` output rows spans (t = u * stride + j * dilation)
// is a window row of one of them.
KILN_RULE constexpr bool pool_row_used(int rows, int kernel_h, int stride_h, int dilation_h, int t) {
  for (int u = 0; u < rows; ++u)
    for (int j = 0; j < kernel_h; ++j)
      if (u * stride_h + j * dilation_h == t) return true;
  return false;
}
KILN_RULE constexpr long long pool_row_span(const PoolConfig& c) {
  return pool_span(c.rows, c.kernel_h, c.stride_h, c.dilation_h);
}
// The input rows a run of `rows` output rows loads.
KILN_RULE constexpr int pool_rows_loaded(int rows, int kernel_h, int stride_h, int dilation_h) {
  int n = 0;
  for (int t = 0; t < pool_span(rows, kernel_h, stride_h, dilation_h); ++t)
    n += pool_row_used(rows, kernel_h, stride_h, dilation_h, t) ? 1 : 0;
  return n;
}
// Whether the template can take runs of `rows` output rows (a max pool, the rows and the run's
// columns in registers), apart from whether they pay.
KILN_RULE constexpr bool pool_rows_fit(int rows, bool max, long long out_h, int kernel_h, int stride_h, int dilation_h,
                                       long long run_span) {
  return rows == 1 || (max && out_h >= rows && run_span <= kPoolUnrolled && kernel_h <= kPoolUnrolled &&
                       pool_span(rows, kernel_h, stride_h, dilation_h) <= kPoolUnrolled);
}
KILN_RULE constexpr int pool_rows(bool max, long long out_h, int kernel_h, int stride_h, int dilation_h,
                                  long long run_span) {
  return pool_rows_fit(kPoolRows, max, out_h, kernel_h, stride_h, dilation_h, run_span) &&
                 2 * pool_rows_loaded(kPoolRows, kernel_h, stride_h, dilation_h) <= kPoolRows * kernel_h
             ? kPoolRows
             : 1;
}
// [Note: pool wide stores] A run's outputs are adjacent in y, but with rows of an odd width
// (KernelBench 41-43: 65523, 511, 62) a run of 4 f32 outputs starts at any flat index mod 4, so
// its 16 bytes are not one aligned vector, and stored element by element a warp's 4-byte stores
// 16 bytes apart fill each 32-byte sector in four requests (L2 at 85% of its throughput on 41).
// With every pointer 16-byte aligned, a whole run is stored as aligned vectors instead: from each
// output, the most outputs (a power of two, at most 16 bytes, none past the run) whose flat index
// is a multiple of their number: 4 (a run at 0 mod 4), 2 + 2 (at 2), 1 + 2 + 1 (at 1 or 3).
// Where rows are a multiple of the run, every run is one 16-byte store. Measured on an H200
// (bench/standalone/pool_check.cu, bench/results/2026-12-04-h200-run28/; ms, stores element by
// element -> wide, after max.NaN): KB 42 in runs of 4 rows 1.743 -> 1.338, KB 41 1.911 -> 1.860,
// KB 43 1.287 -> 1.260; avg pools within 1% either way here (KB 44 1.144 -> 1.149, 46 2.604 ->
// 2.612), 3% slower on 46 in the KernelBench runner (its planes dyn, its index 64-bit).
// Tried for these pools and dropped (the same results folder, experiments/): each warp's runs
// transposed through shared memory into contiguous stores (41 1.88 -> 2.25 ms: the staging cost
// more than the sectors it saved; fully coalesced stores, values misplaced, were no faster than
// the wide ones on 41); runs of 8 or 16 outputs (their loads and stores 32 or 64 bytes apart
// across a warp: 41 1.81 -> 3.39 and 9.07 ms); a max fold by doubling (shared blocks of 2, 4, 8
// positions: 2% at most, nothing with runs of 4); a branch between the run's interior and its
// padded edges (41 1.88 -> 1.81, but 43 1.29 -> 1.71 with a branch per window row, which kept
// the rows' loads from being in flight together, and 2.08 with the body twice); and tiles, a
// block's warps taking 8 adjacent row groups over the same 32 runs so that the input rows
// adjacent groups share are read while in L1 (42 1.33 -> 1.25 in one call, 1.31 -> 1.36 in
// another; 46 2.64 -> 2.54 with a 32-bit index, 2.47 -> 2.50 with the 64-bit one its 2^31
// elements take).
KILN_RULE constexpr int pool_store_piece(int at, int left, int elem_bytes) {
  int w = 1;
  while (2 * w <= left && 2 * w * elem_bytes <= 16 && at % (2 * w) == 0) w *= 2;
  return w;
}
// Max pools only: avg pools measured no faster and up to 3% slower (KernelBench 46 in the runner,
// 2.686 -> 2.764 ms; 44 1.138 -> 1.147), where max pools gained on every shape measured.
KILN_RULE constexpr bool pool_wide_stores(bool max, bool aligned16, int run) {
  return max && aligned16 && run > 1 && (run & (run - 1)) == 0;
}

// Thread steps: one per run of outputs along w and rows along h (the last of a row or a plane may
// be short).
KILN_RULE constexpr long long pool_steps(const PoolConfig& c) {
  return c.planes * c.out_d * launch::ceil_div(c.out_h, c.rows) * launch::ceil_div(c.out_w, c.run);
}

// The launch: a thread step per run of outputs, grid-stride, sized as the elementwise family's
// scalar loop (a gather of one window per output; overlapping windows hit in L1/L2).
KILN_RULE constexpr launch::Geometry pool_geometry(const PoolConfig& c) {
  return launch::stream_geometry(pool_steps(c), c.threads);
}

}  // namespace kiln
