// memtpl_check — checks and times every example instantiation in tests/templates/ on a GPU.
//
// Build (from the repository root):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I templates -I tests/templates bench/standalone/memtpl_check.cu -o memtpl_check
// Run: ./memtpl_check            (all variants; about a minute on an H100)
//      ./memtpl_check min cumsum (only variants whose name contains one of the words)
//      ./memtpl_check issue4     (only the issue-4 candidates: min over axis 1, softmax 32768x8192)
//
// Issue-4 candidates (rows of the final table; "[plan]" marks what the planner emits):
//   min ax1 strip (reduce_outer, old)      the previous plan, 256-column strips of every row
//   min ax1 rows TxC uK sS                 reduce_outer_rows: T threads x C columns a thread
//                                          (whole row of 4095 in one tile), K rows unrolled,
//                                          S splits of the reduced axis (+ reduce_finish, included)
//   min ax1 v4 T uK sS                     reduce_outer_rows_v4: T threads x 4 columns, 16-byte aligned
//                                          loads + lane shuffles, K rows unrolled, S splits
//   softmax TxI / log_softmax TxI          rownorm_rows, a block of T per row, I floats a thread
//   copy, same bytes                       cudaMemcpy D2D moving the same bytes (read + write),
//                                          printed before each group
// Every candidate is checked before it is timed: min rows bit for bit against the strip unit
// (itself checked against the CPU on three slabs), softmax rows against a float64 reference on
// planted NaN / +inf / all -inf / leading -inf rows and a sample of random rows.
//
// For each variant: random inputs generated on the GPU (uniform [0,1) from a hash of the flat
// index, so they are reproducible), NaN/inf planted where the op's semantics matter, outputs
// poisoned with 0xFF bytes, one launch with the geometry rule the unit bakes in (kGeometry),
// a CPU float64 reference on the checked part, then 10 warm-up and 50 timed launches (median,
// cudaEvent per launch). Prints a table: variant, shape, median ms, GB/s (input + output bytes
// once each), fraction of the device-to-device cudaMemcpy bandwidth measured in the same run.
// Exit status 1 on any mismatch or CUDA error.
//
// Tolerances (CPU reference in double):
//   min/max/argmin/argmax/cummax: exact (NaN matches NaN).
//   sum, logsumexp, softmax: every element |out-ref| <= 1e-4*|ref| + atol (atol 1e-6; log_softmax
//     and logsumexp: 1e-5 absolute-or-relative), and norm-wise ||out-ref||/||ref|| <= 1e-5.
//   cumsum: |out-ref| <= 1e-4 * (1 + sum of |x| up to the element): relative to the row's running
//     magnitude, the scale of the rounding a float32 scan of that prefix can make.
//   cumprod (inputs 1 + (u-0.5)/100 so the products stay O(1)): |out-ref| <= 1e-4*|ref| + 1e-30.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "reduce_argmax_long.cu"
#include "reduce_argmax_short.cu"
#include "reduce_logsumexp.cu"
#include "reduce_min_axis1.cu"
#include "reduce_min_axis2.cu"
#include "reduce_sumsq_axis0.cu"
#include "reduce_sumsq_axis1.cu"
#include "rownorm_log_softmax.cu"
#include "rownorm_softmax_dropout.cu"
#include "rownorm_softmax_strided.cu"
#include "scan_cummax_lookback.cu"
#include "scan_cumprod_reverse.cu"
#include "scan_cumsum_exclusive.cu"

// ---- tuning alternatives timed beside the units (same templates, other parameters)
extern "C" __global__ void __launch_bounds__(256)
alt_min_axis1_unroll16(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_min_reduce_axis1;
  kiln::reduce_outer<256, 16, 1, Op>(x, y, static_cast<Op::Acc*>(nullptr), kOuter, kRed, kInner, Index(1), kRed,
                                     Load{}, Store{});
}
extern "C" __global__ void __launch_bounds__(256)
alt_min_axis2_unroll8(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_min_reduce_axis2;
  kiln::reduce_inner_warp<256, 8, Op>(x, y, kRows, kLen, Load{}, Store{});
}
extern "C" __global__ void __launch_bounds__(256)
alt_cumsum_vecs4(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_cumsum_exclusive;
  kiln::scan_rows_block<256, 4, true, false, false, Op>(x, y, kRows, kLen, Load{}, Store{});
}
extern "C" __global__ void __launch_bounds__(512)
alt_cumsum_512x2(const float* __restrict__ x, float* __restrict__ y) {
  using namespace kiln_cumsum_exclusive;
  kiln::scan_rows_block<512, 2, true, false, false, Op>(x, y, kRows, kLen, Load{}, Store{});
}

// ---- issue 4 candidates: min over axis 1 as a whole-row sweep (reduce_outer_rows), timed beside
// the strip unit above; splits/chunk are run-time arguments so one kernel serves every split count.
namespace perf {
struct IdL {
  template <class X, class I> __device__ X operator()(X x, I) const { return x; }
};
constexpr long long kMinB = 128, kMinM = 4096, kMinN = 4095;
constexpr int kSmB = 32768, kSmN = 8192;   // the softmax benchmark row
}  // namespace perf
#define KILN_MIN_ROWS(name, threads, cols, unroll)                                                               \
  extern "C" __global__ void __launch_bounds__(threads)                                                         \
  name(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ ws, int splits, int chunk) {      \
    kiln::reduce_outer_rows<threads, cols, unroll, kiln::MinOp<float>>(x, y, ws, int(perf::kMinB), int(perf::kMinM), \
                                                                      int(perf::kMinN), splits, chunk, perf::IdL{}, \
                                                                      perf::IdL{});                              \
  }
KILN_MIN_ROWS(min_rows_256x16_u1, 256, 16, 1)   // the planner's default (kiln/config/reduce.h)
KILN_MIN_ROWS(min_rows_256x16_u2, 256, 16, 2)
KILN_MIN_ROWS(min_rows_512x8_u2, 512, 8, 2)
KILN_MIN_ROWS(min_rows_1024x4_u4, 1024, 4, 4)
KILN_MIN_ROWS(min_rows_128x32_u1, 128, 32, 1)
// 16-byte aligned loads + lane shuffles over the misaligned rows (reduce_outer_rows_v4), 4 columns a thread.
#define KILN_MIN_ROWS_V4(name, threads, unroll)                                                                  \
  extern "C" __global__ void __launch_bounds__(threads)                                                         \
  name(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ ws, int splits, int chunk) {      \
    kiln::reduce_outer_rows_v4<threads, unroll, kiln::MinOp<float>>(x, y, ws, int(perf::kMinB), int(perf::kMinM), \
                                                                   int(perf::kMinN), splits, chunk, perf::IdL{},  \
                                                                   perf::IdL{});                                 \
  }
KILN_MIN_ROWS_V4(min_v4_1024_u1, 1024, 1)
KILN_MIN_ROWS_V4(min_v4_1024_u2, 1024, 2)   // the planner's default (kiln/config/reduce.h: kOuterV4Unroll)
KILN_MIN_ROWS_V4(min_v4_1024_u4, 1024, 4)
static_assert(kiln::launch::kOuterV4Unroll == 2, "the [plan] mark below assumes min_v4_1024_u2");
extern "C" __global__ void __launch_bounds__(256) min_rows_finish(const float* __restrict__ ws, float* __restrict__ y, int splits) {
  kiln::reduce_finish<256, 1, kiln::MinOp<float>>(ws, y, int(perf::kMinB * perf::kMinN), splits, int(perf::kMinM), perf::IdL{});
}
// Awkward shapes for the same template: checked against the CPU, not timed for the table.
extern "C" __global__ void __launch_bounds__(256)
min_rows_odd(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ ws, int outer, int red, int inner,
             int splits, int chunk) {
  kiln::reduce_outer_rows<256, 16, 1, kiln::MinOp<float>>(x, y, ws, outer, red, inner, splits, chunk, perf::IdL{}, perf::IdL{});
}
extern "C" __global__ void __launch_bounds__(256)
argmin_rows_odd(const float* __restrict__ x, long long* __restrict__ y, kiln::ArgMinOp<float, int>::Acc* __restrict__ ws,
                int outer, int red, int inner, int splits, int chunk) {
  kiln::reduce_outer_rows<256, 16, 1, kiln::ArgMinOp<float, int>>(x, y, ws, outer, red, inner, splits, chunk, perf::IdL{},
                                                                   perf::IdL{});
}
extern "C" __global__ void __launch_bounds__(256)
min_v4_odd(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ ws, int outer, int red, int inner,
           int splits, int chunk) {
  kiln::reduce_outer_rows_v4<256, 2, kiln::MinOp<float>>(x, y, ws, outer, red, inner, splits, chunk, perf::IdL{}, perf::IdL{});
}
extern "C" __global__ void __launch_bounds__(256)
argmin_v4_odd(const float* __restrict__ x, long long* __restrict__ y, kiln::ArgMinOp<float, int>::Acc* __restrict__ ws,
              int outer, int red, int inner, int splits, int chunk) {
  kiln::reduce_outer_rows_v4<256, 2, kiln::ArgMinOp<float, int>>(x, y, ws, outer, red, inner, splits, chunk, perf::IdL{},
                                                                  perf::IdL{});
}
extern "C" __global__ void __launch_bounds__(256)
argmin_rows_odd_finish(const kiln::ArgMinOp<float, int>::Acc* __restrict__ ws, long long* __restrict__ y, int n_out,
                       int splits, int red) {
  kiln::reduce_finish<256, 1, kiln::ArgMinOp<float, int>>(ws, y, n_out, splits, red, perf::IdL{});
}
extern "C" __global__ void __launch_bounds__(256)
min_rows_odd_finish(const float* __restrict__ ws, float* __restrict__ y, int n_out, int splits, int red) {
  kiln::reduce_finish<256, 1, kiln::MinOp<float>>(ws, y, n_out, splits, red, perf::IdL{});
}

