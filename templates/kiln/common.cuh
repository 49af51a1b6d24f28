// kiln/common.cuh — small device helpers every template shares.
// Compiled by NVRTC (no host headers available): only builtins and cuda_fp16/bf16.
#pragma once

#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "kiln/dyn_dim.h"

#ifndef KILN_HD
#define KILN_HD __host__ __device__ __forceinline__
#endif

namespace kiln {

using i32 = int;
using i64 = long long;
using u32 = unsigned int;
using u64 = unsigned long long;

// ---- conversions to and from the f32 compute type
__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
// The next index of a grid-stride loop `for (i = first; i < end; i = stride_next(i, step, end))`:
// i + step, or `end` once that would reach it. It never forms i + step past `end`, so a 32-bit
// index of a tensor just under 2^31 elements cannot overflow on the loop's last step.
template <class I>
__device__ __forceinline__ I stride_next(I i, I step, I end) {
  return end - i > step ? i + step : end;
}

// ---- a dyn dim as a functor member ([Note: dyn buckets] in generator/plan/plan.h)
// [Note: dividing by a dyn extent]
// The coordinates of a flat index divide it by extents, per element. A baked-in extent is a
// constant, which the compiler divides by with a multiply and a shift; a dyn one is a value, and a
// 32-bit division by it is a sequence of about 20 instructions (a dyn C made max_pool2d(x * s)
// 1.81x slower, bench/results/2026-11-29-h200-run8). DynExtent holds a dyn dim's value with the
// multiplier and shift of Granlund and Montgomery ("Division by invariant integers using
// multiplication", 1994): for d >= 1, l = ceil(log2 d) and m = floor(2^32 (2^l - d) / d) + 1 (< 2^32),
// n / d = (umulhi(n, m) + n) >> l for every 0 <= n < 2^31, the range of a 32-bit Index. The runtime
// computes them once per launch and passes them in the dim's argument (kiln::DynDim, [Note: division
// constants on the host] in kiln/dyn_dim.h); a 64-bit index divides as usual.
template <class I>
struct DynExtent {
  I value;
  unsigned magic = 0, shift = 0;
  // From a kernel argument: the constants come computed ([Note: division constants on the host]).
  KILN_HD DynExtent(const DynDim& d) : value(I(d.value)), magic(d.magic), shift(d.shift) {}
  // From a value (tests and hand-written units): computed here, a 64-bit division.
  KILN_HD DynExtent(I v) : DynExtent(dyn_dim_arg(static_cast<long long>(v))) {}
  KILN_HD operator I() const { return value; }
};
template <class I>
KILN_HD I operator/(I n, const DynExtent<I>& d) {   // 0 <= n
  if constexpr (sizeof(I) == 4) {
    const unsigned u = unsigned(n);
#if defined(__CUDA_ARCH__)
    const unsigned hi = __umulhi(u, d.magic);
#else
    const unsigned hi = unsigned((static_cast<unsigned long long>(u) * d.magic) >> 32);
#endif
    return I((hi + u) >> d.shift);
  } else {
    return n / d.value;
  }
}
template <class I>
KILN_HD I operator%(I n, const DynExtent<I>& d) {   // 0 <= n
  return n - (n / d) * d.value;
}

// Coordinates of the index views (generator/ir/ir.h, [Note: index views]); n >= 1.
// i clamped into [0, n): replicate padding, and where a constant pad or a concat's other parts
// read (their value is then not used, but the load stays in bounds).
template <class I>
KILN_HD I clamp_index(I i, I n) {
  return i < 0 ? I(0) : (i >= n ? n - 1 : i);
}
// Reflect padding (the edge element not repeated): -1 -> 1, n -> n - 2; the planner allows pads
// < n, so one reflection lands in range (the clamp keeps any other input in bounds).
template <class I>
KILN_HD I reflect_index(I i, I n) {
  i = i < 0 ? -i : i;
  return clamp_index(i >= n ? 2 * (n - 1) - i : i, n);
}
// A gather's index value v along an axis of n: negative counts from the end, then clamped.
template <class I, class V>
KILN_HD I gather_index(V v, I n) {
  const long long w = static_cast<long long>(v) < 0 ? static_cast<long long>(v) + n : static_cast<long long>(v);
  return static_cast<I>(w < 0 ? 0 : (w >= n ? n - 1 : w));
}

// std::conditional_t without <type_traits> (NVRTC compiles these headers with no standard library).
template <bool kFirst, class A, class B> struct Choose { using type = A; };
template <class A, class B> struct Choose<false, A, B> { using type = B; };
template <bool kFirst, class A, class B> using choose_t = typename Choose<kFirst, A, B>::type;

template <class T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// ---- NaN-propagating min / max (PyTorch semantics: any NaN wins)
__device__ __forceinline__ float nan_min(float a, float b) { return (a != a || a < b) ? a : b; }
__device__ __forceinline__ float nan_max(float a, float b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ double nan_min(double a, double b) { return (a != a || a < b) ? a : b; }
__device__ __forceinline__ double nan_max(double a, double b) { return (a != a || a > b) ? a : b; }

// ---- 16-byte vectors
template <class T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

// Aligned 16-byte load (the caller guarantees alignment).
template <class T, int N>
__device__ __forceinline__ Vec<T, N> load_vec(const T* p) {
  return *reinterpret_cast<const Vec<T, N>*>(p);
}
// Streaming store: the output is not read again soon.
template <class T, int N>
__device__ __forceinline__ void store_vec_stream(T* p, const Vec<T, N>& v) {
  __stcs(reinterpret_cast<Vec<T, N>*>(p), v);
}
template <class T, int N>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, N>& v) {
  *reinterpret_cast<Vec<T, N>*>(p) = v;
}

}  // namespace kiln

