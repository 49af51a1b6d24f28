// kiln/config/gemm.h — the gemm family (gemm.cuh, gemm_sm90.cuh): every kernel a matmul is planned
// as. See config.h for the pattern.
//
// One GemmConfig for the whole family, `kind` naming the template. The follow-up kernels
// (SplitKReduce, SplitKSoftmax, SoftmaxFinalize) and the SmallK pre-pass read a subset of the
// same fields (the shape, ldc, strideC, the split count, their own `threads`), and the planner
// builds them by copying the main kernel's config and changing `kind`: separate structs would
// repeat most of the fields and lose that copy. Fields a kind does not read keep their defaults
// (which kind reads what: the table at gemm_geometry). Buffers (operands, the workspace) are not
// here: they are the kernel's arguments.
//
// The shared-memory sizes are written once, below: the templates' kSmemBytes / kBytes are
// these functions, the planner sizes its launches (and picks its stages) with them, and every
// generated unit static_asserts that its Kernel::kSmemBytes equals the planner's shared bytes.
#pragma once

#include "kiln/config/config.h"

namespace kiln {

// Which template of the family.
enum class GemmKind : int {
  Gemm,             // gemm::Gemm: tiles of mma.sync, epilogue fused (and row statistics)
  SplitK,           // gemm::GemmSplitK: partial sums per K slice into the workspace
  SplitKReduce,     // gemm::SplitKReduce: adds the slices, applies the epilogue
  SplitKSoftmax,    // gemm::SplitKSoftmax: adds the slices, epilogue, softmax over rows
  SoftmaxFinalize,  // gemm::SoftmaxFinalize: normalizes rows from Gemm's row statistics
  SmallK,           // gemm::SmallK: all of K in one tile, persistent CTAs
  SmallKPrep,       // sm90::SmallKPrep: A and B^T to k-contiguous tf32 parts (workspace)
  SmallKWgmma,      // sm90::WgSmallK: persistent wgmma over SmallKPrep's workspace
  Wgmma,            // sm90::WgGemm
  WgmmaSplitK,      // sm90::WgGemmSplitK
  Tma,              // sm90::TmaGemm: TMA ring, a producer warpgroup, wgmma consumers, persistent
  OperandPrep,      // gemm::OperandPrep: an operand copied k-major, rows padded to 16 bytes, for Tma
  Gemv,             // gemm::Gemv (gemv.cuh): M or N <= kGemvMaxP, a memory-bound stream, f32 FMA
  GemvMma,          // gemm::GemvMma (gemv_mma.cuh): the same on mma.sync tf32 (f32 inputs, tf32 or 3xTF32)
};

// f32 products (kiln::Ieee / Tf32 / Tf32x3 in mma.cuh); 16-bit inputs ignore it.
enum class MmaPrecision : int { Ieee, Tf32, Tf32x3 };

// How an operand is stored (gemm::kRowMajor / kColMajor, same numbering).
enum class GemmLayout : int { RowMajor, ColMajor };

#if !defined(__CUDACC_RTC__)
inline const char* enum_name(GemmKind k) {
  switch (k) {
    case GemmKind::Gemm: return "Gemm";
    case GemmKind::SplitK: return "SplitK";
    case GemmKind::SplitKReduce: return "SplitKReduce";
    case GemmKind::SplitKSoftmax: return "SplitKSoftmax";
    case GemmKind::SoftmaxFinalize: return "SoftmaxFinalize";
    case GemmKind::SmallK: return "SmallK";
    case GemmKind::SmallKPrep: return "SmallKPrep";
    case GemmKind::SmallKWgmma: return "SmallKWgmma";
    case GemmKind::Wgmma: return "Wgmma";
    case GemmKind::WgmmaSplitK: return "WgmmaSplitK";
    case GemmKind::Tma: return "Tma";
    case GemmKind::OperandPrep: return "OperandPrep";
    case GemmKind::Gemv: return "Gemv";
    case GemmKind::GemvMma: return "GemvMma";
  }
  return "?";
}
inline const char* enum_name(MmaPrecision p) {
  return p == MmaPrecision::Ieee ? "Ieee" : p == MmaPrecision::Tf32 ? "Tf32" : "Tf32x3";
}
inline const char* enum_name(GemmLayout l) { return l == GemmLayout::RowMajor ? "RowMajor" : "ColMajor"; }
#endif

// A batch stride that spans a dyn M, N or K ([Note: dyn matmul extents] in gemm_store.cuh): the
// template computes it at run time as the operand's rows x cols (0 stays "broadcast").
inline constexpr long long kDynStride = -1;

#define KILN_GEMM_FIELDS(X)                                                                       \
  X(GemmKind, kind, GemmKind::Gemm)                                                               \
  X(MmaPrecision, precision, MmaPrecision::Tf32x3)                                                \
  X(int, elem_bytes, 4)             /* operand element size: 4 (f32) or 2 (f16, bf16) */          \
  X(GemmLayout, layout_a, GemmLayout::RowMajor)                                                   \
  X(GemmLayout, layout_b, GemmLayout::RowMajor)                                                   \
  X(long long, m, 1)                /* 0: dyn, read at run time (gemm_store.cuh's DynShape) */    \
  X(long long, n, 1)                                                                              \
  X(long long, k, 1)                                                                              \
  X(long long, batch, 1)            /* all batch dims, flattened; 0: dyn, as m */                 \
  X(long long, lda, 0)                                                                            \
  X(long long, ldb, 0)                                                                            \
  X(long long, ldc, 0)                                                                            \
  X(long long, stride_a, 0)         /* batch strides; 0 broadcasts; kDynStride: spans a dyn extent */ \
  X(long long, stride_b, 0)                                                                       \
  X(long long, stride_c, 0)                                                                       \
  X(int, bm, 0)                     /* CTA tile */                                                \
  X(int, bn, 0)                                                                                   \
  X(int, bk, 0)                                                                                   \
  X(int, wm, 0)                     /* warp tile (mma.sync kinds) */                              \
  X(int, wn, 0)                                                                                   \
  X(int, stages, 0)                 /* cp.async ring depth */                                     \
  X(int, b_stages, 0)               /* SmallKWgmma: the ring of B blocks */                       \
  X(int, split_k, 1)                /* K slices (split-K kinds, Tma, and their reduce) */         \
  X(bool, vec_a, false)             /* 16-byte loads of A / B, 16-byte stores of C */             \
  X(bool, vec_b, false)                                                                           \
  X(bool, vec_c, false)                                                                           \
  X(bool, stream_c, false)          /* streaming (evict-first) stores of C */                     \
  X(bool, row_stats, false)         /* Gemm: per-tile softmax row statistics */                   \
  X(int, threads, 0)                /* block of the follow-ups and the pre-pass */                \
  X(long long, tiles_n, 0)          /* SoftmaxFinalize: statistics per row */                     \
  X(int, group_m, 0)                /* Tma: tile rows per group of the rasterization */          \
  X(int, prep, 0)                   /* OperandPrep: the operand, kPrepA, kPrepB or kPrepBReversed */ \
  X(bool, swap_ab, false)           /* Tma: the engine computes Cᵀ = Bᵀ·Aᵀ (m, n, A, B swapped) */ \
  X(int, cluster_m, 1)              /* Tma: CTAs per cluster along M, sharing each B tile (multicast) */ \
  X(int, consumers_n, 1)            /* Tma: consumer warpgroups splitting the tile's columns (1, 2) */
KILN_CONFIG(GemmConfig, KILN_GEMM_FIELDS);

// ---------------------------------------------------------------- shared memory

// gemm.cuh's SmemTile<E, MN, BK, KContig>::kBytes: an MN x BK operand tile, rows padded so
// fragment loads are conflict-free and rows stay 16-byte aligned.
KILN_RULE constexpr int smem_tile_bytes(int elem_bytes, int mn, int bk, bool k_contig) {
  const int pad = k_contig ? (elem_bytes == 4 ? 4 : 8) : (elem_bytes == 4 ? 8 : 16);
  const int ld = (k_contig ? bk : mn) + pad;
  const int lines = k_contig ? mn : bk;
  return lines * ld * elem_bytes;
}

// gemm.cuh's TileEngine<...>::kSmemBytes: the Stages-deep ring of A and B tiles, or the row
// statistics' exchange buffer (BM rows x warps along N x (max, sum)) if that is larger.
KILN_RULE constexpr int tile_engine_smem(int elem_bytes, int bm, int bn, int bk, int wn, int stages, bool a_k_contig,
                                         bool b_k_contig) {
  const int stage = smem_tile_bytes(elem_bytes, bm, bk, a_k_contig) + smem_tile_bytes(elem_bytes, bn, bk, b_k_contig);
  const int stats = bm * (bn / wn) * 2 * 4;
  return stages * stage > stats ? stages * stage : stats;
}

// gemm.cuh's SmallK<...>::kSmemBytes: the A block [BM][K] (twice with a lo part) and two B
// blocks [K][BN], f32.
KILN_RULE constexpr int small_k_smem(int bm, int bn, int k, bool a_lo) {
  return (a_lo ? 2 : 1) * smem_tile_bytes(4, bm, k, true) + 2 * smem_tile_bytes(4, bn, k, false);
}

// gemm_sm90.cuh's WgEngine<...>::kSmemBytes: the cp.async ring of [rows][32 f32] tiles, a lo
// buffer for 3xTF32, and 1 KB to align the ring to the swizzle period.
KILN_RULE constexpr int wg_engine_smem(int bm, int bn, int stages, bool x3) {
  return (stages + (x3 ? 1 : 0)) * (bm + bn) * 128 + 1024;
}

// gemm_sm90.cuh's WgSmallK<...>::kSmemBytes: the A block and a BStages-deep ring of B blocks,
// each all of K in 32-wide k tiles (hi and lo parts for 3xTF32), and 1 KB for the alignment.
KILN_RULE constexpr int wg_small_k_smem(int bm, int bn, int b_stages, int k, bool x3) {
  return (x3 ? 2 : 1) * ((k + 31) / 32) * 128 * (bm + b_stages * bn) + 1024;
}

// One stage of gemm_tma.cuh's TmaEngine: an A (BM x BK) and a B (BN x BK) tile as the TMA unit
// writes them; 3xTF32 adds B's lo part (A is the f32 operand, split by the consumers). a_pad:
// rows of A loaded past BM (an m-major A whose tile starts off a 16-byte boundary, read from the
// boundary before it: [Note: NCHW x read in place] in config/conv.h).
KILN_RULE constexpr int tma_stage_bytes(int elem_bytes, int bm, int bn, int bk, bool x3, int a_pad = 0) {
  return (bm + a_pad + bn * (x3 ? 2 : 1)) * bk * elem_bytes;
}
// TmaEngine's kSmemBytes: the Stages-deep ring, 1 KB to align it to the swizzle period, and the
// full and empty mbarriers of every stage.
KILN_RULE constexpr int tma_gemm_smem(int elem_bytes, int bm, int bn, int bk, int stages, bool x3, int a_pad = 0) {
  return stages * tma_stage_bytes(elem_bytes, bm, bn, bk, x3, a_pad) + 1024 + stages * 2 * 8;
}
// 3xTF32 on the engine keeps its accumulators, the wgmma fragments and A's hi and lo parts in
// registers: one consumer warpgroup along N, at most 128 columns (no 128x256 tile).
constexpr int kTmaX3MaxCols = 128;
KILN_RULE constexpr bool tma_tile_fits_x3(int bn, int consumers_n) { return consumers_n == 1 && bn <= kTmaX3MaxCols; }
// TmaGemm's persistent grid: one CTA per work unit up to one per SM, in whole clusters. A unit is
// a cluster's cluster_m tiles along M (of one K slice, one batch).
KILN_RULE constexpr long long tma_gemm_units(const GemmConfig& c) {
  const long long rows = 1LL * c.bm * c.cluster_m;
  return (c.m + rows - 1) / rows * ((c.n + c.bn - 1) / c.bn) * c.batch * c.split_k;
}
KILN_RULE constexpr long long tma_gemm_ctas(const GemmConfig& c, int sm_count) {
  const long long clusters = sm_count / c.cluster_m;
  return (tma_gemm_units(c) < clusters ? tma_gemm_units(c) : clusters) * c.cluster_m;
}
// TmaGemm's consumer warpgroups: one per 64 rows of the tile and per 1 / consumers_n of its
// columns; its block: those and a producer warpgroup.
KILN_RULE constexpr int tma_gemm_consumers(int bm, int consumers_n) { return bm / 64 * consumers_n; }
KILN_RULE constexpr int tma_gemm_threads(int bm, int consumers_n) { return 128 * (tma_gemm_consumers(bm, consumers_n) + 1); }

// One TMA box of an operand tile (elements: `inner` along the contiguous dim, `outer` along the
// other). A k-contiguous operand tile of R rows is BK * elem / 128 boxes of 128 bytes of k x R
// rows; an m- or n-contiguous one (f16 / bf16) is R / 64 boxes of 64 elements x BK rows of k.
struct TmaBox {
  int inner, outer;
};
KILN_RULE constexpr TmaBox tma_box(int elem_bytes, int rows, int bk, bool k_contig) {
  return k_contig ? TmaBox{128 / elem_bytes, rows} : TmaBox{128 / elem_bytes, bk};
}

// Is k the contiguous dim of A (row-major) / of B (column-major)?
KILN_RULE constexpr bool gemm_a_k_contig(const GemmConfig& c) { return c.layout_a == GemmLayout::RowMajor; }
KILN_RULE constexpr bool gemm_b_k_contig(const GemmConfig& c) { return c.layout_b == GemmLayout::ColMajor; }
// 3xTF32 (f32 operands) on the TMA engine: the pre-pass splits each value into tf32 hi and
// lo = x - hi, hi parts first ([batches][rows][prep_ldw]), the lo parts after them (the same
// layout); the engine maps both as one tensor of 2 x batches, lo at batch index b + prep_batches.
KILN_RULE constexpr bool gemm_x3(const GemmConfig& c) {
  return c.elem_bytes == 4 && c.precision == MmaPrecision::Tf32x3;
}

// The same product with the operands' roles exchanged: Cᵀ = Bᵀ·Aᵀ (m and n, the operands'
// layouts, leading dims and batch strides swapped, swap_ab toggled). The TMA engine runs tf32
// a·b so (the planner's tma_view); applied twice it gives the product back.
KILN_RULE constexpr GemmLayout flip(GemmLayout l) {
  return l == GemmLayout::RowMajor ? GemmLayout::ColMajor : GemmLayout::RowMajor;
}
KILN_RULE constexpr GemmConfig swap_operands(const GemmConfig& c) {
  GemmConfig s = c;
  s.m = c.n, s.n = c.m;
  s.layout_a = flip(c.layout_b), s.layout_b = flip(c.layout_a);
  s.lda = c.ldb, s.ldb = c.lda;
  s.stride_a = c.stride_b, s.stride_b = c.stride_a;
  s.vec_a = c.vec_b, s.vec_b = c.vec_a;
  s.swap_ab = !c.swap_ab;
  return s;
}

// The dynamic shared memory of the config's kernel.
KILN_RULE constexpr long long gemm_smem(const GemmConfig& c) {
  switch (c.kind) {
    case GemmKind::Gemm:
    case GemmKind::SplitK:
      return tile_engine_smem(c.elem_bytes, c.bm, c.bn, c.bk, c.wn, c.stages, gemm_a_k_contig(c), gemm_b_k_contig(c));
    case GemmKind::SmallK: return small_k_smem(c.bm, c.bn, static_cast<int>(c.k), false);
    case GemmKind::SmallKWgmma:
      return wg_small_k_smem(c.bm, c.bn, c.b_stages, static_cast<int>(c.k), c.precision == MmaPrecision::Tf32x3);
    case GemmKind::Wgmma:
    case GemmKind::WgmmaSplitK: return wg_engine_smem(c.bm, c.bn, c.stages, c.precision == MmaPrecision::Tf32x3);
    case GemmKind::Tma:
      return tma_gemm_smem(c.elem_bytes, c.bm, c.bn, c.bk, c.stages, gemm_x3(c));
    default: return 0;   // the follow-ups and the pre-pass use static shared memory only
  }
}

// OperandPrep's operand (GemmConfig::prep): A, whose rows are m; B, whose rows are n; or B with its
// rows taken in reverse order (row r of the copy is row n - 1 - r of B): a transposed conv's
// filters, whose taps run backwards in the forward conv the TMA engine computes instead
// ([Note: a stride-1 transposed conv as a forward conv] in plan_contraction.cpp).
constexpr int kPrepA = 1, kPrepB = 2, kPrepBReversed = 3;
KILN_RULE constexpr bool prep_is_a(const GemmConfig& c) { return c.prep == kPrepA; }
KILN_RULE constexpr bool prep_reversed(const GemmConfig& c) { return c.prep == kPrepBReversed; }
// The operand as stored: its rows, row stride, batch stride, batches (1 when broadcast), and
// whether k is its contiguous dim ([rows][K]) or not ([K][rows]). It writes
// [batches][rows][prep_ldw] (k contiguous), which the TMA engine maps.
KILN_RULE constexpr long long prep_rows(const GemmConfig& c) { return prep_is_a(c) ? c.m : c.n; }
KILN_RULE constexpr long long prep_ld(const GemmConfig& c) { return prep_is_a(c) ? c.lda : c.ldb; }
KILN_RULE constexpr long long prep_stride(const GemmConfig& c) { return prep_is_a(c) ? c.stride_a : c.stride_b; }
// (Rows 0: a launch's rows and strides, PrepRows in gemm_prep.cuh; the batches are then the config's.)
KILN_RULE constexpr long long prep_batches(const GemmConfig& c) {
  return prep_stride(c) != 0 || prep_rows(c) == 0 ? c.batch : 1;
}
KILN_RULE constexpr bool prep_k_contig(const GemmConfig& c) {
  return prep_is_a(c) ? gemm_a_k_contig(c) : gemm_b_k_contig(c);
}
// The workspace's row length in elements: K rounded up to a multiple of 16 bytes (a tensor map's
// row stride must be one). The pre-pass writes rows this far apart, the planner sizes the
// workspace and the engine's map stride with it, and the launch covers it.
KILN_RULE constexpr long long prep_ldw(const GemmConfig& c) {
  const long long per_16_bytes = 16 / c.elem_bytes;
  return (c.k + per_16_bytes - 1) / per_16_bytes * per_16_bytes;
}

// ---------------------------------------------------------------- the skinny product (Gemv)

constexpr int kGemvMaxP = 16;      // Gemv: the skinny side (M or N) at most this
constexpr int kGemvThreads = 256;  // Gemv::kThreads: 8 warps
// A row dot's rows a warp carries times x's columns ([Note: rows a warp carries] in gemv.cuh):
// each lane keeps that many sums in registers.
constexpr int kGemvMaxWarpSums = 64;

// Gemv streams the larger operand ("big": A when N <= M, else B) against the small one ("x").
KILN_RULE constexpr bool gemv_big_is_a(const GemmConfig& c) { return c.n <= c.m; }
KILN_RULE constexpr long long gemv_rows(const GemmConfig& c) { return gemv_big_is_a(c) ? c.m : c.n; }
KILN_RULE constexpr int gemv_p(const GemmConfig& c) { return int(gemv_big_is_a(c) ? c.n : c.m); }
KILN_RULE constexpr bool gemv_big_k_contig(const GemmConfig& c) {
  return gemv_big_is_a(c) ? gemm_a_k_contig(c) : gemm_b_k_contig(c);
}
KILN_RULE constexpr long long gemv_ld_big(const GemmConfig& c) { return gemv_big_is_a(c) ? c.lda : c.ldb; }
KILN_RULE constexpr long long gemv_stride_big(const GemmConfig& c) { return gemv_big_is_a(c) ? c.stride_a : c.stride_b; }
KILN_RULE constexpr long long gemv_stride_x(const GemmConfig& c) { return gemv_big_is_a(c) ? c.stride_b : c.stride_a; }
// x(k, p) = X[k * gemv_x_k(c) + p * gemv_x_p(c)]: A(p, k) when x is A, B(k, p) when x is B.
KILN_RULE constexpr long long gemv_x_k(const GemmConfig& c) {
  return gemv_big_is_a(c) ? (gemm_b_k_contig(c) ? 1 : c.ldb) : (gemm_a_k_contig(c) ? 1 : c.lda);
}
KILN_RULE constexpr long long gemv_x_p(const GemmConfig& c) {
  return gemv_big_is_a(c) ? (gemm_b_k_contig(c) ? c.ldb : 1) : (gemm_a_k_contig(c) ? c.lda : 1);
}
// Elements per load of the big operand (vec_a / vec_b of the big one: 16 bytes, else 1) and of x.
KILN_RULE constexpr int gemv_vec(const GemmConfig& c) {
  return (gemv_big_is_a(c) ? c.vec_a : c.vec_b) ? 16 / c.elem_bytes : 1;
}
KILN_RULE constexpr bool gemv_vec_x(const GemmConfig& c) { return gemv_big_is_a(c) ? c.vec_b : c.vec_a; }
// Rows of the big operand per block: bm for the row dot (k contiguous), one warp of vectors for
// the column sweep.
KILN_RULE constexpr long long gemv_block_rows(const GemmConfig& c) {
  return gemv_big_k_contig(c) ? c.bm : 32LL * gemv_vec(c);
}
// The rows each warp of a row dot carries: block_rows / 8 where they pass the block's 8 warps
// ([Note: rows a warp carries] in gemv.cuh), else 1 (block_rows a block, 8 / block_rows warps a
// row); 1 in a column sweep (big_k_contig false). Gemv's kWarpRows.
KILN_RULE constexpr int gemv_rows_a_warp(bool big_k_contig, long long block_rows) {
  return big_k_contig && block_rows > kGemvThreads / 32 ? int(block_rows / (kGemvThreads / 32)) : 1;
}
KILN_RULE constexpr int gemv_warp_rows(const GemmConfig& c) { return gemv_rows_a_warp(gemv_big_k_contig(c), c.bm); }

// GemvMma ([Note: skinny products on the tensor cores] in gemv_mma.cuh): a block of kGemvThreads
// takes bm rows of the big operand (16 a warp, or 32), each step 32 k of them against x staged in
// shared memory kGemvMmaChunk k at a time (tf32 hi and, in 3xTF32, lo parts, columns padded to 8).
constexpr int kGemvMmaStep = 32;
constexpr int kGemvMmaChunk = 256;
KILN_RULE constexpr int gemv_mma_tiles_a_warp(long long block_rows) {
  return int(block_rows / (16LL * (kGemvThreads / 32)));
}
// The k range of each K slice: the slices' share of k rounded up to whole steps.
KILN_RULE constexpr long long gemv_mma_slice(long long k, int split_k) {
  return ((k + split_k - 1) / split_k + kGemvMmaStep - 1) / kGemvMmaStep * kGemvMmaStep;
}

// ---------------------------------------------------------------- launch

constexpr int kSmallKPrepThreads = 256;   // SmallKPrep::kThreads
constexpr int kSmallKPrepCols = 32;       // SmallKPrep::kCols: B columns per CTA
constexpr int kSplitKReduceThreads = 256;
constexpr int kPrepTile = 32;             // OperandPrep::kTile: 32 rows of the operand per CTA
constexpr int kOperandPrepThreads = 256;

// The k extent of one OperandPrep CTA: a 32 x 32 tile through shared memory when k is not the
// stored contiguous dim, otherwise 32 16-byte vectors of k per row (a warp's coalesced 512 bytes).
KILN_RULE constexpr long long prep_k_block(const GemmConfig& c) {
  return prep_k_contig(c) ? kPrepTile * (16 / c.elem_bytes) : kPrepTile;
}
// OperandPrep's vector transpose: an f32 operand whose k is strided, read 4 rows (16 bytes) at a
// time and written 4 k at a time, where its rows, row stride and batch stride are multiples of 4
// elements and it is 16-byte aligned (vec_a / vec_b of the operand). It moves kPrepVecRows rows
// of the operand per CTA; the scalar transpose moves kPrepTile. (Reversed rows take the scalar
// transpose: a 4-row vector would land backwards.)
constexpr int kPrepVecRows = 64;
KILN_RULE constexpr bool prep_vec_transpose(const GemmConfig& c) {
  return !prep_k_contig(c) && !prep_reversed(c) && c.elem_bytes == 4 && (prep_is_a(c) ? c.vec_a : c.vec_b) &&
         prep_rows(c) % 4 == 0;
}
KILN_RULE constexpr long long prep_row_block(const GemmConfig& c) {
  return prep_vec_transpose(c) ? kPrepVecRows : kPrepTile;
}

// The launch of the config's kernel. Persistent kinds (SmallK, SmallKWgmma) run at most
// `ctas_per_sm` CTAs on each of `sm_count` SMs.
//   Gemm, SplitK:          grid (tiles N, tiles M, batch * split_k), 32 * warps threads
//   Wgmma, WgmmaSplitK:    the same grid, a warpgroup per 64 rows
//   SmallK, SmallKWgmma:   min(tiles, ctas_per_sm * sm_count) persistent CTAs
//   Tma:                   min(tiles of all batches x split_k, sm_count) persistent CTAs
//   SmallKPrep:            B column blocks, then A blocks of 8 elements a thread
//   SplitKReduce:          a thread per output; SplitKSoftmax, SoftmaxFinalize: a CTA per row
//   OperandPrep:           (row blocks of 32, or 64 for the vector transpose, k blocks over the
//                          padded row, batches of the operand); a k block is 32 k (transpose) or
//                          32 16-byte vectors (pitched copy)
//   Gemv, GemvMma:         (blocks of the big operand's rows, split_k, batch)
KILN_RULE constexpr launch::Geometry gemm_geometry(const GemmConfig& c, int sm_count, int ctas_per_sm) {
  launch::Geometry g;
  g.shared_bytes = gemm_smem(c);
  const long long tiles_m = c.bm > 0 ? launch::ceil_div(c.m, c.bm) : 0;
  const long long tiles_n = c.bn > 0 ? launch::ceil_div(c.n, c.bn) : 0;
  switch (c.kind) {
    case GemmKind::Gemm:
    case GemmKind::SplitK:
      g.block.x = 32LL * (c.bm / c.wm) * (c.bn / c.wn);
      g.grid = {tiles_n, tiles_m, c.batch * c.split_k};
      break;
    case GemmKind::Wgmma:
    case GemmKind::WgmmaSplitK:
      g.block.x = 128LL * c.bm / 64;
      g.grid = {tiles_n, tiles_m, c.batch * c.split_k};
      break;
    case GemmKind::Tma:
      g.block.x = tma_gemm_threads(c.bm, c.consumers_n);
      g.grid.x = tma_gemm_ctas(c, sm_count);
      break;
    case GemmKind::OperandPrep:
      g.block.x = c.threads;
      g.grid = {launch::ceil_div(prep_rows(c), prep_row_block(c)), launch::ceil_div(prep_ldw(c), prep_k_block(c)),
                prep_batches(c)};
      break;
    case GemmKind::SmallK:
      g.block.x = 32LL * (c.bm / c.wm) * (c.bn / c.wn);
      g.grid.x = launch::min_ll(tiles_m * tiles_n, 1LL * ctas_per_sm * sm_count);
      break;
    case GemmKind::SmallKWgmma:
      g.block.x = 128LL * c.bm / 64;
      g.grid.x = launch::min_ll(tiles_m * tiles_n, 1LL * ctas_per_sm * sm_count);
      break;
    case GemmKind::SmallKPrep:
      g.block.x = kSmallKPrepThreads;
      g.grid.x = launch::ceil_div(c.n, kSmallKPrepCols) + launch::ceil_div(c.m * c.k, kSmallKPrepThreads * 8LL);
      break;
    case GemmKind::SplitKReduce:
      g.block.x = c.threads;
      g.grid.x = launch::ceil_div(c.batch * c.m * c.n, c.threads);
      break;
    case GemmKind::SplitKSoftmax:
    case GemmKind::SoftmaxFinalize:
      g.block.x = c.threads;
      g.grid.x = c.batch * c.m;
      break;
    case GemmKind::Gemv:
      g.block.x = c.threads;
      g.grid = {launch::ceil_div(gemv_rows(c), gemv_block_rows(c)), c.split_k, c.batch};
      break;
    case GemmKind::GemvMma:
      g.block.x = c.threads;
      g.grid = {launch::ceil_div(gemv_rows(c), c.bm), c.split_k, c.batch};
      break;
  }
  return g;
}

}  // namespace kiln
