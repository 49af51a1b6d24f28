// kiln/attention_sm90.cuh — fused attention on the Hopper engine's parts: TMA loads into an
// mbarrier-guarded ring, a producer warpgroup, wgmma consumer warpgroups (sm_90a only).
//
// ============================================================================================
// CONTRACT (what the emitter instantiates)
// --------------------------------------------------------------------------------------------
// kiln::sm90::FlashAttention<E, Index, Config>, Config::value an AttentionConfig
// (config/attention.h); E: __half or __nv_bfloat16.
//   template <class OutT, class Epi>
//   static __device__ void run(const TensorMap& q, const TensorMap& k, const TensorMap& v,
//                              OutT* out, Epi epi, float scale, int* next_unit,
//                              const AttentionExtents& dyn = {});
// dyn: the launch's extents where the config holds 0 ([Note: dyn attention extents] in
// config/attention.h); the tensor maps are then the launch's too.
// next_unit: one int, zero at launch (the planner's zeroed workspace): the units taken so far
// past the first grid's ([Note: the attention unit order] in config/attention.h).
// out[batch](i, c) = epi(sum_j p(i, j) v(j, c), batch, i, c), p = softmax over j of
// scale · q(i, :)·k(j, :) (keys j > i excluded when causal), for batch = b0 · inner + b1, query
// i < s, column c < dv; out is row-major [batch][s][dv].
// The tensor maps (4-D, 128-byte swizzle, innermost first): q {d, s, inner, outer}, k {d, t,
// inner, outer}, v {dv, t, inner, outer}, a broadcast batch dim of extent 1 (its bit in
// q_bcast / k_bcast / v_bcast); boxes {64, bm} for q and {64, bn} for k and v. Rows past s or t
// read as zeros. Launch: attention_geometry (persistent: at most one CTA an SM),
// __launch_bounds__(threads, 1) (setmaxnreg).
//
// [Note: the fused attention kernel]
// - Roles. Warpgroup 0 is the producer: one thread loads the CTA's q block (bm rows, once),
//   then each key tile's k and v through a `stages`-deep ring. k and v have full barriers of
//   their own, so the scores of a tile start while its v still loads; one empty barrier per
//   stage, on which every consumer warp arrives once it has read both.
// - Consumer c (warpgroup c + 1) owns query rows 64c .. 64c + 63 of the block. Per key tile:
//   S = q·kᵀ (wgmma m64n{bn}k16, both operands k-major from shared memory: d contiguous), the
//   mask (keys past t; causal keys past the row), the online softmax in the log2 domain (scores
//   times scale·log2(e); a row's running max m and the thread's share of its sum l; the output
//   rescaled by 2^(m_old - m_new) when the max grows), P rounded to E and kept in registers as
//   the A operand of O += P·v (wgmma m64n{dv}k16, v MN-major: dv contiguous). A thread holds
//   rows g and g + 8 of its warp's 16 (the accumulator layout, [Note: wgmma operands in shared
//   memory]); a row's max and sum are combined over the 4 threads that hold it (shuffles).
// - Overlap within a consumer: tile j's scores and tile j - 1's P·v are issued back to back, and
//   tile j's softmax runs on the CUDA cores while the P·v is on the tensor cores; the stage of
//   tile j - 1 goes back to the producer when that product completes.
// - Overlap between the consumers: they take turns issuing (two named barriers, 1 + c: consumer
//   c waits on its own, issues its batch, and arrives on the other's), so one's softmax runs while
//   the other's products do; without the turns both wait on the same full barriers and run their
//   softmax at the same time, the tensor cores idle meanwhile. Both take tiles + 1 turns a unit;
//   consumer 1 opens the first turn to consumer 0, every turn hands over, and consumer 0 takes
//   one more at exit (consumer 1's last hand-over), so no barrier is left half arrived.
// - P is rounded to 16 bits before the second product (as every flash kernel does); the scores,
//   the statistics and the output accumulate in f32, and the output is rounded once.
// - Schedule: persistent CTAs (one an SM at most) over the units ([Note: the attention unit order]
//   in config/attention.h: batch by batch, causal blocks longest first); CTA i takes unit i, then
//   the next one nobody took (an atomic counter in a zeroed workspace), which the producer hands to
//   the consumers through two shared-memory slots (unit full / empty barriers). The producer runs ahead
//   into the next unit: its q block loads once the consumers' last scores of the current one are
//   done (the q empty barrier), and its k and v tiles continue the ring, so a unit's start and its
//   output stores overlap the neighbours' loads.
// ============================================================================================
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/attention.h"
#include "kiln/gemm_store.cuh"
#include "kiln/tma.cuh"
#include "kiln/wgmma.cuh"

