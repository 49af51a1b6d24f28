// elementwise_check — times grid shapes and cache hints for a streaming elementwise kernel
// (y = relu(x), and y = relu(a + b)) on large f32 tensors, against a device-to-device copy of
// the same bytes, to choose elementwise.cuh's launch (issue 22). Each variant's output is checked
// against the CPU on a sample, after poisoning it with 0xFF bytes.
//
//   nvcc -O3 -std=c++17 -arch=sm_90a bench/standalone/elementwise_check.cu -o /tmp/ew && /tmp/ew
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); std::exit(1); } } while (0)

enum Hint { kPlain, kNc, kStream };

__device__ __forceinline__ float4 ld(const float* p, int hint) {
  if (hint == kPlain) return *reinterpret_cast<const float4*>(p);
  float4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
  return r;
}
__device__ __forceinline__ void st(float* p, float4 v, int hint) {
  if (hint == kStream) __stcs(reinterpret_cast<float4*>(p), v);
  else *reinterpret_cast<float4*>(p) = v;
}
__device__ __forceinline__ float4 relu4(float4 a) {
  return make_float4(a.x < 0 ? 0 : a.x, a.y < 0 ? 0 : a.y, a.z < 0 ? 0 : a.z, a.w < 0 ? 0 : a.w);
}
__device__ __forceinline__ float4 add4(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }

// Grid-stride over float4s, U steps per iteration (loads first), int64 indices.
template <int U, int kLd, int kSt, bool kTwo>
__global__ void ew_stride(const float* a, const float* b, float* y, long long n4) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; v + (U - 1) * stride < n4; v += U * stride) {
    float4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) { r[u] = ld(a + 4 * (v + u * stride), kLd); if (kTwo) r[u] = add4(r[u], ld(b + 4 * (v + u * stride), kLd)); }
#pragma unroll
    for (int u = 0; u < U; ++u) st(y + 4 * (v + u * stride), relu4(r[u]), kSt);
  }
  for (; v < n4; v += stride) { float4 r = ld(a + 4 * v, kLd); if (kTwo) r = add4(r, ld(b + 4 * v, kLd)); st(y + 4 * v, relu4(r), kSt); }
}
// One tile per block (no loop): each thread U float4s spaced blockDim apart. Grid = ceil(n4 / (U*T)).
template <int U, int kLd, int kSt, bool kTwo>
__global__ void ew_tile(const float* a, const float* b, float* y, long long n4) {
  const long long base = (long long)blockIdx.x * blockDim.x * U + threadIdx.x;
  float4 r[U];
#pragma unroll
  for (int u = 0; u < U; ++u) { long long v = base + (long long)u * blockDim.x; if (v < n4) { r[u] = ld(a + 4 * v, kLd); if (kTwo) r[u] = add4(r[u], ld(b + 4 * v, kLd)); } }
#pragma unroll
  for (int u = 0; u < U; ++u) { long long v = base + (long long)u * blockDim.x; if (v < n4) st(y + 4 * v, relu4(r[u]), kSt); }
}

// Layer norm's last step: y = (x - mu[row]) * r[row] * w[col] + b[col], x [rows, cols] with
// cols % 4 == 0 (w and b broadcast over rows, mu and r over columns). Grid-stride, int32 indices.
__global__ void ln_stride(const float* x, const float* mu, const float* r, const float* w, const float* b, float* y,
                          int n4, int cols) {
  const int stride = gridDim.x * blockDim.x;
  for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n4; v += stride) {
    const int i = v * 4, row = i / cols, col = i % cols;
    float4 xv = *reinterpret_cast<const float4*>(x + i), wv = *reinterpret_cast<const float4*>(w + col),
           bv = *reinterpret_cast<const float4*>(b + col);
    const float m = mu[row], s = r[row];
    xv.x = (xv.x - m) * s * wv.x + bv.x; xv.y = (xv.y - m) * s * wv.y + bv.y;
    xv.z = (xv.z - m) * s * wv.z + bv.z; xv.w = (xv.w - m) * s * wv.w + bv.w;
    *reinterpret_cast<float4*>(y + i) = xv;
  }
}

__global__ void fill(float* p, long long n, unsigned salt) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ salt; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = (h & 0xFFFFFF) / 16777216.0f * 2.0f - 1.0f;
  }
}

struct Variant { const char* name; void (*launch)(const float*, const float*, float*, long long, int); };

template <class K> float time_it(K k, int reps = 20) {
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) k();
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) { CK(cudaEventRecord(e0)); k(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms); }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}