// ===================================================================== memtpl helpers
// Appended for the memory-bound templates (reduce, scan, rownorm). Pure device code.
namespace kiln {

// ---- [Note: flat lanes]
// A memory-bound family's store functor (y[flat] = epi(result, flat)) may also declare
//   static constexpr bool kFlatLanes = true;
//   template <int N> void lanes(const C (&result)[N], Index first, Out (&y)[N]) const;
// for the N adjacent outputs first .. first + N - 1, `first` a multiple of N (the generator writes
// one where they share work: a dropout over them draws ceil(N / 4) Philox blocks, philox.cuh's
// DropoutWords, not N). A template that holds N adjacent outputs of aligned vectors calls
// store_lanes, which takes lanes where the functor has it, else the element form N times.
template <class Epi, class = void>
struct HasFlatLanes {
  static constexpr bool value = false;
};
template <class Epi>
struct HasFlatLanes<Epi, decltype(void(Epi::kFlatLanes))> {
  static constexpr bool value = Epi::kFlatLanes;
};

template <int N, class Epi, class C, class Out, class I>
__device__ __forceinline__ void store_lanes(const Epi& epi, const C (&result)[N], I first, Out (&y)[N]) {
  if constexpr (HasFlatLanes<Epi>::value) {
    epi.template lanes<N>(result, first, y);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) y[j] = epi(result[j], first + I(j));
  }
}

// ---- infinities and extreme values of the accumulation types
template <class C> struct Limits;
template <> struct Limits<float> {
  static __device__ __forceinline__ float lowest() { return __int_as_float(0xff800000); }   // -inf
  static __device__ __forceinline__ float highest() { return __int_as_float(0x7f800000); }  // +inf
};
template <> struct Limits<double> {
  static __device__ __forceinline__ double lowest() { return __longlong_as_double(0xfff0000000000000ULL); }
  static __device__ __forceinline__ double highest() { return __longlong_as_double(0x7ff0000000000000ULL); }
};
template <> struct Limits<int> {
  static __device__ __forceinline__ int lowest() { return -2147483647 - 1; }
  static __device__ __forceinline__ int highest() { return 2147483647; }
};
template <> struct Limits<long long> {
  static __device__ __forceinline__ long long lowest() { return -9223372036854775807LL - 1; }
  static __device__ __forceinline__ long long highest() { return 9223372036854775807LL; }
};

