// kiln/gemm_tma.cuh — the Hopper GEMM engine: TMA loads into an mbarrier-guarded ring, a producer
// warpgroup, wgmma consumer warpgroups, persistent CTAs over grouped tiles (sm_90a only).
//
// ============================================================================================
// CONTRACT (what the emitter instantiates)
// --------------------------------------------------------------------------------------------
// kiln::sm90::TmaGemm<E, Index, M, N, K, Batch, kAKMajor, kBKMajor, kBatchA, kBatchB, ldc, strideC,
//                     BM, BN, BK, Stages, GroupM, SplitK, kX3, kVecC, kStreamC, kSwapAB, kCM, kCN>
//   template <class OutT, class Epi>
//   static __device__ void run(const TensorMap& a, const TensorMap& b, OutT* C, Epi epi,
//                              gemm::DynShape dyn = {});
// M, N, K or Batch 0: a dyn extent, read from `dyn` (and ldc 0 where it is one: [Note: dyn matmul
// extents] in gemm_store.cuh); the maps' extents are then the launch's, and the grid is any.
// C[batch](row, col) = epi(sum_k A(row, k) B(k, col), batch, row, col) for every batch, f32
// accumulation, stored through gemm::store_fragments (16-byte stores where kVecC).
// kX3 (3xTF32, E = float): the B map holds tf32 hi parts at batch index b and lo parts at
// b + (batches of B) (gemm::OperandPrep with kSplit writes them so); A is f32 as stored, split
// into hi and lo parts by the consumers ([Note: 3xTF32 with A split in registers]). Each k tile's
// d = a_lo b_hi + a_hi b_lo + a_hi b_hi (small terms first) starts from zero and is added to the
// f32 accumulator with ordinary adds once its batch completes (the tensor cores' own
// accumulation over a long K is not f32-exact: the same promotion as WgGemm's, [Note: promotion]
// in gemm_sm90.cuh).
// Split-K: split s of K (k tiles s * kKTiles / SplitK up to (s + 1) * kKTiles / SplitK, none
// empty) goes to C + s * Batch * M * N. The caller passes the f32 workspace as C, ldc = N,
// strideC = M * N and gemm::Identity, and a split-K reduce kernel adds the slices and applies the
// epilogue (also with SplitK = 1, where a softmax is fused into that reduce).
// kSwapAB: the engine's product is the op's Cᵀ (the planner swapped m and n and the operands,
// config/gemm.h's swap_operands): tile element (row, col) is stored at C[col * ldc + row] and the
// epilogue sees (col, row), the op's coordinates; split-K slices are the op's C as well.
// kCM: CTAs per cluster along M (1 or 2; the kernel is declared __cluster_dims__(kCM, 1, 1)). A
// unit is then the cluster's kCM tiles along M, one per CTA, and each CTA loads 1 / kCM of the
// shared B tile and multicasts it (the B map's box has BN / kCM rows when k-major).
// E: __half or __nv_bfloat16 (any layout), or float read as tf32: B k-major only (wgmma reads f32
// shared-memory operands k-major), A k-major or m-major (then through registers, [Note: tf32 A
// through registers]); 3xTF32 both k-major. The tensor maps (3-D, 128-byte swizzle, boxes from
// config/gemm.h's tma_box, the same the planner encodes):
//   a: kAKMajor ? dims {K, M, batches of A} : {M, K, batches of A}
//   b: kBKMajor ? dims {K, N, batches of B} : {N, K, batches of B}
// where an operand broadcast over the batch (kBatchX false) has one batch. Out-of-range rows,
// columns and k read as zeros, so any M, N, K works.
// kCN: consumer warpgroups along N (1, or 2 with BM = 64: each computes 64 x BN / 2 of the tile).
// Tiles: BM = 64 * consumer warpgroups along M (64 or 128), BN in {64, 128, 256}, BK * sizeof(E) a
// multiple of 128 (one or more swizzle atoms of k). Launch: kThreads = 128 * (BM / 64 * kCN + 1),
// dynamic shared memory kSmemBytes, any grid (persistent: CTA i takes tiles i, i + grid, ...),
// __launch_bounds__(kThreads, 1) so that setmaxnreg applies.
//
// [Note: the TMA engine]
// - Roles. Warpgroup 0 is the producer: it gives up registers (setmaxnreg.dec to 40) and one of
//   its threads issues every TMA copy. Warpgroups 1.. are consumers: they claim the registers
//   (232 each with two) and each issues wgmma m64nBNk* for its 64 rows of the tile, operands
//   straight from the ring's shared memory ([Note: wgmma operands in shared memory] in
//   wgmma.cuh). The stage handshake is [Note: the stage handshake] in tma.cuh.
// - Overlap. A consumer keeps one wgmma batch in flight: it waits for the batch of the previous
//   k tile (wait_group 1) and only then releases that stage to the producer. The producer runs up
//   to Stages k tiles ahead, across tile boundaries, so the next tile's operands load while the
//   consumers store this one.
// - Persistent CTAs, grouped rasterization. Tile t of all batches: batch t / (tiles per batch);
//   within a batch, GroupM rows of tiles are walked column by column, so the CTAs that run at
//   once share A row blocks and B column blocks in L2. With split-K, work unit u is split
//   u / kTiles of tile u % kTiles: the CTAs that run at once cover every tile of one k range, so
//   they share that range's A rows and B columns in L2.
// ============================================================================================
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/gemm.h"
#include "kiln/gemm_store.cuh"
#include "kiln/tma.cuh"
#include "kiln/wgmma.cuh"