int main(int argc, char** argv) {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  struct Shape { const char* name; long long n; bool two; };
  Shape shapes[] = {{"relu 4096x393216", 4096LL * 393216, false}, {"relu(a+b) 16384^2", 16384LL * 16384, true}, {"relu 16384^2", 16384LL * 16384, false}};
  for (auto& s : shapes) {
    float *a, *b = nullptr, *y;
    CK(cudaMalloc(&a, s.n * 4)); CK(cudaMalloc(&y, s.n * 4)); if (s.two) CK(cudaMalloc(&b, s.n * 4));
    fill<<<4096, 256>>>(a, s.n, 1); if (s.two) fill<<<4096, 256>>>(b, s.n, 2); CK(cudaDeviceSynchronize());
    const long long n4 = s.n / 4;
    const double bytes = (s.two ? 3.0 : 2.0) * 4.0 * s.n;
    float copy = time_it([&] { CK(cudaMemcpyAsync(y, a, s.n * 4, cudaMemcpyDeviceToDevice)); });
    std::printf("%-20s copy of %.2f GB: %.3f ms (%.2f TB/s)\n", s.name, 2.0 * 4 * s.n / 1e9, copy, 2.0 * 4 * s.n / copy / 1e9);
    auto run = [&](const char* name, auto launch) {
      CK(cudaMemset(y, 0xFF, s.n * 4));
      launch(); CK(cudaDeviceSynchronize());
      // check a sample
      std::vector<float> ha(1 << 16), hb(1 << 16), hy(1 << 16);
      long long offs[3] = {0, s.n / 2 - 5000, s.n - (1 << 16)};
      int bad = 0;
      for (long long off : offs) {
        CK(cudaMemcpy(ha.data(), a + off, 4 << 16, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hy.data(), y + off, 4 << 16, cudaMemcpyDeviceToHost));
        if (s.two) CK(cudaMemcpy(hb.data(), b + off, 4 << 16, cudaMemcpyDeviceToHost));
        for (int i = 0; i < (1 << 16); ++i) { float r = ha[i] + (s.two ? hb[i] : 0.f); r = r < 0 ? 0 : r; if (!(hy[i] == r)) ++bad; }
      }
      float ms = time_it(launch);
      std::printf("  %-34s %.3f ms  %.2f TB/s  %.1f%% of copy  %s\n", name, ms, bytes / ms / 1e9, 100.0 * (copy * bytes / (2.0 * 4 * s.n)) / ms, bad ? "WRONG" : "ok");
    };
#define STRIDE(U, L, S, CAP, T) run(#U " stride cap " #CAP "/SM T" #T " ld" #L " st" #S, [&] { long long blocks = std::min<long long>((n4 + T - 1) / T, (long long)sms * CAP); \
      if (s.two) ew_stride<U, L, S, true><<<blocks, T>>>(a, b, y, n4); else ew_stride<U, L, S, false><<<blocks, T>>>(a, b, y, n4); })
#define TILE(U, L, S, T) run(#U " tile T" #T " ld" #L " st" #S, [&] { long long blocks = (n4 + T * U - 1) / (T * U); \
      if (s.two) ew_tile<U, L, S, true><<<blocks, T>>>(a, b, y, n4); else ew_tile<U, L, S, false><<<blocks, T>>>(a, b, y, n4); })
    STRIDE(1, 0, 0, 32, 256);   // kiln today
    STRIDE(1, 1, 0, 32, 256);
    STRIDE(1, 1, 2, 32, 256);
    STRIDE(1, 0, 0, 8, 512);
    STRIDE(1, 0, 0, 4, 1024);
    STRIDE(2, 0, 0, 16, 256);
    STRIDE(1, 0, 0, 100000, 256);
    STRIDE(1, 1, 2, 100000, 256);
    TILE(1, 0, 0, 256);
    TILE(2, 0, 0, 256);
    TILE(4, 0, 0, 128);
    TILE(4, 0, 0, 256);
    TILE(4, 1, 0, 256);
    TILE(4, 1, 2, 256);
    TILE(8, 0, 0, 128);
    TILE(2, 0, 0, 512);
    CK(cudaFree(a)); CK(cudaFree(y)); if (b) CK(cudaFree(b));
  }
  {  // layer norm's epilogue at KernelBench level 1's 40: 16 rows of 64*256*256
    const int rows = 16, cols = 64 * 256 * 256;
    const long long n = (long long)rows * cols;
    float *x, *y, *w, *b, *mu, *r;
    CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4)); CK(cudaMalloc(&w, cols * 4LL)); CK(cudaMalloc(&b, cols * 4LL));
    CK(cudaMalloc(&mu, rows * 4)); CK(cudaMalloc(&r, rows * 4));
    fill<<<4096, 256>>>(x, n, 3); fill<<<4096, 256>>>(w, cols, 4); fill<<<4096, 256>>>(b, cols, 5);
    fill<<<1, 32>>>(mu, rows, 6); fill<<<1, 32>>>(r, rows, 7); CK(cudaDeviceSynchronize());
    const int n4 = (int)(n / 4);
    const double bytes = 2.0 * 4 * n + 2.0 * 4 * cols;
    for (long long cap : {8LL, 16LL, 32LL, 64LL, 1000000LL}) {
      const long long blocks = std::min<long long>((n4 + 255) / 256, sms * cap);
      float ms = time_it([&] { ln_stride<<<blocks, 256>>>(x, mu, r, w, b, y, n4, cols); });
      std::printf("layernorm epilogue 16x4194304, cap %lld/SM (%lld blocks): %.3f ms  %.2f TB/s\n", cap, blocks, ms, bytes / ms / 1e9);
    }
    CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(w)); CK(cudaFree(b)); CK(cudaFree(mu)); CK(cudaFree(r));
  }
  return 0;
}