// NaN-propagating min/max for any arithmetic type (integers never compare unequal to themselves).
template <class C> __device__ __forceinline__ C min_prop(C a, C b) { return (a != a || a < b) ? a : b; }
template <class C> __device__ __forceinline__ C max_prop(C a, C b) { return (a != a || a > b) ? a : b; }
template <class C> __device__ __forceinline__ bool is_nan(C a) { return a != a; }
// The larger of a and b, NaN if either is NaN, in one instruction for f32 (PTX max.NaN, sm_80+):
// the NaN is the canonical one, and which zero the max of +0 and -0 is is the hardware's.
__device__ __forceinline__ float fmax_nan(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return a != a ? a : b != b ? b : a < b ? b : a;
#endif
}

// exp/log in the accumulation type (f32 -> expf, f64 -> exp).
__device__ __forceinline__ float exp_acc(float x) { return expf(x); }
__device__ __forceinline__ double exp_acc(double x) { return exp(x); }
__device__ __forceinline__ float log_acc(float x) { return logf(x); }
__device__ __forceinline__ double log_acc(double x) { return log(x); }

// ---- shared-memory addresses and cp.async (sm_80+)
// (Without __CUDA_ARCH__ — the CPU emulation test compiling the templates as host C++ — a copy
// is a plain copy, done at once, and waiting is a no-op.)
__device__ __forceinline__ u32 smem_addr(const void* p) {
#ifdef __CUDA_ARCH__
  return static_cast<u32>(__cvta_generic_to_shared(p));
#else
  return static_cast<u32>(reinterpret_cast<unsigned long long>(p));
#endif
}
// N = 16, 8 or 4 bytes global -> shared (16 bypass L1); `src_bytes` < N zero-fills the rest
// (tails and padding).
template <int N>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem, int src_bytes = N) {
  static_assert(N == 16 || N == 8 || N == 4, "cp.async copies 4, 8 or 16 bytes");
#ifdef __CUDA_ARCH__
  if constexpr (N == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem), "r"(src_bytes));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_addr(smem)), "l"(gmem), "n"(N),
                 "r"(src_bytes));
#else
  memcpy(smem, gmem, static_cast<unsigned long>(src_bytes));
  memset(static_cast<char*>(smem) + src_bytes, 0, static_cast<unsigned long>(N - src_bytes));
#endif
}
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes = 16) {
  cp_async<16>(smem, gmem, src_bytes);
}
__device__ __forceinline__ void cp_async8(void* smem, const void* gmem, int src_bytes = 8) {
  cp_async<8>(smem, gmem, src_bytes);
}
__device__ __forceinline__ void cp_async4(void* smem, const void* gmem, int src_bytes = 4) {
  cp_async<4>(smem, gmem, src_bytes);
}
__device__ __forceinline__ void cp_async_commit() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
// Waits until at most N of this thread's committed groups are in flight (its own copies only:
// another thread's copies need a barrier after their wait).
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

// ---- named barriers and dynamic shared memory (warp-specialized kernels)
// bar.sync / bar.arrive on barrier `id` (1-15; 0 is __syncthreads's) counting `threads` threads
// (a multiple of 32): a consumer syncs, a producer arrives without waiting, and the consumer sees
// the producer's shared-memory writes from before its arrive. Without __CUDA_ARCH__ (the CPU
// emulation) the emulator's KILN_EMU_NAMED_BARRIER(id, threads, wait) stands in.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
#ifdef __CUDA_ARCH__
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
#elif defined(KILN_EMU_NAMED_BARRIER)
  KILN_EMU_NAMED_BARRIER(id, threads, true);
#endif
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
#ifdef __CUDA_ARCH__
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
#elif defined(KILN_EMU_NAMED_BARRIER)
  KILN_EMU_NAMED_BARRIER(id, threads, false);