namespace kiln {
namespace sm90 {

// The mainloop every TMA-engine kernel shares (TmaGemm below, TmaConv in conv_tma.cuh): the ring,
// the producer warpgroup, the wgmma consumers, the 3xTF32 promotion. A Problem says what a work
// unit is and where its tiles come from:
//   long long units();                             work units (persistent CTA b: b, b + grid, ...)
//   int k_begin(long long u), k_end(long long u);  the unit's k tiles [begin, end), never empty
//   void prefetch();                               its tensor maps into the descriptor cache
//   void load(u32 stage, u32 full, long long u, int kt);   one stage: A tile at `stage`, B at
//       stage + kABytes (3xTF32: B's lo tile at stage + kBLo), all on `full`, which the engine
//       has armed with kStageBytes
// and `store(u, acc, c, warp)` stores consumer warpgroup c's accumulators of unit u: its 64 x WN
// slab at (64 slab_m(c), WN slab_n(c)) of the tile, warp's 16 rows of it.
// kAPad (an m-major A through registers only): the stage's A tile holds BM + kAPad rows, and the
// Problem's `int a_shift(long long u, int kt)` (0 .. kAPad) says which row of it is the tile's
// first in k tile kt (an A copy that must start on a 16-byte boundary before it: [Note: NCHW x
// read in place] in config/conv.h).
// kCN consumer warpgroups split the tile's columns (each m64nWN, WN = BN / kCN), BM / 64 its rows;
// consumer c takes row slab c % (BM / 64) and column slab c / (BM / 64).
// The order of the rows a consumer that takes A through registers holds ([Note: tf32 A through
// registers]).
constexpr int kRowsSpread = 0, kRowsDense = 1, kRowsPairs = 2;
template <class E, int BM, int BN, int BK, int Stages, bool kAKMajor, bool kBKMajor, bool kX3,
          int kRowOrder = kRowsSpread, int kCM = 1, int kCN = 1, int kAPad = 0>
struct TmaEngine {
  static constexpr int kE = int(sizeof(E));
  static constexpr int kConsumersM = BM / 64, WN = BN / kCN;
  static constexpr int kConsumers = tma_gemm_consumers(BM, kCN);   // config/gemm.h
  static constexpr int kThreads = tma_gemm_threads(BM, kCN);   // config/gemm.h
  static constexpr int kSmemBytes = tma_gemm_smem(kE, BM, BN, BK, Stages, kX3, kAPad);
  static constexpr int kABytes = (BM + kAPad) * BK * kE, kBBytes = BN * BK * kE;
  // A and B tiles, then (kX3) B's lo tile: A is the f32 operand, split by the consumers.
  static constexpr int kBLo = kABytes + kBBytes;
  static constexpr int kStageBytes = tma_stage_bytes(kE, BM, BN, BK, kX3, kAPad);
  static constexpr int NT = WN / 8;
  using Mma = Wgmma<WN, E, kE == 2 && !kAKMajor, !kBKMajor>;   // (tf32 with A m-major: MmaRA below)
  static constexpr int kSteps = BK / Mma::kK;        // wgmma instructions per k tile
  static constexpr int kStepBytes = Mma::kK * kE;    // k-major: bytes of k per instruction
  static constexpr int kChunkBytes = BK * 128;       // mn-major: 64 elements of m or n x BK rows
  static constexpr int kAtom = 128 / kE;            // elements in one 128-byte swizzle atom row
  static constexpr int kConsumerRegs = kConsumers == 2 ? 232 : 240, kProducerRegs = 40;
  // tf32 with A m-major: the consumers load A into registers ([Note: tf32 A through registers]).
  static constexpr bool kARegs = kE == 4 && !kAKMajor;
  using MmaRA = WgmmaRegA<WN>;