// ---- issue 4 candidates: softmax over the last axis of 32768x8192, a block per row, the row in
// registers; threads x items = 8192. The planner's default is 512x16 (kiln/config/rownorm.h).
#define KILN_SOFTMAX_ROWS(name, kind, threads, items, rows, len)                                                  \
  extern "C" __global__ void __launch_bounds__(threads) name(const float* __restrict__ x, float* __restrict__ y) { \
    kiln::rownorm_rows<threads, threads, items, kiln::RowNormKind::kind, float>(x, y, rows, len, perf::IdL{},       \
                                                                                 perf::IdL{});                    \
  }
KILN_SOFTMAX_ROWS(softmax_1024x8, kSoftmax, 1024, 8, perf::kSmB, perf::kSmN)
KILN_SOFTMAX_ROWS(softmax_512x16, kSoftmax, 512, 16, perf::kSmB, perf::kSmN)
KILN_SOFTMAX_ROWS(softmax_256x32, kSoftmax, 256, 32, perf::kSmB, perf::kSmN)
KILN_SOFTMAX_ROWS(log_softmax_512x16, kLogSoftmax, 512, 16, perf::kSmB, perf::kSmN)
// Occupancy probe: 512x16 held to 40 registers (3 blocks an SM instead of 2). Not plannable yet
// (the entry template has no min-blocks bound); informs whether occupancy or instructions limit.
extern "C" __global__ void __launch_bounds__(256, 3) softmax_256x32_3blocks(const float* __restrict__ x, float* __restrict__ y) {
  kiln::rownorm_rows<256, 256, 32, kiln::RowNormKind::kSoftmax, float>(x, y, perf::kSmB, perf::kSmN, perf::IdL{}, perf::IdL{});
}
extern "C" __global__ void __launch_bounds__(512, 3) softmax_512x16_3blocks(const float* __restrict__ x, float* __restrict__ y) {
  kiln::rownorm_rows<512, 512, 16, kiln::RowNormKind::kSoftmax, float>(x, y, perf::kSmB, perf::kSmN, perf::IdL{}, perf::IdL{});
}
// Awkward rows: 8191 (scalar loads, every row misaligned), 4099 in 512x16 (2 rows misaligned),
// 100003 (two-pass, scalar), 3 (tiny rows in a 256-thread block).
KILN_SOFTMAX_ROWS(softmax_odd_8191, kSoftmax, 512, 16, 2000, 8191)
KILN_SOFTMAX_ROWS(log_softmax_odd_4099, kLogSoftmax, 512, 16, 3000, 4099)
KILN_SOFTMAX_ROWS(softmax_odd_100003, kSoftmax, 512, 16, 100, 100003)
KILN_SOFTMAX_ROWS(softmax_odd_3, kSoftmax, 256, 4, 5000, 3)

// ---- extra coverage: paths the seed units do not take (checked, timed only for information)
namespace cover {
struct Id {
  __device__ float operator()(float x, int) const { return x; }
};
struct IdOut {
  __device__ float operator()(float y, int) const { return y; }
};
struct HalfIn {   // f16 input accumulating in f32
  __device__ float operator()(__half x, int) const { return __half2float(x); }
};
constexpr int kScanRows = 1024, kScanLen = 8192;          // vector path (8192 % 4 == 0)
constexpr int kScanOddRows = 1000, kScanOddLen = 3001;    // scalar path
constexpr int kLbRows = 3, kLbLen = 1000003;              // look-back, scalar path
constexpr int kLbVRows = 2, kLbVLen = 1 << 21;            // look-back, vector path
constexpr int kSmRows = 64, kSmLen = 100003, kSmVLen = 65536;   // two-pass softmax
constexpr int kHRows = 4096, kHLen = 1001;                // f16 sum, rows of 2002 bytes
constexpr int kLbTile = 256 * 4 * 4;
}  // namespace cover

extern "C" __global__ void __launch_bounds__(256) cover_cumsum_rev_incl(const float* x, float* y) {
  kiln::scan_rows_block<256, 2, false, true, false, kiln::SumOp<float>>(x, y, cover::kScanRows, cover::kScanLen, cover::Id{}, cover::IdOut{});
}
extern "C" __global__ void __launch_bounds__(256) cover_cumsum_rev_excl(const float* x, float* y) {
  kiln::scan_rows_block<256, 2, true, true, false, kiln::SumOp<float>>(x, y, cover::kScanRows, cover::kScanLen, cover::Id{}, cover::IdOut{});
}
extern "C" __global__ void __launch_bounds__(256) cover_cummin_odd_excl(const float* x, float* y) {
  kiln::scan_rows_block<256, 2, true, false, false, kiln::MinOp<float>>(x, y, cover::kScanOddRows, cover::kScanOddLen, cover::Id{}, cover::IdOut{});
}
extern "C" __global__ void __launch_bounds__(256 + 32, 2) cover_lookback_cumsum_rev_excl(const float* x, float* y, void* ws) {
  kiln::scan_rows_lookback<256, 4, kiln::launch::kScanLookbackStages, true, true, false, kiln::SumOp<float>>(x, y, ws, cover::kLbRows, cover::kLbLen, cover::Id{}, cover::IdOut{});
}
extern "C" __global__ void __launch_bounds__(256 + 32, 2) cover_lookback_cumsum_vec(const float* x, float* y, void* ws) {
  kiln::scan_rows_lookback<256, 4, kiln::launch::kScanLookbackStages, false, false, false, kiln::SumOp<float>>(x, y, ws, cover::kLbVRows, cover::kLbVLen, cover::Id{}, cover::IdOut{});
}
extern "C" __global__ void __launch_bounds__(1024) cover_softmax_two_pass_odd(const float* x, float* y) {
  kiln::rownorm_rows<1024, 1024, 16, kiln::RowNormKind::kSoftmax, float>(x, y, cover::kSmRows, cover::kSmLen, cover::Id{}, cover::IdOut{});
}
extern "C" __global__ void __launch_bounds__(1024) cover_log_softmax_two_pass_vec(const float* x, float* y) {
  kiln::rownorm_rows<1024, 1024, 8, kiln::RowNormKind::kLogSoftmax, float>(x, y, cover::kSmRows, cover::kSmVLen, cover::Id{}, cover::IdOut{});
}
extern "C" __global__ void __launch_bounds__(256) cover_sum_f16(const __half* x, float* y) {
  kiln::reduce_inner_warp<256, 4, kiln::SumOp<float>>(x, y, cover::kHRows, cover::kHLen, cover::HalfIn{}, cover::IdOut{});
}

namespace {

int g_failures = 0;

#define CUDA_OK(call)                                                                                  \
  do {                                                                                                 \
    cudaError_t err_ = (call);                                                                         \
    if (err_ != cudaSuccess) {                                                                         \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), __FILE__, __LINE__, \
                   #call);                                                                             \
      std::exit(2);                                                                                    \
    }                                                                                                  \
  } while (0)