#endif
}
// ---- mbarriers (sm_80+)
// A barrier object in shared memory (8 bytes, 8-aligned) that counts arrivals and completes a
// phase when they reach the count it was initialized with; a waiter names the phase by its parity
// and returns once that phase has completed (a fresh barrier is in phase 0, so a wait for parity 1
// returns at once). An arrive releases the arriving thread's earlier accesses to the threads whose
// wait sees the phase complete. The u32 forms take the object's shared-memory address (smem_addr;
// the Hopper engines' rings, kiln/tma.cuh); the pointer forms are the same on the GPU, and without
// __CUDA_ARCH__ the CPU emulator's KILN_EMU_MBAR_INIT/ARRIVE/WAIT stand in.
__device__ __forceinline__ void mbar_init(u32 bar, u32 arrivals) {
#ifdef __CUDA_ARCH__
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
#endif
}
__device__ __forceinline__ void mbar_arrive(u32 bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
#elif defined(__CUDA_ARCH__)
  unsigned long long state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];\n" : "=l"(state) : "r"(bar) : "memory");
  (void)state;
#endif
}
// Whether the phase of parity `parity` has completed, answered at once (test_wait).
__device__ __forceinline__ bool mbar_test_now(u32 bar, u32 parity) {
  u32 done = 1;
#ifdef __CUDA_ARCH__
  asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done)
               : "r"(bar), "r"(parity)
               : "memory");
#endif
  return done != 0;
}
// The same, where sm_90's try_wait may suspend the thread a while before it answers.
__device__ __forceinline__ bool mbar_test(u32 bar, u32 parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  u32 done;
  asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done)
               : "r"(bar), "r"(parity)
               : "memory");
  return done != 0;
#else
  return mbar_test_now(bar, parity);
#endif
}
// Blocks until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
  while (!mbar_test(bar, parity)) {
  }
}
// The same, polling with test_wait, which never suspends the thread: for a waiter whose wake-up
// is on a critical path (the look-back scan's walker: [Note: the look-back handshake] in
// kiln/scan.cuh), at the cost of the issue slots its warp takes while it waits.
__device__ __forceinline__ void mbar_poll(u32 bar, u32 parity) {
  while (!mbar_test_now(bar, parity)) {
  }
}
__device__ __forceinline__ void mbar_init(unsigned long long* bar, u32 arrivals) {
#ifdef __CUDA_ARCH__
  mbar_init(smem_addr(bar), arrivals);
#elif defined(KILN_EMU_MBAR_INIT)
  KILN_EMU_MBAR_INIT(bar, arrivals);
#endif
}
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
#ifdef __CUDA_ARCH__
  mbar_arrive(smem_addr(bar));
#elif defined(KILN_EMU_MBAR_ARRIVE)
  KILN_EMU_MBAR_ARRIVE(bar);
#endif
}
// kPoll: by mbar_poll.
template <bool kPoll = false>
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, u32 parity) {
#ifdef __CUDA_ARCH__
  if constexpr (kPoll) mbar_poll(smem_addr(bar), parity);
  else mbar_wait(smem_addr(bar), parity);
#elif defined(KILN_EMU_MBAR_WAIT)
  KILN_EMU_MBAR_WAIT(bar, parity);
#endif
}

// The block's dynamic shared memory (the launch's shared_bytes), 16-byte aligned.
__device__ __forceinline__ unsigned char* dynamic_smem() {
#ifdef __CUDA_ARCH__
  extern __shared__ __align__(16) unsigned char kiln_dynamic_smem[];
  return kiln_dynamic_smem;
#elif defined(KILN_EMU_DYNAMIC_SMEM)
  return KILN_EMU_DYNAMIC_SMEM();
#else
  return nullptr;
#endif
}

// ---- raw 16-byte (and smaller) global accesses, independent of the element type.
// 16-byte read-only load through the non-coherent path (LDG.E.128.CONSTANT in SASS);
// the caller guarantees 16-byte alignment and that nothing writes the data during the kernel.
__device__ __forceinline__ uint4 ldg16(const void* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }

// Read-only element load through the non-coherent path for every element type kiln stores.
// CUDA has no __ldg overload for bool, so a bool is read as its byte (kiln's bool is one byte,
// 0 or 1, as PyTorch's).
template <class T> __device__ __forceinline__ T ldg(const T* p) { return __ldg(p); }
__device__ __forceinline__ bool ldg(const bool* p) { return __ldg(reinterpret_cast<const unsigned char*>(p)) != 0; }

// Reinterprets the bytes of one trivially copyable value as another of the same size.
template <class To, class From>
__device__ __forceinline__ To bit_cast_dev(const From& f) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast_dev: sizes differ");
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}

