// kiln/gemm_sm90.cuh — Hopper warpgroup GEMM: wgmma on 128-byte-swizzled shared memory.
//
// ============================================================================================
// CONTRACT (what the emitter instantiates; compile for sm_90a only)
// --------------------------------------------------------------------------------------------
// f32 operands, Precision Tf32 or Tf32x3, f32 accumulation. A is M x K with k contiguous
// (A(m, k) = A[b*strideA + m*lda + k]). B is K x N, either k contiguous (kBKMajor:
// B(k, n) = B[b*strideB + n*ldb + k], a linear layer's weight) or n contiguous
// (B(k, n) = B[b*strideB + k*ldb + n]). Every base is 16-byte aligned and lda, ldb, strideA,
// strideB are multiples of 4 (the planner checks; otherwise it keeps the sm_80 templates).
// Tiles: BM = 64 * warpgroups (one m64 wgmma row block per warpgroup), BN in {64, 128, 256},
// BK = 32 (one 128-byte swizzle atom of f32). block = kThreads = 128 * BM / 64, dynamic shared
// memory kSmemBytes (includes 1 KB to align the ring to the 1024-byte swizzle period).
//
// 1) kiln::sm90::WgGemm<Precision, Index, M, N, K, Batch, lda, ldb, strideA, strideB,
//                       ldc, strideC, BM, BN, Stages, kBKMajor, kVecC, kStreamC>
//      template <class OutT, class Epi>
//      static __device__ void run(const float* A, const float* B, OutT* C, Epi epi);
//    C[b] = epi(A[b] · B[b]); grid = (ceil(N/BN), ceil(M/BM), Batch). The epilogue is
//    gemm::store_fragments (epi once per in-bounds element, 16-byte stores where kVecC).
//
// 2) kiln::sm90::WgGemmSplitK<Precision, Index, M, N, K, Batch, lda, ldb, strideA, strideB,
//                             BM, BN, Stages, kBKMajor, SplitK>
//      static __device__ void run(const float* A, const float* B, float* workspace);
//    Same contract as gemm::GemmSplitK (workspace[SplitK][Batch][M][N], grid (kTilesN, kTilesM,
//    Batch * SplitK)), reduced by gemm::SplitKReduce or gemm::SplitKSoftmax.
//
// 3) kiln::sm90::SmallKPrep<Precision, Index, M, N, K, lda, ldb>
//      static __device__ void run(const float* A, const float* B, float* workspace);
//    + kiln::sm90::WgSmallK<Precision, Index, M, N, K, ldc, BM, BN, BStages, kStreamC>
//      template <class Epi> static __device__ void run(const float* workspace, float* C, Epi epi);
//    C = epi(A · B) for a small K (K % 8 == 0, K <= 128), one batch, A row-major (row stride
//    lda), B row-major (n contiguous, row stride ldb), C row-major (ldc, N and ldc multiples of
//    4, 16-byte aligned). The pre-pass (grid kGridX, block 256, no dynamic shared memory) writes
//    A and Bᵀ as k-contiguous tf32_rna parts to workspace (kWorkspaceFloats f32, any alignment of
//    A and B): [A hi: M*K][Bᵀ hi: N*K] and, for Tf32x3, [A lo][Bᵀ lo] after them. The main
//    kernel reads only the workspace: grid = min(kTiles, SMs) persistent CTAs (any grid works),
//    block kThreads = 128 * BM / 64, dynamic shared memory kSmemBytes; BM in {64, 128, 256}, BN in
//    {64, 128, 256} (the two accumulator sets must fit the registers: 64x256 and 256x128 spill),
//    BStages >= 2.
//    The epilogue is gemm::store_fragments (epi once per in-bounds element, batch index 0).
//
// [Note: small K on wgmma]
// - With K = 64 a 128x128 tile is 2 MFLOP for 64 KB of C: C's stores bound the kernel, and
//   the tensor cores are idle most of the time unless a tile's stores overlap the next tile's
//   products. wgmma is asynchronous, so one CTA does both: it issues tile i's wgmma into one
//   accumulator set, stores tile i - 1 from the other set, then waits. (The mma.sync SmallK
//   needs several CTAs per SM to get the same overlap, and 3xTF32's registers allow one.)
// - wgmma reads f32 operands only k-major from shared memory, and the seed's B is n-contiguous.
//   So a pre-pass writes A and Bᵀ once, k-contiguous and already split into tf32 hi and lo
//   parts (32 MB for the seed, ~15 µs): the main loop has no split pass, no conversions and no
//   transposing copies, only 16-byte cp.async of swizzled tiles and wgmma.
// - The A block (BM x K, every part) stays in shared memory along a row block; B blocks come
//   through a BStages-deep ring. K <= 128 is one pass of K / 8 wgmma steps per tile, each
//   started from zero (scale-d = 0), so the per-k-tile promotion of the long-K engine is not
//   needed: the fp32-accurate error measured the same as the mma.sync SmallK (4.9e-7).
//
// [Note: the Hopper path]
// - A warpgroup (4 warps) issues wgmma.mma_async m64nBNk8: the tensor cores read both operands
//   straight from shared memory through 64-bit matrix descriptors, so no fragment loads compete
//   with the cp.async traffic, and one instruction covers 64 x BN x 8.
// - Shared tiles are [rows][32 f32] = 128 bytes per row, 16-byte chunk c of row r stored at
//   chunk c ^ (r % 8): the 128-byte swizzle the descriptor names, which also makes the cp.async
//   stores and the split pass bank-conflict free. The k-th 8-wide step of a tile starts 32 bytes
//   further into the same swizzle atom.
// - The copies are issued by the same warps (a Stages-deep cp.async ring, as on sm_80); wgmma
//   reads through the async proxy, so every thread fences (fence.proxy.async) its completed
//   copies before the barrier that hands the stage to the tensor cores.
// - Tf32: the tensor core reads the top 19 bits of each f32 (truncation); the error stays within
//   the tf32 tolerance. Tf32x3: after a stage lands, the warps round it in place to
//   hi = tf32_rna(x) and write lo = x - hi to a lo buffer of the same layout, then issue
//   lo·hi' + hi·lo' + hi·hi' (small terms first) into a per-k-tile accumulator that ordinary f32
//   adds fold into the result ([Note: promotion]).
// - Tf32 keeps one wgmma batch in flight while the next stage is handed over; the copy ring
//   then refills the stage consumed two steps before.
// ============================================================================================
#pragma once

