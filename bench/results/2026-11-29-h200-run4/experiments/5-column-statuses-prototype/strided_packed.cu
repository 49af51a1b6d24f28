// Experiment (session 32): the strided look-back with per-column packed status words (value bits
// above a flag, one 8-byte word a column of each tile: each thread walks its own column, no block
// flags, no barriers around the publishes), and the same tile pipeline without any look-back
// (every tile from the identity: the ceiling). Against the kiln template (block flags + column
// values). cumsum of integer-valued f32 (exact), 32768 x 32768 and 8192 x 4096.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>
#include "kiln/config/scan.h"
#include "kiln/scan.cuh"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(2);} } while (0)
struct Pass { __device__ float operator()(float x, int) const { return x; } };
using Op = kiln::SumOp<float>;
constexpr int kT = 256, kR = 40;

// kMode 0: packed per-column statuses; 1: no look-back (ceiling, wrong results).
template <int kMode>
__global__ void __launch_bounds__(kT, 5) packed(const float* __restrict__ in, float* __restrict__ out,
                                                unsigned long long* words, int len, int inner) {
  using C = float;
  alignas(16) __shared__ float stage[kR][kT];
  const int col_tiles = (inner + kT - 1) / kT;
  const long long id = blockIdx.x;
  const int ct = int(id % col_tiles), r = int(id / col_tiles);
  const int c0 = ct * kT, q0 = r * kR;
  const int n = min(kR, len - q0), w = min(kT, inner - c0), tid = threadIdx.x;
  auto flat = [&](int k, int c) { return (long long)(q0 + k) * inner + c; };
  constexpr int VE = 4, kPerRow = kT / VE, kRounds = (kR * kPerRow + kT - 1) / kT;
#pragma unroll
  for (int j = 0; j < kRounds; ++j) {
    const int i = j * kT + tid, k = i / kPerRow, v = i - k * kPerRow;
    if (i < kR * kPerRow && k < n && v * VE < w) kiln::cp_async16(&stage[k][v * VE], in + flat(k, c0 + v * VE));
  }
  kiln::cp_async_commit();
  kiln::cp_async_wait<0>();
  __syncthreads();
  C agg = 0;
#pragma unroll
  for (int k = 0; k < kR; ++k) if (k < n) agg += stage[k][tid];
  C run = 0;
  if (kMode == 0) {
    const long long slot = id * kT + tid, step = (long long)col_tiles * kT;
    auto word = [](unsigned flag, C v) { unsigned b; memcpy(&b, &v, 4); return ((unsigned long long)b << 32) | flag; };
    if (r == 0) {
      kiln::detail::store_relaxed_gpu(words + slot, word(2, agg));
    } else {
      kiln::detail::store_relaxed_gpu(words + slot, word(1, agg));
      // Walk down this thread's column, 4 tiles a round.
      C ex = 0;
      for (int d0 = 1;; d0 += 4) {
        unsigned long long wv[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) wv[i] = d0 + i <= r ? kiln::detail::load_relaxed_gpu(words + slot - (d0 + i) * step) : word(2, 0.f);
#pragma unroll
        for (int i = 0; i < 4; ++i) while (unsigned(wv[i]) == 0) wv[i] = kiln::detail::load_relaxed_gpu(words + slot - (d0 + i) * step);
        bool done = false;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          if (done) break;
          unsigned b = unsigned(wv[i] >> 32); C v; memcpy(&v, &b, 4);
          ex += v;   // integer-valued: the order does not matter here
          if (unsigned(wv[i]) == 2) done = true;
        }
        if (done) break;
      }
      run = ex;
      kiln::detail::store_relaxed_gpu(words + slot, word(2, ex + agg));
    }
  }
  if (tid < w) {
#pragma unroll
    for (int k = 0; k < kR; ++k) if (k < n) { run += stage[k][tid]; out[flat(k, c0 + tid)] = run; }
  }
}

template <int kRows, int kMin>
__global__ void __launch_bounds__(kT, kMin) tmpl(const float* in, float* out, void* f, void* v, int outer, int len, int inner) {
  kiln::scan_strided_lookback<kT, kRows, false, false, Op>(in, out, f, v, outer, len, inner, Pass{}, Pass{});
}

float median(const std::function<void()>& run) {
  for (int i = 0; i < 5; ++i) run();
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int i = 0; i < 30; ++i) { CK(cudaEventRecord(a)); run(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms); }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  for (auto [len, inner] : {std::pair<int,int>{32768, 32768}, {8192, 4096}}) {
    const size_t n = size_t(len) * inner;
    std::vector<float> x(n);
    unsigned s = 1;
    for (auto& v : x) { s = s * 1664525u + 1013904223u; v = float((s >> 24) & 3); }
    float *in, *out, *cp; CK(cudaMalloc(&in, n * 4)); CK(cudaMalloc(&out, n * 4)); CK(cudaMalloc(&cp, n * 4));
    CK(cudaMemcpy(in, x.data(), n * 4, cudaMemcpyHostToDevice));
    const long long tiles = (long long)((len + kR - 1) / kR) * ((inner + kT - 1) / kT);
    unsigned long long* words; CK(cudaMalloc(&words, tiles * kT * 8));
    void *flags, *values; CK(cudaMalloc(&flags, tiles * 4 + 16)); CK(cudaMalloc(&values, tiles * kT * 8 + 32));
    const float copy_ms = median([&] { CK(cudaMemcpyAsync(cp, in, n * 4, cudaMemcpyDeviceToDevice)); });
    auto check = [&](const char* what, bool checked, const std::function<void()>& run) {
      CK(cudaMemset(out, 0xFF, n * 4)); run(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      long long bad = 0;
      if (checked) {
        std::vector<float> y(n); CK(cudaMemcpy(y.data(), out, n * 4, cudaMemcpyDeviceToHost));
        std::vector<double> acc(inner, 0.0);
        for (int q = 0; q < len; ++q) for (int c = 0; c < inner; ++c) { const size_t i = size_t(q) * inner + c; acc[c] += x[i]; if (y[i] != acc[c] && bad++ < 3) printf("  bad at (%d,%d): %g vs %g\n", q, c, y[i], acc[c]); }
      }
      const float ms = median(run);
      printf("%dx%d %-44s %8.4f ms %4.0f%% of copy %s\n", len, inner, what, ms, 100 * copy_ms / ms, !checked ? "(unchecked)" : bad ? "FAIL" : "ok");
    };
    const unsigned blocks = unsigned(tiles);
    check("kiln template (block flags, column values)", true, [&] { CK(cudaMemsetAsync(flags, 0, tiles * 4)); tmpl<kR, 5><<<blocks, kT>>>(in, out, flags, values, 1, len, inner); });
    check("packed column words", true, [&] { CK(cudaMemsetAsync(words, 0, tiles * kT * 8)); packed<0><<<blocks, kT>>>(in, out, words, len, inner); });
    printf("%dx%d %-44s %8.4f ms\n", len, inner, "memset of the packed words alone", median([&] { CK(cudaMemsetAsync(words, 0, tiles * kT * 8)); }));
    check("no look-back (the tile pipeline alone)", false, [&] { packed<1><<<blocks, kT>>>(in, out, words, len, inner); });
    CK(cudaFree(in)); CK(cudaFree(out)); CK(cudaFree(cp)); CK(cudaFree(words)); CK(cudaFree(flags)); CK(cudaFree(values));
  }
  return 0;
}