// Stores N elements that form one aligned vector, as the unsigned integer (vector) of its size
// where that is 4, 8 or 16 bytes: streaming (evict-first, st.global.cs) or write-back
// (st.global.wb, the default policy). A plain store of a vector of a class type (__half) is
// copied field by field: NVVM split 8 halves into four 4-byte stores. A wider vector (8 f32
// results of a row of f16) is stored as 16-byte pieces under the same policy, so it needs 16-byte
// alignment only (kVecStoreAlign). (Until 2026-12-06 those pieces were plain stores, without the
// streaming hint a row template's store_cs asks for.)
template <bool kStream, class B>
__device__ __forceinline__ void store_bits(B* p, B bits) {
  if constexpr (kStream) __stcs(p, bits);
  else __stwb(p, bits);
}
template <bool kStream, class T, int N>
__device__ __forceinline__ void store_vec_bits(T* p, const Vec<T, N>& v) {
  constexpr int kBytes = sizeof(T) * N;
  if constexpr (kBytes == 16) {
    store_bits<kStream>(reinterpret_cast<uint4*>(p), bit_cast_dev<uint4>(v));
  } else if constexpr (kBytes == 8) {
    store_bits<kStream>(reinterpret_cast<uint2*>(p), bit_cast_dev<uint2>(v));
  } else if constexpr (kBytes == 4) {
    store_bits<kStream>(reinterpret_cast<unsigned int*>(p), bit_cast_dev<unsigned int>(v));
  } else if constexpr (kBytes > 16 && kBytes % 16 == 0) {
    constexpr int kPiece = 16 / int(sizeof(T));
#pragma unroll
    for (int part = 0; part < N / kPiece; ++part) {
      Vec<T, kPiece> piece;
#pragma unroll
      for (int j = 0; j < kPiece; ++j) piece.v[j] = v.v[part * kPiece + j];
      store_vec_bits<kStream, T, kPiece>(p + part * kPiece, piece);
    }
  } else {
    store_vec<T, N>(p, v);
  }
}
// The alignment store_vec_bits needs for a Vec<T, N>: its size, up to 16 bytes.
template <class T, int N>
inline constexpr unsigned kVecStoreAlign = sizeof(T) * N < 16 ? unsigned(sizeof(T) * N) : 16u;
template <class T, int N>
__device__ __forceinline__ void store_cs(T* p, const Vec<T, N>& v) {
  store_vec_bits<true>(p, v);
}

// True when p is aligned to `bytes` (a power of two).
__device__ __forceinline__ bool is_aligned(const void* p, unsigned bytes) {
  return (reinterpret_cast<unsigned long long>(p) & (bytes - 1)) == 0;
}

// ---- warp-level helpers on any trivially copyable value (shuffled 4 bytes at a time)
namespace detail {
template <class A, class Shuffle>
__device__ __forceinline__ A shuffle_words(const A& a, Shuffle shuffle) {
  static_assert(sizeof(A) % 4 == 0, "shuffled values must be a multiple of 4 bytes");
  unsigned w[sizeof(A) / 4];
  memcpy(w, &a, sizeof(A));
#pragma unroll
  for (int k = 0; k < int(sizeof(A) / 4); ++k) w[k] = shuffle(w[k]);
  A r;
  memcpy(&r, w, sizeof(A));
  return r;
}
}  // namespace detail
template <class A>
__device__ __forceinline__ A shfl_xor_any(const A& a, int lane_mask) {
  return detail::shuffle_words(a, [lane_mask](unsigned w) { return __shfl_xor_sync(0xffffffffu, w, lane_mask); });
}
template <class A>
__device__ __forceinline__ A shfl_up_any(const A& a, int delta) {
  return detail::shuffle_words(a, [delta](unsigned w) { return __shfl_up_sync(0xffffffffu, w, delta); });
}
template <class A>
__device__ __forceinline__ A shfl_any(const A& a, int src_lane) {
  return detail::shuffle_words(a, [src_lane](unsigned w) { return __shfl_sync(0xffffffffu, w, src_lane); });
}

}  // namespace kiln