#include "kiln/common.cuh"
#include "kiln/mma.cuh"
#include "kiln/gemm.cuh"
#include "kiln/wgmma.cuh"

// (ptxas rejects wgmma for sm_90 without the "a"; this catches the older targets early.)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "kiln/gemm_sm90.cuh needs the arch-specific target sm_90a (wgmma)"
#endif

namespace kiln {
namespace sm90 {

// d (m64 x N) = A · B (+ d) in tf32, both operands K-major (kiln/wgmma.cuh).
template <int N>
using Mma = Wgmma<N, float>;

// ---------------------------------------------------------------------------------------------
// The tile engine: the cp.async ring, the split pass and the wgmma issue.
// k contiguous rows [row0, row0 + ROWS) of a matrix with `rows` rows (row stride ld floats, a
// multiple of 4, base 16-byte aligned): 8 16-byte chunks per row into a swizzled tile at `dst`
// (a shared address), zero-filled past `rows` and past k_len.
template <int ROWS, int kThreads, class Index>
__device__ __forceinline__ void load_kmajor(u32 dst, const float* base, Index ld, long long row0, long long rows,
                                            int k0, int k_len) {
  static_assert((ROWS * 8) % kThreads == 0, "copy split");
#pragma unroll
  for (int it = 0; it < ROWS * 8 / kThreads; ++it) {
    const int i = threadIdx.x + it * kThreads;
    const int r = i >> 3, c = i & 7;
    const int k = k0 + c * 4;
    const bool ok = row0 + r < rows && k < k_len;
    const int bytes = ok ? (k_len - k >= 4 ? 16 : (k_len - k) * 4) : 0;
    const float* src = ok ? base + Index(row0 + r) * ld + k : base;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst + swizzled(r, c)), "l"(src),
                 "r"(bytes));
  }
}