  static_assert(BM == 64 || BM == 128, "BM: one or two consumer warpgroups");
  static_assert(kCM == 1 || kCM == 2, "a cluster of one or two CTAs along M");
  // (BN 32: the conv engine's tiles of at most 32 out channels, tf32 operands, one consumer along N.)
  static_assert(BN == 64 || BN == 128 || BN == 256 || (BN == 32 && kE == 4 && kCN == 1), "BN");
  static_assert((kCN == 1 || kCN == 2) && kConsumers <= 2 && WN >= 32, "at most two consumers of m64n32 or wider");
  static_assert(kBKMajor ? WN % 8 == 0 : WN % kAtom == 0, "a consumer's columns: whole swizzle groups or boxes of B");
  static_assert((BK * kE) % 128 == 0 && BK % Mma::kK == 0, "BK: whole 128-byte swizzle atoms of k");
  static_assert(kE == 2 || kBKMajor, "tf32 wgmma reads B k-major (A m-major goes through registers)");
  static_assert(!kX3 || (kE == 4 && kAKMajor && tma_tile_fits_x3(BN, kCN)),
                "3xTF32: f32 operands, both k-major, one consumer of at most kTmaX3MaxCols columns (config/gemm.h)");
  static_assert(kSmemBytes >= 1024 + Stages * kStageBytes + Stages * 16, "tma_gemm_smem");
  static_assert(kStageBytes == kBLo + (kX3 ? kBBytes : 0), "tma_stage_bytes");
  static_assert(kAPad == 0 || (kARegs && kCM == 1 && kAPad % kAtom == 0), "kAPad: whole boxes of an m-major A in registers");

  // Consumer c's row slab (of 64 rows) and column slab (of WN columns) of the tile. With one
  // consumer along N the column slab is a compile-time 0: a runtime one costs the 3xTF32 conv 3%
  // (descriptors recomputed in its register-bound k loop; measured, run 10).
  static __device__ __forceinline__ int slab_m(int c) {
    if constexpr (kCN == 1) return c;
    else return c % kConsumersM;
  }
  static __device__ __forceinline__ int slab_n(int c) {
    if constexpr (kCN == 1) return 0;
    else return c / kConsumersM;
  }

  // The descriptors of wgmma step `kk` of a stage, for consumer warpgroup `c`.
  static __device__ __forceinline__ u64 desc_a(u32 stage, int c, int kk) {
    if constexpr (kAKMajor) {
      const int byte = kk * kStepBytes;
      return descriptor(stage + (byte / 128) * BM * 128 + slab_m(c) * 64 * 128 + byte % 128);
    } else {
      return descriptor_mn(stage + slab_m(c) * kChunkBytes + kk * (Mma::kK / 8) * 1024, kChunkBytes);
    }
  }
  static __device__ __forceinline__ u64 desc_b(u32 stage, int c, int kk, int offset = kABytes) {
    const u32 sb = stage + offset;
    if constexpr (kBKMajor) {
      const int byte = kk * kStepBytes;
      return descriptor(sb + (byte / 128) * BN * 128 + slab_n(c) * WN * 128 + byte % 128);
    } else {
      return descriptor_mn(sb + slab_n(c) * (WN / kAtom) * kChunkBytes + kk * (Mma::kK / 8) * 1024, kChunkBytes);
    }
  }