// Uniform [0,1) from the flat index: reproducible on the CPU side without copying when needed.
__host__ __device__ inline float hash_uniform(unsigned long long seed, unsigned long long i) {
  unsigned long long z = seed * 0x2545F4914F6CDD1DULL + 0x9E3779B97F4A7C15ULL * (i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return float(z >> 40) * (1.0f / 16777216.0f);
}

__global__ void fill_kernel(float* p, unsigned long long n, unsigned long long seed, float offset, float scale) {
  for (unsigned long long i = blockIdx.x * 256ULL + threadIdx.x; i < n; i += gridDim.x * 256ULL)
    p[i] = offset + scale * hash_uniform(seed, i);
}

void fill(float* d, unsigned long long n, unsigned long long seed, float offset = 0.f, float scale = 1.f) {
  fill_kernel<<<4096, 256>>>(d, n, seed, offset, scale);
  CUDA_OK(cudaGetLastError());
}
void set_value(float* d, unsigned long long index, float v) {
  CUDA_OK(cudaMemcpy(d + index, &v, sizeof(float), cudaMemcpyHostToDevice));
}
template <class T>
std::vector<T> to_host(const T* d, unsigned long long n) {
  std::vector<T> h(n);
  CUDA_OK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
void poison(void* d, unsigned long long bytes) { CUDA_OK(cudaMemset(d, 0xFF, bytes)); }

dim3 grid_of(const kiln::launch::Geometry& g) { return dim3(unsigned(g.grid.x), unsigned(g.grid.y), unsigned(g.grid.z)); }
dim3 block_of(const kiln::launch::Geometry& g) { return dim3(unsigned(g.block.x), unsigned(g.block.y), unsigned(g.block.z)); }

// Median of 50 timed launches after 10 warm-ups.
float time_ms(const std::function<void()>& launch) {
  for (int i = 0; i < 10; ++i) launch();
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> ms;
  cudaEvent_t a, b;
  CUDA_OK(cudaEventCreate(&a));
  CUDA_OK(cudaEventCreate(&b));
  for (int i = 0; i < 50; ++i) {
    CUDA_OK(cudaEventRecord(a));
    launch();
    CUDA_OK(cudaEventRecord(b));
    CUDA_OK(cudaEventSynchronize(b));
    float t = 0;
    CUDA_OK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaEventDestroy(a));
  CUDA_OK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// One launch (or launch sequence), then any launch or execution error.
void run_checked(const std::function<void()>& run) {
  run();
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
}

struct Row {
  std::string variant, shape;
  double ms = 0, bytes = 0;
  bool ok = true;
};
std::vector<Row> g_rows;
double g_copy_gbps = 0;
int g_sms = 132;   // this device's, set in main

void report(const std::string& variant, const std::string& shape, double bytes, float ms, bool ok) {
  g_rows.push_back(Row{variant, shape, ms, bytes, ok});
  if (!ok) ++g_failures;
  std::printf("  %-28s %-24s %s  %.4f ms\n", variant.c_str(), shape.c_str(), ok ? "ok  " : "FAIL", ms);
  std::fflush(stdout);
}

// Alternatives must reproduce the checked unit's output bit for bit (same combine order per
// element for min; the tree shape of sums may differ, so sums are not compared this way).
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  const bool same = a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
  if (!same) std::printf("    alternative differs from the checked unit\n");
  return same;
}

bool same_float(double out, double ref) {
  if (std::isnan(ref)) return std::isnan(out);
  return out == ref;
}

// Element-wise check with a per-element tolerance, plus the norm-wise relative error.
struct Check {
  const char* what;
  long long bad = 0, shown = 0;
  double diff2 = 0, ref2 = 0;
  void element(long long i, double out, double ref, double tol) {
    bool good;
    if (std::isnan(ref)) good = std::isnan(out);
    else if (std::isinf(ref)) good = out == ref;
    else {
      good = std::isfinite(out) && std::fabs(out - ref) <= tol;
      if (std::isfinite(out)) {
        diff2 += (out - ref) * (out - ref);
        ref2 += ref * ref;
      }
    }
    if (!good) {
      if (shown++ < 5) std::printf("    %s mismatch at %lld: got %.9g want %.9g (tol %.3g)\n", what, i, out, ref, tol);
      ++bad;
    }
  }
  bool done(double norm_tol = -1) {
    const double rel = ref2 > 0 ? std::sqrt(diff2 / ref2) : 0;
    if (norm_tol >= 0 && rel > norm_tol) {
      std::printf("    %s norm-wise relative error %.3g > %.3g\n", what, rel, norm_tol);
      return false;
    }
    if (bad) std::printf("    %s: %lld mismatches\n", what, bad);
    return bad == 0;
  }
};

bool wanted(const std::vector<std::string>& filters, const std::string& name) {
  if (filters.empty()) return true;
  for (const auto& f : filters)
    if (name.find(f) != std::string::npos) return true;
  return false;
}

double measure_copy_gbps() {
  const size_t bytes = size_t(1) << 30;
  void *a, *b;
  CUDA_OK(cudaMalloc(&a, bytes));
  CUDA_OK(cudaMalloc(&b, bytes));
  CUDA_OK(cudaMemset(a, 1, bytes));
  const float ms = time_ms([&] { CUDA_OK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
  CUDA_OK(cudaFree(a));
  CUDA_OK(cudaFree(b));
  return 2.0 * bytes / (ms * 1e-3) / 1e9;
}

// ------------------------------------------------------------------ min over axis 1 and 2, 128x4096x4095
void check_min_seed() {
  namespace a1 = kiln_min_reduce_axis1;
  namespace a2 = kiln_min_reduce_axis2;
  const long long B = a1::kOuter, M = a1::kRed, N = a1::kInner, n = B * M * N;
  float *x, *y1, *y2;
  CUDA_OK(cudaMalloc(&x, n * sizeof(float)));
  CUDA_OK(cudaMalloc(&y1, B * N * sizeof(float)));
  CUDA_OK(cudaMalloc(&y2, B * M * sizeof(float)));
  fill(x, n, 11);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  set_value(x, (0 * M + 100) * N + 5, nan);       // column (0,5) and row (0,100) -> NaN
  set_value(x, (0 * M + 2000) * N + 5, -inf);     // NaN still wins in column (0,5)
  set_value(x, (0 * M + 200) * N + 6, -inf);      // column (0,6), row (0,200) -> -inf
  set_value(x, (77 * M + 0) * N + 4094, inf);     // first row, last column: no effect
  set_value(x, (127 * M + 4095) * N + 4094, -1);  // the very last element wins its row and column
  set_value(x, (77 * M + 4095) * N + 0, nan);     // last row of slab 77, first column
  poison(y1, B * N * sizeof(float));
  poison(y2, B * M * sizeof(float));
  kiln_min_reduce_axis1_k0<<<grid_of(a1::kGeometry), block_of(a1::kGeometry)>>>(x, y1);
  kiln_min_reduce_axis2_k0<<<grid_of(a2::kGeometry), block_of(a2::kGeometry)>>>(x, y2);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  const std::vector<float> h1 = to_host(y1, B * N), h2 = to_host(y2, B * M);
  bool ok1 = true, ok2 = true;
  for (long long o : {0LL, 77LL, 127LL}) {   // reference on three full slabs (67 MB each)
    const std::vector<float> slab = to_host(x + o * M * N, M * N);
    Check c1{"min axis1"}, c2{"min axis2"};
    for (long long col = 0; col < N; ++col) {
      double m = std::numeric_limits<double>::infinity();
      bool has_nan = false;
      for (long long r = 0; r < M; ++r) {
        const float v = slab[r * N + col];
        if (std::isnan(v)) has_nan = true;
        m = std::min(m, double(v));
      }
      const double ref = has_nan ? std::nan("") : m;
      if (!same_float(h1[o * N + col], ref)) c1.element(o * N + col, h1[o * N + col], ref, 0);
    }
    for (long long r = 0; r < M; ++r) {
      double m = std::numeric_limits<double>::infinity();
      bool has_nan = false;
      for (long long col = 0; col < N; ++col) {
        const float v = slab[r * N + col];
        if (std::isnan(v)) has_nan = true;
        m = std::min(m, double(v));
      }
      const double ref = has_nan ? std::nan("") : m;
      if (!same_float(h2[o * M + r], ref)) c2.element(o * M + r, h2[o * M + r], ref, 0);
    }
    ok1 = c1.done() && ok1;
    ok2 = c2.done() && ok2;
  }
  // Every output was written (poison is NaN with all bits set; only planted NaNs may remain).
  long long nan1 = 0, nan2 = 0;
  for (float v : h1) nan1 += std::isnan(v);
  for (float v : h2) nan2 += std::isnan(v);
  if (nan1 != 2) { std::printf("    min axis1: %lld NaN outputs, want 2 (unwritten?)\n", nan1); ok1 = false; }
  if (nan2 != 2) { std::printf("    min axis2: %lld NaN outputs, want 2 (unwritten?)\n", nan2); ok2 = false; }
  const double bytes = double(n) * 4;
  report("min_axis1 (reduce_outer)", "128x4096x4095 ax1",
         bytes + B * N * 4.0, time_ms([&] { kiln_min_reduce_axis1_k0<<<grid_of(a1::kGeometry), block_of(a1::kGeometry)>>>(x, y1); }), ok1);
  poison(y1, B * N * sizeof(float));
  const float alt1 = time_ms([&] { alt_min_axis1_unroll16<<<grid_of(a1::kGeometry), block_of(a1::kGeometry)>>>(x, y1); });
  report("  alt: unroll 16", "128x4096x4095 ax1", bytes + B * N * 4.0, alt1, same_bits(to_host(y1, B * N), h1));
  report("min_axis2 (reduce_inner_warp)", "128x4096x4095 ax2", bytes + B * M * 4.0,
         time_ms([&] { kiln_min_reduce_axis2_k0<<<grid_of(a2::kGeometry), block_of(a2::kGeometry)>>>(x, y2); }), ok2);
  poison(y2, B * M * sizeof(float));
  const float alt2 = time_ms([&] { alt_min_axis2_unroll8<<<grid_of(a2::kGeometry), block_of(a2::kGeometry)>>>(x, y2); });
  report("  alt: unroll 8", "128x4096x4095 ax2", bytes + B * M * 4.0, alt2, same_bits(to_host(y2, B * M), h2));
  CUDA_OK(cudaFree(x));
  CUDA_OK(cudaFree(y1));
  CUDA_OK(cudaFree(y2));
}

// ------------------------------------------------------------------ sum(x*x) over axis 0 and axis 1, 4096x8192
void check_sumsq() {
  namespace s0 = kiln_sumsq_axis0;
  namespace s1 = kiln_sumsq_axis1;
  const long long R = s0::kRed, C = s0::kInner, n = R * C;
  float *x, *y0, *y1, *ws;
  CUDA_OK(cudaMalloc(&x, n * 4));
  CUDA_OK(cudaMalloc(&y0, C * 4));
  CUDA_OK(cudaMalloc(&y1, R * 4));
  CUDA_OK(cudaMalloc(&ws, s0::kGeometry.workspace_bytes));
  fill(x, n, 21);
  poison(y0, C * 4);
  poison(y1, R * 4);
  poison(ws, s0::kGeometry.workspace_bytes);
  auto run0 = [&] {
    kiln_sumsq_axis0_k0<<<grid_of(s0::kGeometry), block_of(s0::kGeometry)>>>(x, ws);
    kiln_sumsq_axis0_k1<<<grid_of(s0::kFinishGeometry), block_of(s0::kFinishGeometry)>>>(ws, y0);
  };
  auto run1 = [&] { kiln_sumsq_axis1_k0<<<grid_of(s1::kGeometry), block_of(s1::kGeometry)>>>(x, y1); };
  run0();
  run1();
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  const std::vector<float> hx = to_host(x, n), h0 = to_host(y0, C), h1 = to_host(y1, R);
  std::vector<double> ref0(C, 0.0), ref1(R, 0.0);
  for (long long r = 0; r < R; ++r)
    for (long long c = 0; c < C; ++c) {
      const double v = double(hx[r * C + c]) * double(hx[r * C + c]);
      ref0[c] += v;
      ref1[r] += v;
    }
  Check c0{"sumsq axis0"}, c1{"sumsq axis1"};
  for (long long c = 0; c < C; ++c) c0.element(c, h0[c], ref0[c], 1e-4 * std::fabs(ref0[c]) + 1e-6);
  for (long long r = 0; r < R; ++r) c1.element(r, h1[r], ref1[r], 1e-4 * std::fabs(ref1[r]) + 1e-6);
  const bool ok0 = c0.done(1e-5), ok1 = c1.done(1e-5);
  report("sumsq_axis0 (outer split+fin)", "4096x8192 ax0", n * 4.0 + C * 4.0, time_ms(run0), ok0);
  report("sumsq_axis1 (inner_block)", "4096x8192 ax1", n * 4.0 + R * 4.0, time_ms(run1), ok1);
  CUDA_OK(cudaFree(x));
  CUDA_OK(cudaFree(y0));
  CUDA_OK(cudaFree(y1));
  CUDA_OK(cudaFree(ws));
}

// ------------------------------------------------------------------ argmax: short rows (7) and long rows (2^24+3)
long long ref_argmax(const float* row, long long len) {
  long long best = 0;
  for (long long i = 1; i < len; ++i) {
    if (std::isnan(row[best])) break;                     // the first NaN wins
    if (std::isnan(row[i]) || row[i] > row[best]) best = i;  // strictly greater: ties keep the first
  }
  return best;
}

void check_argmax() {
  namespace as = kiln_argmax_short;
  namespace al = kiln_argmax_long;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  {
    const long long R = as::kRows, L = as::kLen, n = R * L;
    float* x;
    long long* y;
    CUDA_OK(cudaMalloc(&x, n * 4));
    CUDA_OK(cudaMalloc(&y, R * 8));
    fill(x, n, 31);
    set_value(x, 5 * L + 2, nan);
    set_value(x, 5 * L + 4, nan);   // row 5: first NaN (2)
    set_value(x, 6 * L + 3, inf);   // row 6: 3
    for (int i = 0; i < L; ++i) set_value(x, 7 * L + i, 0.5f);   // row 7: all tied -> 0
    set_value(x, 8 * L + 6, 2.0f);  // row 8: last element
    poison(y, R * 8);
    auto run = [&] { kiln_argmax_short_k0<<<grid_of(as::kGeometry), block_of(as::kGeometry)>>>(x, y); };
    run_checked(run);
    const std::vector<float> hx = to_host(x, n);
    const std::vector<long long> hy = to_host(y, R);
    Check c{"argmax short"};
    for (long long r = 0; r < R; ++r) {
      const long long ref = ref_argmax(&hx[r * L], L);
      if (hy[r] != ref) c.element(r, double(hy[r]), double(ref), 0);
    }
    const bool ok = c.done() && hy[5] == 2 && hy[6] == 3 && hy[7] == 0 && hy[8] == 6;
    report("argmax_short (inner_warp)", "1048576x7", n * 4.0 + R * 8.0, time_ms(run), ok);
    CUDA_OK(cudaFree(x));
    CUDA_OK(cudaFree(y));
  }
  {
    const long long R = al::kRows, L = al::kLen, n = R * L;
    float* x;
    long long* y;
    void* ws;
    CUDA_OK(cudaMalloc(&x, n * 4));
    CUDA_OK(cudaMalloc(&y, R * 8));
    CUDA_OK(cudaMalloc(&ws, al::kGeometry.workspace_bytes));
    fill(x, n, 41);
    set_value(x, 1 * L + 12000000, nan);
    set_value(x, 1 * L + 10000000, nan);   // row 1: 10000000 (first NaN, other split)
    set_value(x, 2 * L + L - 1, inf);      // row 2: the very last element (tail of the last split)
    set_value(x, 3 * L + 16000000, 2.0f);
    set_value(x, 3 * L + 5, 2.0f);         // row 3: tie across splits -> 5
    set_value(x, 4 * L + 0, 3.0f);         // row 4: first element (head)
    poison(y, R * 8);
    auto run = [&] {
      kiln_argmax_long_k0<<<grid_of(al::kGeometry), block_of(al::kGeometry)>>>(x, static_cast<al::Op::Acc*>(ws));
      kiln_argmax_long_k1<<<grid_of(al::kFinishGeometry), block_of(al::kFinishGeometry)>>>(
          static_cast<const al::Op::Acc*>(ws), y);
    };
    run_checked(run);
    const std::vector<float> hx = to_host(x, n);
    const std::vector<long long> hy = to_host(y, R);
    Check c{"argmax long"};
    for (long long r = 0; r < R; ++r) {
      const long long ref = ref_argmax(&hx[r * L], L);
      if (hy[r] != ref) c.element(r, double(hy[r]), double(ref), 0);
    }
    const bool ok = c.done() && hy[1] == 10000000 && hy[2] == L - 1 && hy[3] == 5 && hy[4] == 0;
    report("argmax_long (block split+fin)", "8x16777219", n * 4.0 + R * 8.0, time_ms(run), ok);
    CUDA_OK(cudaFree(x));
    CUDA_OK(cudaFree(y));
    CUDA_OK(cudaFree(ws));
  }
}

// ------------------------------------------------------------------ logsumexp over rows, 16384x2048
void check_logsumexp() {
  namespace k = kiln_logsumexp;
  const long long R = k::kRows, L = k::kLen, n = R * L;
  float *x, *y;
  CUDA_OK(cudaMalloc(&x, n * 4));
  CUDA_OK(cudaMalloc(&y, R * 4));
  fill(x, n, 51);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> minus_inf(L, -inf);
  CUDA_OK(cudaMemcpy(x, minus_inf.data(), L * 4, cudaMemcpyHostToDevice));   // row 0: all -inf -> -inf
  set_value(x, 1 * L + 77, inf);                                             // row 1: +inf
  set_value(x, 2 * L + 1000, nan);                                           // row 2: NaN
  set_value(x, 3 * L + 5, 80.0f);                                            // row 3: large value (shift matters)
  poison(y, R * 4);
  auto run = [&] { kiln_logsumexp_k0<<<grid_of(k::kGeometry), block_of(k::kGeometry)>>>(x, y); };
  run_checked(run);
  const std::vector<float> hx = to_host(x, n), hy = to_host(y, R);
  Check c{"logsumexp"};
  for (long long r = 0; r < R; ++r) {
    double m = -std::numeric_limits<double>::infinity();
    bool has_nan = false;
    for (long long i = 0; i < L; ++i) {
      has_nan |= std::isnan(hx[r * L + i]);
      m = std::max(m, double(hx[r * L + i]));
    }
    double ref;
    if (has_nan) ref = std::nan("");
    else if (std::isinf(m)) ref = m;
    else {
      double s = 0;
      for (long long i = 0; i < L; ++i) s += std::exp(double(hx[r * L + i]) - m);
      ref = m + std::log(s);
    }
    c.element(r, hy[r], ref, 1e-5 * std::max(1.0, std::fabs(ref)));
  }
  report("logsumexp (inner_warp)", "16384x2048", n * 4.0 + R * 4.0, time_ms(run), c.done(1e-5));
  CUDA_OK(cudaFree(x));
  CUDA_OK(cudaFree(y));
}

// ------------------------------------------------------------------ scans
// CPU reference of one row: op over the logical order (reverse: from the end), exclusive shifts.
template <class Combine>
void ref_scan_row(const float* x, double* out, long long len, bool exclusive, bool reverse, double identity,
                  Combine combine) {
  double run = identity;
  for (long long q = 0; q < len; ++q) {
    const long long p = reverse ? len - 1 - q : q;
    if (exclusive) {
      out[p] = run;
      run = combine(run, double(x[p]));
    } else {
      run = combine(run, double(x[p]));
      out[p] = run;
    }
  }
}
double nan_max_d(double a, double b) { return (std::isnan(a) || a > b) ? a : b; }

void check_cumsum() {
  namespace k = kiln_cumsum_exclusive;
  const long long R = k::kRows, L = k::kLen, n = R * L;
  float *x, *y;
  CUDA_OK(cudaMalloc(&x, n * 4));
  CUDA_OK(cudaMalloc(&y, n * 4));
  fill(x, n, 61);
  poison(y, n * 4);
  auto run = [&] { kiln_cumsum_exclusive_k0<<<grid_of(k::kGeometry), block_of(k::kGeometry)>>>(x, y); };
  auto verify = [&](const char* what) {
    Check c{what};
    std::vector<float> hx(L), hy(L);
    std::vector<double> ref(L);
    for (long long r = 0; r < R; r += (r < 8 ? 1 : 61)) {   // 8 first rows, then every 61st, and the last
      const long long row = std::min(r, R - 1);
      CUDA_OK(cudaMemcpy(hx.data(), x + row * L, L * 4, cudaMemcpyDeviceToHost));
      CUDA_OK(cudaMemcpy(hy.data(), y + row * L, L * 4, cudaMemcpyDeviceToHost));
      ref_scan_row(hx.data(), ref.data(), L, true, false, 0.0, [](double a, double b) { return a + b; });
      double mag = 0;
      for (long long i = 0; i < L; ++i) {
        mag += std::fabs(hx[i]);
        c.element(row * L + i, hy[i], ref[i], 1e-4 * (1.0 + mag));
      }
      if (r + 61 >= R && row != R - 1) r = R - 1 - 61;   // make the last sampled row R-1
    }
    return c.done(1e-5);
  };
  run_checked(run);
  const bool ok = verify("cumsum exclusive");
  report("cumsum_excl (scan_rows_block)", "32768x32768", n * 8.0, time_ms(run), ok);
  poison(y, n * 4);
  const float alt_ms = time_ms([&] { alt_cumsum_vecs4<<<grid_of(k::kGeometry), block_of(k::kGeometry)>>>(x, y); });
  report("  alt: 256 thr, 4 vecs", "32768x32768", n * 8.0, alt_ms, verify("cumsum alt vecs4"));
  poison(y, n * 4);
  const float alt2_ms = time_ms([&] { alt_cumsum_512x2<<<grid_of(k::kGeometry), dim3(512)>>>(x, y); });
  report("  alt: 512 thr, 2 vecs", "32768x32768", n * 8.0, alt2_ms, verify("cumsum alt 512x2"));
  CUDA_OK(cudaFree(x));
  CUDA_OK(cudaFree(y));
}

void check_cumprod_reverse() {
  namespace k = kiln_cumprod_reverse;
  const long long R = k::kRows, L = k::kLen, n = R * L;
  float *x, *y;
  CUDA_OK(cudaMalloc(&x, n * 4));
  CUDA_OK(cudaMalloc(&y, n * 4));
  fill(x, n, 71, 0.995f, 0.01f);   // products of 1 +- 0.5% stay O(1) over 5003 elements
  poison(y, n * 4);
  auto run = [&] { kiln_cumprod_reverse_k0<<<grid_of(k::kGeometry), block_of(k::kGeometry)>>>(x, y); };
  run_checked(run);
  const std::vector<float> hx = to_host(x, n), hy = to_host(y, n);
  std::vector<double> ref(L);
  Check c{"cumprod reverse"};
  for (long long r = 0; r < R; ++r) {
    ref_scan_row(&hx[r * L], ref.data(), L, false, true, 1.0, [](double a, double b) { return a * b; });
    for (long long i = 0; i < L; ++i) c.element(r * L + i, hy[r * L + i], ref[i], 1e-4 * std::fabs(ref[i]) + 1e-30);
  }
  report("cumprod_rev (scan_rows_block)", "1000x5003", n * 8.0, time_ms(run), c.done(1e-5));
  CUDA_OK(cudaFree(x));
  CUDA_OK(cudaFree(y));
}

void check_cummax_lookback() {
  namespace k = kiln_cummax_lookback;
  const long long R = k::kRows, L = k::kLen, n = R * L;
  float *x, *y;
  void* ws;
  const size_t ws_bytes = size_t(k::kGeometry.workspace_bytes);
  CUDA_OK(cudaMalloc(&x, n * 4));
  CUDA_OK(cudaMalloc(&y, n * 4));
  CUDA_OK(cudaMalloc(&ws, ws_bytes));
  fill(x, n, 81);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  set_value(x, 3 * L + 1234567, nan);   // row 3: NaN from here on
  set_value(x, 5 * L + 2000000, inf);   // row 5: +inf from here on
  set_value(x, 6 * L + 0, 5.0f);        // row 6: the first element dominates the whole row
  poison(y, n * 4);
  const int smem = int(k::kGeometry.shared_bytes);
  CUDA_OK(cudaFuncSetAttribute(kiln_cummax_lookback_k0, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  auto run = [&] {
    CUDA_OK(cudaMemsetAsync(ws, 0, ws_bytes));   // statuses and tile counter start at zero every launch
    kiln_cummax_lookback_k0<<<grid_of(k::kGeometry), block_of(k::kGeometry), smem>>>(x, y, ws);
  };
  run_checked(run);
  auto verify = [&] {
    const std::vector<float> hx = to_host(x, n), hy = to_host(y, n);
    std::vector<double> ref(L);
    Check c{"cummax look-back"};
    for (long long r = 0; r < R; ++r) {
      ref_scan_row(&hx[r * L], ref.data(), L, false, false, -std::numeric_limits<double>::infinity(), nan_max_d);
      for (long long i = 0; i < L; ++i)
        if (!same_float(hy[r * L + i], ref[i])) c.element(r * L + i, hy[r * L + i], ref[i], 0);
    }
    return c.done();
  };
  const bool ok = verify();
  const float ms = time_ms(run);
  const bool ok_after = verify();   // the last of 60 timed launches is also right (races show up here)
  report("cummax (scan_rows_lookback)", "8x4000000", n * 8.0, ms, ok && ok_after);
  CUDA_OK(cudaFree(x));
  CUDA_OK(cudaFree(y));
  CUDA_OK(cudaFree(ws));
}

// ------------------------------------------------------------------ rownorm
void ref_softmax_row(const double* x, double* out, long long len, bool log) {
  double m = -std::numeric_limits<double>::infinity();
  for (long long i = 0; i < len; ++i) m = std::max(m, x[i]);
  double s = 0;
  for (long long i = 0; i < len; ++i) s += std::exp(x[i] - m);
  for (long long i = 0; i < len; ++i) out[i] = log ? (x[i] - m) - std::log(s) : std::exp(x[i] - m) / s;
}

void check_softmax_dropout() {
  namespace k = kiln_softmax_dropout;
  const long long R = k::kRows, L = k::kLen, n = R * L;
  const unsigned long long seed = 0x1234abcdULL;
  float *x, *y;
  CUDA_OK(cudaMalloc(&x, n * 4));
  CUDA_OK(cudaMalloc(&y, n * 4));
  fill(x, n, 91, -4.0f, 8.0f);   // logits in [-4, 4)
  poison(y, n * 4);
  auto run = [&] { kiln_softmax_dropout_k0<<<grid_of(k::kGeometry), block_of(k::kGeometry)>>>(x, y, seed); };
  run_checked(run);
  const std::vector<float> hx = to_host(x, n), hy = to_host(y, n);
  std::vector<double> in(L), ref(L);
  Check c{"softmax(dropout)"};
  for (long long r = 0; r < R; ++r) {
    for (long long i = 0; i < L; ++i) {
      const long long f = r * L + i;
      const bool keep = k::DropoutStub::uniform(seed, (unsigned long long)f) >= k::kP;
      in[i] = keep ? double(hx[f] * k::kScale) : 0.0;   // the same float product as the prologue
    }
    ref_softmax_row(in.data(), ref.data(), L, false);
    for (long long i = 0; i < L; ++i) c.element(r * L + i, hy[r * L + i], ref[i], 1e-4 * std::fabs(ref[i]) + 1e-9);
  }
  report("softmax_dropout (rownorm blk)", "128x16384", n * 8.0, time_ms(run), c.done(1e-5));
  CUDA_OK(cudaFree(x));
  CUDA_OK(cudaFree(y));
}

void check_log_softmax() {
  namespace k = kiln_log_softmax;
  const long long R = k::kRows, L = k::kLen, n = R * L;
  float *x, *y;
  CUDA_OK(cudaMalloc(&x, n * 4));
  CUDA_OK(cudaMalloc(&y, n * 4));
  fill(x, n, 101);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  set_value(x, 9 * L + 999, nan);   // row 9: all NaN
  poison(y, n * 4);
  auto run = [&] { kiln_log_softmax_k0<<<grid_of(k::kGeometry), block_of(k::kGeometry)>>>(x, y); };
  run_checked(run);
  const std::vector<float> hx = to_host(x, n), hy = to_host(y, n);
  std::vector<double> in(L), ref(L);
  Check c{"log_softmax"};
  for (long long r = 0; r < R; ++r) {
    bool has_nan = false;
    for (long long i = 0; i < L; ++i) {
      in[i] = hx[r * L + i];
      has_nan |= std::isnan(in[i]);
    }
    ref_softmax_row(in.data(), ref.data(), L, true);
    for (long long i = 0; i < L; ++i)
      c.element(r * L + i, hy[r * L + i], has_nan ? std::nan("") : ref[i], 1e-5 * std::max(1.0, std::fabs(ref[i])));
  }
  report("log_softmax (rownorm warp)", "8192x1000", n * 8.0, time_ms(run), c.done(1e-5));
  CUDA_OK(cudaFree(x));
  CUDA_OK(cudaFree(y));
}

void check_softmax_strided() {
  namespace k = kiln_softmax_strided;
  const long long O = k::kOuter, L = k::kLen, I = k::kInner, n = O * L * I;
  float *x, *y;
  CUDA_OK(cudaMalloc(&x, n * 4));
  CUDA_OK(cudaMalloc(&y, n * 4));
  fill(x, n, 111, -2.0f, 4.0f);
  poison(y, n * 4);
  auto run = [&] { kiln_softmax_strided_k0<<<grid_of(k::kGeometry), block_of(k::kGeometry)>>>(x, y); };
  run_checked(run);
  const std::vector<float> hx = to_host(x, n), hy = to_host(y, n);
  std::vector<double> in(L), ref(L);
  Check c{"softmax strided"};
  for (long long o = 0; o < O; ++o)
    for (long long col = 0; col < I; ++col) {
      for (long long l = 0; l < L; ++l) in[l] = hx[(o * L + l) * I + col];
      ref_softmax_row(in.data(), ref.data(), L, false);
      for (long long l = 0; l < L; ++l) {
        const long long f = (o * L + l) * I + col;
        c.element(f, hy[f], ref[l], 1e-4 * std::fabs(ref[l]) + 1e-9);
      }
    }
  report("softmax_strided (rownorm col)", "64x333x1024 ax1", n * 8.0, time_ms(run), c.done(1e-5));
  CUDA_OK(cudaFree(x));
  CUDA_OK(cudaFree(y));
}


// ------------------------------------------------------------------ extra coverage
void check_scan_cover() {
  using namespace cover;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto sum = [](double a, double b) { return a + b; };
  auto nan_min_d = [](double a, double b) { return (std::isnan(a) || a < b) ? a : b; };
  // Block per row: reverse inclusive/exclusive (vector path), odd-length exclusive cummin (scalar).
  {
    const long long n = (long long)kScanRows * kScanLen;
    float *x, *y;
    CUDA_OK(cudaMalloc(&x, n * 4));
    CUDA_OK(cudaMalloc(&y, n * 4));
    fill(x, n, 121);
    const std::vector<float> hx = to_host(x, n);
    for (int excl = 0; excl < 2; ++excl) {
      poison(y, n * 4);
      auto run = [&] {
        if (excl) cover_cumsum_rev_excl<<<kScanRows, 256>>>(x, y);
        else cover_cumsum_rev_incl<<<kScanRows, 256>>>(x, y);
      };
      run_checked(run);
      const std::vector<float> hy = to_host(y, n);
      std::vector<double> ref(kScanLen);
      Check c{excl ? "cumsum reverse exclusive" : "cumsum reverse inclusive"};
      for (long long r = 0; r < kScanRows; ++r) {
        ref_scan_row(&hx[r * kScanLen], ref.data(), kScanLen, excl, true, 0.0, sum);
        for (long long i = 0; i < kScanLen; ++i) c.element(r * kScanLen + i, hy[r * kScanLen + i], ref[i], 1e-4 * (1.0 + std::fabs(ref[i])));
      }
      report(excl ? "cover: cumsum rev excl (vec)" : "cover: cumsum rev incl (vec)", "1024x8192", n * 8.0, time_ms(run), c.done(1e-5));
    }
    CUDA_OK(cudaFree(x));
    CUDA_OK(cudaFree(y));
  }
  {
    const long long n = (long long)kScanOddRows * kScanOddLen;
    float *x, *y;
    CUDA_OK(cudaMalloc(&x, n * 4));
    CUDA_OK(cudaMalloc(&y, n * 4));
    fill(x, n, 131);
    set_value(x, 17LL * kScanOddLen + 2000, nan);
    poison(y, n * 4);
    auto run = [&] { cover_cummin_odd_excl<<<kScanOddRows, 256>>>(x, y); };
    run_checked(run);
    const std::vector<float> hx = to_host(x, n), hy = to_host(y, n);
    std::vector<double> ref(kScanOddLen);
    Check c{"cummin exclusive odd"};
    for (long long r = 0; r < kScanOddRows; ++r) {
      ref_scan_row(&hx[r * kScanOddLen], ref.data(), kScanOddLen, true, false, std::numeric_limits<double>::infinity(), nan_min_d);
      for (long long i = 0; i < kScanOddLen; ++i)
        if (!same_float(hy[r * kScanOddLen + i], ref[i])) c.element(r * kScanOddLen + i, hy[r * kScanOddLen + i], ref[i], 0);
    }
    report("cover: cummin excl odd (scalar)", "1000x3001", n * 8.0, time_ms(run), c.done());
    CUDA_OK(cudaFree(x));
    CUDA_OK(cudaFree(y));
  }
  // Look-back: reverse exclusive on odd rows (scalar), inclusive forward on aligned rows (vector).
  for (int vec = 0; vec < 2; ++vec) {
    const long long R = vec ? kLbVRows : kLbRows, L = vec ? kLbVLen : kLbLen, n = R * L;
    const auto geo = kiln::launch::scan_rows_lookback_geometry(R, L, kLbTile, 256, 4, 2LL * g_sms);
    const size_t ws_bytes = size_t(geo.workspace_bytes);
    const unsigned grid = unsigned(geo.grid.x), block = unsigned(geo.block.x);
    const int smem = int(geo.shared_bytes);
    CUDA_OK(cudaFuncSetAttribute(cover_lookback_cumsum_vec, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CUDA_OK(cudaFuncSetAttribute(cover_lookback_cumsum_rev_excl, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    float *x, *y;
    void* ws;
    CUDA_OK(cudaMalloc(&x, n * 4));
    CUDA_OK(cudaMalloc(&y, n * 4));
    CUDA_OK(cudaMalloc(&ws, ws_bytes));
    fill(x, n, 141 + vec);
    poison(y, n * 4);
    auto run = [&] {
      CUDA_OK(cudaMemsetAsync(ws, 0, ws_bytes));
      if (vec) cover_lookback_cumsum_vec<<<grid, block, smem>>>(x, y, ws);
      else cover_lookback_cumsum_rev_excl<<<grid, block, smem>>>(x, y, ws);
    };
    run_checked(run);
    auto verify = [&] {
      const std::vector<float> hx = to_host(x, n), hy = to_host(y, n);
      std::vector<double> ref(L);
      Check c{vec ? "look-back cumsum (vec)" : "look-back cumsum rev excl (odd)"};
      for (long long r = 0; r < R; ++r) {
        ref_scan_row(&hx[r * L], ref.data(), L, !vec, !vec, 0.0, sum);
        double mag = 0;
        for (long long q = 0; q < L; ++q) {
          const long long i = vec ? q : L - 1 - q;   // running magnitude in scan order
          mag += std::fabs(hx[r * L + i]);
          c.element(r * L + i, hy[r * L + i], ref[i], 1e-4 * (1.0 + mag));
        }
      }
      return c.done(1e-5);
    };
    const bool ok = verify();
    const float ms = time_ms(run);
    report(vec ? "cover: look-back incl (vec)" : "cover: look-back rev excl", vec ? "2x2097152" : "3x1000003", n * 8.0, ms,
           ok && verify());
    CUDA_OK(cudaFree(x));
    CUDA_OK(cudaFree(y));
    CUDA_OK(cudaFree(ws));
  }
}

void check_rownorm_reduce_cover() {
  using namespace cover;
  for (int vec = 0; vec < 2; ++vec) {   // two-pass rownorm: odd rows (scalar pass 2), aligned rows (vector)
    const long long L = vec ? kSmVLen : kSmLen, n = kSmRows * L;
    float *x, *y;
    CUDA_OK(cudaMalloc(&x, n * 4));
    CUDA_OK(cudaMalloc(&y, n * 4));
    fill(x, n, 151 + vec, -3.0f, 6.0f);
    poison(y, n * 4);
    auto run = [&] {
      if (vec) cover_log_softmax_two_pass_vec<<<kSmRows, 1024>>>(x, y);
      else cover_softmax_two_pass_odd<<<kSmRows, 1024>>>(x, y);
    };
    run_checked(run);
    const std::vector<float> hx = to_host(x, n), hy = to_host(y, n);
    std::vector<double> in(L), ref(L);
    Check c{vec ? "log_softmax two-pass" : "softmax two-pass"};
    for (long long r = 0; r < kSmRows; ++r) {
      for (long long i = 0; i < L; ++i) in[i] = hx[r * L + i];
      ref_softmax_row(in.data(), ref.data(), L, vec);
      for (long long i = 0; i < L; ++i)
        c.element(r * L + i, hy[r * L + i], ref[i], vec ? 1e-5 * std::max(1.0, std::fabs(ref[i])) : 1e-4 * std::fabs(ref[i]) + 1e-10);
    }
    report(vec ? "cover: log_softmax 2-pass vec" : "cover: softmax 2-pass odd", vec ? "64x65536" : "64x100003", n * 8.0,
           time_ms(run), c.done(1e-5));
    CUDA_OK(cudaFree(x));
    CUDA_OK(cudaFree(y));
  }
  {   // f16 input, f32 accumulation; rows of 1001 halves: the 16-byte alignment varies by row
    const long long n = (long long)kHRows * kHLen;
    std::vector<__half> hx(n);
    for (long long i = 0; i < n; ++i) hx[i] = __float2half(hash_uniform(161, i));
    __half* x;
    float* y;
    CUDA_OK(cudaMalloc(&x, n * 2));
    CUDA_OK(cudaMalloc(&y, kHRows * 4));
    CUDA_OK(cudaMemcpy(x, hx.data(), n * 2, cudaMemcpyHostToDevice));
    poison(y, kHRows * 4);
    auto run = [&] { cover_sum_f16<<<kHRows / 8, 256>>>(x, y); };
    run_checked(run);
    const std::vector<float> hy = to_host(y, kHRows);
    Check c{"sum f16"};
    for (long long r = 0; r < kHRows; ++r) {
      double ref = 0;
      for (long long i = 0; i < kHLen; ++i) ref += double(__half2float(hx[r * kHLen + i]));
      c.element(r, hy[r], ref, 1e-4 * std::fabs(ref) + 1e-6);
    }
    report("cover: sum f16 (inner_warp)", "4096x1001 f16", n * 2.0 + kHRows * 4.0, time_ms(run), c.done(1e-5));
    CUDA_OK(cudaFree(x));
    CUDA_OK(cudaFree(y));
  }
}

// ------------------------------------------------------------------ issue 4: candidates, one table

// A device-to-device copy moving the same bytes as the kernel (half read, half written).
void report_copy(const std::string& shape, double bytes) {
  const size_t half = size_t(bytes / 2) / 16 * 16;
  void *a, *b;
  CUDA_OK(cudaMalloc(&a, half));
  CUDA_OK(cudaMalloc(&b, half));
  CUDA_OK(cudaMemset(a, 1, half));
  const float ms = time_ms([&] { CUDA_OK(cudaMemcpyAsync(b, a, half, cudaMemcpyDeviceToDevice)); });
  CUDA_OK(cudaFree(a));
  CUDA_OK(cudaFree(b));
  report("  copy, same bytes", shape, 2.0 * half, ms, true);
}

// CPU min over axis 1 of one [red, inner] slab (NaN propagates).
std::vector<float> ref_min_slab(const float* slab, long long red, long long inner) {
  std::vector<float> out(inner, std::numeric_limits<float>::infinity());
  std::vector<char> nan(inner, 0);
  for (long long r = 0; r < red; ++r)
    for (long long c = 0; c < inner; ++c) {
      const float v = slab[r * inner + c];
      if (std::isnan(v)) nan[c] = 1;
      else if (v < out[c]) out[c] = v;
    }
  for (long long c = 0; c < inner; ++c)
    if (nan[c]) out[c] = std::numeric_limits<float>::quiet_NaN();
  return out;
}

void check_min_rows() {
  namespace a1 = kiln_min_reduce_axis1;
  using perf::kMinB;
  using perf::kMinM;
  using perf::kMinN;
  const long long n = kMinB * kMinM * kMinN, n_out = kMinB * kMinN;
  float *x, *y, *y_base, *ws;
  const long long max_splits = 32;
  CUDA_OK(cudaMalloc(&x, n * 4));
  CUDA_OK(cudaMalloc(&y, n_out * 4));
  CUDA_OK(cudaMalloc(&y_base, n_out * 4));
  CUDA_OK(cudaMalloc(&ws, max_splits * n_out * 4));
  fill(x, n, 12);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  set_value(x, (0 * kMinM + 100) * kMinN + 5, nan);
  set_value(x, (0 * kMinM + 2000) * kMinN + 5, -inf);
  set_value(x, (0 * kMinM + 200) * kMinN + 6, -inf);
  set_value(x, (127 * kMinM + 4095) * kMinN + 4094, -1);
  set_value(x, (77 * kMinM + 4095) * kMinN + 0, nan);
  set_value(x, (77 * kMinM + 1023) * kMinN + 4094, -2);   // last row of split 0 (4 splits), last column
  set_value(x, (77 * kMinM + 1024) * kMinN + 4093, -3);   // first row of split 1
  // Baseline: the strip unit (reduce_outer), checked on three slabs; every candidate must match it bit for bit.
  poison(y_base, n_out * 4);
  auto base = [&] { kiln_min_reduce_axis1_k0<<<grid_of(a1::kGeometry), block_of(a1::kGeometry)>>>(x, y_base); };
  run_checked(base);
  const std::vector<float> hb = to_host(y_base, n_out);
  bool base_ok = true;
  for (long long o : {0LL, 77LL, 127LL}) {
    const std::vector<float> slab = to_host(x + o * kMinM * kMinN, kMinM * kMinN);
    const std::vector<float> ref = ref_min_slab(slab.data(), kMinM, kMinN);
    Check c{"min axis1 baseline"};
    for (long long col = 0; col < kMinN; ++col)
      if (!same_float(hb[o * kMinN + col], ref[col])) c.element(o * kMinN + col, hb[o * kMinN + col], ref[col], 0);
    base_ok = c.done() && base_ok;
  }
  long long nans = 0;
  for (float v : hb) nans += std::isnan(v);
  if (nans != 2) { std::printf("    baseline: %lld NaN outputs, want 2\n", nans); base_ok = false; }
  const std::string shape = "128x4096x4095 ax1";
  const double bytes = double(n) * 4 + double(n_out) * 4;
  report_copy(shape, bytes);
  report("min ax1 strip (reduce_outer, old)", shape, bytes, time_ms(base), base_ok);

  using Kernel = void (*)(const float*, float*, float*, int, int);
  struct Variant {
    const char* name;
    Kernel k;
    int threads, cols;
  };
  const Variant variants[] = {
      {"rows 256x16 u1", min_rows_256x16_u1, 256, 16}, {"rows 256x16 u2", min_rows_256x16_u2, 256, 16},
      {"rows 512x8 u2", min_rows_512x8_u2, 512, 8},    {"rows 1024x4 u4", min_rows_1024x4_u4, 1024, 4},
      {"rows 128x32 u1", min_rows_128x32_u1, 128, 32},
  };
  // One row of the table: variant v with `splits` splits (+ reduce_finish), checked bit for bit against the strip.
  auto time_variant = [&](const Variant& v, long long splits, const std::function<bool(const Variant&, long long)>& planned) {
    const long long chunk = (kMinM + splits - 1) / splits;
    const long long real_splits = (kMinM + chunk - 1) / chunk;
    const kiln::launch::OuterSplit sp{real_splits, chunk};
    const auto g = kiln::launch::reduce_outer_geometry(kMinB, kMinN, sp, v.threads, v.cols, 4);
    auto run = [&] {
      v.k<<<grid_of(g), block_of(g)>>>(x, y, ws, int(real_splits), int(chunk));
      if (real_splits > 1) min_rows_finish<<<unsigned((n_out + 255) / 256), 256>>>(ws, y, int(real_splits));
    };
    poison(y, n_out * 4);
    run_checked(run);
    const bool ok = same_bits(to_host(y, n_out), hb);
    char name[96];
    std::snprintf(name, sizeof name, "min ax1 %s s%lld%s", v.name, real_splits, planned(v, real_splits) ? " [plan]" : "");
    report(name, shape, bytes, time_ms(run), ok);
  };
  auto never = [](const Variant&, long long) { return false; };
  for (const Variant& v : variants) {
    const auto rule = kiln::launch::reduce_outer_rows_split(kMinB, kMinM, kMinN, v.threads, v.cols, g_sms);
    std::vector<long long> split_counts = {rule.splits, rule.splits * 2};
    if (v.k == min_rows_256x16_u1) split_counts = {rule.splits, 2, 6, 8, 16, 32};   // 6: 768 blocks, 40 regs fit 6 an SM
    for (long long splits : split_counts)
      if (splits <= max_splits && splits >= 1) time_variant(v, splits, never);
  }
  // reduce_outer_rows_v4 (what the planner emits for this shape): 1024 threads x 4 columns, one tile a row.
  const Variant v4s[] = {{"v4 1024 u1", min_v4_1024_u1, 1024, 4},
                         {"v4 1024 u2", min_v4_1024_u2, 1024, 4},
                         {"v4 1024 u4", min_v4_1024_u4, 1024, 4}};
  const int plan_threads = kiln::launch::reduce_outer_v4_threads(kMinN);
  const auto plan_split = kiln::launch::reduce_outer_v4_split(kMinB, kMinM, kMinN, plan_threads, kiln::launch::kOuterV4Waves, g_sms);
  auto is_plan = [&](const Variant& v, long long splits) {
    return v.k == min_v4_1024_u2 && v.threads == plan_threads && splits == plan_split.splits;
  };
  for (const Variant& v : v4s)
    for (long long splits : {1LL, 2LL, 4LL}) time_variant(v, splits, is_plan);
  CUDA_OK(cudaFree(x));
  CUDA_OK(cudaFree(y));
  CUDA_OK(cudaFree(y_base));
  CUDA_OK(cudaFree(ws));

  // Awkward shapes (checked, timed for information): misaligned base, partial tiles, tiny inner, splits.
  struct Odd {
    int outer, red, inner, offset;
  };
  // reduce_outer_rows_v4 on the same shapes (256 threads x 4 columns): offsets 1-3 take its scalar
  // fallback, offset 0 its aligned vectors (the tensor ends off a vector: the bounded last load).
  for (const bool v4 : {false, true})
  for (const Odd c : {Odd{3, 1001, 4097, 1}, Odd{5, 777, 1003, 3}, Odd{1, 20000, 513, 2}, Odd{700, 64, 4095, 0},
                      Odd{3, 1001, 4097, 0}, Odd{5, 777, 1003, 0}}) {
    const long long on = (long long)c.outer * c.red * c.inner, oo = (long long)c.outer * c.inner;
    const int cols = v4 ? 4 : 16;
    const auto sp = kiln::launch::reduce_outer_rows_split(c.outer, c.red, c.inner, 256, cols, g_sms);
    const auto g = kiln::launch::reduce_outer_geometry(c.outer, c.inner, sp, 256, cols, 8);
    const auto min_k = v4 ? min_v4_odd : min_rows_odd;
    const auto argmin_k = v4 ? argmin_v4_odd : argmin_rows_odd;
    float *ox, *oy, *ows;
    long long* oa;
    kiln::ArgMinOp<float, int>::Acc* awk;
    CUDA_OK(cudaMalloc(&ox, (on + 4) * 4));
    CUDA_OK(cudaMalloc(&oy, oo * 4));
    CUDA_OK(cudaMalloc(&oa, oo * 8));
    CUDA_OK(cudaMalloc(&ows, sp.splits * oo * 4));
    CUDA_OK(cudaMalloc(&awk, sp.splits * oo * sizeof(kiln::ArgMinOp<float, int>::Acc)));
    float* xin = ox + c.offset;
    fill(xin, on, 13 + c.offset);
    set_value(xin, (0LL * c.red + c.red / 3) * c.inner + c.inner - 1, nan);
    set_value(xin, ((c.outer - 1LL) * c.red + c.red - 1) * c.inner, -inf);
    set_value(xin, ((c.outer - 1LL) * c.red + 1) * c.inner + 1, -5.f);
    set_value(xin, ((c.outer - 1LL) * c.red + c.red - 1) * c.inner + 1, -5.f);   // argmin tie: row 1 wins
    poison(oy, oo * 4);
    poison(oa, oo * 8);
    auto run = [&] {
      min_k<<<grid_of(g), block_of(g)>>>(xin, oy, ows, c.outer, c.red, c.inner, int(sp.splits), int(sp.chunk));
      argmin_k<<<grid_of(g), block_of(g)>>>(xin, oa, awk, c.outer, c.red, c.inner, int(sp.splits), int(sp.chunk));
      if (sp.splits > 1) {
        min_rows_odd_finish<<<unsigned((oo + 255) / 256), 256>>>(ows, oy, int(oo), int(sp.splits), c.red);
        argmin_rows_odd_finish<<<unsigned((oo + 255) / 256), 256>>>(awk, oa, int(oo), int(sp.splits), c.red);
      }
    };
    run_checked(run);
    const std::vector<float> hx = to_host(xin, on), hy = to_host(oy, oo);
    const std::vector<long long> ha = to_host(oa, oo);
    Check cm{"min rows odd"}, ca{"argmin rows odd"};
    for (long long o = 0; o < c.outer; ++o) {
      const float* slab = &hx[o * c.red * c.inner];
      const std::vector<float> ref = ref_min_slab(slab, c.red, c.inner);
      std::vector<long long> best(c.inner, 0);   // first NaN, else first minimum; row-major walk
      for (long long r = 1; r < c.red; ++r)
        for (long long col = 0; col < c.inner; ++col) {
          const float b = slab[best[col] * c.inner + col], v = slab[r * c.inner + col];
          if (!std::isnan(b) && (std::isnan(v) || v < b)) best[col] = r;
        }
      for (long long col = 0; col < c.inner; ++col) {
        if (!same_float(hy[o * c.inner + col], ref[col])) cm.element(o * c.inner + col, hy[o * c.inner + col], ref[col], 0);
        if (ha[o * c.inner + col] != best[col])
          ca.element(o * c.inner + col, double(ha[o * c.inner + col]), double(best[col]), 0);
      }
    }
    const bool ok = cm.done() && ca.done() && ha[(c.outer - 1LL) * c.inner + 1] == 1;
    char shp[64];
    std::snprintf(shp, sizeof shp, "%dx%dx%d+%d s%lld", c.outer, c.red, c.inner, c.offset, sp.splits);
    report(v4 ? "  odd: min+argmin v4" : "  odd: min+argmin rows", shp, 2.0 * on * 4, time_ms(run), ok);
    CUDA_OK(cudaFree(ox));
    CUDA_OK(cudaFree(oy));
    CUDA_OK(cudaFree(oa));
    CUDA_OK(cudaFree(ows));
    CUDA_OK(cudaFree(awk));
  }
}

// Softmax / log_softmax reference with the semantics of docs/semantics.md: NaN or +inf in the row,
// or an all -inf row, gives NaN everywhere.
void ref_rownorm_row(const float* x, long long len, bool log, std::vector<double>& out) {
  double m = -std::numeric_limits<double>::infinity();
  bool poisoned = false;
  for (long long i = 0; i < len; ++i) {
    poisoned |= std::isnan(x[i]) || x[i] == std::numeric_limits<float>::infinity();
    m = std::max(m, double(x[i]));
  }
  out.assign(len, std::nan(""));
  if (poisoned || std::isinf(m)) return;
  double s = 0;
  for (long long i = 0; i < len; ++i) s += std::exp(double(x[i]) - m);
  for (long long i = 0; i < len; ++i) out[i] = log ? (double(x[i]) - m) - std::log(s) : std::exp(double(x[i]) - m) / s;
}

// Checks `rows` (all when empty) of y against the reference; tolerances as in the header.
bool check_rownorm_rows(const float* dx, const float* dy, long long rows_total, long long len, bool log,
                        const std::vector<long long>& rows, const char* what) {
  Check c{what};
  std::vector<double> ref;
  std::vector<long long> list = rows;
  if (list.empty())
    for (long long r = 0; r < rows_total; ++r) list.push_back(r);
  for (long long r : list) {
    const std::vector<float> hx = to_host(dx + r * len, len), hy = to_host(dy + r * len, len);
    ref_rownorm_row(hx.data(), len, log, ref);
    for (long long i = 0; i < len; ++i)
      c.element(r * len + i, hy[i], ref[i], log ? 1e-5 * std::max(1.0, std::fabs(ref[i])) : 1e-4 * std::fabs(ref[i]) + 1e-9);
  }
  return c.done(1e-5);
}

void check_softmax_rows() {
  using perf::kSmB;
  using perf::kSmN;
  const long long n = (long long)kSmB * kSmN;
  float *x, *y;
  CUDA_OK(cudaMalloc(&x, n * 4));
  CUDA_OK(cudaMalloc(&y, n * 4));
  fill(x, n, 171);   // torch.rand-style [0, 1)
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  set_value(x, 1LL * kSmN + 77, nan);        // row 1: NaN
  set_value(x, 2LL * kSmN + 8191, inf);      // row 2: +inf -> NaN
  const std::vector<float> minus_inf(kSmN, -inf);
  CUDA_OK(cudaMemcpy(x + 3LL * kSmN, minus_inf.data(), kSmN * 4, cudaMemcpyHostToDevice));   // row 3: all -inf
  CUDA_OK(cudaMemcpy(x + 4LL * kSmN, minus_inf.data(), 5000 * 4, cudaMemcpyHostToDevice));   // row 4: leading -inf
  set_value(x, 5LL * kSmN + 4000, 80.f);     // row 5: one dominant value
  set_value(x, 6LL * kSmN + 0, -80.f);       // row 6: exp underflow at one element
  std::vector<long long> rows = {0, 1, 2, 3, 4, 5, 6, 7, kSmB - 1};
  for (long long r = 1021; r < kSmB; r += 4093) rows.push_back(r);
  const std::string shape = "32768x8192";
  const double bytes = 2.0 * n * 4;
  report_copy(shape, bytes);
  using Kernel = void (*)(const float*, float*);
  struct Variant {
    const char* name;
    Kernel k;
    int threads;
    bool log;
  };
  const Variant variants[] = {
      {"softmax 512x16 [plan]", softmax_512x16, 512, false}, {"softmax 1024x8", softmax_1024x8, 1024, false},
      {"softmax 256x32", softmax_256x32, 256, false},        {"softmax 512x16 (3 blocks/SM)", softmax_512x16_3blocks, 512, false},
      {"softmax 256x32 (3 blocks/SM)", softmax_256x32_3blocks, 256, false},
      {"log_softmax 512x16 [plan]", log_softmax_512x16, 512, true},
  };
  for (const Variant& v : variants) {
    poison(y, n * 4);
    auto run = [&] { v.k<<<kSmB, v.threads>>>(x, y); };
    run_checked(run);
    const bool ok = check_rownorm_rows(x, y, kSmB, kSmN, v.log, rows, v.name);
    report(v.name, shape, bytes, time_ms(run), ok);
  }
  CUDA_OK(cudaFree(x));
  CUDA_OK(cudaFree(y));

  struct Odd {
    const char* name;
    Kernel k;
    int threads;
    long long rows, len;
    bool log;
  };
  const Odd odds[] = {
      {"  odd: softmax rows of 8191", softmax_odd_8191, 512, 2000, 8191, false},
      {"  odd: log_softmax rows of 4099", log_softmax_odd_4099, 512, 3000, 4099, true},
      {"  odd: softmax 2-pass 100003", softmax_odd_100003, 512, 100, 100003, false},
      {"  odd: softmax rows of 3", softmax_odd_3, 256, 5000, 3, false},
  };
  for (const Odd& o : odds) {
    const long long on = o.rows * o.len;
    CUDA_OK(cudaMalloc(&x, on * 4));
    CUDA_OK(cudaMalloc(&y, on * 4));
    fill(x, on, 181, -5.f, 10.f);
    set_value(x, 1 * o.len + o.len - 1, nan);
    set_value(x, 2 * o.len, inf);
    const std::vector<float> row_minus_inf(o.len, -inf);
    CUDA_OK(cudaMemcpy(x + 3 * o.len, row_minus_inf.data(), o.len * 4, cudaMemcpyHostToDevice));
    poison(y, on * 4);
    auto run = [&] { o.k<<<unsigned(o.rows), o.threads>>>(x, y); };
    run_checked(run);
    const bool ok = check_rownorm_rows(x, y, o.rows, o.len, o.log, {}, o.name);
    char shp[48];
    std::snprintf(shp, sizeof shp, "%lldx%lld", o.rows, o.len);
    report(o.name, shp, 2.0 * on * 4, time_ms(run), ok);
    CUDA_OK(cudaFree(x));
    CUDA_OK(cudaFree(y));
  }
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> filters(argv + 1, argv + argc);
  int device = 0;
  CUDA_OK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, device));
  std::printf("device: %s, %d SMs (the units bake in 132)\n", prop.name, prop.multiProcessorCount);
  g_sms = prop.multiProcessorCount;
  g_copy_gbps = measure_copy_gbps();
  std::printf("device-to-device cudaMemcpy (1 GiB, read + write): %.0f GB/s\n", g_copy_gbps);

  struct Case {
    const char* name;
    void (*run)();
  };
  const Case cases[] = {
      {"min", check_min_seed},           {"sumsq", check_sumsq},
      {"argmax", check_argmax},          {"logsumexp", check_logsumexp},
      {"cumsum", check_cumsum},          {"cumprod", check_cumprod_reverse},
      {"cummax", check_cummax_lookback}, {"softmax_dropout", check_softmax_dropout},
      {"log_softmax", check_log_softmax}, {"softmax_strided", check_softmax_strided},
      {"cover_scan", check_scan_cover},  {"cover_rownorm_reduce", check_rownorm_reduce_cover},
      {"issue4_min_rows", check_min_rows}, {"issue4_softmax_rows", check_softmax_rows},
  };
  for (const Case& c : cases) {
    if (!wanted(filters, c.name)) continue;
    std::printf("[%s]\n", c.name);
    c.run();
  }

  std::printf("\n%-30s %-20s %10s %9s %8s %s\n", "variant", "shape", "median ms", "GB/s", "of copy", "check");
  for (const Row& r : g_rows) {
    const double gbps = r.bytes / (r.ms * 1e-3) / 1e9;
    std::printf("%-30s %-20s %10.4f %9.0f %7.1f%% %s\n", r.variant.c_str(), r.shape.c_str(), r.ms, gbps,
                100.0 * gbps / g_copy_gbps, r.ok ? "ok" : "FAIL");
  }
  std::printf("%s: %d failing variant(s)\n", g_failures ? "FAILED" : "PASSED", g_failures);
  return g_failures ? 1 : 0;
}