// n contiguous B (K x N, row stride ldb): lane = k within the tile, so the transposing shared
// stores of a warp hit 32 distinct banks; 16-byte loads along n (N % 4 == 0 is required).
template <int BN, int kThreads, class Index, long long N_, long long ldb>
__device__ __forceinline__ void load_nmajor(char* dst, const float* base, int n0, int k0, int k_len) {
  static_assert(N_ % 4 == 0 && ldb % 4 == 0, "n-contiguous B needs N % 4 == 0");
  static_assert((BN * 8) % kThreads == 0, "copy split");
#pragma unroll
  for (int it = 0; it < BN * 8 / kThreads; ++it) {
    const int i = threadIdx.x + it * kThreads;
    const int k = i & 31, n = (i >> 5) * 4;
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (k0 + k < k_len && n0 + n < N_)
      v = *reinterpret_cast<const float4*>(base + Index(k0 + k) * Index(ldb) + n0 + n);
    const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) *reinterpret_cast<float*>(dst + swizzled(n + j, k >> 2) + (k & 3) * 4) = e[j];
  }
}

// ---------------------------------------------------------------------------------------------
// The tile engine: the cp.async ring, the split pass and the wgmma issue. The operand loads are
// the caller's: load(kt, stage) fills k tile kt of A (BM rows) at `stage` and of B (BN rows) at
// stage + kABytes (shared addresses), 128-byte swizzled, zero-filled outside the matrices.
template <class Precision, int BM, int BN, int Stages, int InFlight = -1>
struct WgEngine {
  static constexpr int BK = 32;
  static constexpr int kWarpGroups = BM / 64;
  static constexpr int kThreads = 128 * kWarpGroups;
  static constexpr int NT = BN / 8;
  static constexpr bool k3x = gemm::SameType<Precision, Tf32x3>::value;
  static constexpr int kABytes = BM * 128, kBBytes = BN * 128;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kStages = Stages;
  static constexpr int kSmemBytes = wg_engine_smem(BM, BN, Stages, k3x);   // config/gemm.h
  // Tf32 keeps one wgmma batch in flight (unless InFlight says 0), so the stage refilled is the
  // one read two steps back; 3xTF32 promotes every step, so nothing stays in flight.
  static constexpr int kInFlight = k3x ? 0 : InFlight >= 0 ? InFlight : 1;
  static constexpr int kAhead = Stages - 1 - kInFlight;  // k tiles loaded ahead of the one used
  static_assert(gemm::SameType<Precision, Tf32>::value || k3x, "the wgmma path is for tf32 / 3xTF32");
  static_assert(BM % 64 == 0 && (BN == 64 || BN == 128 || BN == 256), "tile shape");
  static_assert(kAhead >= 1, "too few stages");

  // acc += d once d's wgmma is complete.
  static __device__ __forceinline__ void promote(float (&acc)[NT][4], float (&d)[NT][4]) {
    fence_accumulators(d);
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[j][r] += d[j][r];
  }

  // In place hi = tf32_rna(x), lo = x - hi into `lo` (same offsets), for A and B of a stage.
  static __device__ __forceinline__ void split_stage(char* stage, char* lo) {
    static_assert(kStageBytes / 16 % kThreads == 0, "split pass");
#pragma unroll 4
    for (int it = 0; it < kStageBytes / 16 / kThreads; ++it) {
      const int i = threadIdx.x + it * kThreads;
      float4 x = reinterpret_cast<float4*>(stage)[i];
      float4 h, l;
      tf32_split(x.x, h.x, l.x);
      tf32_split(x.y, h.y, l.y);
      tf32_split(x.z, h.z, l.z);
      tf32_split(x.w, h.w, l.w);
      reinterpret_cast<float4*>(stage)[i] = h;
      reinterpret_cast<float4*>(lo)[i] = l;
    }
  }