  // [Note: tf32 A through registers]
  // tf32 wgmma reads shared-memory operands only k-major, but A may come from registers in any
  // order: an m-major f32 A tile (BM / 32 TMA boxes of 32 m x BK k rows, 128-byte swizzled) is
  // loaded by each consumer into the m16n8k8 fragment of WgmmaRegA, one 32-bit load per element.
  // Fragment row r = 16 warp + 8 h + g of the consumer's 64-row slab holds slab row a_row(warp,
  // g, h), a permutation chosen so that every load is free of bank conflicts: the 8 lanes of a
  // fixed t read two 16-byte chunks x and x ^ 4 of one k row (g < 4: m 4x + g, else 16 + 4x +
  // g - 4, in box q / 4 of the slab, x = q % 4 for q = 2 warp + h), and the rows of t = 0..3
  // (k & 7 = t, the swizzle's xor) put the four lane groups on the 8 distinct chunks, 32 banks.
  // The product does not care which rows the fragment holds; the store puts each row back where
  // it belongs (Rows). Two register sets alternate between k tiles: a wgmma in flight still reads
  // its set. That order is kRowsSpread; a C stored transposed (TransposedOut) takes another:
  // kRowsDense keeps the fragment's own order (8 consecutive rows per lane group: two-way bank
  // conflicts on the loads, but a store instruction then covers 8 consecutive C rows, a 32-byte
  // run of each of 4 columns); kRowsPairs gives lane g two adjacent rows (h = 0, 1), so that its
  // two values of a column are one 8-byte store (gemm::store_fragment_pairs): warp w's rows are
  // 0-7 and 16-23 of box w / 2 (8 more for odd w), lane g's 2 (g & 3) + h and 16 more for g >= 4.
  // The 8 lanes of a fixed t then read words 0 and 2 (h = 1: 1 and 3) of chunks {0, 1, 4, 5}
  // (odd w: {2, 3, 6, 7}), which the swizzle's xor by t maps onto each chunk twice over the four
  // t: two-way conflicts, as dense; a store instruction covers two 8-row runs of 4 columns.
  static __device__ __forceinline__ int a_row(int warp, int g, int h) {
    if constexpr (kRowOrder == kRowsDense) return 16 * warp + 8 * h + g;
    if constexpr (kRowOrder == kRowsPairs) return 32 * (warp >> 1) + 8 * (warp & 1) + 16 * (g >> 2) + 2 * (g & 3) + h;
    const int q = 2 * warp + h;
    return 32 * (q >> 2) + 4 * (q & 3) + (g & 3) + 16 * (g >> 2);
  }
  // Rows of the consumer's slab, in fragment order (gemm::store_fragments' Rows).
  struct Rows {
    int warp;
    __device__ __forceinline__ int operator()(int, int h, int g) const {
      return kARegs || kRowOrder == kRowsPairs ? a_row(warp, g, h) : 16 * warp + 8 * h + g;
    }
  };
  // One k tile's A fragments of consumer c, from the stage's m-major A tile.
  // shift: the tile's first row in the stage (kAPad; 0 otherwise).
  static __device__ __forceinline__ void load_a(u32 stage, int c, int warp, int lane, u32 (&a)[kSteps][4], int shift) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      int p = a_row(warp, g, h);
      u32 box;
      if constexpr (kAPad == 0) {
        box = stage + (2 * slab_m(c) + (p >> 5)) * kChunkBytes + (p & 3) * 4;
      } else {   // the stage row of the slab's row p: any row of the BM + kAPad (boxes of kAtom rows)
        p += 64 * slab_m(c) + shift;
        box = stage + (p >> 5) * kChunkBytes + (p & 3) * 4;
      }
      const int chunk = (p & 31) >> 2;
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int k = kk * 8 + t + 4 * half;
          a[kk][h + 2 * half] = ld_shared_u32(box + k * 128 + ((chunk ^ (k & 7)) << 4));
        }
    }
  }

  // A consumer warp no longer reads a stage: with a cluster, the stage's B tile came from every
  // CTA's producer (multicast), so every CTA's empty barrier hears of it.
  static __device__ __forceinline__ void release(u32 empty) {
    if constexpr (kCM == 1) {
      mbar_arrive(empty);
    } else {
#pragma unroll
      for (int r = 0; r < kCM; ++r) mbar_arrive_cluster(empty, u32(r));
    }
  }

  // 3xTF32: a completed k tile's d into the f32 accumulators.
  static __device__ __forceinline__ void promote(float (&acc)[NT][4], float (&d)[NT][4]) {
    fence_accumulators(d);
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[j][r] += d[j][r];
  }
  // [Note: 3xTF32 with A split in registers]
  // kX3: the stage's A tile is the raw f32 operand (k-major, 128-byte swizzled); only B comes
  // as tf32 hi and lo tiles. Each consumer loads its 64 rows of A into WgmmaRegA's m16n8k8
  // fragments (fragment row 16 warp + 8 h + g is slab row p, so p & 7 = g: the 8 lanes of a fixed
  // t read 8 rows whose swizzle puts them on 8 distinct 16-byte chunks, 32 banks in all; with
  // kRowsPairs, for a C stored transposed in 8-byte pairs, fragment rows are a_row's and p & 7
  // takes 4 values: two-way conflicts) and
  // splits each value as OperandPrep would (tf32_split). So A needs no pass before the engine, and
  // wgmma reads only B from shared memory. The registers hold one k tile's d and A parts beside acc
  // (64 + 64 + 32 for m64n128), so a consumer waits for its own batch before loading the next k
  // tile; the other consumer's batch keeps the tensor cores busy meanwhile.
  static __device__ __forceinline__ void load_a_split(u32 stage, int c, int warp, int lane, u32 (&hi)[kSteps][4],
                                                      u32 (&lo)[kSteps][4]) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int p = 64 * slab_m(c) + (kRowOrder == kRowsPairs ? a_row(warp, g, h) : 16 * warp + 8 * h + g);
      const u32 row = stage + p * 128 + 4 * t;
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int k4 = kk * 8 + 4 * half;   // the lanes' k: k4 + t, in one 16-byte chunk
          const u32 x = ld_shared_u32(row + (k4 / 32) * BM * 128 + (((k4 % 32 / 4) ^ (p & 7)) << 4));
          tf32_split(__uint_as_float(x), hi[kk][h + 2 * half], lo[kk][h + 2 * half]);
        }
    }
  }
  static __device__ __forceinline__ void run_split_tile(u32 base, u32 bars, int c, int warp, int lane, int kt0,
                                                        int kt1, int& use, float (&acc)[NT][4]) {
    float d[NT][4];
    u32 hi[kSteps][4], lo[kSteps][4];
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[j][r] = 0.f;
    for (int kt = kt0; kt < kt1; ++kt, ++use) {
      const int s = use % Stages;
      mbar_wait(bars + 8 * s, (use / Stages) & 1);
      const u32 stage = base + s * kStageBytes;
      load_a_split(stage, c, warp, lane, hi, lo);
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk) {   // small terms first: a_lo b_hi, a_hi b_lo, then a_hi b_hi
        MmaRA::run(d, lo[kk], desc_b(stage, c, kk), kk > 0);
        MmaRA::run(d, hi[kk], desc_b(stage, c, kk, kBLo), true);
        MmaRA::run(d, hi[kk], desc_b(stage, c, kk), true);
      }
      wg_commit();
      wg_wait<0>();
      keep_live(hi);
      keep_live(lo);
      if (lane == 0) release(bars + 8 * (Stages + s));
      promote(acc, d);
    }
  }

  // The k tiles [kt0, kt1) of one unit into acc, A through registers: one wgmma batch in flight,
  // its register set kept live (keep_live) until the batch has completed.
  static __device__ __forceinline__ void step_ra(u32 stage, int c, int warp, int lane, bool first, u32 (&cur)[kSteps][4],
                                                 float (&acc)[NT][4], int shift) {
    load_a(stage, c, warp, lane, cur, shift);
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) MmaRA::run(acc, cur[kk], desc_b(stage, c, kk), !first || kk > 0);
    wg_commit();
  }
  template <class Problem>
  static __device__ __forceinline__ void run_tile_ra(const Problem& prob, long long u, u32 base, u32 bars, int c,
                                                     int warp, int lane, int kt0, int kt1, int& use,
                                                     float (&acc)[NT][4]) {
    u32 a[2][kSteps][4];
    for (int kt = kt0; kt < kt1; ++kt, ++use) {
      const int s = use % Stages;
      int shift = 0;
      if constexpr (kAPad > 0) shift = prob.a_shift(u, kt);
      mbar_wait(bars + 8 * s, (use / Stages) & 1);
      const u32 stage = base + s * kStageBytes;
      const bool odd = (kt - kt0) & 1;
      if (odd) step_ra(stage, c, warp, lane, kt == kt0, a[1], acc, shift);
      else step_ra(stage, c, warp, lane, kt == kt0, a[0], acc, shift);
      if (kt > kt0) {   // the previous k tile's batch is done: its stage and registers are free
        wg_wait<1>();
        if (odd) keep_live(a[0]);
        else keep_live(a[1]);
        if (lane == 0) release(bars + 8 * (Stages + (use - 1) % Stages));
      }
    }
    wg_wait<0>();
    keep_live(a[0]);
    keep_live(a[1]);
    if (lane == 0) release(bars + 8 * (Stages + (use - 1) % Stages));
  }

  // The k tiles [kt0, kt1) of one unit into acc: one wgmma batch in flight.
  static __device__ __forceinline__ void run_tile(u32 base, u32 bars, int c, int lane, int kt0, int kt1, int& use,
                                                  float (&acc)[NT][4]) {
    for (int kt = kt0; kt < kt1; ++kt, ++use) {
      const int s = use % Stages;
      mbar_wait(bars + 8 * s, (use / Stages) & 1);
      const u32 stage = base + s * kStageBytes;
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk) Mma::run(acc, desc_a(stage, c, kk), desc_b(stage, c, kk), kt > kt0 || kk > 0);
      wg_commit();
      if (kt > kt0) {   // the previous k tile's batch is done: its stage goes back to the producer
        wg_wait<1>();
        if (lane == 0) release(bars + 8 * (Stages + (use - 1) % Stages));
      }
    }
    wg_wait<0>();
    if (lane == 0) release(bars + 8 * (Stages + (use - 1) % Stages));
  }

  template <class Problem, class Store>
  static __device__ __forceinline__ void run(Problem& prob, Store&& store) {
    extern __shared__ __align__(16) char smem_raw[];
    const u32 base = align_1024(smem_addr(smem_raw));
    const u32 bars = base + Stages * kStageBytes;   // full[Stages], then empty[Stages]
    const int wg = threadIdx.x >> 7;
    if (threadIdx.x == 0) {
      for (int s = 0; s < Stages; ++s) {
        mbar_init(bars + 8 * s, 1);
        mbar_init(bars + 8 * (Stages + s), kConsumers * 4 * kCM);
      }
      mbar_init_fence();
      prob.prefetch();
    }
    // With a cluster, every CTA's barriers are initialized before any peer multicasts into this
    // one or arrives on them.
    if constexpr (kCM == 1) __syncthreads();
    else cluster_sync();

    // The CTAs of a cluster walk the same units (unit u: the cluster's tiles, one per CTA).
    const long long first = blockIdx.x / kCM, step = gridDim.x / kCM, units = prob.units();
    if (wg == 0) {
      regs_release<kProducerRegs>();
      if (threadIdx.x == 0) {
        int use = 0;   // stage uses so far: stage use % Stages, phase use / Stages
        for (long long u = first; u < units; u += step) {
          const int kt1 = prob.k_end(u);
          for (int kt = prob.k_begin(u); kt < kt1; ++kt, ++use) {
            const int s = use % Stages;
            mbar_wait(bars + 8 * (Stages + s), ((use / Stages) & 1) ^ 1);
            const u32 full = bars + 8 * s;
            mbar_arrive_expect_tx(full, kStageBytes);
            prob.load(base + s * kStageBytes, full, u, kt);
          }
        }
        // With a cluster, the tail ([Note: the stage handshake]): peers still arrive on this
        // CTA's barriers and multicast into its stages until every stage's last use is released.
        if constexpr (kCM > 1) {
          for (int j = use; j < use + Stages; ++j)
            mbar_wait(bars + 8 * (Stages + j % Stages), ((j / Stages) & 1) ^ 1);
        }
      }
    } else {
      regs_claim<kConsumerRegs>();
      const int c = wg - 1;
      const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
      float acc[NT][4];
      int use = 0;
      for (long long u = first; u < units; u += step) {
        const int kt0 = prob.k_begin(u), kt1 = prob.k_end(u);
        if constexpr (kX3) run_split_tile(base, bars, c, warp, lane, kt0, kt1, use, acc);
        else if constexpr (kARegs) run_tile_ra(prob, u, base, bars, c, warp, lane, kt0, kt1, use, acc);
        else run_tile(base, bars, c, lane, kt0, kt1, use, acc);
        fence_accumulators(acc);
        store(u, acc, c, warp);
      }
    }
    // No cluster barrier at the end: the producer's tail above keeps the CTA until its peers
    // are done with it. (A cluster-scope barrier.cluster.arrive.release here made every consumer
    // thread wait for its C stores to reach L2: Nsight Compute on bf16 1000³ showed membar
    // stalls, 17% of the samples, none in cuBLAS's kernel; bench/results/2026-11-26-h100-run20.)
  }
};

