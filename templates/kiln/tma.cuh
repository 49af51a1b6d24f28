// kiln/tma.cuh — the Hopper bulk tensor copy (TMA), mbarriers and register reallocation (sm_90).
//
// A kernel takes each tensor map by value, `const __grid_constant__ kiln::TensorMap map` (the
// runtime encodes it with cuTensorMapEncodeTiled over the buffer's address at launch, from the
// plan's TensorMapSpec), and passes its address to tma_load: the copy engine reads the map from
// the kernel's parameter space.
//
// [Note: the stage handshake]
// A ring of shared-memory stages, each with two mbarriers:
// - full[s]: the producer arms it with the bytes it expects (arrive.expect_tx, one arrival),
//   the TMA unit completes those bytes; a consumer waits on it before reading stage s;
// - empty[s]: every consumer warp arrives once it no longer reads stage s; the producer waits
//   on it before overwriting the stage.
// Both sides walk the stages in the same order, so use u of stage s is phase u of its barriers
// and a waiter needs only the parity (u & 1). A fresh barrier is in phase 0, and a wait for
// parity 1 returns at once: so the producer's first pass over the ring (u = 0) waits for
// parity 1 on empty[] and does not block.
// The tail: after its last load the producer goes on waiting on empty[] for Stages more uses
// without loading. When those waits return, every consumer that reads this CTA's stages has
// released them; with a cluster that includes the peers' consumers, whose arrivals come from
// other SMs, and the peers' multicasts into this CTA (each was waited for on full[] before its
// release). So the CTA may exit without a cluster barrier at the end.
#pragma once

#include "kiln/common.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "kiln/tma.cuh needs sm_90 (the bulk tensor copy)"
#endif

namespace kiln {

// CUtensorMap: 128 opaque bytes, 64-byte aligned (cuda.h is not available to NVRTC).
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

namespace sm90 {

// mbar_init, mbar_arrive and mbar_wait: kiln/common.cuh.
// Makes the initialized barriers visible to the async proxy (the TMA unit) and the other threads;
// a __syncthreads() must follow.
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` the TMA unit will complete on this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void prefetch_tensor_map(const TensorMap& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<u64>(&map)) : "memory");
}
// One box of a 3-D map at coordinates (c0 innermost, c1, c2) into shared memory at `dst`,
// completing its bytes on `bar`. Elements outside the tensor are written as zeros.
__device__ __forceinline__ void tma_load(u32 dst, const TensorMap& map, u32 bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}

// One box of a 4-D map at coordinates (c0 innermost, c1, c2, c3).
__device__ __forceinline__ void tma_load_4d(u32 dst, const TensorMap& map, u32 bar, int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}

// im2col mode (a 4-D NHWC map from cuTensorMapEncodeIm2col): the map's channelsPerPixel channels
// from c0 of each of its pixelsPerColumn pixels, walked from (w, h, n) along W, then H, then N
// inside the map's pixel box (its lower and upper corners), each read at the pixel's position
// plus (off_w, off_h), one 128-byte row per pixel. Elements outside the tensor are zeros.
// Coordinates and offsets are innermost first, as the map's dims are.
__device__ __forceinline__ void tma_load_im2col(u32 dst, const TensorMap& map, u32 bar, int c0, int w, int h, int n,
                                                unsigned short off_w, unsigned short off_h) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
      "%5}], [%6], {%7, %8};\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(&map)), "r"(c0), "r"(w), "r"(h), "r"(n), "r"(bar), "h"(off_w), "h"(off_h)
      : "memory");
}

// The same over a 5-D NDHWC map (a conv over three spatial axes): walked from (w, h, d, n) along W,
// then H, then D, then N, each pixel read at its position plus (off_w, off_h, off_d).
__device__ __forceinline__ void tma_load_im2col(u32 dst, const TensorMap& map, u32 bar, int c0, int w, int h, int d,
                                                int n, unsigned short off_w, unsigned short off_h,
                                                unsigned short off_d) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
      "%5, %6}], [%7], {%8, %9, %10};\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(&map)), "r"(c0), "r"(w), "r"(h), "r"(d), "r"(n), "r"(bar), "h"(off_w), "h"(off_h),
      "h"(off_d)
      : "memory");
}

// Clusters (sm_90). A kernel declared with __cluster_dims__ runs its CTAs in groups that can read
// each other's shared memory: the TMA unit multicasts one box into every CTA of `cta_mask` (at the
// same shared-memory offset, completing the bytes on the mbarrier at the same offset in each), and
// a thread can arrive on a peer CTA's mbarrier.
__device__ __forceinline__ u32 cluster_rank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Every (non-exited) thread of every CTA of the cluster arrives, then waits for the others:
// shared-memory writes and mbarrier initializations before it are visible cluster-wide after it.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
// One arrival on the mbarrier at offset `bar` of cluster CTA `cta` (this CTA included), with the
// default (CTA-scope) release: the consumers arrive once their reads of a stage have completed,
// and a cluster-scope release would wait on this thread's outstanding global stores besides.
__device__ __forceinline__ void mbar_arrive_cluster(u32 bar, u32 cta) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}
// tma_load into every CTA of `cta_mask` (bit r: cluster rank r).
__device__ __forceinline__ void tma_load_multicast(u32 dst, const TensorMap& map, u32 bar, int c0, int c1, int c2,
                                                   unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(cta_mask)
      : "memory");
}

// Register reallocation between warpgroups (sm_90a; the kernel needs a register cap at entry,
// __launch_bounds__(threads, 1)).
template <int N>
__device__ __forceinline__ void regs_release() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void regs_claim() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

}  // namespace sm90
}  // namespace kiln