  // This CTA's `ntiles` output tiles as one stream of ntiles * ktiles k steps, so the first k
  // tiles of the next output tile are in flight while the finished one is stored (a GEMM CTA
  // has one tile; conv_sm90.cuh's are persistent). load(tile, kt, stage) fills k tile kt of the
  // CTA's tile number `tile`, called in stream order; store(tile, acc) once per tile with the
  // complete accumulators: this warp's 16 rows of the warpgroup's m64 x BN block of A · B.
  template <class Load, class Store>
  static __device__ __forceinline__ void run_tiles(char* smem_raw, int ntiles, int ktiles, Load& load_tile,
                                                   const Store& store) {
    float acc[NT][4];
    clear(acc);
    if (ktiles <= 0) {  // an empty K range (a split past the end of K): zeros
      for (int t = 0; t < ntiles; ++t) store(t, acc);
      return;
    }
    const u32 raw = smem_addr(smem_raw);
    const u32 base = align_1024(raw);
    char* smem = smem_raw + (base - raw);
    const int total = ntiles * ktiles;
    auto load = [&](int g) { load_tile(g / ktiles, g % ktiles, base + (g % Stages) * kStageBytes); };
#pragma unroll 1
    for (int g = 0; g < kAhead; ++g) {
      if (g < total) load(g);
      cp_async_commit();
    }
    const int wg = threadIdx.x >> 7;
    // Tf32x3: this warpgroup's A rows and all of B in the lo buffer.
    const u32 lo_a = base + Stages * kStageBytes + wg * 64 * 128, lo_b = base + Stages * kStageBytes + kABytes;
    float part[k3x ? NT : 1][4];  // Tf32x3: one k tile's products (see [Note: promotion])
    int g = 0;  // the step in the stream: tile * ktiles + kt
#pragma unroll 1
    for (int tile = 0; tile < ntiles; ++tile) {
#pragma unroll 1
      for (int kt = 0; kt < ktiles; ++kt, ++g) {
        cp_async_wait<kAhead - 1>();
        fence_proxy_async_shared();  // wgmma reads through the async proxy
        __syncthreads();  // step g is in shared memory; the wgmma of step g - 1 - kInFlight is done
        if (g + kAhead < total) load(g + kAhead);
        cp_async_commit();
        const int s = g % Stages;
        const u32 sa = base + s * kStageBytes + wg * 64 * 128;
        const u32 sb = base + s * kStageBytes + kABytes;
        if constexpr (k3x) {
          split_stage(smem + s * kStageBytes, smem + Stages * kStageBytes);
          fence_proxy_async_shared();  // wgmma reads through the async proxy
          __syncthreads();
          // [Note: promotion] wgmma's f32 accumulation does not round to nearest: each
          // instruction's products are added to the accumulator with an error that scales with the
          // accumulator's magnitude. Accumulating a whole K in wgmma gave 8.6e-5 relative error at
          // K = 8192 (uniform [0, 1) inputs). So each k tile's twelve products start from zero
          // (scale-d = 0) in `part` and are added to acc with ordinary rounded f32 adds: 2.65e-7.
          // (Promoting every k8 step instead measured 3.06e-7: four times as many rounded adds at
          // the full accumulator's magnitude.)
          fence_accumulators(part);
          wg_fence();
#pragma unroll
          for (int kk = 0; kk < BK / 8; ++kk) {
            const u32 step = kk * 32;
            Mma<BN>::run(part, descriptor(lo_a + step), descriptor(sb + step), kk == 0 ? 0 : 1);
            Mma<BN>::run(part, descriptor(sa + step), descriptor(lo_b + step), 1);
            Mma<BN>::run(part, descriptor(sa + step), descriptor(sb + step), 1);
          }
          wg_commit();
          wg_wait<0>();
          promote(acc, part);
        } else {
          // No operand fences here: the previous step's wgmma may still be writing acc (one batch
          // stays in flight), and touching its registers would make ptxas insert a full wait.
          // Only wgmma instructions use acc until the wait<0> at the end of the tile.
          wg_fence();
#pragma unroll
          for (int kk = 0; kk < BK / 8; ++kk) {
            const u32 step = kk * 32;
            Mma<BN>::run(acc, descriptor(sa + step), descriptor(sb + step), 1);
          }
          wg_commit();
          wg_wait<kInFlight>();
        }
      }
      // The tile is complete: store it while the next tile's first loads are in flight.
      wg_wait<0>();
      fence_accumulators(acc);
      store(tile, acc);
      clear(acc);
    }
  }
};