template <class E, class Index, long long M_, long long N_, long long K_, long long Batch, bool kAKMajor,
          bool kBKMajor, bool kBatchA, bool kBatchB, long long ldc_, long long strideC, int BM, int BN, int BK,
          int Stages, int GroupM, int SplitK, bool kX3, bool kVecC, bool kStreamC, bool kSwapAB, int kCM, int kCN>
struct TmaGemm {
  using Engine = TmaEngine<E, BM, BN, BK, Stages, kAKMajor, kBKMajor, kX3, kSwapAB ? kRowsDense : kRowsSpread, kCM, kCN>;
  static constexpr int kThreads = Engine::kThreads;
  static constexpr int kSmemBytes = Engine::kSmemBytes;
  // kX3: B's lo parts' batch index is its hi parts' + B's batches.
  // (Batch is static wherever B is batched under 3xTF32: the planner gives dyn batches no pre-pass.)
  static constexpr int kLoBatchB = kBatchB ? int(Batch) : 1;
  // With a cluster (kCM CTAs along M) each CTA loads 1 / kCM of the B tile and multicasts it.
  static constexpr TmaBox kBoxA = tma_box(Engine::kE, BM, BK, kAKMajor),
                          kBoxB = tma_box(Engine::kE, BN / kCM, BK, kBKMajor);
  // Tiles of the schedule: a cluster's kCM tiles along M count as one (BM * kCM rows). M, N, K
  // and Batch may be dyn (0: [Note: dyn matmul extents] in gemm_store.cuh), so the schedule is a
  // value. (N and K are read through functions that are constants where they are static: as
  // fields, NVVM scheduled a static tf32 kernel differently, 4% fewer registers.)
  static constexpr long long kTilesN = (N_ + BN - 1) / BN;   // (0: N dyn)
  static constexpr int kKTiles = int((K_ + BK - 1) / BK);    // (0: K dyn)
  struct Schedule {
    long long m, batch, tiles_m, tiles_per_batch, tiles;
    long long n_dyn;   // N where it is dyn
    int k_tiles_dyn;   // K's tiles where K is dyn
    __device__ __forceinline__ explicit Schedule(gemm::DynShape d)
        : m(gemm::extent<M_>(d.m)), batch(gemm::extent<Batch>(d.batch)), tiles_m((m + BM * kCM - 1) / (BM * kCM)),
          tiles_per_batch(0), tiles(0), n_dyn(d.n), k_tiles_dyn(int((d.k + BK - 1) / BK)) {
      tiles_per_batch = tiles_m * tiles_n();
      tiles = tiles_per_batch * batch;
    }
    __device__ __forceinline__ long long n() const { return gemm::extent<N_>(n_dyn); }
    __device__ __forceinline__ long long tiles_n() const {
      if constexpr (N_ > 0) return kTilesN;
      else return (n_dyn + BN - 1) / BN;
    }
    __device__ __forceinline__ int k_tiles() const {
      if constexpr (K_ > 0) return kKTiles;
      else return k_tiles_dyn;
    }
    __device__ __forceinline__ long long units() const { return tiles * SplitK; }   // (split, tile) pairs
    __device__ __forceinline__ long long split_stride() const { return SplitK > 1 ? batch * m * n() : 0; }  // workspace slices
    __device__ __forceinline__ long long stride_c() const { return gemm::batch_stride<strideC>(m, n()); }
    // C's row length: the op's N, which is the engine's M under swap_ab.
    __device__ __forceinline__ long long ldc() const { return gemm::extent<ldc_>(kSwapAB ? m : n()); }
    // Split s's first k tile (a dyn K: the planner's K slices leave each at least one k tile).
    __device__ __forceinline__ int split_begin(int s) const { return int((long long)s * k_tiles() / SplitK); }
  };

