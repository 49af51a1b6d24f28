// scan_check — checks and times the strided-axis scans (scan_strided[_totals] and
// scan_strided_lookback) and the decoupled look-back scan (scan_rows_lookback) on a GPU, without
// the kiln runtime.
//
// Build (from the repository root; scripts/gpu_build.sh builds every *_check.cu):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I templates bench/standalone/scan_check.cu -o scan_check
// Run: ./scan_check            (every case, about 20 seconds on an H200)
//      ./scan_check strided    (only the cases whose name contains a word)
//
// Strided cases run the strided look-back at the planner's tile (kScanStridedLookbackThreads x
// scan_strided_lookback_rows, kScanStridedLookbackBlocksPerSm) and others, then the scan the
// planner used before it (chunked where the columns cannot fill the GPU).
// Look-back cases run each tile in kLookTiles (the planner's pick first) and, for sums whose rows
// are whole tiles of 256 x 8 vectors, the same tiles without the look-back (every tile from the
// identity: unchecked, the ceiling of the tile pipeline alone).
//
// Each case: inputs uniform [0,1) (cumprod: 1 +- 0.5%) from a host PRNG with a NaN and an inf
// planted, outputs poisoned with 0xFF bytes (NaN), the launch sequence the planner produces
// (geometry from kiln/config/scan.h with this device's SM count: totals kernel then scan for
// a chunked strided scan; cudaMemsetAsync of the workspace then the kernel for look-back),
// compared element by element with a float64 CPU scan over the whole output. Tolerances:
// cummax/cummin exact (NaN matches NaN); cumsum |out-ref| <= 1e-4 * (1 + running sum of |x|);
// cumprod 1e-4 relative. Then 10 warm-up and 50 timed runs of the whole sequence (median,
// cudaEvents), GB/s counting the input read once and the output written once, and the fraction
// of a device-to-device cudaMemcpy of the same size measured in the same run.
// Exit status 1 on a mismatch, 2 on a CUDA error.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/config/scan.h"
#include "kiln/scan.cuh"

#define CUDA_OK(call)                                                                          \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