// The epilogue of a tile: this warp's accumulators (rows m0 + 16 * warp, columns from n0) through
// gemm::store_fragments (the mma.sync C layout per warp and n8 block; 16-byte stores).
template <class Index, int NT, class Out, class Epi>
__device__ __forceinline__ void store_tile(const float (&acc)[NT][4], const Out& out, int m0, Index n0,
                                           const Epi& epi) {
  float rmax[1][2], rsum[1][2];  // row statistics: not kept by the wgmma templates
  const float (&frag)[1][NT][4] = reinterpret_cast<const float (&)[1][NT][4]>(acc);
  gemm::store_fragments<Index, 1, NT, false>(frag, out, Index(m0 + (threadIdx.x >> 5) * 16), n0, epi, rmax, rsum);
}

// The GEMM's stage loader: A k contiguous; B k contiguous (kBKMajor) or n contiguous. A and B are
// already offset to the batch and to the first k of the range.
template <class Engine, class Index, long long M_, long long N_, long long lda, long long ldb, bool kBKMajor>
struct GemmLoad {
  const float* a;
  const float* b;
  int m0, n0, k_len;
  __device__ __forceinline__ GemmLoad(const float* a_, const float* b_, int m0_, int n0_, int k_len_)
      : a(a_), b(b_), m0(m0_), n0(n0_), k_len(k_len_) {}
  __device__ __forceinline__ void operator()(int /*tile: one per CTA*/, int kt, u32 stage) const {
    constexpr int BM = Engine::kWarpGroups * 64, BN = Engine::NT * 8;
    load_kmajor<BM, Engine::kThreads, Index>(stage, a, Index(lda), m0, M_, kt * 32, k_len);
    if constexpr (kBKMajor) {
      load_kmajor<BN, Engine::kThreads, Index>(stage + Engine::kABytes, b, Index(ldb), n0, N_, kt * 32, k_len);
    } else {
      extern __shared__ __align__(16) char smem_window[];
      char* dst = smem_window + (stage + Engine::kABytes - smem_addr(smem_window));
      load_nmajor<BN, Engine::kThreads, Index, N_, ldb>(dst, b, n0, kt * 32, k_len);
    }
  }
};

template <class Precision, class Index, long long M_, long long N_, long long K_, long long Batch,
          long long lda, long long ldb, long long strideA, long long strideB, long long ldc,
          long long strideC, int BM, int BN, int Stages, bool kBKMajor, bool kVecC, bool kStreamC>
struct WgGemm {
  using Engine = WgEngine<Precision, BM, BN, Stages>;
  static constexpr int kThreads = Engine::kThreads;
  static constexpr int kSmemBytes = Engine::kSmemBytes;
  static constexpr long long kTilesM = (M_ + BM - 1) / BM, kTilesN = (N_ + BN - 1) / BN;
  static_assert(lda % 4 == 0 && ldb % 4 == 0 && strideA % 4 == 0 && strideB % 4 == 0, "16-byte rows");

  template <class OutT, class Epi>
  static __device__ __forceinline__ void run(const float* A, const float* B, OutT* C, Epi epi) {
    extern __shared__ __align__(16) char smem[];
    const Index batch = blockIdx.z;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    GemmLoad<Engine, Index, M_, N_, lda, ldb, kBKMajor> load(A + batch * Index(strideA), B + batch * Index(strideB),
                                                             m0, n0, int(K_));
    const gemm::MatrixOut<OutT, Index, kVecC, kStreamC> out{C + batch * Index(strideC), Index(ldc),
                                                            Index(M_), Index(N_), batch};
    Engine::run_tiles(smem, 1, int((K_ + 31) / 32), load, [&](int, const float (&acc)[Engine::NT][4]) {
      store_tile(acc, out, m0, Index(n0), epi);
    });
  }
};

template <class Precision, class Index, long long M_, long long N_, long long K_, long long Batch,
          long long lda, long long ldb, long long strideA, long long strideB, int BM, int BN,
          int Stages, bool kBKMajor, int SplitK>