  static_assert(SplitK >= 1 && (K_ == 0 || SplitK <= kKTiles), "every split has at least one k tile");
  // The planner encodes the maps with these boxes; load_operand's copies move exactly them.
  static_assert(kBoxA.inner == Engine::kAtom && kBoxB.inner == Engine::kAtom, "one swizzle atom per box row");
  static_assert(kBoxA.outer == (kAKMajor ? BM : BK) && kBoxB.outer == (kBKMajor ? BN / kCM : BK), "box rows");
  static_assert(kCM == 1 || (kBKMajor ? BN / kCM % 8 == 0 : BN / Engine::kAtom % kCM == 0),
                "a cluster splits the B tile into whole swizzle groups or boxes");

  // Tile t -> (batch, first row, first column), grouped rasterization within a batch.
  static __device__ __forceinline__ void tile_origin(const Schedule& sc, long long t, Index& batch, int& m0, int& n0) {
    batch = Index(t / sc.tiles_per_batch);
    const long long r = t % sc.tiles_per_batch;
    const long long per_group = GroupM * sc.tiles_n();
    const long long first = r / per_group * GroupM;
    const long long rows = sc.tiles_m - first < GroupM ? sc.tiles_m - first : GroupM;
    m0 = int((first + r % per_group % rows) * BM * kCM);
    n0 = int(r % per_group / rows * BN);
  }

