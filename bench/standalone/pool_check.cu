// pool_check — checks and times kiln/pool.cuh on KernelBench level 1's six pooling problems
// (41-46, at their default shapes) and four common CNN pools in each way the template can load a window row's columns:
// a thread per output (run 1), runs of 4 outputs loaded element by element (run 4), and vector
// runs (16-byte aligned loads, config/pool.h's pool_vec), and for max pools the last two in runs
// of 4 output rows (pool_rows); each storing element by element and as aligned vectors
// (pool_wide_stores). For choosing the planner's rules ([Note: pool runs], [Note: pool rows],
// [Note: pool wide stores]); issue 21's target is 90% of a copy.
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -I templates bench/standalone/pool_check.cu -o /tmp/pool_check
//   /tmp/pool_check [WORD ...]     # only the problems whose name holds a word
//
// Every variant's output is poisoned with 0xFF bytes (NaN) before its checked launch and compared
// with a naive float64 pool of the same input on the GPU (max: exact; avg: 1e-5 relative). The
// input is uniform [-1, 1) from a hash of the flat index, with NaN and +-inf planted. Times are
// medians of 20 launches after 3 warm-ups (device events); "of copy" divides the bytes a pool
// must move (its input read once, its output written once) by the time and by the bandwidth of
// a device-to-device copy of 1 GiB measured in the same run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/config/pool.h"
#include "kiln/pool.cuh"

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e = (x);                                                                   \
    if (e != cudaSuccess) {                                                                \
      std::printf("CUDA %s at line %d\n", cudaGetErrorString(e), __LINE__);                \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

// The functors as pool.cuh calls them: lead(plane) once a thread step (these need nothing of the
// plane), then each element with it.
struct Load : kiln::PoolNoLead {
  template <class I>
  __device__ float operator()(float x, I, const Lead&) const { return x; }
};
struct Store : kiln::PoolNoLead {
  template <class I>
  __device__ float operator()(float r, I, const Lead&) const { return r; }
};

// Variant is a type holding the config (`static constexpr kiln::PoolConfig value`): nvcc's host
// stubs cannot name a kernel template instantiated on a reference to a variable.
template <class Variant, class Index>
__global__ void __launch_bounds__(256) pool_kernel(const float* __restrict__ x, float* __restrict__ y) {
  kiln::pool<Variant::value, float, Index>(x, y, Load{}, Store{});
}

namespace {


__device__ float input_value(long long i) {
  unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  if (h % 100003 == 7) return __int_as_float(0x7fc00000);
  if (h % 100003 == 11) return __int_as_float(0x7f800000);
  if (h % 100003 == 13) return __int_as_float(0xff800000);
  return float(h & 0xffffff) / 8388608.0f - 1.0f;
}
__global__ void fill(float* x, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    x[i] = input_value(i);
}

// The naive float64 pool of output o (PyTorch's semantics, as docs/semantics.md states them),
// compared with got[o]; counts mismatches.
__global__ void check(kiln::PoolConfig c, const float* x, const float* got, long long n, unsigned long long* bad) {
  for (long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x; o < n; o += (long long)gridDim.x * blockDim.x) {
    long long r = o;
    const long long ow = r % c.out_w; r /= c.out_w;
    const long long oh = r % c.out_h; r /= c.out_h;
    const long long od = r % c.out_d; r /= c.out_d;
    const float* plane = x + r * c.in_d * c.in_h * c.in_w;
    const long long d0 = od * c.stride_d - c.padding_d, h0 = oh * c.stride_h - c.padding_h, w0 = ow * c.stride_w - c.padding_w;
    double acc = c.max ? -INFINITY : 0.0;
    bool nan = false;
    long long inside = 0;
    for (int jd = 0; jd < c.kernel_d; ++jd)
      for (int jh = 0; jh < c.kernel_h; ++jh)
        for (int jw = 0; jw < c.kernel_w; ++jw) {
          const long long id = d0 + jd * c.dilation_d, ih = h0 + jh * c.dilation_h, iw = w0 + jw * c.dilation_w;
          if (id < 0 || id >= c.in_d || ih < 0 || ih >= c.in_h || iw < 0 || iw >= c.in_w) continue;
          const double v = plane[(id * c.in_h + ih) * c.in_w + iw];
          ++inside;
          if (v != v) nan = true;
          else if (c.max) acc = v > acc ? v : acc;
          else acc += v;
        }
    double want;
    if (c.max) {
      want = nan ? NAN : acc;
    } else {
      const long long d1 = min(d0 + c.kernel_d, c.in_d + c.padding_d), h1 = min(h0 + c.kernel_h, c.in_h + c.padding_h),
                      w1 = min(w0 + c.kernel_w, c.in_w + c.padding_w);
      const long long divisor = c.divisor ? c.divisor : c.include_pad ? (d1 - d0) * (h1 - h0) * (w1 - w0) : inside;
      want = nan ? NAN : inside ? acc / double(divisor) : 0.0;
    }
    const double g = got[o];
    bool ok;
    if (want != want) ok = g != g;
    else if (isinf(want)) ok = g == want;
    else ok = fabs(g - want) <= (c.max ? 0.0 : 1e-5 * fmax(1.0, fabs(want)));
    if (!ok) atomicAdd(bad, 1ull);
  }
}

float median_ms(const std::vector<float>& t) {
  std::vector<float> s = t;
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

template <class F>
float time_ms(F&& launch) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) launch();
  std::vector<float> t;
  for (int i = 0; i < 20; ++i) {
    CK(cudaEventRecord(e0));
    launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return median_ms(t);
}

float copy_tbps() {
  const size_t bytes = size_t(1) << 30;
  void *a, *b;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  const float ms = time_ms([&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
  CK(cudaFree(a));
  CK(cudaFree(b));
  return float(2.0 * bytes / (ms * 1e-3) / 1e12);
}

using Launcher = void (*)(const float*, float*);
struct Variant {
  const char* name;
  const kiln::PoolConfig* config;
  Launcher launch;
};
template <class V, class Index>
void launch_pool(const float* x, float* y) {
  const kiln::launch::Geometry g = kiln::pool_geometry(V::value);
  pool_kernel<V, Index><<<dim3(unsigned(g.grid.x)), dim3(unsigned(g.block.x))>>>(x, y);
}

// A problem's config in each variant: run 1, run 4 by element (where a run's columns fit in
// registers), vector runs (where pool_vec allows them), and for max pools the last two in runs of
// 4 output rows (pool_rows); each with plain stores and with wide stores (pool_wide_stores).
#define KILN_POOL_CASE(ID, INDEX, ...)                                                                \
  constexpr kiln::PoolConfig with(int run, int vec, int rows, bool wide) {                          \
    kiln::PoolConfig r{__VA_ARGS__};                                                                \
    r.run = run;                                                                                    \
    r.vec = vec;                                                                                    \
    r.rows = r.max ? rows : 1; /* runs of rows are for max pools only (pool.cuh asserts it) */       \
    r.wide_stores = wide;                                                                           \
    return r;                                                                                       \
  }                                                                                                 \
  template <int kRun, int kVec, int kRows, bool kWide>                                              \
  struct V { static constexpr kiln::PoolConfig value = with(kRun, kVec, kRows, kWide); };           \
  inline const kiln::PoolConfig ID##_base = with(1, 1, 1, false);                                   \
  inline const std::vector<Variant> ID##_variants = {                                               \
      KILN_POOL_STORES(INDEX, "run 1", 1, 1, 1)                                                     \
      KILN_POOL_STORES(INDEX, "run 4 by element", 4, 1, 1)                                          \
      KILN_POOL_STORES(INDEX, "vector run 4", 4, 4, 1)                                              \
      KILN_POOL_STORES(INDEX, "run 4 by element, 4 rows", 4, 1, kiln::kPoolRows)                    \
      KILN_POOL_STORES(INDEX, "vector run 4, 4 rows", 4, 4, kiln::kPoolRows)                        \
  };
// A loading variant with plain stores and with wide stores.
#define KILN_POOL_STORES(INDEX, NAME, RUN, VEC, ROWS)                                                  \
  {NAME, &V<RUN, VEC, ROWS, false>::value, launch_pool<V<RUN, VEC, ROWS, false>, INDEX>},               \
      {NAME ", wide stores", &V<RUN, VEC, ROWS, true>::value, launch_pool<V<RUN, VEC, ROWS, true>, INDEX>},

}  // namespace

// Fields: threads, max, planes, in_d, in_h, in_w, out_d, out_h, out_w, kernel_{d,h,w},
// stride_{d,h,w}, padding_{d,h,w}, dilation_{d,h,w}, include_pad, divisor (run and vec per variant).
namespace kb41 { KILN_POOL_CASE(c, int, 256, true, 64 * 192, 1, 1, 65536, 1, 1, 65523, 1, 1, 8, 1, 1, 1, 0, 0, 4, 1, 1, 3, true, 0) }
namespace kb42 { KILN_POOL_CASE(c, int, 256, true, 32 * 64, 1, 512, 512, 1, 511, 511, 1, 4, 4, 1, 1, 1, 0, 1, 1, 1, 1, 1, true, 0) }
namespace kb43 { KILN_POOL_CASE(c, int, 256, true, 16 * 32, 128, 128, 128, 62, 62, 62, 3, 3, 3, 2, 2, 2, 1, 1, 1, 3, 3, 3, true, 0) }
namespace kb44 { KILN_POOL_CASE(c, int, 256, false, 64 * 128, 1, 1, 65536, 1, 1, 65537, 1, 1, 8, 1, 1, 1, 0, 0, 4, 1, 1, 1, true, 0) }
namespace kb45 { KILN_POOL_CASE(c, long long, 256, false, 16 * 64, 1, 2048, 2048, 1, 186, 186, 1, 11, 11, 1, 11, 11, 0, 0, 0, 1, 1, 1, true, 0) }
// Common CNN pools on 4096 planes of 256 x 256 (1 GiB), for the rule's edges: no overlap along w
// with short (k2 s2, k4 s4) and long (k8 s8) windows, and overlapping ones (k3 s2 p1).
namespace cnn_max2 { KILN_POOL_CASE(c, int, 256, true, 4096, 1, 256, 256, 1, 128, 128, 1, 2, 2, 1, 2, 2, 0, 0, 0, 1, 1, 1, true, 0) }
namespace cnn_max3 { KILN_POOL_CASE(c, int, 256, true, 4096, 1, 256, 256, 1, 128, 128, 1, 3, 3, 1, 2, 2, 0, 1, 1, 1, 1, 1, true, 0) }
namespace cnn_avg4 { KILN_POOL_CASE(c, int, 256, false, 4096, 1, 256, 256, 1, 64, 64, 1, 4, 4, 1, 4, 4, 0, 0, 0, 1, 1, 1, true, 0) }
namespace cnn_avg8 { KILN_POOL_CASE(c, int, 256, false, 4096, 1, 256, 256, 1, 32, 32, 1, 8, 8, 1, 8, 8, 0, 0, 0, 1, 1, 1, true, 0) }
namespace kb46 { KILN_POOL_CASE(c, int, 256, false, 16 * 32, 128, 128, 256, 64, 64, 128, 3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, true, 0) }
// KernelBench 46 as the planner gives it: its 2^31 input elements take a 64-bit index.
namespace kb46l { KILN_POOL_CASE(c, long long, 256, false, 16 * 32, 128, 128, 256, 64, 64, 128, 3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, true, 0) }

int main(int argc, char** argv) {
  struct Problem {
    const char* name;
    const kiln::PoolConfig* base;
    const std::vector<Variant>* variants;
  };
  const Problem problems[] = {
      {"41 max_pool1d k8 s1 p4 d3", &kb41::c_base, &kb41::c_variants},
      {"42 max_pool2d k4 s1 p1", &kb42::c_base, &kb42::c_variants},
      {"43 max_pool3d k3 s2 p1 d3", &kb43::c_base, &kb43::c_variants},
      {"44 avg_pool1d k8 s1 p4", &kb44::c_base, &kb44::c_variants},
      {"45 avg_pool2d k11", &kb45::c_base, &kb45::c_variants},
      {"46 avg_pool3d k3 s2 p1", &kb46::c_base, &kb46::c_variants},
      {"46 avg_pool3d k3 s2 p1, 64-bit index", &kb46l::c_base, &kb46l::c_variants},
      {"max_pool2d k2 s2, 4096x256x256", &cnn_max2::c_base, &cnn_max2::c_variants},
      {"max_pool2d k3 s2 p1, 4096x256x256", &cnn_max3::c_base, &cnn_max3::c_variants},
      {"avg_pool2d k4 s4, 4096x256x256", &cnn_avg4::c_base, &cnn_avg4::c_variants},
      {"avg_pool2d k8 s8, 4096x256x256", &cnn_avg8::c_base, &cnn_avg8::c_variants},
  };
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const float copy = copy_tbps();
  std::printf("%s: device-to-device copy %.2f TB/s\n\n", prop.name, copy);
  std::printf("| problem | variant | planner's pick | ms | TB/s | of copy | check |\n|---|---|---|---|---|---|---|\n");
  int failures = 0;
  for (const Problem& p : problems) {
    bool wanted = argc < 2;
    for (int a = 1; a < argc; ++a) wanted |= std::strstr(p.name, argv[a]) != nullptr;
    if (!wanted) continue;
    const kiln::PoolConfig& c = *p.base;
    const long long in_n = c.planes * c.in_d * c.in_h * c.in_w, out_n = kiln::pool_outputs(c);
    float *x, *y;
    unsigned long long* bad;
    CK(cudaMalloc(&x, in_n * sizeof(float)));
    CK(cudaMalloc(&y, out_n * sizeof(float)));
    CK(cudaMalloc(&bad, sizeof(unsigned long long)));
    fill<<<4096, 256>>>(x, in_n);
    CK(cudaGetLastError());
    const int vec = kiln::pool_vec(4, true, c.in_w, c.out_w, c.kernel_w, c.stride_w, c.dilation_w, c.padding_w);
    const int run = kiln::pool_run(vec, c.out_w, c.kernel_w, c.stride_w, c.dilation_w);
    kiln::PoolConfig planned = c;
    planned.run = run;
    planned.vec = vec;
    const int rows = kiln::pool_rows(c.max, c.out_h, c.kernel_h, c.stride_h, c.dilation_h, kiln::pool_run_span(planned));
    planned.rows = rows;
    planned.wide_stores = kiln::pool_wide_stores(c.max, true, run);
    const double bytes = double(in_n + out_n) * sizeof(float);
    for (const Variant& v : *p.variants) {
      const kiln::PoolConfig& vc = *v.config;
      const bool rows_ok = vc.rows > 1 || std::strstr(v.name, "rows") == nullptr;   // avg pools have no runs of rows
      const bool fits = rows_ok && (kiln::pool_run_span(vc) <= kiln::kPoolUnrolled || vc.run == 1);
      const bool vec_ok = vc.vec == 1 || (c.in_w % 4 == 0 && kiln::pool_run_span(vc) <= kiln::kPoolUnrolled);
      if (!fits || !vec_ok) {
        std::printf("| %s | %s | | not possible | | | |\n", p.name, v.name);
        continue;
      }
      CK(cudaMemset(y, 0xFF, out_n * sizeof(float)));
      CK(cudaMemset(bad, 0, sizeof(unsigned long long)));
      v.launch(x, y);
      CK(cudaGetLastError());
      check<<<4096, 256>>>(c, x, y, out_n, bad);
      CK(cudaGetLastError());
      unsigned long long nbad = 0;
      CK(cudaMemcpy(&nbad, bad, sizeof(nbad), cudaMemcpyDeviceToHost));
      failures += nbad != 0;
      const float ms = time_ms([&] { v.launch(x, y); });
      CK(cudaGetLastError());
      const double tbps = bytes / (ms * 1e-3) / 1e12;
      const bool picked = vc.run == run && vc.vec == vec && vc.rows == rows && vc.wide_stores == planned.wide_stores;
      std::printf("| %s | %s | %s | %.3f | %.2f | %.0f%% | %s |\n", p.name, v.name, picked ? "yes" : "", ms, tbps,
                  100.0 * tbps / copy, nbad ? "FAIL" : "ok");
      if (nbad) std::printf("  %llu of %lld outputs wrong\n", nbad, out_n);
    }
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(bad));
  }
  std::printf("\n%s\n", failures ? "FAILED" : "all variants correct");
  return failures ? 1 : 0;
}
