// kiln/wgmma.cuh — Hopper warpgroup MMA (wgmma.mma_async, sm_90a) and its shared-memory
// matrix descriptors, shared by gemm_sm90.cuh, gemm_tma.cuh and conv_sm90.cuh.
//
// [Note: wgmma operands in shared memory]
// Every operand tile kiln hands to wgmma is 128-byte swizzled: rows of 128 bytes, 16-byte chunk
// c of row r stored at chunk c ^ (r % 8), the pattern repeating every 8 rows (1024 bytes, so a
// tile starts on a 1024-byte boundary). The TMA unit writes exactly this layout when its tensor
// map says CU_TENSOR_MAP_SWIZZLE_128B, and the cp.async loaders of gemm_sm90.cuh write it by hand.
// - K-major (k contiguous: A row-major, B column-major): a row is 128 bytes of k of one m (or n);
//   8-row groups are 1024 bytes apart (the descriptor's stride byte offset); the leading byte
//   offset is unused. The k-th 32-byte step of the 128-byte atom starts 32 bytes further in.
// - MN-major (m or n contiguous; f16 and bf16 only, the instruction's transpose bit): a row is
//   64 elements of m (or n) at one k; 8 k-rows make a 1024-byte atom, atoms along k are 1024
//   bytes apart (stride byte offset), and the next 64 elements of m or n start `chunk_bytes`
//   further (leading byte offset). A k16 step starts 2048 bytes (16 rows) further.
// The accumulator layout of m64nNk*: warp w of the warpgroup, lane (g = lane / 4, t = lane % 4)
// holds d[j][r] = D(16w + g + 8 (r / 2), 8j + 2t + (r % 2)): per warp, the mma.sync C fragment
// of every n8 block, so gemm::store_fragments stores it.
#pragma once

#include "kiln/common.cuh"
#include "kiln/mma.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "kiln/wgmma.cuh needs the arch-specific target sm_90a (wgmma)"
#endif

namespace kiln {
namespace sm90 {

// Byte offset of 16-byte chunk `chunk` (0..7) of row `row` in a 128-byte-swizzled tile.
__device__ __forceinline__ int swizzled(int row, int chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}

// Descriptor fields: start address, leading and stride byte offsets (each >> 4), 128-byte swizzle.
__device__ __forceinline__ u64 make_descriptor(u32 smem_byte_addr, u32 leading_bytes, u32 stride_bytes) {
  return u64((smem_byte_addr & 0x3FFFF) >> 4) | (u64(leading_bytes >> 4) << 16) | (u64(stride_bytes >> 4) << 32) |
         (u64(1) << 62);
}
// K-major tile: 8-row groups 1024 bytes apart; the leading byte offset is unused (1 by convention).
__device__ __forceinline__ u64 descriptor(u32 smem_byte_addr) { return make_descriptor(smem_byte_addr, 16, 1024); }
// MN-major tile whose 64-element chunks of m (or n) are `chunk_bytes` apart.
__device__ __forceinline__ u64 descriptor_mn(u32 smem_byte_addr, u32 chunk_bytes) {
  return make_descriptor(smem_byte_addr, chunk_bytes, 1024);
}

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// The first 1024-byte boundary at or after a shared address: swizzled tiles start there (the
// 128-byte swizzle repeats every 8 rows).
__device__ __forceinline__ u32 align_1024(u32 smem) { return (smem + 1023u) & ~1023u; }

template <int NT>
__device__ __forceinline__ void clear(float (&acc)[NT][4]) {
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) acc[j][r] = 0.f;
}
// Keeps the compiler from moving accumulator reads or writes across an in-flight wgmma.
template <int NT>
__device__ __forceinline__ void fence_accumulators(float (&d)[NT][4]) {
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) asm volatile("" : "+f"(d[j][r])::"memory");
}

// A 32-bit load from shared memory (volatile: it stays after the mbarrier wait that guards it).
__device__ __forceinline__ u32 ld_shared_u32(u32 smem_byte_addr) {
  u32 v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(smem_byte_addr));
  return v;
}
// Keeps an A register set alive (its registers unreused) up to this point: a wgmma in flight
// reads its A registers until its batch completes.
template <int S>
__device__ __forceinline__ void keep_live(u32 (&a)[S][4]) {
#pragma unroll
  for (int i = 0; i < S; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r) asm volatile("" ::"r"(a[i][r]) : "memory");
}

// d (m64 x N, f32) = A · B + (scale_d ? d : 0), both operands from descriptors.
//   E = float: tf32 inputs, k8, both operands K-major;
//   E = __half / __nv_bfloat16: k16; kTA / kTB say A / B are MN-major (the transpose bits).
template <int N, class E, bool kTA = false, bool kTB = false>
struct Wgmma;

