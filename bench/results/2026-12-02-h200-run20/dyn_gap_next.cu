// Experiment (session 41, not kiln code): reduce_outer_rows_v4's shuffled sweep with its extents
// baked in (as specialized) or read at run time (as generic), and a variant with the tensor-end
// bound hoisted to a block-uniform flag and the row base advanced incrementally.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#include "kiln/reduce.cuh"

struct IdL { template <class X, class I> __device__ X operator()(X x, I) const { return x; } };
constexpr int B = 128, M = 4096, N = 4095, T = 1024;

namespace trial {
template <int kThreads, int kUnroll, class Op, class T, class Out, class I, class Pro, class Epi>
__device__ __forceinline__ void sweep(const T* __restrict__ in, Out* __restrict__ out, typename Op::Acc* __restrict__ partials,
                                      I outer, I red, I inner, I splits, I chunk, Pro pro, Epi epi) {
  using Acc = typename Op::Acc;
  using V4 = kiln::Vec<T, 4>;
  const I tile_cols = I(kThreads) * 4;
  const I tiles = (inner + tile_cols - 1) / tile_cols;
  const I o = I(blockIdx.x) / tiles;
  const I tile0 = (I(blockIdx.x) - o * tiles) * tile_cols;
  const I tile_len = inner - tile0 < tile_cols ? inner - tile0 : tile_cols;
  const int lane = int(threadIdx.x) & 31;
  const I c4 = I(threadIdx.x) * 4;
  const int owned = c4 >= tile_len ? 0 : (tile_len - c4 >= 4 ? 4 : int(tile_len - c4));
  const I split = I(blockIdx.y);
  const I r_begin = split * chunk;
  const I r_end = r_begin + chunk < red ? r_begin + chunk : red;
  const I n = outer * red * inner;
  const bool tail = o + 1 == outer && r_end == red;   // block-uniform: only then can a vector pass n
  Acc acc[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) acc[j] = Op::identity();
  I R = (o * red + r_begin) * inner + tile0;
  for (I r = r_begin; r < r_end; r += kUnroll, R += I(kUnroll) * inner) {
    const int rows = r_end - r >= I(kUnroll) ? kUnroll : int(r_end - r);
    V4 a[kUnroll] = {}, b[kUnroll] = {};
    int s[kUnroll] = {};
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (u >= rows) break;
      const I Ru = R + I(u) * inner;
      s[u] = int(Ru & 3);
      const I row_end = Ru + tile_len;
      const I av = Ru - s[u] + c4;
      if (av < row_end) a[u] = tail ? kiln::detail::load_vec4_bounded(in, av, n) : kiln::bit_cast_dev<V4>(kiln::ldg16(in + av));
      if (lane == 31 && s[u] != 0 && av + 4 < row_end)
        b[u] = tail ? kiln::detail::load_vec4_bounded(in, av + 4, n) : kiln::bit_cast_dev<V4>(kiln::ldg16(in + av + 4));
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (u >= rows) break;
      V4 e = a[u];
      if (s[u] != 0) {
        V4 next;
#pragma unroll
        for (int j = 0; j < 4; ++j) next.v[j] = __shfl_down_sync(0xffffffffu, a[u].v[j], 1);
        if (lane == 31) next = b[u];
        switch (s[u]) {
          case 1: e = V4{{a[u].v[1], a[u].v[2], a[u].v[3], next.v[0]}}; break;
          case 2: e = V4{{a[u].v[2], a[u].v[3], next.v[0], next.v[1]}}; break;
          default: e = V4{{a[u].v[3], next.v[0], next.v[1], next.v[2]}}; break;
        }
      }
      const I f = R + I(u) * inner + c4;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (j < owned) acc[j] = Op::accumulate(acc[j], pro(e.v[j], f + j), r + u);
    }
  }
  const I o_base = o * inner + tile0 + c4;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if (j >= owned) break;
    kiln::detail::store_outer_result<Op>(out, partials, acc[j], o_base + j, split, splits, outer * inner, red, epi);
  }
}
}  // namespace trial