  // Work unit u: its tile and its k tiles [kt0, kt1).
  static __device__ __forceinline__ long long unit_tile(const Schedule& sc, long long u) {
    return SplitK > 1 ? u % sc.tiles : u;
  }
  static __device__ __forceinline__ int unit_split(const Schedule& sc, long long u) {
    return SplitK > 1 ? int(u / sc.tiles) : 0;
  }

  // One operand's k tile (ROWS rows of m or n from mn0) into `dst`: k-contiguous, BK * E / 128
  // boxes of 128 bytes of k x ROWS rows; otherwise ROWS / 64 boxes of 64 elements x BK rows of k.
  template <bool kKMajor, int ROWS>
  static __device__ __forceinline__ void load_operand(u32 dst, const TensorMap& map, u32 full, int mn0, int k0,
                                                      int batch) {
    if constexpr (kKMajor) {
#pragma unroll
      for (int p = 0; p < BK * Engine::kE / 128; ++p)
        tma_load(dst + p * ROWS * 128, map, full, k0 + p * Engine::kAtom, mn0, batch);
    } else {
#pragma unroll
      for (int j = 0; j < ROWS / Engine::kAtom; ++j)
        tma_load(dst + j * Engine::kChunkBytes, map, full, mn0 + Engine::kAtom * j, k0, batch);
    }
  }