#define KILN_WG_REGS_32 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define KILN_WG_OUTS_32 KILN_WG_D4(0), KILN_WG_D4(1), KILN_WG_D4(2), KILN_WG_D4(3)
#define KILN_WG_REGS_64 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define KILN_WG_OUTS_64 \
    KILN_WG_D4(0), KILN_WG_D4(1), KILN_WG_D4(2), KILN_WG_D4(3), KILN_WG_D4(4), KILN_WG_D4(5), KILN_WG_D4(6), KILN_WG_D4(7)
#define KILN_WG_REGS_128 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define KILN_WG_OUTS_128 \
    KILN_WG_D4(0), KILN_WG_D4(1), KILN_WG_D4(2), KILN_WG_D4(3), KILN_WG_D4(4), KILN_WG_D4(5), KILN_WG_D4(6), KILN_WG_D4(7), \
    KILN_WG_D4(8), KILN_WG_D4(9), KILN_WG_D4(10), KILN_WG_D4(11), KILN_WG_D4(12), KILN_WG_D4(13), KILN_WG_D4(14), KILN_WG_D4(15)
#define KILN_WG_REGS_256 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define KILN_WG_OUTS_256 \
    KILN_WG_D4(0), KILN_WG_D4(1), KILN_WG_D4(2), KILN_WG_D4(3), KILN_WG_D4(4), KILN_WG_D4(5), KILN_WG_D4(6), KILN_WG_D4(7), \
    KILN_WG_D4(8), KILN_WG_D4(9), KILN_WG_D4(10), KILN_WG_D4(11), KILN_WG_D4(12), KILN_WG_D4(13), KILN_WG_D4(14), KILN_WG_D4(15), \
    KILN_WG_D4(16), KILN_WG_D4(17), KILN_WG_D4(18), KILN_WG_D4(19), KILN_WG_D4(20), KILN_WG_D4(21), KILN_WG_D4(22), KILN_WG_D4(23), \
    KILN_WG_D4(24), KILN_WG_D4(25), KILN_WG_D4(26), KILN_WG_D4(27), KILN_WG_D4(28), KILN_WG_D4(29), KILN_WG_D4(30), KILN_WG_D4(31)

#define KILN_WG_D4(j) "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])

// DA, DB, SC, TA, TB: the operand numbers after the N/2 accumulator registers.
#define KILN_WGMMA_TF32(N, DA, DB, SC)                                                                  \
  template <>                                                                                     \
  struct Wgmma<N, float, false, false> {                                                          \
    static constexpr int kK = 8;                                                                  \
    static __device__ __forceinline__ void run(float (&d)[N / 8][4], u64 da, u64 db, int scale_d) { \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #SC ", 0;\n"                              \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 {" KILN_WG_REGS_##N       \
                   "}, %" #DA ", %" #DB ", p, 1, 1;\n}\n"                                         \
                   : KILN_WG_OUTS_##N                                                             \
                   : "l"(da), "l"(db), "r"(scale_d));                                             \
    }                                                                                             \
  };
#define KILN_WGMMA_16(N, T, PTX, DA, DB, SC, TA, TB)                                               \
  template <bool kTA, bool kTB>                                                                   \
  struct Wgmma<N, T, kTA, kTB> {                                                                  \
    static constexpr int kK = 16;                                                                 \
    static __device__ __forceinline__ void run(float (&d)[N / 8][4], u64 da, u64 db, int scale_d) { \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #SC ", 0;\n"                              \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " {" KILN_WG_REGS_##N \
                   "}, %" #DA ", %" #DB ", p, 1, 1, %" #TA ", %" #TB ";\n}\n"                     \
                   : KILN_WG_OUTS_##N                                                             \
                   : "l"(da), "l"(db), "r"(scale_d), "n"(int(kTA)), "n"(int(kTB)));               \
    }                                                                                             \
  };

// d (m64 x N, f32) = A · B + (scale_d ? d : 0), tf32, A from registers (four .b32 per thread:
// a[0] = A(16w + g, t), a[1] = A(16w + g + 8, t), a[2] = A(16w + g, t + 4), a[3] = A(16w + g + 8,
// t + 4) for warp w, g = lane / 4, t = lane % 4: the mma.sync m16n8k8 A fragment per warp), B
// k-major from its descriptor. The registers must not change until the instruction's batch has
// completed (wgmma.wait_group).
template <int N>
struct WgmmaRegA;
#define KILN_WGMMA_TF32_RA(N, A0, A1, A2, A3, DB, SC)                                                            \
  template <>                                                                                     \
  struct WgmmaRegA<N> {                                                                           \
    static constexpr int kK = 8;                                                                  \
    static __device__ __forceinline__ void run(float (&d)[N / 8][4], const u32 (&a)[4], u64 db, int scale_d) { \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #SC ", 0;\n"                              \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 {" KILN_WG_REGS_##N       \
                   "}, {%" #A0 ", %" #A1 ", %" #A2 ", %" #A3 "}, %" #DB ", p, 1, 1;\n}\n"                                                    \
                   : KILN_WG_OUTS_##N                                                             \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));          \
    }                                                                                             \
  };

