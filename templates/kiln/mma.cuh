// kiln/mma.cuh — tensor-core fragment helpers, tf32 splitting (cp.async wrappers: kiln/common.cuh).
//
// [Note: fragment layouts]
// Every tensor-core path in kiln uses the warp-level mma.sync shapes of sm_80+:
//   f32 inputs : mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
//   f16 / bf16 : mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32
// With lane = 32-lane index, g = lane >> 2 ("group") and t = lane & 3 ("thread in group"):
//   m16n8k8 A (16x8, row): a0 (g, t)   a1 (g+8, t)   a2 (g, t+4)   a3 (g+8, t+4)
//   m16n8k8 B (8x8, col):  b0 (k=t, n=g)              b1 (k=t+4, n=g)
//   m16n8k16 A: a0 (g, 2t..2t+1)  a1 (g+8, 2t..2t+1)  a2 (g, 2t+8..)  a3 (g+8, 2t+8..)
//   m16n8k16 B: b0 (k=2t..2t+1, n=g)                  b1 (k=2t+8..2t+9, n=g)
//   C/D (16x8, both shapes): c0 (g, 2t)  c1 (g, 2t+1)  c2 (g+8, 2t)  c3 (g+8, 2t+1)
// The Ieee (plain FFMA) path computes exactly the same C/D ownership from the same shared
// memory, so one epilogue serves all three precisions.
//
// 3xTF32: x = hi + lo with hi = tf32_rna(x) and lo = x - hi (exact in f32). The tensor core
// reads only the top 19 bits of lo (it truncates), which costs ~2^-11 of lo, i.e. ~2^-22 of x:
// below f32 rounding. acc += hi*hi' + hi*lo' + lo*hi' (small terms first to keep their bits).
#pragma once

#include "kiln/common.cuh"

namespace kiln {

// ---- precision tags (f32 inputs). f16/bf16 inputs always take the m16n8k16 tensor-core path.
struct Ieee {};    // plain FFMA, f32 all the way
struct Tf32 {};    // one tf32 product (round-to-nearest inputs), ~1e-3 relative error
struct Tf32x3 {};  // split-precision, three tf32 products, f32-level accuracy

// ---- proxy fence (sm_90+).
// Makes this thread's completed generic-proxy shared stores (st.shared, cp.async) visible to
// the async proxy (bulk copies, wgmma operand reads).
__device__ __forceinline__ void fence_proxy_async_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// ---- ldmatrix (16-bit elements). Lane l supplies the address of row (l & 7) of matrix (l >> 3);
// each destination register receives, in lane (g, t), row g, elements 2t and 2t+1 of one 8x8
// matrix: exactly an mma.sync 16-bit A/B fragment register when rows run along M (A) or N (B)
// and k is contiguous.
__device__ __forceinline__ void ldmatrix_x4(u32 (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem_row)));
}
__device__ __forceinline__ void ldmatrix_x2(u32 (&r)[2], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr(smem_row)));
}
// Transposing form: for tiles stored with M (or N) contiguous.
__device__ __forceinline__ void ldmatrix_x4_trans(u32 (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem_row)));
}

// ---- tf32
// Round to the nearest tf32 (ties away from zero) with two integer ops instead of cvt.rna: the
// conversion is issued for every fragment element of every k step, and integer adds/ands run at
// full rate. Equal to cvt.rna.tf32.f32 for every finite input and infinities; a NaN whose payload
// sits only in the low 13 bits would become infinity (canonical NaNs stay NaN).
__device__ __forceinline__ u32 tf32_rna(float x) {
  return (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
}
// The same through the conversion instruction (kept for comparisons in experiments).
__device__ __forceinline__ u32 tf32_rna_cvt(float x) {
  u32 r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ void tf32_split(float x, u32& hi, u32& lo) {
  hi = tf32_rna(x);
  lo = __float_as_uint(x - __uint_as_float(hi));
}
// The same as f32 values (what shared-memory and workspace copies of split operands hold).
__device__ __forceinline__ void tf32_split(float x, float& hi, float& lo) {
  u32 h, l;
  tf32_split(x, h, l);
  hi = __uint_as_float(h);
  lo = __uint_as_float(l);
}

// ---- mma.sync wrappers; d += a * b. (Without __CUDA_ARCH__, the CPU emulator's
// KILN_EMU_MMA_TF32 stands in for the tf32 one: tests/generator/cuda_emulator.h.)
__device__ __forceinline__ void mma_tf32_16x8x8(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
#if !defined(__CUDA_ARCH__) && defined(KILN_EMU_MMA_TF32)
  KILN_EMU_MMA_TF32(d, a, b);
#else
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
__device__ __forceinline__ void mma_f16_16x8x16(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_bf16_16x8x16(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <class T>
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]);
template <>
__device__ __forceinline__ void mma_16x8x16<__half>(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  mma_f16_16x8x16(d, a, b);
}
template <>
__device__ __forceinline__ void mma_16x8x16<__nv_bfloat16>(float (&d)[4], const u32 (&a)[4],
                                                           const u32 (&b)[2]) {
  mma_bf16_16x8x16(d, a, b);
}

// Two 16-bit values packed into one 32-bit fragment register, lower k in the low half.
template <class T>
__device__ __forceinline__ u32 pack2(T lo, T hi) {
  unsigned short l = *reinterpret_cast<const unsigned short*>(&lo);
  unsigned short h = *reinterpret_cast<const unsigned short*>(&hi);
  return static_cast<u32>(l) | (static_cast<u32>(h) << 16);
}

// Streaming 16-byte store of four floats (st.global.cs): C is written once and never re-read.
__device__ __forceinline__ void store_f4_stream(float* p, float a, float b, float c, float d) {
  __stcs(reinterpret_cast<float4*>(p), make_float4(a, b, c, d));
}

}  // namespace kiln