namespace kiln {
namespace sm90 {

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

template <class E, class Index, class Config>
struct FlashAttention {
  static constexpr AttentionConfig C = Config::value;
  static constexpr int kConsumers = attention_consumers(C);
  static constexpr int kThreads = attention_threads(C);
  static constexpr int kSmemBytes = attention_smem(C);
  static constexpr int BM = C.bm, BN = C.bn, D = C.d, DV = C.dv, Stages = C.stages;
  static constexpr int kQBytes = attention_q_bytes(C), kKBytes = attention_k_bytes(C), kVBytes = attention_v_bytes(C);
  static constexpr int kStageBytes = kKBytes + kVBytes;
  static constexpr int kConsumerRegs = 232, kProducerRegs = 40;
  using MmaS = Wgmma<BN, E, false, false>;      // S = q·kᵀ: both k-major
  using MmaO = WgmmaRegA16<DV, E, true>;        // O += P·v: P in registers, v MN-major
  static constexpr int NS = BN / 8, NO = DV / 8;
  // The config's fields as scalars (device code cannot take the address of C); 0: dyn.
  static constexpr long long kS = C.s, kT = C.t, kInner = C.inner, kBatch = C.batch;
  static constexpr int kQBcast = C.q_bcast, kKBcast = C.k_bcast, kVBcast = C.v_bcast;
  static constexpr bool kCausal = C.causal, kVecOut = C.vec_out;

  static_assert(C.elem_bytes == 2 && sizeof(E) == 2, "f16 / bf16 operands");
  static_assert(attention_head_dim(D) && attention_head_dim(DV), "head dims 64, 128 or 256");
  static_assert(BM == 128 && (BN == 64 || BN == 128) && Stages >= 2, "tiles");
  static_assert(kSmemBytes == kQBytes + Stages * kStageBytes + 1024 + 8 * (6 + 3 * Stages) + 16, "attention_smem");

  // The extents a launch computes with: the config's, or the launch's where it holds 0 ([Note: dyn
  // attention extents]). A static kernel's fold to constants.
  struct Extents {
    long long s, t, inner, blocks, units;
    __device__ __forceinline__ explicit Extents(const AttentionExtents& e)
        : s(kS > 0 ? kS : e.s), t(kT > 0 ? kT : e.t), inner(kInner > 0 ? kInner : e.inner),
          blocks(attention_blocks(s, BM)), units(blocks * (kBatch > 0 ? kBatch : e.batch)) {}
  };

  // The batch coordinates an operand reads (0 along the dims it broadcasts).
  static __device__ __forceinline__ int coord(long long b, int bcast, int bit) { return (bcast >> bit) & 1 ? 0 : int(b); }

  // One operand tile of `rows` rows from `row0`: (cols / 64) boxes of 64 elements x rows.
  template <int kCols, int kRows>
  static __device__ __forceinline__ void load_tile(u32 dst, const TensorMap& map, u32 bar, int row0, long long b0,
                                                   long long b1, int bcast) {
#pragma unroll
    for (int p = 0; p < kCols / 64; ++p)
      tma_load_4d(dst + p * kRows * 128, map, bar, p * 64, row0, coord(b1, bcast, 1), coord(b0, bcast, 0));
  }

  // Descriptors: q block (k-major, boxes of 64 d x BM rows), k tile (k-major, 64 d x BN keys),
  // v tile (MN-major: 64 dv x BN keys a box, the boxes kChunk apart).
  static __device__ __forceinline__ u64 desc_q(u32 q, int c, int kk) {
    const int byte = kk * 32;
    return descriptor(q + (byte / 128) * BM * 128 + c * 64 * 128 + byte % 128);
  }
  static __device__ __forceinline__ u64 desc_k(u32 k, int kk) {
    const int byte = kk * 32;
    return descriptor(k + (byte / 128) * BN * 128 + byte % 128);
  }
  static __device__ __forceinline__ u64 desc_v(u32 v, int kk) { return descriptor_mn(v + kk * 2048, BN * 128); }