struct WgGemmSplitK {
  using Engine = WgEngine<Precision, BM, BN, Stages>;
  static constexpr int kThreads = Engine::kThreads;
  static constexpr int kSmemBytes = Engine::kSmemBytes;
  static constexpr long long kTilesM = (M_ + BM - 1) / BM, kTilesN = (N_ + BN - 1) / BN;
  static_assert(lda % 4 == 0 && ldb % 4 == 0 && strideA % 4 == 0 && strideB % 4 == 0, "16-byte rows");
  // Each split covers a whole number of k tiles, so 16-byte copies stay aligned.
  static constexpr long long kKChunk = ((K_ + SplitK - 1) / SplitK + Engine::BK - 1) /
                                       Engine::BK * Engine::BK;
  static constexpr long long kWorkspaceFloats = SplitK * Batch * M_ * N_;

  static __device__ __forceinline__ void run(const float* A, const float* B, float* workspace) {
    extern __shared__ __align__(16) char smem[];
    const Index batch = blockIdx.z % Batch;
    const Index split = blockIdx.z / Batch;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const long long k_begin = split * kKChunk;
    const int k_len = int(K_ - k_begin < kKChunk ? K_ - k_begin : kKChunk);  // <= 0: zeros
    const float* b = B + batch * Index(strideB) + Index(kBKMajor ? k_begin : k_begin * ldb);
    GemmLoad<Engine, Index, M_, N_, lda, ldb, kBKMajor> load(A + batch * Index(strideA) + Index(k_begin), b, m0, n0,
                                                             k_len);
    const gemm::MatrixOut<float, Index, N_ % 4 == 0, false> out{
        workspace + (split * Index(Batch) + batch) * Index(M_ * N_), Index(N_), Index(M_),
        Index(N_), batch};
    Engine::run_tiles(smem, 1, k_len > 0 ? (k_len + 31) / 32 : 0, load,
                      [&](int, const float (&acc)[Engine::NT][4]) {
                        store_tile(acc, out, m0, Index(n0), gemm::Identity{});
                      });
  }
};

// ---------------------------------------------------------------------------------------------
// Small K on wgmma: see [Note: small K on wgmma] and the contract (3) at the top.
// The operand pre-pass: A (M x K, row stride lda) and B (K x N, row stride ldb, n contiguous) to
// k-contiguous, tf32-rounded copies in the workspace; Tf32x3 writes hi and lo parts.
// Workspace layout (floats): [A hi: M*K][Bt hi: N*K] and, for Tf32x3, [A lo: M*K][Bt lo: N*K].
template <long long M_, long long N_, int K_>
struct SmallKWorkspace {
  static constexpr long long kBtOffset = M_ * K_;          // Bt hi after A hi
  static constexpr long long kLoOffset = (M_ + N_) * K_;   // the lo parts after the hi parts
};

template <class Precision, class Index, long long M_, long long N_, int K_, long long lda, long long ldb>
struct SmallKPrep {
  static constexpr bool k3x = gemm::SameType<Precision, Tf32x3>::value;
  static constexpr int kThreads = 256;
  static constexpr int kCols = 32;                                   // B columns per CTA
  static constexpr long long kBBlocks = (N_ + kCols - 1) / kCols;
  static constexpr long long kAElems = M_ * K_;
  static constexpr long long kABlocks = (kAElems + kThreads * 8 - 1) / (kThreads * 8);
  static constexpr long long kGridX = kBBlocks + kABlocks;
  using Layout = SmallKWorkspace<M_, N_, K_>;
  static constexpr long long kWorkspaceFloats = (k3x ? 2 : 1) * Layout::kLoOffset;
  static_assert(K_ <= 128, "small K");

