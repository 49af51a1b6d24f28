// kiln/common.cuh — small device helpers every template shares.
// Compiled by NVRTC (no host headers available): only builtins and cuda_fp16/bf16.
#pragma once

#include <cuda_fp16.h>
#include <cuda_bf16.h>

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