using Op = kiln::MinOp<float>;
extern "C" __global__ void __launch_bounds__(T, 2) k_static(const float* x, float* ws) {
  kiln::reduce_outer_rows_v4<T, 2, Op>(x, (float*)nullptr, ws, B, M, N, 4, 1024, IdL{}, IdL{});
}
extern "C" __global__ void __launch_bounds__(T, 2) k_dyn(const float* x, float* ws, int rows, long long splits_ll) {
  const int splits = int(splits_ll);
  const int chunk = int(kiln::launch::reduce_dyn_chunk(M, splits, 1));
  kiln::reduce_outer_rows_v4<T, 2, Op>(x, (float*)nullptr, ws, rows, M, N, splits, chunk, IdL{}, IdL{});
}
extern "C" __global__ void __launch_bounds__(T, 2) k_static_hoisted(const float* x, float* ws) {
  trial::sweep<T, 2, Op>(x, (float*)nullptr, ws, B, M, N, 4, 1024, IdL{}, IdL{});
}
extern "C" __global__ void __launch_bounds__(T, 2) k_dyn_hoisted(const float* x, float* ws, int rows, long long splits_ll) {
  const int splits = int(splits_ll);
  const int chunk = int(kiln::launch::reduce_dyn_chunk(M, splits, 1));
  trial::sweep<T, 2, Op>(x, (float*)nullptr, ws, rows, M, N, splits, chunk, IdL{}, IdL{});
}
extern "C" __global__ void __launch_bounds__(T, 2) k_dyn_rows_only(const float* x, float* ws, int rows) {
  kiln::reduce_outer_rows_v4<T, 2, Op>(x, (float*)nullptr, ws, rows, M, N, 4, 1024, IdL{}, IdL{});
}
extern "C" __global__ void __launch_bounds__(T, 2) k_dyn_splits_only(const float* x, float* ws, long long splits_ll) {
  const int splits = int(splits_ll);
  const int chunk = int(kiln::launch::reduce_dyn_chunk(M, splits, 1));
  kiln::reduce_outer_rows_v4<T, 2, Op>(x, (float*)nullptr, ws, B, M, N, splits, chunk, IdL{}, IdL{});
}
extern "C" __global__ void k_copy(const float4* x, float4* y, long long n4) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) y[i] = __ldg(x + i);
}

#define OK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)
int main() {
  const long long n = (long long)B * M * N, nout = 4LL * B * N;
  float *x, *ws, *ref, *y4;
  OK(cudaMalloc(&x, n * 4 + 16)); OK(cudaMalloc(&ws, nout * 4)); OK(cudaMalloc(&ref, nout * 4)); OK(cudaMalloc(&y4, n * 4 + 16));
  std::vector<float> h(1 << 20);
  for (size_t i = 0; i < h.size(); ++i) h[i] = float((i * 2654435761u) % 1000003) / 1000003.f;
  for (long long off = 0; off < n; off += (long long)h.size()) OK(cudaMemcpy(x + off, h.data(), std::min<long long>(h.size(), n - off) * 4, cudaMemcpyHostToDevice));
  cudaEvent_t a, b; OK(cudaEventCreate(&a)); OK(cudaEventCreate(&b));
  dim3 grid(B, 4), block(T);
  auto time = [&](const char* name, auto launch, bool check) {
    OK(cudaMemset(ws, 0xff, nout * 4));
    launch(); OK(cudaGetLastError()); OK(cudaDeviceSynchronize());
    if (check) {
      std::vector<float> g(nout), r(nout);
      OK(cudaMemcpy(g.data(), ws, nout * 4, cudaMemcpyDeviceToHost)); OK(cudaMemcpy(r.data(), ref, nout * 4, cudaMemcpyDeviceToHost));
      long long bad = 0; for (long long i = 0; i < nout; ++i) bad += !(g[i] == r[i]);
      std::printf("%-18s check vs k_static partials: %s (%lld differ)\n", name, bad ? "FAIL" : "ok", bad);
    }
    std::vector<float> ms;
    for (int i = 0; i < 5; ++i) launch();
    for (int i = 0; i < 21; ++i) { OK(cudaEventRecord(a)); launch(); OK(cudaEventRecord(b)); OK(cudaEventSynchronize(b)); float t; OK(cudaEventElapsedTime(&t, a, b)); ms.push_back(t); }
    std::sort(ms.begin(), ms.end());
    std::printf("%-18s median %.4f ms  (min %.4f max %.4f)\n", name, ms[10], ms[0], ms[20]);
    return 0;
  };
  k_static<<<grid, block>>>(x, ref); OK(cudaDeviceSynchronize());
  for (int round = 0; round < 3; ++round) {
    std::printf("-- round %d\n", round);
    time("copy", [&] { k_copy<<<132 * 8, 512>>>((const float4*)x, (float4*)y4, n / 4); }, false);
    time("static", [&] { k_static<<<grid, block>>>(x, ws); }, round == 0);
    time("dyn", [&] { k_dyn<<<grid, block>>>(x, ws, B, 4); }, round == 0);
    time("dyn_rows_only", [&] { k_dyn_rows_only<<<grid, block>>>(x, ws, B); }, round == 0);
    time("dyn_splits_only", [&] { k_dyn_splits_only<<<grid, block>>>(x, ws, 4); }, round == 0);
    time("static_hoisted", [&] { k_static_hoisted<<<grid, block>>>(x, ws); }, round == 0);
    time("dyn_hoisted", [&] { k_dyn_hoisted<<<grid, block>>>(x, ws, B, 4); }, round == 0);
  }
  return 0;
}