  // Issues S = q·kᵀ of the key tile in stage use `u` (its k waited for), committed as one batch.
  template <class KFull>
  static __device__ __forceinline__ void issue_scores(float (&sc)[NS][4], int u, u32 q, int c, u32 ring,
                                                      const KFull& k_full) {
    const int s = u % Stages;
    mbar_wait(k_full(s), (u / Stages) & 1);
    const u32 k = ring + s * kStageBytes;
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) MmaS::run(sc, desc_q(q, c, kk), desc_k(k, kk), kk > 0);
    wg_commit();
  }

  // The first key tile that consumer c of the unit at rows m0 masks: tile j holds keys j·bn ..
  // j·bn + bn - 1, every one of them below the keys t and (causal) at or before the consumer's
  // first row m0 + 64c for every tile before this one.
  static __device__ __forceinline__ int first_masked_tile(int m0, int c, long long t) {
    const long long visible = kCausal && m0 + 64 * c + 1 < t ? m0 + 64 * c + 1 : t;
    return int(visible / BN);
  }

  // Key tile j's scores to P (the A fragments of k16 steps: step kk covers keys 16kk .. 16kk + 15
  // of the tile), with the online softmax: scores to the log2 domain, keys past t and causal keys
  // past the row excluded, the running max m, O's rescale corr = 2^(m_old - m_new), and this
  // thread's share of the row sums l.
  // Masked: the tile holds keys past t or (causal) keys past a row of the consumer, from
  // first_masked_tile on. The two kinds of tile are separate code, not one with a run-time test:
  // ptxas turns a test per element into predicated selects that every tile then executes (five
  // instructions an element, measured 11% of a causal tile's time).
  template <bool Masked>
  // keys: t, the keys in all.
  static __device__ __forceinline__ void softmax_tile(float (&sc)[NS][4], int j, int row_base, int t, long long keys,
                                                      float scale2, float (&m)[2], float (&l)[2], float (&corr)[2],
                                                      u32 (&p)[BN / 16][4]) {
    const int key0 = j * BN;
#pragma unroll
    for (int n = 0; n < NS; ++n)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        float x = sc[n][r] * scale2;
        if (Masked) {
          const int key = key0 + 8 * n + 2 * t + (r & 1), row = row_base + 8 * (r >> 1);
          if (key >= keys || (kCausal && key > row)) x = gemm::neg_inf();
        }
        sc[n][r] = x;
      }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = m[h];
#pragma unroll
      for (int n = 0; n < NS; ++n) mx = fmaxf(mx, fmaxf(sc[n][2 * h], sc[n][2 * h + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // A row with every key so far excluded keeps max -inf: its terms are 0, not NaN.
      const float ref = mx == gemm::neg_inf() ? 0.f : mx;
      corr[h] = exp2_approx(m[h] - ref);
      m[h] = mx;
      float sum = 0.f;
#pragma unroll
      for (int n = 0; n < NS; ++n)
#pragma unroll
        for (int r = 2 * h; r < 2 * h + 2; ++r) {
          const float e = exp2_approx(sc[n][r] - ref);
          sc[n][r] = e;
          sum += e;
        }
      l[h] = l[h] * corr[h] + sum;
    }
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      p[kk][0] = pack2<E>(from_float<E>(sc[2 * kk][0]), from_float<E>(sc[2 * kk][1]));
      p[kk][1] = pack2<E>(from_float<E>(sc[2 * kk][2]), from_float<E>(sc[2 * kk][3]));
      p[kk][2] = pack2<E>(from_float<E>(sc[2 * kk + 1][0]), from_float<E>(sc[2 * kk + 1][1]));
      p[kk][3] = pack2<E>(from_float<E>(sc[2 * kk + 1][2]), from_float<E>(sc[2 * kk + 1][3]));
    }
  }