namespace {

struct Pass {
  __device__ float operator()(float x, int) const { return x; }
};

constexpr int kUnroll = 8;

template <int kThreads, bool kReverse, class Op>
__global__ void __launch_bounds__(kThreads) strided_totals(const float* __restrict__ in, float* __restrict__ totals,
                                                            int outer, int len, int inner, int chunk) {
  kiln::scan_strided_totals<kThreads, kUnroll, kReverse, Op>(in, totals, outer, len, inner, chunk, Pass{});
}
template <int kThreads, bool kExclusive, bool kReverse, class Op>
__global__ void __launch_bounds__(kThreads) strided_scan(const float* __restrict__ in, float* __restrict__ out,
                                                          const float* __restrict__ totals, int outer, int len,
                                                          int inner, int chunk) {
  kiln::scan_strided<kThreads, kUnroll, kExclusive, kReverse, Op>(in, out, totals, outer, len, inner, chunk, Pass{},
                                                                 Pass{});
}
template <int kThreads, int kVecs, int kMinBlocks, int kStages, bool kExclusive, bool kReverse, class Op>
__global__ void __launch_bounds__(kThreads + 32, kMinBlocks) lookback_scan(const float* __restrict__ in,
                                                                           float* __restrict__ out, void* ws, int rows,
                                                                           int len) {
  kiln::scan_rows_lookback<kThreads, kVecs, kStages, kExclusive, kReverse, /*aligned=*/false, Op>(in, out, ws, rows, len,
                                                                                                Pass{}, Pass{});
}
template <int kThreads, int kRows, int kMinBlocks, bool kExclusive, bool kReverse, class Op>
__global__ void __launch_bounds__(kThreads, kMinBlocks) strided_lookback(const float* __restrict__ in,
                                                                         float* __restrict__ out, void* ws, int outer,
                                                                         int len, int inner) {
  kiln::scan_strided_lookback<kThreads, kRows, kExclusive, kReverse, Op>(in, out, ws, outer, len, inner, Pass{}, Pass{});
}
// The look-back tiles every look-back case runs with (data threads, 16-byte vectors a thread,
// blocks an SM: the persistent grid and __launch_bounds__, shared stages a block): first the
// planner's pick for f32 (kScanLookbackThreads, scan_lookback_vecs, scan_lookback_blocks_per_sm,
// kScanLookbackStages), then others for comparison.
struct LookTile {
  int threads, vecs, min_blocks, stages;
};
constexpr LookTile kLookTiles[] = {
    {kiln::launch::kScanLookbackThreads, kiln::launch::scan_lookback_vecs(4, 4), kiln::launch::scan_lookback_blocks_per_sm(4),
     kiln::launch::kScanLookbackStages},
    {256, 8, 3, 2},
    {256, 8, 5, 1},
    {256, 4, 4, 3}};
// The look-back kernel's work without the look-back (every tile starts from the identity):
// the ceiling the tile pipeline alone reaches (its outputs are not a scan of the row, unchecked).
template <int kThreads, int kVecs, class Op>
__global__ void __launch_bounds__(kThreads) tiles_only(const float* __restrict__ in, float* __restrict__ out, int len) {
  constexpr int V = 4;
  constexpr int kTile = kThreads * kVecs * V;
  __shared__ float totals[kThreads / 32];
  float raw[kVecs][V], c[kVecs][V], prefix[kVecs], total;
  const int tile0 = 0;
  const float* row_in = in + (long long)blockIdx.x * kTile;
  float* row_out = out + (long long)blockIdx.x * kTile;
  kiln::detail::scan_load_tile<kThreads, kVecs, V, false>(raw, row_in, len, tile0);
  kiln::detail::scan_convert_tile<Op, kThreads, kVecs, V, false>(c, raw, len, tile0, 0, Pass{});
  kiln::detail::scan_tile_prefixes<Op, kThreads, kVecs, V>(c, prefix, total, totals);
  kiln::detail::scan_store_tile<Op, kThreads, kVecs, V, false, false>(row_out, c, prefix, 0.f, len, tile0, 0, Pass{});
}
template <int kI> struct TileTag {
  static constexpr LookTile value = kLookTiles[kI];
};

enum class Kind { kSum, kProd, kMax, kMin };

double combine(Kind k, double a, double b) {
  switch (k) {
    case Kind::kSum: return a + b;
    case Kind::kProd: return a * b;
    case Kind::kMax: return (std::isnan(a) || a > b) ? a : b;
    case Kind::kMin: return (std::isnan(a) || a < b) ? a : b;
  }
  return 0;
}
double identity(Kind k) {
  return k == Kind::kSum ? 0.0 : k == Kind::kProd ? 1.0 : k == Kind::kMax ? -INFINITY : INFINITY;
}

struct Case {
  std::string name;
  Kind kind;
  bool exclusive, reverse;
  long long outer, len, inner;   // inner == 1: look-back over rows
};

// Returns the number of mismatches. Row by row of the axis, every column's running value side
// by side (the order of memory: a 4 GiB case checks in seconds).
long long check(const Case& c, const std::vector<float>& x, const std::vector<float>& y) {
  long long bad = 0;
  std::vector<double> run(std::size_t(c.inner)), mag(std::size_t(c.inner));
  for (long long o = 0; o < c.outer; ++o) {
    std::fill(run.begin(), run.end(), identity(c.kind));
    std::fill(mag.begin(), mag.end(), 0.0);
    for (long long q = 0; q < c.len; ++q) {
      const long long p = c.reverse ? c.len - 1 - q : q;
      for (long long col = 0; col < c.inner; ++col) {
        const std::size_t i = std::size_t((o * c.len + p) * c.inner + col);
        double ref;
        double& r = run[std::size_t(col)];
        if (c.exclusive) {
          ref = r;
          r = combine(c.kind, r, x[i]);
        } else {
          r = combine(c.kind, r, x[i]);
          ref = r;
        }
        // An exclusive scan's output at the NaN (or inf) element itself is still finite: only
        // finite inputs scale the tolerance (a NaN here made every later bound NaN, failing
        // the comparison although the kernel was right).
        if (std::isfinite(x[i])) mag[std::size_t(col)] += std::fabs(double(x[i]));
        const double out = y[i];
        bool ok;
        if (std::isnan(ref)) ok = std::isnan(out);
        else if (std::isinf(ref)) ok = out == ref;
        else if (c.kind == Kind::kMax || c.kind == Kind::kMin) ok = out == ref;
        else if (c.kind == Kind::kSum) ok = std::fabs(out - ref) <= 1e-4 * (1 + mag[std::size_t(col)]);
        else ok = std::fabs(out - ref) <= 1e-4 * std::fabs(ref) + 1e-30;
        if (!ok && bad++ < 5)
          std::printf("  MISMATCH %s at (%lld, %lld, %lld): %.9g vs %.9g\n", c.name.c_str(), o, p, col, out, ref);
      }
    }
  }
  return bad;
}

template <int kThreads, bool E, bool R, class Op>
std::function<void(cudaStream_t)> strided_sequence(const Case& c, const float* in, float* out, float* totals,
                                                   int sms, std::string& geometry) {
  const auto ch = kiln::launch::scan_strided_chunks(c.outer, c.len, c.inner, kThreads, kUnroll, sms);
  const auto geo = kiln::launch::scan_strided_geometry(c.outer, c.inner, ch, kThreads, 4);
  const dim3 grid(unsigned(geo.grid.x), unsigned(geo.grid.y));
  char text[160];
  std::snprintf(text, sizeof text, "grid %lldx%lld, %lld chunk(s) of %lld", geo.grid.x, geo.grid.y, ch.chunks, ch.chunk);
  geometry = text;
  const int outer = int(c.outer), len = int(c.len), inner = int(c.inner), chunk = int(ch.chunk);
  const bool chunked = ch.chunks > 1;
  return [=](cudaStream_t s) {
    if (chunked) strided_totals<kThreads, R, Op><<<grid, kThreads, 0, s>>>(in, totals, outer, len, inner, chunk);
    strided_scan<kThreads, E, R, Op><<<grid, kThreads, 0, s>>>(in, out, chunked ? totals : nullptr, outer, len, inner,
                                                               chunk);
  };
}

template <int kThreads, int kVecs, int kMinBlocks, int kStages, bool E, bool R, class Op>
std::function<void(cudaStream_t)> lookback_sequence(const Case& c, const float* in, float* out, void* ws,
                                                    std::string& geometry) {
  const long long tile = kiln::launch::scan_rows_tile(kThreads, kVecs, 4);
  const long long tiles = c.outer * kiln::launch::ceil_div(c.len, tile);
  int sms = 0;
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const auto geo =
      kiln::launch::scan_rows_lookback_geometry(c.outer, c.len, tile, kThreads, 4, (long long)kMinBlocks * sms, kStages);
  const int smem = int(geo.shared_bytes);
  CUDA_OK(cudaFuncSetAttribute(lookback_scan<kThreads, kVecs, kMinBlocks, kStages, E, R, Op>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  char text[160];
  std::snprintf(text, sizeof text, "%dx%d x%d stages, %d/SM (grid %lld): %lld tiles", kThreads, kVecs, kStages,
                kMinBlocks, geo.grid.x, tiles);
  geometry = text;
  const int rows = int(c.outer), len = int(c.len);
  const unsigned blocks = unsigned(geo.grid.x), block = unsigned(geo.block.x);
  const size_t ws_bytes = size_t(geo.workspace_bytes);
  return [=](cudaStream_t s) {
    CUDA_OK(cudaMemsetAsync(ws, 0, ws_bytes, s));   // as the runtime's cuMemsetD32Async
    lookback_scan<kThreads, kVecs, kMinBlocks, kStages, E, R, Op><<<blocks, block, smem, s>>>(in, out, ws, rows, len);
  };
}

// The strided look-back at kRows rows a tile (the planner's: scan_strided_lookback_rows), its
// statuses zeroed before each launch as the runtime does.
template <int kThreads, int kRows, int kMinBlocks, bool E, bool R, class Op>
std::function<void(cudaStream_t)> strided_lookback_sequence(const Case& c, const float* in, float* out, void* ws,
                                                            std::string& geometry) {
  const auto geo = kiln::launch::scan_strided_lookback_geometry(c.outer, c.len, c.inner, kThreads, kRows, 4);
  char text[160];
  std::snprintf(text, sizeof text, "look-back %dx%d rows, >=%d/SM: %lld tiles", kThreads, kRows, kMinBlocks,
                geo.grid.x);
  geometry = text;
  const int outer = int(c.outer), len = int(c.len), inner = int(c.inner);
  const unsigned blocks = unsigned(geo.grid.x);
  const size_t ws_bytes = size_t(geo.workspace_bytes);
  return [=](cudaStream_t s) {
    CUDA_OK(cudaMemsetAsync(ws, 0, ws_bytes, s));
    strided_lookback<kThreads, kRows, kMinBlocks, E, R, Op><<<blocks, kThreads, 0, s>>>(in, out, ws, outer, len, inner);
  };
}

float median_ms(const std::function<void(cudaStream_t)>& run, cudaStream_t s) {
  for (int i = 0; i < 10; ++i) run(s);
  std::vector<float> times;
  cudaEvent_t a, b;
  CUDA_OK(cudaEventCreate(&a));
  CUDA_OK(cudaEventCreate(&b));
  for (int i = 0; i < 50; ++i) {
    CUDA_OK(cudaEventRecord(a, s));
    run(s);
    CUDA_OK(cudaEventRecord(b, s));
    CUDA_OK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, a, b));
    times.push_back(ms);
  }
  CUDA_OK(cudaEventDestroy(a));
  CUDA_OK(cudaEventDestroy(b));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0, sms = 0;
  CUDA_OK(cudaGetDevice(&device));
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, device));
  std::printf("scan_check on %s (%d SMs)\n", prop.name, sms);

  const std::vector<Case> cases = {
      {"strided cumsum axis0 8192x4096", Kind::kSum, false, false, 1, 8192, 4096},
      {"strided cumsum axis1 4x65536x32 excl", Kind::kSum, true, false, 4, 65536, 32},
      {"strided cummin axis1 64x128x8192 rev", Kind::kMin, false, true, 64, 128, 8192},
      {"strided cummax axis0 2048x1000", Kind::kMax, false, false, 1, 2048, 1000},
      {"strided cumprod axis0 513x3000 excl rev", Kind::kProd, true, true, 1, 513, 3000},
      {"strided cumsum axis1 256x1024x1024", Kind::kSum, false, false, 256, 1024, 1024},
      {"strided cumsum axis0 32768x32768", Kind::kSum, false, false, 1, 32768, 32768},   // the bench row
      {"strided cumsum axis1 8x3000x999 excl rev", Kind::kSum, true, true, 8, 3000, 999},
      {"lookback cumsum 2x4194304", Kind::kSum, false, false, 2, 4194304, 1},
      {"lookback cumsum 1x33554432 excl rev", Kind::kSum, true, true, 1, 33554432, 1},
      {"lookback cummax 4x1000003", Kind::kMax, false, false, 4, 1000003, 1},
      {"lookback cumsum 2x1048576", Kind::kSum, false, false, 2, 1048576, 1},
      {"lookback cumsum 16x1000000", Kind::kSum, false, false, 16, 1000000, 1},
      {"lookback cumsum 4x67108864", Kind::kSum, false, false, 4, 67108864, 1},   // issue 22's row
  };
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  int failed = 0;
  std::printf("%-42s %-44s %9s %9s %8s\n", "case", "geometry", "ms", "GB/s", "of copy");
  for (const Case& c : cases) {
    bool wanted = argc < 2;
    for (int a = 1; a < argc; ++a) wanted |= c.name.find(argv[a]) != std::string::npos;
    if (!wanted) continue;
    const std::size_t n = std::size_t(c.outer * c.len * c.inner);
    std::vector<float> x(n);
    std::mt19937 gen(42);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    for (auto& v : x) v = c.kind == Kind::kProd ? 1.f + (u(gen) - 0.5f) / 100.f : u(gen);
    x[n / 3] = NAN;                                  // cummax/cummin/cumsum: NaN from here on in its line
    x[n / 5] = c.kind == Kind::kMin ? -INFINITY : INFINITY;
    float *in = nullptr, *out = nullptr, *copy = nullptr;
    void* ws = nullptr;
    CUDA_OK(cudaMalloc(&in, n * 4));
    CUDA_OK(cudaMalloc(&out, n * 4));
    CUDA_OK(cudaMalloc(&copy, n * 4));
    // Totals or look-back state; the strided look-back's statuses: 8 bytes a column of a
    // 256-wide tile of at least 16 rows (n / 2 bytes for whole tiles).
    const std::size_t ws_bytes = c.inner == 1 ? n * 4 / 8 : n * 8 * 256 / std::min<long long>(c.inner, 256) / 16 + n;
    CUDA_OK(cudaMalloc(&ws, std::max<std::size_t>(ws_bytes, 1 << 20)));
    CUDA_OK(cudaMemcpy(in, x.data(), n * 4, cudaMemcpyHostToDevice));
    // One run of the case: the checked launch on poisoned outputs, then the timing.
    auto measure = [&](const std::function<void(cudaStream_t)>& run, const std::string& geometry) {
      CUDA_OK(cudaMemset(out, 0xFF, n * 4));
      run(stream);
      CUDA_OK(cudaGetLastError());
      CUDA_OK(cudaStreamSynchronize(stream));
      std::vector<float> y(n);
      CUDA_OK(cudaMemcpy(y.data(), out, n * 4, cudaMemcpyDeviceToHost));
      const long long bad = check(c, x, y);
      if (bad) ++failed;
      const float ms = median_ms(run, stream);
      const float copy_ms = median_ms(
          [&](cudaStream_t s) { CUDA_OK(cudaMemcpyAsync(copy, in, n * 4, cudaMemcpyDeviceToDevice, s)); }, stream);
      const double gbs = 2.0 * n * 4 / (ms * 1e6);
      std::printf("%-42s %-44s %9.4f %9.1f %7.0f%% %s\n", c.name.c_str(), geometry.c_str(), ms, gbs,
                  100.0 * copy_ms / ms, bad ? "FAIL" : "ok");
      std::fflush(stdout);
    };
    std::string geometry;
    float* totals = static_cast<float*>(ws);
    if (c.inner == 1) {
      auto sweep = [&](auto tile_tag) {
        constexpr LookTile t = decltype(tile_tag)::value;
        std::function<void(cudaStream_t)> run;
        if (c.kind == Kind::kMax)
          run = lookback_sequence<t.threads, t.vecs, t.min_blocks, t.stages, false, false, kiln::MaxOp<float>>(c, in, out, ws, geometry);
        else if (c.exclusive)
          run = lookback_sequence<t.threads, t.vecs, t.min_blocks, t.stages, true, true, kiln::SumOp<float>>(c, in, out, ws, geometry);
        else
          run = lookback_sequence<t.threads, t.vecs, t.min_blocks, t.stages, false, false, kiln::SumOp<float>>(c, in, out, ws, geometry);
        measure(run, geometry);
      };
      sweep(TileTag<0>{});
      sweep(TileTag<1>{});
      sweep(TileTag<2>{});
      sweep(TileTag<3>{});

      if (c.kind == Kind::kSum && c.len % kiln::launch::scan_rows_tile(256, 8, 4) == 0) {
        constexpr int kTile = int(kiln::launch::scan_rows_tile(256, 8, 4));
        const unsigned blocks = unsigned(n / kTile);
        const float ms = median_ms([&](cudaStream_t s) { tiles_only<256, 8, kiln::SumOp<float>><<<blocks, 256, 0, s>>>(in, out, kTile); }, stream);
        std::printf("%-42s %-44s %9.4f %9.1f   (tile pipeline alone, unchecked)\n", c.name.c_str(), "256x8 no look-back", ms,
                    2.0 * n * 4 / (ms * 1e6));
      }
    } else {
      // The strided look-back: the planner's rows and blocks an SM for f32, then others.
      constexpr int kRows = kiln::launch::scan_strided_lookback_rows(kiln::launch::kScanStridedLookbackThreads, 4, 4);
      constexpr int kBlocks = kiln::launch::kScanStridedLookbackBlocksPerSm;
      auto lookback = [&](auto rows_tag, auto blocks_tag) {
        constexpr int rows = decltype(rows_tag)::value, blocks = decltype(blocks_tag)::value;
        std::function<void(cudaStream_t)> run;
        if (c.kind == Kind::kMin)
          run = strided_lookback_sequence<256, rows, blocks, false, true, kiln::MinOp<float>>(c, in, out, ws, geometry);
        else if (c.kind == Kind::kMax)
          run = strided_lookback_sequence<256, rows, blocks, false, false, kiln::MaxOp<float>>(c, in, out, ws, geometry);
        else if (c.kind == Kind::kProd)
          run = strided_lookback_sequence<256, rows, blocks, true, true, kiln::ProdOp<float>>(c, in, out, ws, geometry);
        else if (c.exclusive && c.reverse)
          run = strided_lookback_sequence<256, rows, blocks, true, true, kiln::SumOp<float>>(c, in, out, ws, geometry);
        else if (c.exclusive)
          run = strided_lookback_sequence<256, rows, blocks, true, false, kiln::SumOp<float>>(c, in, out, ws, geometry);
        else
          run = strided_lookback_sequence<256, rows, blocks, false, false, kiln::SumOp<float>>(c, in, out, ws, geometry);
        measure(run, geometry);
      };
      lookback(std::integral_constant<int, kRows>{}, std::integral_constant<int, kBlocks>{});
      lookback(std::integral_constant<int, kRows>{}, std::integral_constant<int, 1>{});
      lookback(std::integral_constant<int, 32>{}, std::integral_constant<int, 6>{});
      lookback(std::integral_constant<int, 16>{}, std::integral_constant<int, 1>{});
      std::function<void(cudaStream_t)> run;
      if (c.exclusive && c.reverse && c.kind == Kind::kSum) {
        run = strided_sequence<256, true, true, kiln::SumOp<float>>(c, in, out, totals, sms, geometry);
      } else if (c.inner < 256) {
        run = strided_sequence<32, true, false, kiln::SumOp<float>>(c, in, out, totals, sms, geometry);
      } else if (c.kind == Kind::kMin) {
        run = strided_sequence<256, false, true, kiln::MinOp<float>>(c, in, out, totals, sms, geometry);
      } else if (c.kind == Kind::kMax) {
        run = strided_sequence<256, false, false, kiln::MaxOp<float>>(c, in, out, totals, sms, geometry);
      } else if (c.kind == Kind::kProd) {
        run = strided_sequence<256, true, true, kiln::ProdOp<float>>(c, in, out, totals, sms, geometry);
      } else {
        run = strided_sequence<256, false, false, kiln::SumOp<float>>(c, in, out, totals, sms, geometry);
      }
      measure(run, geometry);
    }
    CUDA_OK(cudaFree(in));
    CUDA_OK(cudaFree(out));
    CUDA_OK(cudaFree(copy));
    CUDA_OK(cudaFree(ws));
  }
  std::printf("%s\n", failed ? "scan_check: FAILED" : "scan_check: all cases match the float64 reference");
  return failed ? 1 : 0;
}