  static __device__ __forceinline__ void run(const float* A, const float* B, float* ws) {
    __shared__ float tile[K_][kCols + 1];
    float* a_hi = ws;
    float* bt_hi = ws + Layout::kBtOffset;
    if (blockIdx.x < kBBlocks) {  // B[k][n0 .. n0 + 31] -> Bt[n][k]
      const long long n0 = (long long)blockIdx.x * kCols;
      for (int i = threadIdx.x; i < K_ * kCols; i += kThreads) {
        const int k = i / kCols, c = i % kCols;
        tile[k][c] = n0 + c < N_ ? B[Index(k) * Index(ldb) + Index(n0 + c)] : 0.f;
      }
      __syncthreads();
      for (int i = threadIdx.x; i < K_ * kCols; i += kThreads) {
        const int c = i / K_, k = i % K_;
        if (n0 + c >= N_) continue;
        float hi, lo;
        tf32_split(tile[k][c], hi, lo);
        const Index o = Index(n0 + c) * Index(K_) + Index(k);
        bt_hi[o] = hi;
        if constexpr (k3x) bt_hi[Layout::kLoOffset + o] = lo;
      }
    } else {  // A, element by element (any lda)
      const long long e0 = (long long)(blockIdx.x - kBBlocks) * kThreads * 8;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const long long e = e0 + j * kThreads + threadIdx.x;
        if (e >= kAElems) break;
        const long long m = e / K_, k = e % K_;
        float hi, lo;
        tf32_split(A[Index(m) * Index(lda) + Index(k)], hi, lo);
        a_hi[e] = hi;
        if constexpr (k3x) a_hi[Layout::kLoOffset + e] = lo;
      }
    }
  }
};

// The main kernel: persistent CTAs walk a contiguous range of BM x BN tiles in row-major tile
// order. The A block (all of K) stays in shared memory while the row block is unchanged; B blocks
// come through a BStages-deep cp.async ring, BStages - 1 tiles ahead. Two accumulator sets: the
// wgmma of tile i runs on the tensor cores while the warps store tile i - 1 from the other set.
template <class Precision, class Index, long long M_, long long N_, int K_, long long ldc, int BM, int BN,
          int BStages, bool kStreamC>
struct WgSmallK {
  static constexpr bool k3x = gemm::SameType<Precision, Tf32x3>::value;
  static constexpr int kParts = k3x ? 2 : 1;                 // hi (and lo)
  static constexpr int kKTiles = (K_ + 31) / 32;            // 32-wide swizzled k tiles
  static constexpr int kKSteps = (K_ + 7) / 8;
  static constexpr int kWarpGroups = BM / 64;
  static constexpr int kThreads = 128 * kWarpGroups;
  static constexpr int NT = BN / 8;
  static constexpr int kAhead = BStages - 1;                // B blocks loaded ahead of the one used
  static constexpr int kAPart = kKTiles * BM * 128, kBPart = kKTiles * BN * 128;  // bytes
  static constexpr int kABytes = kParts * kAPart, kBBytes = kParts * kBPart;
  static constexpr int kSmemBytes = wg_small_k_smem(BM, BN, BStages, K_, k3x);   // config/gemm.h
  static_assert(kSmemBytes == kABytes + BStages * kBBytes + 1024, "wg_small_k_smem: + alignment to 1024");
  static constexpr long long kTilesM = (M_ + BM - 1) / BM, kTilesN = (N_ + BN - 1) / BN;
  static constexpr long long kTiles = kTilesM * kTilesN;
  using Layout = SmallKWorkspace<M_, N_, K_>;  // what SmallKPrep wrote
  static_assert(BM == 64 || BM == 128 || BM == 256, "BM");
  static_assert(BN == 64 || BN == 128 || BN == 256, "BN");
  static_assert(BStages >= 2, "B ring");
  static_assert(K_ % 8 == 0 && K_ <= 128, "small K, K % 8 == 0");
  static_assert(ldc % 4 == 0 && N_ % 4 == 0, "16-byte rows of C");

  // One operand block (rows [row0, row0 + ROWS) of a k-contiguous [rows][K] workspace matrix,
  // every part) into kKTiles swizzled [ROWS][32] tiles per part.
  template <int ROWS>
  static __device__ __forceinline__ void load_block(u32 dst, const float* src, long long lo_offset,
                                                    long long row0, long long rows) {
#pragma unroll
    for (int part = 0; part < kParts; ++part)
#pragma unroll
      for (int kt = 0; kt < kKTiles; ++kt)
        load_kmajor<ROWS, kThreads, Index>(dst + (part * kKTiles + kt) * ROWS * 128, src + part * lo_offset,
                                           Index(K_), row0, rows, kt * 32, K_);
  }