  // One key tile j >= 1 of a unit whose first tile is stage use `use`: its scores issued, then
  // the previous tile's O += P·v (P in `prev`), the softmax of tile j into `next` while that
  // product runs, then the previous stage released (and after the unit's last scores, the q block).
  template <bool Masked, class KFull, class VFull, class Empty>
  static __device__ __forceinline__ void step(int j, int use, int tiles, u32 q, int c, u32 ring, const KFull& k_full,
                                              const VFull& v_full, const Empty& empty, u32 q_empty,
                                              int row_base, int t, long long keys, int lane, float scale2,
                                              float (&m)[2], float (&l)[2], float (&corr)[2], float (&o)[NO][4],
                                              u32 (&prev)[BN / 16][4], u32 (&next)[BN / 16][4]) {
    float sc[NS][4];
    rescale(o, corr);   // nothing in flight: the previous tile's correction, before its P·v
    my_turn(c);
    issue_scores(sc, use + j, q, c, ring, k_full);
    pv(o, prev, use + j - 1, ring, v_full);
    their_turn(c);
    wg_wait<1>();   // the scores are done; the previous P·v may still run
    fence_accumulators(sc);
    if (j == tiles - 1 && lane == 0) mbar_arrive(q_empty);   // the block's last scores are done
    softmax_tile<Masked>(sc, j, row_base, t, keys, scale2, m, l, corr, next);
    wg_wait<0>();   // the previous P·v has completed: its stage goes back, its P registers are free
    keep_live(prev);
    fence_accumulators(o);
    if (lane == 0) mbar_arrive(empty((use + j - 1) % Stages));
  }

  // The two consumers take turns issuing their wgmmas ([Note: the fused attention kernel]):
  // consumer c waits for its turn on barrier 1 + c, issues, then hands the turn over on the other's.
  static __device__ __forceinline__ void my_turn(int c) { named_barrier_sync(1 + c, 256); }
  static __device__ __forceinline__ void their_turn(int c) { named_barrier_arrive(2 - c, 256); }

  static __device__ __forceinline__ void rescale(float (&o)[NO][4], const float (&corr)[2]) {
#pragma unroll
    for (int n = 0; n < NO; ++n) {
      o[n][0] *= corr[0];
      o[n][1] *= corr[0];
      o[n][2] *= corr[1];
      o[n][3] *= corr[1];
    }
  }

  // Issues O += P·v of the key tile in stage use `u` (its v waited for), committed as one batch.
  template <class VFull>
  static __device__ __forceinline__ void pv(float (&o)[NO][4], const u32 (&pa)[BN / 16][4], int u, u32 ring,
                                            const VFull& v_full) {
    const int s = u % Stages;
    mbar_wait(v_full(s), (u / Stages) & 1);
    const u32 v = ring + s * kStageBytes + kKBytes;
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) MmaO::run(o, pa[kk], desc_v(v, kk), 1);
    wg_commit();
  }

  // Work unit u: one CTA's 128 query rows of one batch ([Note: the attention unit order] in
  // config/attention.h).
  struct Unit {
    long long batch, b0, b1;
    int m0, tiles;
    __device__ __forceinline__ Unit(long long u, const Extents& x) {
      const AttentionUnit a = attention_unit(x.blocks, u);
      batch = a.batch;
      const long long mb = a.block;
      b0 = batch / x.inner, b1 = batch % x.inner;
      m0 = int(mb * BM);
      tiles = int(attention_key_tiles(kCausal, BM, BN, x.t, mb));
    }
  };