// d (m64 x N, f32) += A · B for f16 / bf16 with A from registers (four .b32 per thread, each two
// elements along k: a[0] = A(16w + g, 2t..2t+1), a[1] = A(16w + g + 8, 2t..), a[2] = A(16w + g,
// 2t+8..2t+9), a[3] = A(16w + g + 8, 2t+8..): the mma.sync m16n8k16 A fragment per warp), B from
// its descriptor (kTB: MN-major). The registers must not change until the batch has completed.
template <int N, class E, bool kTB>
struct WgmmaRegA16;
#define KILN_WGMMA_16_RA(N, T, PTX, A0, A1, A2, A3, DB, SC, TB)                                        \
  template <bool kTB>                                                                             \
  struct WgmmaRegA16<N, T, kTB> {                                                                 \
    static constexpr int kK = 16;                                                                 \
    static __device__ __forceinline__ void run(float (&d)[N / 8][4], const u32 (&a)[4], u64 db, int scale_d) { \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #SC ", 0;\n"                              \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " {" KILN_WG_REGS_##N \
                   "}, {%" #A0 ", %" #A1 ", %" #A2 ", %" #A3 "}, %" #DB ", p, 1, 1, %" #TB ";\n}\n"   \
                   : KILN_WG_OUTS_##N                                                             \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(int(kTB))); \
    }                                                                                             \
  };

// (tf32 m64n32: the TMA conv engine's channel tiles of at most 32 out channels.)
KILN_WGMMA_TF32(32, 16, 17, 18)
KILN_WGMMA_TF32(64, 32, 33, 34)
KILN_WGMMA_TF32(128, 64, 65, 66)
KILN_WGMMA_TF32(256, 128, 129, 130)
KILN_WGMMA_TF32_RA(32, 16, 17, 18, 19, 20, 21)
KILN_WGMMA_TF32_RA(64, 32, 33, 34, 35, 36, 37)
KILN_WGMMA_TF32_RA(128, 64, 65, 66, 67, 68, 69)
KILN_WGMMA_TF32_RA(256, 128, 129, 130, 131, 132, 133)
KILN_WGMMA_16(64, __half, "f16", 32, 33, 34, 35, 36)
KILN_WGMMA_16(128, __half, "f16", 64, 65, 66, 67, 68)
KILN_WGMMA_16(256, __half, "f16", 128, 129, 130, 131, 132)
KILN_WGMMA_16(64, __nv_bfloat16, "bf16", 32, 33, 34, 35, 36)
KILN_WGMMA_16(128, __nv_bfloat16, "bf16", 64, 65, 66, 67, 68)
KILN_WGMMA_16(256, __nv_bfloat16, "bf16", 128, 129, 130, 131, 132)

KILN_WGMMA_16_RA(64, __half, "f16", 32, 33, 34, 35, 36, 37, 38)
KILN_WGMMA_16_RA(128, __half, "f16", 64, 65, 66, 67, 68, 69, 70)
KILN_WGMMA_16_RA(256, __half, "f16", 128, 129, 130, 131, 132, 133, 134)
KILN_WGMMA_16_RA(64, __nv_bfloat16, "bf16", 32, 33, 34, 35, 36, 37, 38)
KILN_WGMMA_16_RA(128, __nv_bfloat16, "bf16", 64, 65, 66, 67, 68, 69, 70)
KILN_WGMMA_16_RA(256, __nv_bfloat16, "bf16", 128, 129, 130, 131, 132, 133, 134)

#undef KILN_WGMMA_TF32
#undef KILN_WGMMA_16_RA
#undef KILN_WGMMA_TF32_RA
#undef KILN_WGMMA_16
#undef KILN_WG_D4
#undef KILN_WG_REGS_32
#undef KILN_WG_OUTS_32
#undef KILN_WG_REGS_64
#undef KILN_WG_REGS_128
#undef KILN_WG_REGS_256
#undef KILN_WG_OUTS_64
#undef KILN_WG_OUTS_128
#undef KILN_WG_OUTS_256

}  // namespace sm90
}  // namespace kiln