  // acc = A block · B block (scale-d = 0 on the first step), issued and committed, not waited.
  static __device__ __forceinline__ void issue(float (&acc)[NT][4], u32 sa, u32 sb) {
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      const u32 a = sa + (kk / 4) * BM * 128 + (kk % 4) * 32;
      const u32 b = sb + (kk / 4) * BN * 128 + (kk % 4) * 32;
      if constexpr (k3x) {  // lo·hi' + hi·lo' + hi·hi', small terms first
        Mma<BN>::run(acc, descriptor(a + kAPart), descriptor(b), kk == 0 ? 0 : 1);
        Mma<BN>::run(acc, descriptor(a), descriptor(b + kBPart), 1);
        Mma<BN>::run(acc, descriptor(a), descriptor(b), 1);
      } else {
        Mma<BN>::run(acc, descriptor(a), descriptor(b), kk == 0 ? 0 : 1);
      }
    }
    wg_commit();
  }

  template <class Epi>
  static __device__ __forceinline__ void run(const float* ws, float* C, Epi epi) {
    extern __shared__ __align__(16) char smem_raw[];
    const long long begin = kTiles * blockIdx.x / gridDim.x;
    const long long end = kTiles * (blockIdx.x + 1) / gridDim.x;
    if (begin >= end) return;
    const u32 base = align_1024(smem_addr(smem_raw));
    const u32 sa = base + (threadIdx.x >> 7) * 64 * 128;  // this warpgroup's A rows
    auto sb = [&](long long i) { return base + kABytes + u32(i % BStages) * kBBytes; };
    const float* a_ws = ws;
    const float* bt_ws = ws + Layout::kBtOffset;
    const gemm::MatrixOut<float, Index, true, kStreamC> out{C, Index(ldc), Index(M_), Index(N_), Index(0)};
    auto load_a = [&](long long tile) { load_block<BM>(base, a_ws, Layout::kLoOffset, tile / kTilesN * BM, M_); };
    auto load_b = [&](long long tile, long long i) {
      if (tile < end) load_block<BN>(sb(i), bt_ws, Layout::kLoOffset, tile % kTilesN * BN, N_);
      cp_async_commit();  // one group per tile, empty past the end: the wait counts stay uniform
    };
    auto store = [&](const float (&acc)[NT][4], long long tile) {
      store_tile(acc, out, int(tile / kTilesN * BM), Index(tile % kTilesN * BN), epi);
    };
    load_a(begin);  // joins the first tile's group
#pragma unroll 1
    for (int j = 0; j < kAhead; ++j) load_b(begin + j, j);
    // One step: tile `tile` (the i-th of this CTA) into `cur` while `prev` (tile - 1) is stored.
    auto step = [&](float (&cur)[NT][4], float (&prev)[NT][4], long long tile, long long i) {
      cp_async_wait<kAhead - 1>();
      fence_proxy_async_shared();  // wgmma reads through the async proxy
      __syncthreads();  // B(tile) landed; every wgmma of tile - 1 is done, so its ring slot is free
      if (tile != begin && tile / kTilesN != (tile - 1) / kTilesN) {  // a new row block: refill A
        load_a(tile);
        cp_async_commit();
        cp_async_wait<0>();
        fence_proxy_async_shared();
        __syncthreads();
      }
      load_b(tile + kAhead, i + kAhead);
      issue(cur, sa, sb(i));
      if (i > 0) store(prev, tile - 1);
      wg_wait<0>();
      fence_accumulators(cur);  // cur is read only after the wait
    };
    float acc0[NT][4], acc1[NT][4];
    clear(acc0);
    clear(acc1);
    long long i = 0;
#pragma unroll 1
    for (long long tile = begin; tile < end; tile += 2, i += 2) {
      step(acc0, acc1, tile, i);
      if (tile + 1 >= end) {
        store(acc0, tile);
        return;
      }
      step(acc1, acc0, tile + 1, i + 1);
    }
    store(acc1, end - 1);
  }
};

}  // namespace sm90
}  // namespace kiln