  template <class OutT, class Epi>
  static __device__ __forceinline__ void run(const TensorMap& q, const TensorMap& k, const TensorMap& v, OutT* out,
                                             Epi epi, float scale, int* next_unit,
                                             const AttentionExtents& dyn = {}) {
    extern __shared__ __align__(16) char smem_raw[];
    const u32 base = align_1024(smem_addr(smem_raw));
    const u32 ring = base + kQBytes;
    // q full, q empty, unit full[2], unit empty[2], k full[S], v full[S], empty[S], the unit slots
    const u32 bars = ring + Stages * kStageBytes;
    const u32 q_full = bars, q_empty = bars + 8;
    auto unit_full = [&](int i) { return bars + 8 * (2 + i); };
    auto unit_empty = [&](int i) { return bars + 8 * (4 + i); };
    auto k_full = [&](int s) { return bars + 8 * (6 + s); };
    auto v_full = [&](int s) { return bars + 8 * (6 + Stages + s); };
    auto empty = [&](int s) { return bars + 8 * (6 + 2 * Stages + s); };
    const u32 slots = bars + 8 * (6 + 3 * Stages);
    volatile long long* const slot = reinterpret_cast<volatile long long*>(
        smem_raw + (slots - smem_addr(smem_raw)));
    const Extents x(dyn);
    const long long units = x.units;
    const int wg = threadIdx.x >> 7;

    if (threadIdx.x == 0) {
      mbar_init(q_full, 1);
      mbar_init(q_empty, kConsumers * 4);
      for (int i = 0; i < 2; ++i) {
        mbar_init(unit_full(i), 1);
        mbar_init(unit_empty(i), kConsumers * 4);
      }
      for (int s = 0; s < Stages; ++s) {
        mbar_init(k_full(s), 1);
        mbar_init(v_full(s), 1);
        mbar_init(empty(s), kConsumers * 4);
      }
      mbar_init_fence();
      prefetch_tensor_map(q);
      prefetch_tensor_map(k);
      prefetch_tensor_map(v);
    }
    __syncthreads();

    if (wg == 0) {
      regs_release<kProducerRegs>();
      if (threadIdx.x == 0) {
        int use = 0;   // k, v stage uses so far ([Note: the stage handshake] in tma.cuh)
        long long u = blockIdx.x;
        for (int n = 0;; ++n) {   // n: units so far, the q block's and the unit slots' use
          // Unit u to the consumers (units or more: none left), through slot n & 1.
          mbar_wait(unit_empty(n & 1), ((n >> 1) & 1) ^ 1);
          slot[n & 1] = u;
          mbar_arrive(unit_full(n & 1));   // (a release: the consumers' wait sees the slot)
          if (u >= units) break;
          // The next unit in the order nobody took yet, asked for now: the atomic's round trip
          // overlaps this unit's loads instead of delaying the next q block.
          const long long next = gridDim.x + atomicAdd(next_unit, 1);
          const Unit w(u, x);
          // The next q block loads once the consumers' last scores of the previous one are done.
          mbar_wait(q_empty, (n & 1) ^ 1);
          mbar_arrive_expect_tx(q_full, kQBytes);
          load_tile<D, BM>(base, q, q_full, w.m0, w.b0, w.b1, kQBcast);
          for (int j = 0; j < w.tiles; ++j, ++use) {
            const int s = use % Stages;
            mbar_wait(empty(s), ((use / Stages) & 1) ^ 1);
            const u32 stage = ring + s * kStageBytes;
            mbar_arrive_expect_tx(k_full(s), kKBytes);
            load_tile<D, BN>(stage, k, k_full(s), j * BN, w.b0, w.b1, kKBcast);
            mbar_arrive_expect_tx(v_full(s), kVBytes);
            load_tile<DV, BN>(stage + kKBytes, v, v_full(s), j * BN, w.b0, w.b1, kVBcast);
          }
          u = next;
        }
      }
      return;
    }

    regs_claim<kConsumerRegs>();
    const int c = wg - 1;
    const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const float scale2 = scale * 1.4426950408889634f;   // scores to the log2 domain
    if (c == 1) their_turn(c);   // consumer 0 issues first
    int use = 0;
    for (int n = 0;; ++n) {
      mbar_wait(unit_full(n & 1), (n >> 1) & 1);
      // Lane 0 reads the slot, hands it to its warp and releases the slot: the thread that read it
      // is the one that arrives, so the producer's next write to it is ordered after the read
      // through the barrier alone (compute-sanitizer racecheck reported reads of the other lanes,
      // ordered by a __syncwarp before lane 0's arrive, as hazards with that write).
      long long u = 0;
      if (lane == 0) u = slot[n & 1];
      u = __shfl_sync(0xffffffffu, u, 0);
      if (lane == 0) mbar_arrive(unit_empty(n & 1));
      if (u >= units) break;
      const Unit w(u, x);
      // Query rows of this thread's two accumulator rows (h = 0, 1).
      const int row_base = w.m0 + 64 * c + 16 * warp + g;
      const int masked = first_masked_tile(w.m0, c, x.t);
      float o[NO][4];
      clear(o);
      float m[2] = {gemm::neg_inf(), gemm::neg_inf()}, l[2] = {0.f, 0.f};

      mbar_wait(q_full, n & 1);
      // [Note: the fused attention kernel]'s overlap: tile j's scores are issued, then the
      // previous tile's O += P·v, and the softmax of tile j runs while that second product is in
      // flight (step). pa[j & 1] holds tile j's P, read by the wgmma in flight while the other
      // set is written; corr is the rescale of O that the latest tile's maximum asks for, applied
      // before its P·v is issued. The first tile is peeled and the sets alternate by branch, not
      // by copy: ptxas serializes the wgmmas when a path through the loop might leave a P·v
      // unwaited or define its registers while it runs (C7513, C7514). Stage uses count across
      // units (use + j).
      u32 pa[2][BN / 16][4];   // P of even and odd tiles: no copies between the sets
      float corr[2];
      {
        float sc[NS][4];
        my_turn(c);
        issue_scores(sc, use, base, c, ring, k_full);
        their_turn(c);
        wg_wait<0>();
        fence_accumulators(sc);
        if (w.tiles == 1 && lane == 0) mbar_arrive(q_empty);   // the block's last scores are done
        if (masked == 0) softmax_tile<true>(sc, 0, row_base, t, x.t, scale2, m, l, corr, pa[0]);
        else softmax_tile<false>(sc, 0, row_base, t, x.t, scale2, m, l, corr, pa[0]);
      }
      // The tiles before the first masked one, then the masked ones (each loop's steps wait for
      // everything they issue: nothing is in flight between the loops).
      int j = 1;
      for (const int unmasked = masked < w.tiles ? masked : w.tiles; j < unmasked; ++j) {
        if (j & 1)
          step<false>(j, use, w.tiles, base, c, ring, k_full, v_full, empty, q_empty, row_base, t, x.t, lane, scale2,
                      m, l, corr, o, pa[0], pa[1]);
        else
          step<false>(j, use, w.tiles, base, c, ring, k_full, v_full, empty, q_empty, row_base, t, x.t, lane, scale2,
                      m, l, corr, o, pa[1], pa[0]);
      }
      for (; j < w.tiles; ++j) {
        if (j & 1)
          step<true>(j, use, w.tiles, base, c, ring, k_full, v_full, empty, q_empty, row_base, t, x.t, lane, scale2,
                     m, l, corr, o, pa[0], pa[1]);
        else
          step<true>(j, use, w.tiles, base, c, ring, k_full, v_full, empty, q_empty, row_base, t, x.t, lane, scale2,
                     m, l, corr, o, pa[1], pa[0]);
      }
      // The last tile's P·v. Every turn hands over to the other consumer.
      rescale(o, corr);
      const int lj = w.tiles - 1;
      my_turn(c);
      if (lj & 1) pv(o, pa[1], use + lj, ring, v_full);
      else pv(o, pa[0], use + lj, ring, v_full);
      their_turn(c);
      wg_wait<0>();
      keep_live(pa[0]);
      keep_live(pa[1]);
      fence_accumulators(o);
      if (lane == 0) mbar_arrive(empty((use + lj) % Stages));
      use += w.tiles;

      // The row sums over the quad, then the output through the epilogue (the producer already
      // loads the next unit's q and tiles).
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
        const float inv = l[h] > 0.f ? 1.f / l[h] : 0.f;
#pragma unroll
        for (int nn = 0; nn < NO; ++nn) {
          o[nn][2 * h] *= inv;
          o[nn][2 * h + 1] *= inv;
        }
      }
      OutT* const dst = out + Index(w.batch) * Index(x.s) * Index(DV);
      const gemm::MatrixOut<OutT, Index, kVecOut, false> put{dst, Index(DV), Index(x.s), Index(DV), Index(w.batch)};
      gemm::store_accumulators<Index>(o, put, Index(w.m0 + 64 * c + 16 * warp), Index(0), epi);
    }
    // Consumer 1 handed a turn over after its last: consumer 0 takes it, so no barrier is left
    // half arrived at exit.
    if (c == 0) my_turn(c);
  }
};

}  // namespace sm90
}  // namespace kiln