  // The B tile: alone, all of it; in a cluster, this CTA's 1 / kCM of it (rows of n if k-major,
  // else boxes of 64 n), multicast into every CTA of the cluster.
  static __device__ __forceinline__ void load_b(u32 dst, const TensorMap& map, u32 full, int n0, int k0, int batch,
                                                int rank) {
    constexpr unsigned short kMask = (1u << kCM) - 1;
    if constexpr (kCM == 1) {
      load_operand<kBKMajor, BN>(dst, map, full, n0, k0, batch);
    } else if constexpr (kBKMajor) {
      constexpr int kRows = BN / kCM;
#pragma unroll
      for (int p = 0; p < BK * Engine::kE / 128; ++p)
        tma_load_multicast(dst + p * BN * 128 + rank * kRows * 128, map, full, k0 + p * Engine::kAtom,
                           n0 + rank * kRows, batch, kMask);
    } else {
#pragma unroll
      for (int j = 0; j < BN / Engine::kAtom; ++j)
        if (j % kCM == rank)
          tma_load_multicast(dst + j * Engine::kChunkBytes, map, full, n0 + Engine::kAtom * j, k0, batch, kMask);
    }
  }
  static __device__ __forceinline__ int rank() {
    if constexpr (kCM == 1) return 0;
    else return int(cluster_rank());
  }

  struct Problem {
    const TensorMap& a;
    const TensorMap& b;
    Schedule sc;
    __device__ __forceinline__ long long units() const { return sc.units(); }
    __device__ __forceinline__ int k_begin(long long u) const { return sc.split_begin(unit_split(sc, u)); }
    __device__ __forceinline__ int k_end(long long u) const { return sc.split_begin(unit_split(sc, u) + 1); }
    __device__ __forceinline__ void prefetch() const {
      prefetch_tensor_map(a);
      prefetch_tensor_map(b);
    }
    // With a dyn extent, tile_origin divides by run-time values (tens of instructions each, on the
    // one producer thread that every k tile waits for): it runs once per unit, and load() reuses
    // it. (Per k tile, a bf16 1000x4096x4096 product took 1.27x the specialized kernel's time,
    // bench/results/2026-11-27-h100-run14.) A static kernel's divisions by constants stay inline.
    struct Origin {
      long long unit = -1;
      Index batch = 0;
      int m0 = 0, n0 = 0;
    };
    mutable Origin last;
    __device__ __forceinline__ void origin(long long u, Index& batch, int& m0, int& n0) const {
      if constexpr (M_ > 0 && N_ > 0 && Batch > 0) {
        tile_origin(sc, unit_tile(sc, u), batch, m0, n0);
      } else {
        if (last.unit != u) {
          tile_origin(sc, unit_tile(sc, u), last.batch, last.m0, last.n0);
          last.unit = u;
        }
        batch = last.batch, m0 = last.m0, n0 = last.n0;
      }
    }
    __device__ __forceinline__ void load(u32 stage, u32 full, long long u, int kt) const {
      Index batch;
      int m0, n0;
      origin(u, batch, m0, n0);
      const int ba = kBatchA ? int(batch) : 0, bb = kBatchB ? int(batch) : 0;
      const int r = rank();
      m0 += r * BM;
      load_operand<kAKMajor, BM>(stage, a, full, m0, kt * BK, ba);
      load_b(stage + Engine::kABytes, b, full, n0, kt * BK, bb, r);
      if constexpr (kX3) load_b(stage + Engine::kBLo, b, full, n0, kt * BK, bb + kLoBatchB, r);
    }
  };

  template <class OutT, class Epi>
  static __device__ __forceinline__ void run(const TensorMap& a, const TensorMap& b, OutT* C, Epi epi,
                                             gemm::DynShape dyn = {}) {
    Problem prob{a, b, Schedule(dyn)};
    const Schedule& sc = prob.sc;
    Engine::run(prob, [&](long long u, const float (&acc)[Engine::NT][4], int c, int warp) {
      Index batch;
      int m0, n0;
      tile_origin(sc, unit_tile(sc, u), batch, m0, n0);
      m0 += rank() * BM;
      OutT* const c0 = C + Index(unit_split(sc, u)) * Index(sc.split_stride()) + batch * Index(sc.stride_c());
      // (The column offset only with consumers along N: even a constant 0 there changes NVVM's
      // register allocation, +28% PTX for the tf32 aᵀ·bᵀ 1000³ unit.)
      auto put = [&](const auto& out) {
        const Index row0 = Index(m0 + 64 * Engine::slab_m(c));
        Index col0 = Index(n0);
        if constexpr (kCN > 1) col0 += Index(Engine::WN * Engine::slab_n(c));
        if constexpr (kSwapAB) gemm::store_fragments_direct<Index>(acc, out, row0, col0, epi, typename Engine::Rows{warp});
        else gemm::store_accumulators<Index>(acc, out, row0, col0, epi, typename Engine::Rows{warp});
      };
      if constexpr (kSwapAB) put(gemm::TransposedOut<OutT, Index, kStreamC>{c0, Index(sc.ldc()), Index(sc.m), Index(sc.n()), batch});
      else put(gemm::MatrixOut<OutT, Index, kVecC, kStreamC>{c0, Index(sc.ldc()), Index(sc.m), Index(sc.n()), batch});
    });
  }
};

}  // namespace sm90
}  // namespace kiln
