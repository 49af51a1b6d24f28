// gemm_check — standalone correctness check and timing of the kiln gemm / conv template
// instantiations in tests/templates (the units the emitter will generate) and of the candidate
// variants the planner chooses among for the two seed GEMMs, against a float64 CPU reference,
// side by side with cuBLAS.
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -I templates -I tests/templates -lcublas \
//        bench/standalone/gemm_check.cu -o gemm_check && ./gemm_check [--quick]
//
// The last thing printed is one table: problem, precision, variant (tiles, warp tile, stages,
// CTAs per SM, registers; "[plan]" = what the planner emits now), median ms of 30 timed runs of
// the whole op after 10 warm-up runs (CUDA events), TFLOP/s, TB/s (compulsory bytes: inputs read
// once, output written once), the norm-wise and the largest element-wise relative error of the
// checked samples. '*' marks the fastest variant per problem and precision.
//
// Inputs are uniform [0,1) (conv weights uniform [-0.1, 0.1)), generated on the device by a hash
// of the element index; outputs are poisoned with 0xFF bytes (NaN) before every checked launch.
// Exit status 1 on any accuracy failure or CUDA error.
#define KILN_GEMM_FALLBACK_PHILOX 1  // CPU and GPU must draw the same dropout bits

#include "gemm_small_k_tf32.cu"
#include "gemm_small_k_tf32x3.cu"
#include "gemm_small_k_ieee.cu"
#include "gemm_linear_dropout_tf32.cu"
#include "gemm_linear_dropout_tf32x3.cu"
#include "gemm_odd_tn_tf32x3.cu"
#include "gemm_odd_nn_colmajor_ieee.cu"
#include "gemm_bf16_batched.cu"
#include "gemm_splitk_tf32x3.cu"
#include "conv_3x3_tf32.cu"
#include "conv_3x3_tf32x3.cu"
#include "conv_s2p1d2_tf32x3.cu"
#include "conv_depthwise.cu"
#include "conv_nhwc_ieee.cu"
#include "kiln/conv_sm90.cuh"  // the Hopper wgmma candidates (this harness is built for sm_90a)

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#define CK(call)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, \
                   __LINE__, cudaGetErrorString(e_));                                     \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)
#define CB(call)                                                                   \
  do {                                                                             \
    cublasStatus_t s_ = (call);                                                    \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                             \
      std::fprintf(stderr, "cuBLAS error %d at %s:%d\n", int(s_), __FILE__, __LINE__); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

namespace {

bool g_failed = false;
int g_sms = 132;

// ---- inputs: value of element i of tensor `tag` (host and device agree bit for bit)
__host__ __device__ inline float hash_uniform(unsigned long long i, unsigned tag, float lo, float hi) {
  unsigned long long z = i * 0x9E3779B97F4A7C15ull + (static_cast<unsigned long long>(tag) << 32) + tag;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0,1), 24 bits
  return lo + (hi - lo) * u;
}
template <class T>
__global__ void fill_kernel(T* p, unsigned long long n, unsigned tag, float lo, float hi) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x)
    p[i] = kiln::from_float<T>(hash_uniform(i, tag, lo, hi));
}
__global__ void count_nonfinite(const float* p, unsigned long long n, unsigned long long* bad) {
  unsigned long long local = 0;
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x)
    local += !isfinite(p[i]);
  if (local) atomicAdd(bad, local);
}
__global__ void gather_kernel(const float* p, const unsigned long long* idx, float* out, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) out[i] = p[idx[i]];
}

template <class T>
struct DevBuf {
  T* p = nullptr;
  size_t n = 0;
  explicit DevBuf(size_t count) : n(count) { CK(cudaMalloc(&p, count * sizeof(T))); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  void fill(unsigned tag, float lo = 0.f, float hi = 1.f) {
    fill_kernel<T><<<4 * g_sms * 8, 256>>>(p, n, tag, lo, hi);
    CK(cudaGetLastError());
  }
  void poison() { CK(cudaMemset(p, 0xFF, n * sizeof(T))); }
  std::vector<T> to_host() const {
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

unsigned long long nonfinite(const float* p, size_t n) {
  DevBuf<unsigned long long> bad(1);
  CK(cudaMemset(bad.p, 0, 8));
  count_nonfinite<<<g_sms * 8, 256>>>(p, n, bad.p);
  CK(cudaGetLastError());
  unsigned long long h = 0;
  CK(cudaMemcpy(&h, bad.p, 8, cudaMemcpyDeviceToHost));
  return h;
}
std::vector<float> gather(const float* p, const std::vector<unsigned long long>& idx) {
  DevBuf<unsigned long long> d_idx(idx.size());
  DevBuf<float> d_out(idx.size());
  CK(cudaMemcpy(d_idx.p, idx.data(), idx.size() * 8, cudaMemcpyHostToDevice));
  gather_kernel<<<(int(idx.size()) + 255) / 256, 256>>>(p, d_idx.p, d_out.p, int(idx.size()));
  CK(cudaGetLastError());
  return d_out.to_host();
}

// ---- accuracy
struct Tol {
  double rel;   // norm-wise ||out - ref|| / ||ref||
  double atol;  // element-wise |out - ref| <= atol + rtol * |ref|
  double rtol;
};
const Tol kFp32{1e-5, 1e-4, 1e-4};
const Tol kTf32{2e-3, 1e-2, 1e-2};
const Tol kBf16{1e-2, 3e-2, 3e-2};

struct ErrStats {
  double num = 0, den = 0, max_abs = 0, max_rel = 0;
  long long bad = 0, count = 0;
  void add(double out, double ref, const Tol& t) {
    const double d = std::fabs(out - ref);
    ++count;
    if (!(d <= t.atol + t.rtol * std::fabs(ref))) ++bad;  // NaN counts as bad
    if (std::isnan(out)) { max_abs = INFINITY; num = INFINITY; max_rel = INFINITY; }
    num += d * d;
    den += ref * ref;
    if (d > max_abs) max_abs = d;
    if (ref != 0 && d / std::fabs(ref) > max_rel) max_rel = d / std::fabs(ref);  // element-wise
  }
  double rel() const { return den > 0 ? std::sqrt(num / den) : std::sqrt(num); }
};

bool report(const char* name, const char* prec, const ErrStats& e, const Tol& t,
            unsigned long long unwritten) {
  const bool ok = e.rel() < t.rel && e.bad == 0 && unwritten == 0;
  std::printf("  %-60s %-7s checked %6lld  rel %.3e (tol %.0e)  max_abs %.3e  bad %lld  unwritten %llu  %s\n",
              name, prec, e.count, e.rel(), t.rel, e.max_abs, e.bad, unwritten, ok ? "ok" : "FAIL");
  if (!ok) g_failed = true;
  return ok;
}

// ---- timing: 10 warm-up, 30 timed launches, median
float time_ms(const std::function<void()>& launch) {
  for (int i = 0; i < 10; ++i) launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < 30; ++i) {
    CK(cudaEventRecord(a));
    launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// One line of the final table. rel: norm-wise ||out - ref|| / ||ref|| of the checked samples,
// max_rel: the largest element-wise |out - ref| / |ref| (-1: not checked, e.g. cuBLAS).
struct Row {
  std::string problem, prec, variant;
  double ms, tflops, tbs, rel, max_rel;
  bool ok = true;  // every check of this variant passed
};
std::vector<Row> g_rows;

std::string fmt_ms(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f ms", ms);
  return b;
}

template <class F>
void set_smem(F* f, int bytes) {
  CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

std::vector<std::pair<long long, long long>> sample_2d(long long rows, long long cols, int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<long long, long long>> s;
  s.emplace_back(0, 0);
  s.emplace_back(rows - 1, cols - 1);
  s.emplace_back(rows - 1, 0);
  s.emplace_back(0, cols - 1);
  while (int(s.size()) < n) s.emplace_back(rng() % rows, rng() % cols);
  return s;
}

// =============================================================================================
// Candidate variants of the two seed contractions. Each is checked against float64 on sampled
// outputs, then timed (whole op: every kernel it launches). The variant the planner emits today
// is marked "[plan]" in the table; the others are the alternatives it chose among.

// ---- matmul_small_k: C[32768,32768] = A[32768,64] · B[64,32768]
namespace sk {
using Index = int;  // as the planner emits it: every tensor has < 2^31 elements
constexpr long long kM = 32768, kN = 32768;
constexpr int kK = 64;
template <class Prec, int BM, int BN, int WM, int WN, bool PrepA = false>
using Kn = kiln::gemm::SmallK<Prec, Index, kM, kN, kK, kK, kN, kN, BM, BN, WM, WN, PrepA>;
}  // namespace sk

template <class Prec, int BM, int BN, int WM, int WN, int MinBlocks, bool PrepA = false>
__global__ void __launch_bounds__(sk::Kn<Prec, BM, BN, WM, WN, PrepA>::kThreads, MinBlocks)
small_k_variant(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c) {
  sk::Kn<Prec, BM, BN, WM, WN, PrepA>::run(a, b, c, kiln::gemm::Identity{});
}

// Write ceilings for C (no loads, no math): a grid-stride 16-byte fill, and BM x BN tiles
// written in SmallK's two tile orders (a contiguous range of tiles per CTA, or strided).
// Random: values in [1, 2) with hashed mantissas (what a GEMM writes looks like this to the
// memory system); otherwise the same four constants everywhere.
__device__ __forceinline__ float hashed(unsigned long long i) {
  unsigned x = unsigned(i) * 0x9E3779B1u ^ unsigned(i >> 32) * 0x85EBCA77u;
  x ^= x >> 15; x *= 0x2C1B3C6Du; x ^= x >> 12;
  return __uint_as_float(0x3F800000u | (x >> 9));
}
template <bool Stream, bool Random = false>
__global__ void __launch_bounds__(256) fill_c(float4* __restrict__ c, long long n4) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n4; i += 256ll * gridDim.x) {
    const float4 v = Random ? make_float4(hashed(4 * i), hashed(4 * i + 1), hashed(4 * i + 2), hashed(4 * i + 3))
                            : make_float4(1.f, 2.f, 3.f, 4.f);
    if constexpr (Stream) __stcs(c + i, v); else c[i] = v;
  }
}
// The same tiles (128 x 128, 8 warps of 16 x 128) written R rows per warp instruction: R = 1 is
// 512 contiguous bytes per instruction, R = 8 the 8 rows x 64 bytes of gemm::store_fragments.
template <int R>
__global__ void __launch_bounds__(256) store_tiles_rows(float* __restrict__ c) {
  constexpr long long kTilesN = sk::kN / 128, kTiles = sk::kM / 128 * kTilesN;
  constexpr int kSeg = 32 / R;  // lanes per row piece
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const long long begin = kTiles * blockIdx.x / gridDim.x, end = kTiles * (blockIdx.x + 1) / gridDim.x;
  for (long long t = begin; t < end; ++t) {
    const long long tm = t / kTilesN, tn = t % kTilesN;
#pragma unroll
    for (int q = 0; q < 16; ++q) {
      const int row = warp * 16 + (q / R) * R + lane / kSeg;
      const int col = (q % R) * kSeg * 4 + (lane % kSeg) * 4;
      const long long e = (tm * 128 + row) * sk::kN + tn * 128 + col;
      const float4 v = make_float4(hashed(e), hashed(e + 1), hashed(e + 2), hashed(e + 3));
      __stcs(reinterpret_cast<float4*>(c + e), v);
    }
  }
}

// The SmallK memory traffic without the math: 128 x 128 tiles of C written as above, and per
// tile the 64 x 128 B block (32 KB, L2-resident) read into shared memory first, as the GEMM does.
// KRows < K reads a smaller block (the traffic of a taller tile: 256 rows read half as much B).
template <int KRows = sk::kK>
__global__ void __launch_bounds__(256) store_tiles_reading_b(float* __restrict__ c, const float* __restrict__ b) {
  constexpr long long kTilesN = sk::kN / 128, kTiles = sk::kM / 128 * kTilesN;
  __shared__ float4 sb[KRows * 128 / 4];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const long long begin = kTiles * blockIdx.x / gridDim.x, end = kTiles * (blockIdx.x + 1) / gridDim.x;
  float keep = 0.f;
  for (long long t = begin; t < end; ++t) {
    const long long tm = t / kTilesN, tn = t % kTilesN;
    for (int i = threadIdx.x; i < KRows * 32; i += 256)
      sb[i] = __ldg(reinterpret_cast<const float4*>(b + (i / 32) * sk::kN + tn * 128) + i % 32);
    __syncthreads();
    keep += sb[(threadIdx.x * 7 + int(t)) % (KRows * 32)].x;
    __syncthreads();
#pragma unroll
    for (int q = 0; q < 16; ++q) {
      const int row = warp * 16 + q;
      const long long e = (tm * 128 + row) * sk::kN + tn * 128 + lane * 4;
      __stcs(reinterpret_cast<float4*>(c + e), make_float4(hashed(e), hashed(e + 1), hashed(e + 2), keep));
    }
  }
}

// Read ceiling: every thread sums its share of 16-byte loads (4 in flight) into sink.
__global__ void __launch_bounds__(256) read_sum(const float4* __restrict__ x, long long n4, float* __restrict__ sink) {
  float acc = 0.f;
  const long long stride = 256ll * gridDim.x;
  long long i = blockIdx.x * 256ll + threadIdx.x;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    float4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = __ldg(x + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; i < n4; i += stride) { const float4 v = __ldg(x + i); acc += v.x + v.y + v.z + v.w; }
  sink[blockIdx.x * 256 + threadIdx.x] = acc;
}
template <int BM, int BN, bool Strided>
__global__ void __launch_bounds__(256) store_tiles(float* __restrict__ c) {
  constexpr long long kTilesN = sk::kN / BN, kTiles = sk::kM / BM * kTilesN;
  const long long step = Strided ? gridDim.x : 1;
  const long long begin = Strided ? blockIdx.x : kTiles * blockIdx.x / gridDim.x;
  const long long end = Strided ? kTiles : kTiles * (blockIdx.x + 1) / gridDim.x;
  for (long long t = begin; t < end; t += step) {
    const long long tm = t / kTilesN, tn = t % kTilesN;
    const float4 v = make_float4(float(t), 0.f, 0.f, 0.f);
    for (int i = threadIdx.x; i < BM * BN / 4; i += 256) {
      const int r = i / (BN / 4), c4 = i % (BN / 4);
      __stcs(reinterpret_cast<float4*>(c + (tm * BM + r) * sk::kN + tn * BN) + c4, v);
    }
  }
}

template <class Prec, int BM, int BN, int Stages>
using SkWg = kiln::sm90::WgGemm<Prec, sk::Index, sk::kM, sk::kN, sk::kK, 1, sk::kK, sk::kN, 0, 0, sk::kN, 0, BM,
                                BN, Stages, false, true, true>;
template <class Prec, int BM, int BN, int Stages, int MinBlocks>
__global__ void __launch_bounds__(SkWg<Prec, BM, BN, Stages>::kThreads, MinBlocks)
small_k_wgmma(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c) {
  SkWg<Prec, BM, BN, Stages>::run(a, b, c, kiln::gemm::Identity{});
}

template <class Prec>
using SkPrep = kiln::sm90::SmallKPrep<Prec, sk::Index, sk::kM, sk::kN, sk::kK, sk::kK, sk::kN>;
template <class Prec, int BM, int BN, int S>
using SkWgK = kiln::sm90::WgSmallK<Prec, sk::Index, sk::kM, sk::kN, sk::kK, sk::kN, BM, BN, S, true>;
template <class Prec>
__global__ void __launch_bounds__(256) small_k_prep(const float* __restrict__ a, const float* __restrict__ b,
                                                    float* __restrict__ ws) {
  SkPrep<Prec>::run(a, b, ws);
}
template <class Prec, int BM, int BN, int S, int MinBlocks>
__global__ void __launch_bounds__(SkWgK<Prec, BM, BN, S>::kThreads, MinBlocks)
small_k_wgmma_persistent(const float* __restrict__ ws, float* __restrict__ c) {
  SkWgK<Prec, BM, BN, S>::run(ws, c, kiln::gemm::Identity{});
}

// ---- linear_dropout_softmax: GemmSplitK + SplitKSoftmax (and SplitKReduce to check H)
namespace lin {
using Index = int;
constexpr int kM = 128, kN = 16384, kK = 16384;
using Epilogue = linear_tf32::Epilogue;  // bias + dropout(p = 0.2) by flat index, kiln's Philox
template <class Prec, int BM, int BN, int WM, int WN, int Stages, int Splits>
using SplitGemm = kiln::gemm::GemmSplitK<float, Prec, Index, kM, kN, kK, 1, kiln::gemm::kRowMajor,
                                         kiln::gemm::kColMajor, kK, kK, 0, 0, BM, BN, 32, WM, WN,
                                         Stages, true, true, Splits>;
}  // namespace lin

template <class Prec, int BM, int BN, int WM, int WN, int Stages, int Splits, int MinBlocks>
__global__ void __launch_bounds__(lin::SplitGemm<Prec, BM, BN, WM, WN, Stages, Splits>::kThreads, MinBlocks)
linear_split_gemm(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ ws) {
  lin::SplitGemm<Prec, BM, BN, WM, WN, Stages, Splits>::run(x, w, ws);
}
template <class Prec, int BM, int BN, int Stages, int Splits>
using WgSplitGemm = kiln::sm90::WgGemmSplitK<Prec, lin::Index, lin::kM, lin::kN, lin::kK, 1, lin::kK, lin::kK, 0,
                                             0, BM, BN, Stages, true, Splits>;
template <class Prec, int BM, int BN, int Stages, int Splits, int MinBlocks>
__global__ void __launch_bounds__(WgSplitGemm<Prec, BM, BN, Stages, Splits>::kThreads, MinBlocks)
linear_split_wgmma(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ ws) {
  WgSplitGemm<Prec, BM, BN, Stages, Splits>::run(x, w, ws);
}
template <int Splits, int Threads>
__global__ void __launch_bounds__(Threads)
linear_split_softmax(const float* __restrict__ ws, float* __restrict__ y, const float* __restrict__ bias,
                     unsigned long long seed) {
  kiln::gemm::SplitKSoftmax<lin::Index, lin::kM, lin::kN, 1, Splits, Threads>::run(ws, y, lin::Epilogue{bias, seed});
}
template <int Splits>
__global__ void __launch_bounds__(256)
linear_split_h(const float* __restrict__ ws, float* __restrict__ h, const float* __restrict__ bias,
               unsigned long long seed) {
  kiln::gemm::SplitKReduce<float, lin::Index, lin::kM, lin::kN, 1, Splits, lin::kN, 0, false, 256>::run(
      ws, h, lin::Epilogue{bias, seed});
}

struct LinearVariant {
  const char* prec;
  std::string name;
  int splits;  // 0: the non-split Gemm with row statistics + SoftmaxFinalize
  std::function<void(const float*, const float*, float*)> gemm;     // x, w, workspace
  std::function<void(const float*, float*, const float*, unsigned long long)> softmax;  // ws, y
  std::function<void(const float*, float*, const float*, unsigned long long)> h;        // ws, h
  Tol tol;
};

// One split-K candidate (G: the gemm stage's type, fn its kernel): sets the shared-memory
// limit, reports registers/occupancy.
template <class G, int Splits>
LinearVariant linear_split_of(void (*fn)(const float*, const float*, float*), const char* prec,
                              const std::string& what, const Tol& tol) {
  set_smem(fn, G::kSmemBytes);
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, fn));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, G::kThreads, G::kSmemBytes));
  constexpr int kSoftThreads = 512;
  char name[160];
  std::snprintf(name, sizeof name, "%s %dt %d/SM (%d regs)", what.c_str(), G::kThreads, per_sm, attr.numRegs);
  const dim3 grid(unsigned(G::kTilesN), unsigned(G::kTilesM), Splits);
  LinearVariant v;
  v.prec = prec;
  v.name = name;
  v.splits = Splits;
  v.tol = tol;
  v.gemm = [=](const float* x, const float* w, float* ws) { fn<<<grid, G::kThreads, G::kSmemBytes>>>(x, w, ws); };
  v.softmax = [](const float* ws, float* y, const float* bias, unsigned long long seed) {
    linear_split_softmax<Splits, kSoftThreads><<<lin::kM, kSoftThreads>>>(ws, y, bias, seed);
  };
  v.h = [](const float* ws, float* h, const float* bias, unsigned long long seed) {
    linear_split_h<Splits><<<unsigned((lin::kM * lin::kN + 255) / 256), 256>>>(ws, h, bias, seed);
  };
  return v;
}
template <class Prec, int BM, int BN, int WM, int WN, int Stages, int Splits, int MinBlocks>
LinearVariant linear_split(const char* prec, const char* tag, const Tol& tol) {
  char what[96];
  std::snprintf(what, sizeof what, "%ssplitK%d %dx%d w%dx%d s%d", tag, Splits, BM, BN, WM, WN, Stages);
  return linear_split_of<lin::SplitGemm<Prec, BM, BN, WM, WN, Stages, Splits>, Splits>(
      linear_split_gemm<Prec, BM, BN, WM, WN, Stages, Splits, MinBlocks>, prec, what, tol);
}
template <class Prec, int BM, int BN, int Stages, int Splits, int MinBlocks>
LinearVariant linear_wgmma(const char* prec, const char* tag, const Tol& tol) {
  char what[96];
  std::snprintf(what, sizeof what, "%swgmma splitK%d %dx%d s%d", tag, Splits, BM, BN, Stages);
  return linear_split_of<WgSplitGemm<Prec, BM, BN, Stages, Splits>, Splits>(
      linear_split_wgmma<Prec, BM, BN, Stages, Splits, MinBlocks>, prec, what, tol);
}

// cuBLAS rows for context: FP32 (default math) and TF32 tensor-op math.
void time_cublas(cublasHandle_t h, const char* problem, const char* note, const std::function<void()>& run,
                 double flop, double bytes) {
  const std::pair<cublasMath_t, const char*> modes[] = {{CUBLAS_DEFAULT_MATH, "fp32"},
                                                         {CUBLAS_TF32_TENSOR_OP_MATH, "tf32"}};
  for (const auto& [mode, prec] : modes) {
    CB(cublasSetMathMode(h, mode));
    const float ms = time_ms(run);
    g_rows.push_back({problem, prec, std::string("cuBLAS ") + prec + note, ms, flop / ms / 1e9, bytes / ms / 1e9, -1, -1});
  }
  CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
}

// =============================================================================================
// 1. matmul_small_k
void bench_small_k(cublasHandle_t h) {
  using namespace sk;
  constexpr long long M = kM, N = kN, K = kK;
  std::printf("matmul_small_k %lldx%lld x %lldx%lld\n", M, K, K, N);
  DevBuf<float> a(M * K), b(K * N), c(M * N);
  a.fill(1);
  b.fill(2);
  const std::vector<float> ha = a.to_host(), hb = b.to_host();
  const auto samples = sample_2d(M, N, 20000, 7);
  std::vector<unsigned long long> idx;
  for (auto& s : samples) idx.push_back(s.first * N + s.second);
  std::vector<double> ref;
  for (auto& s : samples) {
    double acc = 0;
    for (long long k = 0; k < K; ++k) acc += double(ha[s.first * K + k]) * double(hb[k * N + s.second]);
    ref.push_back(acc);
  }
  const double flop = 2.0 * M * N * K, bytes = (M * K + K * N + M * N) * 4.0;
  {
    const float one = 1.f, zero = 0.f;
    auto run = [&] {  // row-major C = A·B  <=>  column-major C^T = B^T · A^T
      CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, int(N), int(M), int(K), &one, b.p, int(N), a.p,
                     int(K), &zero, c.p, int(N)));
    };
    time_cublas(h, "matmul_small_k", "", run, flop, bytes);
  }
  {  // the write ceilings: C alone, no loads or math (TB/s counts C's bytes only)
    const double cbytes = M * N * 4.0;
    auto ceiling = [&](const char* what, const std::function<void()>& launch) {
      const float ms = time_ms(launch);
      g_rows.push_back({"matmul_small_k", "-", what, ms, 0, cbytes / ms / 1e9, -1, -1});
    };
    const long long n4 = M * N / 4;
    ceiling("write ceiling: fill C, st.global.cs, 8/SM", [&] { fill_c<true><<<8 * g_sms, 256>>>(reinterpret_cast<float4*>(c.p), n4); });
    ceiling("write ceiling: fill C with hashed values, st.global.cs, 8/SM", [&] { fill_c<true, true><<<8 * g_sms, 256>>>(reinterpret_cast<float4*>(c.p), n4); });
    ceiling("write ceiling: fill C with hashed values, st.global, 8/SM", [&] { fill_c<false, true><<<8 * g_sms, 256>>>(reinterpret_cast<float4*>(c.p), n4); });
    ceiling("write ceiling: fill C, st.global, 8/SM", [&] { fill_c<false><<<8 * g_sms, 256>>>(reinterpret_cast<float4*>(c.p), n4); });
    ceiling("write ceiling: 128x64 tiles, ranges, 3/SM", [&] { store_tiles<128, 64, false><<<3 * g_sms, 256>>>(c.p); });
    ceiling("write ceiling: 128x64 tiles, strided, 3/SM", [&] { store_tiles<128, 64, true><<<3 * g_sms, 256>>>(c.p); });
    ceiling("write ceiling: 128x128 tiles, ranges, 1/SM", [&] { store_tiles<128, 128, false><<<g_sms, 256>>>(c.p); });
    ceiling("write ceiling: 128x128 tiles, strided, 1/SM", [&] { store_tiles<128, 128, true><<<g_sms, 256>>>(c.p); });
    ceiling("write ceiling: 128x128 tiles (hashed values), 1 row x 512 B per warp store, 1/SM", [&] { store_tiles_rows<1><<<g_sms, 256>>>(c.p); });
    ceiling("write ceiling: 128x128 tiles (hashed values), 2 rows x 256 B per warp store, 1/SM", [&] { store_tiles_rows<2><<<g_sms, 256>>>(c.p); });
    ceiling("write ceiling: 128x128 tiles (hashed values), 4 rows x 128 B per warp store, 1/SM", [&] { store_tiles_rows<4><<<g_sms, 256>>>(c.p); });
    ceiling("write ceiling: 128x128 tiles (hashed values), 8 rows x 64 B per warp store, 1/SM", [&] { store_tiles_rows<8><<<g_sms, 256>>>(c.p); });
    ceiling("write ceiling: 128x128 tiles (hashed values), 8 rows x 64 B per warp store, 2/SM", [&] { store_tiles_rows<8><<<2 * g_sms, 256>>>(c.p); });
    ceiling("write ceiling + B blocks from L2: 128x128 tiles, 1/SM", [&] { store_tiles_reading_b<<<g_sms, 256>>>(c.p, b.p); });
    ceiling("write ceiling + B blocks from L2: 128x128 tiles, 2/SM", [&] { store_tiles_reading_b<<<2 * g_sms, 256>>>(c.p, b.p); });
    ceiling("write ceiling + B blocks from L2: 128x128 tiles, 4/SM", [&] { store_tiles_reading_b<<<4 * g_sms, 256>>>(c.p, b.p); });
    ceiling("write ceiling + half-size B blocks from L2: 128x128 tiles, 2/SM", [&] { store_tiles_reading_b<sk::kK / 2><<<2 * g_sms, 256>>>(c.p, b.p); });
    ceiling("write ceiling + half-size B blocks from L2: 128x128 tiles, 4/SM", [&] { store_tiles_reading_b<sk::kK / 2><<<4 * g_sms, 256>>>(c.p, b.p); });
    ceiling("write ceiling: 128x128 tiles, ranges, 2/SM", [&] { store_tiles<128, 128, false><<<2 * g_sms, 256>>>(c.p); });
    ceiling("write ceiling: 128x128 tiles, strided, 2/SM", [&] { store_tiles<128, 128, true><<<2 * g_sms, 256>>>(c.p); });
  }

  struct V {
    const char* prec;
    const char* name;
    void (*fn)(const float*, const float*, float*);
    int threads, smem;
    long long tiles;
    Tol tol;
  };
#define SK_VARIANT(P, BM, BN, WM, WN, MB, prec, name, tol, ...)                                     \
  {prec, name, small_k_variant<P, BM, BN, WM, WN, MB, ##__VA_ARGS__>,                                 \
   Kn<P, BM, BN, WM, WN, ##__VA_ARGS__>::kThreads, Kn<P, BM, BN, WM, WN, ##__VA_ARGS__>::kSmemBytes,  \
   Kn<P, BM, BN, WM, WN, ##__VA_ARGS__>::kTiles, tol}
  const V variants[] = {
      {"tf32", "128x128 w64x32 (old)", kiln_gemm_small_k_tf32, small_k_tf32::Kernel::kThreads,
       small_k_tf32::Kernel::kSmemBytes, small_k_tf32::Kernel::kTiles, kTf32},
      SK_VARIANT(kiln::Tf32, 128, 64, 32, 32, 2, "tf32", "128x64 w32x32 lb(256,2)", kTf32),
      SK_VARIANT(kiln::Tf32, 128, 64, 32, 32, 2, "tf32", "128x64 w32x32 lb(256,2) A pre-rounded", kTf32, true),
      SK_VARIANT(kiln::Tf32, 128, 128, 64, 32, 2, "tf32", "128x128 w64x32 lb(256,2) spills", kTf32),
      SK_VARIANT(kiln::Tf32, 64, 128, 32, 32, 2, "tf32", "64x128 w32x32 lb(256,2)", kTf32),
      SK_VARIANT(kiln::Tf32, 128, 64, 64, 32, 3, "tf32", "128x64 w64x32 lb(128,3) (plan until run13)", kTf32),
      SK_VARIANT(kiln::Tf32, 256, 64, 64, 32, 1, "tf32", "[plan] 256x64 w64x32 1/SM", kTf32),
      SK_VARIANT(kiln::Tf32, 256, 64, 64, 32, 1, "tf32", "256x64 w64x32 A pre-rounded 1/SM", kTf32, true),
      SK_VARIANT(kiln::Tf32, 512, 64, 128, 32, 1, "tf32", "512x64 w128x32 1/SM", kTf32),
      SK_VARIANT(kiln::Tf32, 256, 64, 128, 32, 1, "tf32", "256x64 w128x32 1/SM", kTf32),
      SK_VARIANT(kiln::Tf32, 256, 32, 64, 32, 2, "tf32", "256x32 w64x32 lb(128,2)", kTf32),
      SK_VARIANT(kiln::Tf32, 256, 32, 64, 32, 1, "tf32", "256x32 w64x32 1/SM", kTf32),
      SK_VARIANT(kiln::Tf32x3, 256, 64, 64, 32, 1, "3xtf32", "256x64 w64x32 1/SM", kFp32),
      SK_VARIANT(kiln::Tf32, 256, 64, 32, 32, 1, "tf32", "256x64 w32x32 (512 threads) 1/SM", kTf32),
      SK_VARIANT(kiln::Tf32, 256, 64, 64, 32, 2, "tf32", "256x64 w64x32 lb(256,2)", kTf32),
      SK_VARIANT(kiln::Tf32, 256, 128, 64, 32, 1, "tf32", "256x128 w64x32 (512 threads) 1/SM", kTf32),
      {"3xtf32", "[sm_90 plan] 128x128 w64x32 1/SM", kiln_gemm_small_k_tf32x3, small_k_tf32x3::Kernel::kThreads,
       small_k_tf32x3::Kernel::kSmemBytes, small_k_tf32x3::Kernel::kTiles, kFp32},
      SK_VARIANT(kiln::Tf32x3, 128, 64, 32, 32, 2, "3xtf32", "128x64 w32x32 lb(256,2)", kFp32),
      SK_VARIANT(kiln::Tf32x3, 128, 64, 32, 32, 2, "3xtf32", "128x64 w32x32 lb(256,2) A pre-split", kFp32, true),
      SK_VARIANT(kiln::Tf32x3, 128, 128, 64, 32, 2, "3xtf32", "128x128 w64x32 lb(256,2) spills", kFp32),
      SK_VARIANT(kiln::Tf32x3, 64, 128, 32, 32, 2, "3xtf32", "64x128 w32x32 lb(256,2)", kFp32),
      SK_VARIANT(kiln::Tf32x3, 128, 64, 64, 32, 3, "3xtf32", "128x64 w64x32 lb(128,3) spills", kFp32),
      {"ieee", "128x128 w64x32 1/SM", kiln_gemm_small_k_ieee, small_k_ieee::Kernel::kThreads,
       small_k_ieee::Kernel::kSmemBytes, small_k_ieee::Kernel::kTiles, kFp32},
  };
#undef SK_VARIANT

  auto check_and_time = [&](const char* prec, const std::string& name, const Tol& tol,
                            const std::function<void()>& launch) {
    c.poison();
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const auto out = gather(c.p, idx);
    ErrStats e;
    for (size_t i = 0; i < out.size(); ++i) e.add(out[i], ref[i], tol);
    const bool ok = report(name.c_str(), prec, e, tol, nonfinite(c.p, c.n));
    const float ms = time_ms(launch);
    g_rows.push_back({"matmul_small_k", prec, name, ms, flop / ms / 1e9, bytes / ms / 1e9, e.rel(), e.max_rel, ok});
  };
  for (const V& v : variants) {
    set_smem(v.fn, v.smem);
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.fn, v.threads, v.smem));
    cudaFuncAttributes attr;
    CK(cudaFuncGetAttributes(&attr, v.fn));
    const int grid = int(std::min<long long>(v.tiles, (long long)g_sms * std::max(per_sm, 1)));
    const std::string name = std::string(v.name) + " " + std::to_string(per_sm) + "/SM grid " +
                             std::to_string(grid) + " (" + std::to_string(attr.numRegs) + " regs)";
    check_and_time(v.prec, name, v.tol, [&] { v.fn<<<grid, v.threads, v.smem>>>(a.p, b.p, c.p); });
  }
  auto wgmma = [&](auto kernel, auto traits, const char* prec, const Tol& tol) {
    using G = decltype(traits);
    set_smem(kernel, G::kSmemBytes);
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, G::kThreads, G::kSmemBytes));
    cudaFuncAttributes attr;
    CK(cudaFuncGetAttributes(&attr, kernel));
    char name[128];
    std::snprintf(name, sizeof name, "wgmma %dx%d s%d %d/SM (%d regs)", G::Engine::kWarpGroups * 64,
                  G::Engine::NT * 8, G::Engine::kStages, per_sm, attr.numRegs);
    const dim3 grid(unsigned(G::kTilesN), unsigned(G::kTilesM), 1);
    check_and_time(prec, name, tol, [&] { kernel<<<grid, G::kThreads, G::kSmemBytes>>>(a.p, b.p, c.p); });
  };
  // Persistent wgmma SmallK: the operand pre-pass (k-contiguous, tf32-rounded / split copies) and
  // the main kernel, timed together.
  auto wgmma_persistent = [&](auto kernel, auto traits, auto prep, auto prep_traits, int min_blocks,
                              const char* prec, const Tol& tol, const char* tag = "") {
    using G = decltype(traits);
    using P = decltype(prep_traits);
    set_smem(kernel, G::kSmemBytes);
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, G::kThreads, G::kSmemBytes));
    cudaFuncAttributes attr;
    CK(cudaFuncGetAttributes(&attr, kernel));
    DevBuf<float> ws(size_t(P::kWorkspaceFloats));
    const int grid = int(std::min<long long>(G::kTiles, (long long)g_sms * std::max(per_sm, 1)));
    char name[128];
    std::snprintf(name, sizeof name, "%swgmma persistent %dx%d B ring %d lb(%d,%d) %d/SM grid %d (%d regs)", tag,
                  G::kWarpGroups * 64, G::NT * 8, G::kAhead + 1, G::kThreads, min_blocks, per_sm, grid, attr.numRegs);
    check_and_time(prec, name, tol, [&] {
      prep<<<unsigned(P::kGridX), P::kThreads>>>(a.p, b.p, ws.p);
      kernel<<<grid, G::kThreads, G::kSmemBytes>>>(ws.p, c.p);
    });
  };
  wgmma_persistent(small_k_wgmma_persistent<kiln::Tf32, 128, 128, 2, 1>, SkWgK<kiln::Tf32, 128, 128, 2>{},
                   small_k_prep<kiln::Tf32>, SkPrep<kiln::Tf32>{}, 1, "tf32", kTf32);
  wgmma_persistent(small_k_wgmma_persistent<kiln::Tf32, 128, 128, 3, 1>, SkWgK<kiln::Tf32, 128, 128, 3>{},
                   small_k_prep<kiln::Tf32>, SkPrep<kiln::Tf32>{}, 1, "tf32", kTf32);
  wgmma_persistent(small_k_wgmma_persistent<kiln::Tf32, 128, 128, 4, 1>, SkWgK<kiln::Tf32, 128, 128, 4>{},
                   small_k_prep<kiln::Tf32>, SkPrep<kiln::Tf32>{}, 1, "tf32", kTf32);
  wgmma_persistent(small_k_wgmma_persistent<kiln::Tf32, 256, 64, 3, 1>, SkWgK<kiln::Tf32, 256, 64, 3>{},
                   small_k_prep<kiln::Tf32>, SkPrep<kiln::Tf32>{}, 1, "tf32", kTf32);
  wgmma_persistent(small_k_wgmma_persistent<kiln::Tf32, 256, 64, 4, 1>, SkWgK<kiln::Tf32, 256, 64, 4>{},
                   small_k_prep<kiln::Tf32>, SkPrep<kiln::Tf32>{}, 1, "tf32", kTf32);
  wgmma_persistent(small_k_wgmma_persistent<kiln::Tf32, 128, 64, 3, 2>, SkWgK<kiln::Tf32, 128, 64, 3>{},
                   small_k_prep<kiln::Tf32>, SkPrep<kiln::Tf32>{}, 2, "tf32", kTf32);
  wgmma_persistent(small_k_wgmma_persistent<kiln::Tf32x3, 256, 64, 2, 1>, SkWgK<kiln::Tf32x3, 256, 64, 2>{},
                   small_k_prep<kiln::Tf32x3>, SkPrep<kiln::Tf32x3>{}, 1, "3xtf32", kFp32);
  wgmma_persistent(small_k_wgmma_persistent<kiln::Tf32x3, 256, 64, 3, 1>, SkWgK<kiln::Tf32x3, 256, 64, 3>{},
                   small_k_prep<kiln::Tf32x3>, SkPrep<kiln::Tf32x3>{}, 1, "3xtf32", kFp32, "[plan] ");
  wgmma_persistent(small_k_wgmma_persistent<kiln::Tf32x3, 128, 128, 2, 1>, SkWgK<kiln::Tf32x3, 128, 128, 2>{},
                   small_k_prep<kiln::Tf32x3>, SkPrep<kiln::Tf32x3>{}, 1, "3xtf32", kFp32);
  wgmma_persistent(small_k_wgmma_persistent<kiln::Tf32x3, 128, 64, 3, 1>, SkWgK<kiln::Tf32x3, 128, 64, 3>{},
                   small_k_prep<kiln::Tf32x3>, SkPrep<kiln::Tf32x3>{}, 1, "3xtf32", kFp32);
  wgmma(small_k_wgmma<kiln::Tf32, 128, 128, 3, 2>, SkWg<kiln::Tf32, 128, 128, 3>{}, "tf32", kTf32);
  wgmma(small_k_wgmma<kiln::Tf32, 128, 256, 3, 1>, SkWg<kiln::Tf32, 128, 256, 3>{}, "tf32", kTf32);
  wgmma(small_k_wgmma<kiln::Tf32, 64, 128, 3, 3>, SkWg<kiln::Tf32, 64, 128, 3>{}, "tf32", kTf32);
  wgmma(small_k_wgmma<kiln::Tf32x3, 128, 128, 2, 2>, SkWg<kiln::Tf32x3, 128, 128, 2>{}, "3xtf32", kFp32);
  wgmma(small_k_wgmma<kiln::Tf32x3, 64, 128, 2, 3>, SkWg<kiln::Tf32x3, 64, 128, 2>{}, "3xtf32", kFp32);
}

// =============================================================================================
// 2. linear_dropout_softmax: softmax(dropout(X · W^T + b)), X[128,16384], W[16384,16384]
void bench_linear(cublasHandle_t h) {
  constexpr int M = lin::kM, N = lin::kN, K = lin::kK;
  constexpr unsigned long long kSeed = 0x1234abcdull;
  constexpr int kMaxSplits = 4;
  std::printf("linear_dropout_softmax %dx%d x (%dx%d)^T\n", M, K, N, K);
  DevBuf<float> x(size_t(M) * K), w(size_t(N) * K), bias(N), y(size_t(M) * N), hbuf(size_t(M) * N);
  DevBuf<float> ws(size_t(kMaxSplits) * M * N);
  x.fill(3);
  w.fill(4);
  bias.fill(5);
  const std::vector<float> hx = x.to_host(), hw = w.to_host(), hb = bias.to_host();
  constexpr int kTiles = int(linear_tf32::Kernel::kTilesN);
  DevBuf<float> stats(size_t(M) * kTiles * 2);
  auto keep = [&](int r, int col) {
    return kiln::dropout_keep(kSeed, (unsigned long long)r * N + col, linear_tf32::kThreshold);
  };
  auto h_ref = [&](int r, int col) {
    double acc = 0;
    const float* xr = &hx[size_t(r) * K];
    const float* wr = &hw[size_t(col) * K];
    for (int k = 0; k < K; ++k) acc += double(xr[k]) * double(wr[k]);
    acc += hb[col];
    return keep(r, col) ? acc * (1.0 / (1.0 - 0.2)) : 0.0;
  };
  const auto samples = sample_2d(M, N, 20000, 11);
  std::vector<unsigned long long> idx;
  std::vector<double> ref;
  for (auto& s : samples) {
    idx.push_back(s.first * N + s.second);
    ref.push_back(h_ref(int(s.first), int(s.second)));
  }
  {  // the read ceiling for W (1 GiB): 16-byte loads summed per thread, no math beyond that
    DevBuf<float> sink(size_t(16) * g_sms * 256);
    const long long n4 = (long long)N * K / 4;
    for (int per_sm : {4, 8}) {
      auto launch = [&] {
        read_sum<<<per_sm * g_sms, 256>>>(reinterpret_cast<const float4*>(w.p), n4, sink.p);
      };
      const float ms = time_ms(launch);
      char what[96];
      std::snprintf(what, sizeof what, "read ceiling: sum W, ld.global.nc 16 B, %d/SM", per_sm);
      g_rows.push_back({"linear_dropout_softmax", "-", what, ms, 0, double(N) * K * 4 / ms / 1e9, -1, -1});
    }
  }
  const int full_rows[] = {0, 77, M - 1};
  std::vector<std::vector<double>> row_ref;  // float64 softmax(dropout(h)) of whole rows
  for (int r : full_rows) {
    std::vector<double> hr(N);
    double mx = -INFINITY;
    for (int c = 0; c < N; ++c) { hr[c] = h_ref(r, c); mx = std::max(mx, hr[c]); }
    double sum = 0;
    for (int c = 0; c < N; ++c) sum += std::exp(hr[c] - mx);
    for (int c = 0; c < N; ++c) hr[c] = std::exp(hr[c] - mx) / sum;
    row_ref.push_back(hr);
  }
  const double flop = 2.0 * M * N * K;
  const double bytes = (double(N) * K + double(M) * K + double(M) * N) * 4.0;  // W, X, Y once
  {
    const float one = 1.f, zero = 0.f;
    auto run = [&] {  // column-major H^T[N,M] = W(N x K) · X^T(K x M); GEMM only
      CB(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, w.p, K, x.p, K, &zero, y.p, N));
    };
    time_cublas(h, "linear_dropout_softmax", " (GEMM only)", run, flop, bytes);
  }

  // The non-split kernels of the previous plan (hand-written units, 6 stages).
  auto old_variant = [&](const char* prec, const char* name, auto gemm_fn, auto fin_fn, int threads, int smem,
                         int fin_threads, const Tol& tol) {
    set_smem(gemm_fn, smem);
    const dim3 grid(unsigned(linear_tf32::Kernel::kTilesN), unsigned(linear_tf32::Kernel::kTilesM), 1);
    LinearVariant v;
    v.prec = prec;
    v.name = name;
    v.splits = 0;
    v.tol = tol;
    float* st = stats.p;
    const float* bp = bias.p;
    // gemm: writes H (the "workspace" argument is y) and row statistics; softmax: finalize.
    v.gemm = [=](const float* xp, const float* wp, float* yp) {
      gemm_fn<<<grid, threads, smem>>>(xp, wp, bp, kSeed, yp, st);
    };
    v.softmax = [=](const float*, float* yp, const float*, unsigned long long) { fin_fn<<<M, fin_threads>>>(yp, st); };
    return v;
  };
  std::vector<LinearVariant> variants;
  variants.push_back(old_variant("tf32", "gemm+rowstats 128x128 s6, finalize (old)", kiln_linear_tf32,
                                 kiln_linear_tf32_softmax, linear_tf32::Kernel::kThreads,
                                 linear_tf32::Kernel::kSmemBytes, linear_tf32::Finalize::kThreads, kTf32));
  variants.push_back(linear_split<kiln::Tf32, 128, 128, 64, 32, 3, 2, 2>("tf32", "[sm_90 plan] ", kTf32));
  variants.push_back(linear_split<kiln::Tf32, 128, 128, 64, 32, 3, 4, 2>("tf32", "", kTf32));
  variants.push_back(linear_split<kiln::Tf32, 128, 128, 64, 32, 4, 4, 1>("tf32", "", kTf32));
  variants.push_back(linear_split<kiln::Tf32, 128, 128, 32, 32, 4, 2, 1>("tf32", "", kTf32));
  // 128x256 tiles halve the L2 -> SM traffic of X (each CTA re-reads its X slab).
  variants.push_back(linear_split<kiln::Tf32, 128, 256, 64, 32, 4, 2, 1>("tf32", "", kTf32));
  variants.push_back(linear_split<kiln::Tf32, 128, 256, 64, 32, 4, 4, 1>("tf32", "", kTf32));
  variants.push_back(linear_split<kiln::Tf32, 128, 64, 64, 32, 4, 2, 2>("tf32", "", kTf32));
  variants.push_back(linear_wgmma<kiln::Tf32, 128, 256, 4, 2, 1>("tf32", "", kTf32));
  variants.push_back(linear_wgmma<kiln::Tf32, 128, 256, 4, 4, 1>("tf32", "", kTf32));
  variants.push_back(linear_wgmma<kiln::Tf32, 128, 128, 3, 2, 2>("tf32", "", kTf32));
  variants.push_back(linear_wgmma<kiln::Tf32, 128, 128, 6, 1, 1>("tf32", "[plan] ", kTf32));
  variants.push_back(linear_wgmma<kiln::Tf32, 128, 128, 6, 2, 1>("tf32", "", kTf32));
  variants.push_back(linear_wgmma<kiln::Tf32, 128, 64, 4, 2, 2>("tf32", "", kTf32));
  variants.push_back(linear_wgmma<kiln::Tf32, 128, 128, 7, 1, 1>("tf32", "", kTf32));
  variants.push_back(linear_wgmma<kiln::Tf32, 128, 256, 4, 1, 1>("tf32", "", kTf32));
  variants.push_back(old_variant("3xtf32", "gemm+rowstats 128x128 s6, finalize (old)", kiln_linear_tf32x3,
                                 kiln_linear_tf32x3_softmax, linear_tf32x3::Kernel::kThreads,
                                 linear_tf32x3::Kernel::kSmemBytes, linear_tf32x3::Finalize::kThreads, kFp32));
  variants.push_back(linear_split<kiln::Tf32x3, 128, 128, 64, 32, 4, 2, 1>("3xtf32", "[sm_90 plan] ", kFp32));
  variants.push_back(linear_split<kiln::Tf32x3, 128, 128, 32, 32, 4, 2, 1>("3xtf32", "", kFp32));
  variants.push_back(linear_split<kiln::Tf32x3, 128, 128, 32, 32, 4, 4, 1>("3xtf32", "", kFp32));
  variants.push_back(linear_split<kiln::Tf32x3, 128, 64, 64, 32, 4, 2, 2>("3xtf32", "", kFp32));
  variants.push_back(linear_wgmma<kiln::Tf32x3, 128, 128, 4, 2, 1>("3xtf32", "", kFp32));
  variants.push_back(linear_wgmma<kiln::Tf32x3, 128, 128, 3, 1, 1>("3xtf32", "", kFp32));
  variants.push_back(linear_wgmma<kiln::Tf32x3, 128, 128, 4, 1, 1>("3xtf32", "[plan] ", kFp32));
  variants.push_back(linear_wgmma<kiln::Tf32x3, 128, 64, 4, 2, 2>("3xtf32", "", kFp32));
  variants.push_back(linear_wgmma<kiln::Tf32x3, 64, 128, 3, 2, 2>("3xtf32", "", kFp32));

  for (const LinearVariant& v : variants) {
    const bool split = v.splits > 0;
    y.poison();
    hbuf.poison();
    ws.poison();
    stats.poison();
    // (1) H = dropout(X W^T + b) before the softmax, sampled, against float64; dropout mask
    //     bit-exact: a dropped element is exactly 0, a kept one (|h| ~ 5000) never is.
    float* hp = split ? hbuf.p : y.p;
    if (split) {
      v.gemm(x.p, w.p, ws.p);
      v.h(ws.p, hbuf.p, bias.p, kSeed);
    } else {
      v.gemm(x.p, w.p, y.p);
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const auto out = gather(hp, idx);
    ErrStats e;
    long long mask_bad = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      e.add(out[i], ref[i], v.tol);
      const int r = int(idx[i] / N), col = int(idx[i] % N);
      mask_bad += keep(r, col) != (out[i] != 0.f);
    }
    const std::string hname = "H " + v.name;
    bool ok = report(hname.c_str(), v.prec, e, v.tol, nonfinite(hp, size_t(M) * N));
    std::printf("  %-60s %-7s dropout mask mismatches %lld  %s\n", "", v.prec, mask_bad, mask_bad ? "FAIL" : "ok");
    if (mask_bad) g_failed = true;
    ok = ok && mask_bad == 0;
    std::vector<std::vector<float>> h_rows;
    for (int r : full_rows) {
      std::vector<float> hr(N);
      CK(cudaMemcpy(hr.data(), hp + size_t(r) * N, N * 4, cudaMemcpyDeviceToHost));
      h_rows.push_back(hr);
    }
    // (2) the softmax kernel (fused reduce for split-K, finalize otherwise) on the same data.
    v.softmax(ws.p, y.p, bias.p, kSeed);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    {
      // (a) against a float64 softmax of the GPU's own H: must be tight. (b) end to end against
      //     float64: softmax amplifies H's absolute error (|H| ~ 5000, f32 rounding of H alone
      //     moves exp(H - max) by ~1e-2 relative): printed, not gated.
      ErrStats fin, e2e;
      for (size_t i = 0; i < sizeof(full_rows) / sizeof(int); ++i) {
        std::vector<float> o(N);
        CK(cudaMemcpy(o.data(), y.p + size_t(full_rows[i]) * N, N * 4, cudaMemcpyDeviceToHost));
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < N; ++c) mx = std::max(mx, double(h_rows[i][c]));
        for (int c = 0; c < N; ++c) sum += std::exp(double(h_rows[i][c]) - mx);
        for (int c = 0; c < N; ++c) {
          fin.add(o[c], std::exp(double(h_rows[i][c]) - mx) / sum, kFp32);
          e2e.add(o[c], row_ref[i][c], kTf32);
        }
      }
      const std::string sname = "softmax " + v.name;
      ok = report(sname.c_str(), v.prec, fin, kFp32, nonfinite(y.p, y.n)) && ok;
      std::printf("  %-60s %-7s end-to-end vs float64 (informative): rel %.3e max_abs %.3e\n", "", v.prec,
                  e2e.rel(), e2e.max_abs);
    }
    auto launch = [&] {
      v.gemm(x.p, w.p, split ? ws.p : y.p);
      v.softmax(ws.p, y.p, bias.p, kSeed);
    };
    const float ms = time_ms(launch);
    const float gemm_ms = time_ms([&] { v.gemm(x.p, w.p, split ? ws.p : y.p); });
    g_rows.push_back({"linear_dropout_softmax", v.prec, v.name + " (gemm " + fmt_ms(gemm_ms) + ")", ms, flop / ms / 1e9,
                      bytes / ms / 1e9, e.rel(), e.max_rel, ok});
  }
}

// =============================================================================================
// conv reference (float64), any layout / groups
template <class Sh>
double conv_ref(const std::vector<float>& x, const std::vector<float>& w, bool nhwc, long long n,
                long long k, long long ho, long long wo) {
  const long long g = k / Sh::Kg;
  double acc = 0;
  for (long long c = 0; c < Sh::Cg; ++c)
    for (int r = 0; r < Sh::R; ++r)
      for (int s = 0; s < Sh::S; ++s) {
        const long long hi = ho * Sh::kStrideH - Sh::kPadH + r * Sh::kDilH;
        const long long wi = wo * Sh::kStrideW - Sh::kPadW + s * Sh::kDilW;
        if (hi < 0 || hi >= Sh::H || wi < 0 || wi >= Sh::W) continue;
        const long long cc = g * Sh::Cg + c;
        const double xv = nhwc ? x[((n * Sh::H + hi) * Sh::W + wi) * Sh::C + cc]
                               : x[((n * Sh::C + cc) * Sh::H + hi) * Sh::W + wi];
        const double wv = nhwc ? w[((k * Sh::R + r) * Sh::S + s) * Sh::Cg + c]
                               : w[((k * Sh::Cg + c) * Sh::R + r) * Sh::S + s];
        acc += xv * wv;
      }
  return acc;
}

template <class Sh>
struct ConvBufs {
  DevBuf<float> x{size_t(Sh::N * Sh::C * Sh::H * Sh::W)};
  DevBuf<float> w{size_t(Sh::K * Sh::Cg * Sh::R * Sh::S)};
  DevBuf<float> y{size_t(Sh::N * Sh::K * Sh::HoWo)};
  DevBuf<float> bias{size_t(Sh::K)};
  std::vector<float> hx, hw, hb;
  ConvBufs(unsigned tag) {
    x.fill(tag);
    w.fill(tag + 1, -0.1f, 0.1f);
    bias.fill(tag + 2);
    hx = x.to_host();
    hw = w.to_host();
    hb = bias.to_host();
  }
  // Check y (all elements when sample <= 0) after a launch with poisoned y.
  template <class F>
  ErrStats check(const char* name, const char* prec, const Tol& tol, bool nhwc, bool with_bias,
                 long long sample, F launch) {
    y.poison();
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<unsigned long long> idx;
    std::vector<double> ref;
    std::mt19937_64 rng(99);
    const long long total = Sh::N * Sh::K * Sh::HoWo;
    const long long count = sample > 0 ? sample : total;
    for (long long i = 0; i < count; ++i) {
      const long long e = sample > 0 ? (i < 2 ? (i == 0 ? 0 : total - 1) : (long long)(rng() % total)) : i;
      long long n, k, pix;
      if (nhwc) { k = e % Sh::K; pix = (e / Sh::K) % Sh::HoWo; n = e / Sh::K / Sh::HoWo; }
      else { pix = e % Sh::HoWo; k = (e / Sh::HoWo) % Sh::K; n = e / Sh::HoWo / Sh::K; }
      idx.push_back(e);
      ref.push_back(conv_ref<Sh>(hx, hw, nhwc, n, k, pix / Sh::Wo, pix % Sh::Wo) +
                    (with_bias ? hb[k] : 0.0));
    }
    const auto out = gather(y.p, idx);
    ErrStats st;
    for (size_t i = 0; i < out.size(); ++i) st.add(out[i], ref[i], tol);
    report(name, prec, st, tol, nonfinite(y.p, y.n));
    return st;
  }
};

template <class Prec, int BM, int BN, int Stages, int InFlight = -1>
using WgConv = kiln::sm90::WgConvNchw<Prec, int, conv_3x3_tf32::Shape, BM, BN, Stages, true, true, InFlight>;
template <class Prec, int BM, int BN, int Stages, int MinBlocks = 1, int InFlight = -1>
__global__ void __launch_bounds__(WgConv<Prec, BM, BN, Stages, InFlight>::kThreads, MinBlocks)
conv_wgmma(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y) {
  WgConv<Prec, BM, BN, Stages, InFlight>::run(x, w, y, kiln::gemm::Identity{});
}

void bench_conv_seed() {
  using Seed = conv_3x3_tf32::Shape;
  std::printf("conv2d_3x3 NCHW x[%lld,%lld,%lld,%lld] w[%lld,%lld,3,3]\n", Seed::N, Seed::C, Seed::H,
              Seed::W, Seed::K, Seed::C);
  {
    ConvBufs<Seed> bufs(20);
    const double flop = 2.0 * Seed::P * Seed::K * Seed::Kdim;
    const double bytes = (bufs.x.n + bufs.w.n + bufs.y.n) * 4.0;
    struct V {
      const char* prec;
      void (*fn)(const float*, const float*, float*);
      int threads, smem;
      Tol tol;
    };
    const V variants[] = {
        {"tf32", kiln_conv_3x3_tf32, conv_3x3_tf32::Kernel::kThreads,
         conv_3x3_tf32::Kernel::kSmemBytes, kTf32},
        {"3xtf32", kiln_conv_3x3_tf32x3, conv_3x3_tf32x3::Kernel::kThreads,
         conv_3x3_tf32x3::Kernel::kSmemBytes, kFp32},
    };
    const dim3 grid(unsigned(conv_3x3_tf32::Kernel::kGridX), unsigned(conv_3x3_tf32::Kernel::kGridY),
                    Seed::kGroups);
    for (const V& v : variants) {
      set_smem(v.fn, v.smem);
      auto launch = [&] { v.fn<<<grid, v.threads, v.smem>>>(bufs.x.p, bufs.w.p, bufs.y.p); };
      const ErrStats e = bufs.check("conv_3x3 seed", v.prec, v.tol, false, false, 20000, launch);
      const float ms = time_ms(launch);
      g_rows.push_back({"conv2d_3x3", v.prec, "ConvNchw (cuDNN: see README)", ms, flop / ms / 1e9, bytes / ms / 1e9,
                        e.rel(), e.max_rel, e.rel() < v.tol.rel && e.bad == 0});
    }
    auto wgmma = [&](auto kernel, auto traits, const char* prec, const Tol& tol, bool persistent = true) {
      using G = decltype(traits);
      set_smem(kernel, G::kSmemBytes);
      cudaFuncAttributes attr;
      CK(cudaFuncGetAttributes(&attr, kernel));
      char name[128];
      int per_sm = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, G::kThreads, G::kSmemBytes));
      std::snprintf(name, sizeof name, "wgmma conv %dx%d s%d %d/SM (%d regs) in flight %d", G::Engine::kWarpGroups * 64,
                    G::Engine::NT * 8, G::Engine::kStages, per_sm, attr.numRegs, G::Engine::kInFlight);
      const long long tiles = G::kGridX * G::kGridY * Seed::N;
      const unsigned grid = unsigned(persistent ? std::min<long long>(tiles, (long long)g_sms * per_sm) : tiles);
      std::snprintf(name + std::strlen(name), sizeof name - std::strlen(name), " grid %u", grid);
      auto launch = [&] { kernel<<<grid, G::kThreads, G::kSmemBytes>>>(bufs.x.p, bufs.w.p, bufs.y.p); };
      const ErrStats e = bufs.check(name, prec, tol, false, false, 20000, launch);
      const float ms = time_ms(launch);
      g_rows.push_back({"conv2d_3x3", prec, name, ms, flop / ms / 1e9, bytes / ms / 1e9, e.rel(), e.max_rel,
                        e.rel() < tol.rel && e.bad == 0});
    };
    wgmma(conv_wgmma<kiln::Tf32, 128, 256, 4>, WgConv<kiln::Tf32, 128, 256, 4>{}, "tf32", kTf32);  // the plan
    wgmma(conv_wgmma<kiln::Tf32, 128, 256, 4, 1, 0>, WgConv<kiln::Tf32, 128, 256, 4, 0>{}, "tf32", kTf32);
    wgmma(conv_wgmma<kiln::Tf32, 128, 256, 4>, WgConv<kiln::Tf32, 128, 256, 4>{}, "tf32", kTf32, false);
    wgmma(conv_wgmma<kiln::Tf32x3, 128, 128, 4>, WgConv<kiln::Tf32x3, 128, 128, 4>{}, "3xtf32", kFp32, false);
    wgmma(conv_wgmma<kiln::Tf32, 128, 128, 4>, WgConv<kiln::Tf32, 128, 128, 4>{}, "tf32", kTf32);
    wgmma(conv_wgmma<kiln::Tf32, 128, 128, 3, 2>, WgConv<kiln::Tf32, 128, 128, 3>{}, "tf32", kTf32);
    wgmma(conv_wgmma<kiln::Tf32, 128, 256, 3>, WgConv<kiln::Tf32, 128, 256, 3>{}, "tf32", kTf32);
    wgmma(conv_wgmma<kiln::Tf32x3, 128, 128, 4>, WgConv<kiln::Tf32x3, 128, 128, 4>{}, "3xtf32", kFp32);
    wgmma(conv_wgmma<kiln::Tf32x3, 128, 128, 3>, WgConv<kiln::Tf32x3, 128, 128, 3>{}, "3xtf32", kFp32);
    wgmma(conv_wgmma<kiln::Tf32x3, 128, 64, 3, 2>, WgConv<kiln::Tf32x3, 128, 64, 3>{}, "3xtf32", kFp32);
  }
}

void bench_conv_variants() {
  std::printf("conv2d variants (every output checked)\n");
  {
    using Sh = conv_s2p1d2::Shape;
    ConvBufs<Sh> bufs(30);
    using Kn = conv_s2p1d2::Kernel;
    set_smem(kiln_conv_s2p1d2, Kn::kSmemBytes);
    bufs.check("conv s2 p1 d2 +bias", "3xtf32", kFp32, false, true, 0, [&] {
      kiln_conv_s2p1d2<<<dim3(unsigned(Kn::kGridX), unsigned(Kn::kGridY), Sh::kGroups), Kn::kThreads,
                         Kn::kSmemBytes>>>(bufs.x.p, bufs.w.p, bufs.bias.p, bufs.y.p);
    });
  }
  {
    using Sh = conv_depthwise::Shape;
    ConvBufs<Sh> bufs(40);
    using Kn = conv_depthwise::Kernel;
    bufs.check("conv depthwise 3x3 p1", "ieee", kFp32, false, false, 0, [&] {
      kiln_conv_depthwise<<<unsigned(Kn::kGridX), Kn::kThreads>>>(bufs.x.p, bufs.w.p, bufs.y.p);
    });
  }
  {
    using Sh = conv_nhwc::Shape;
    ConvBufs<Sh> bufs(50);
    using Kn = conv_nhwc::Kernel;
    set_smem(kiln_conv_nhwc, Kn::kSmemBytes);
    bufs.check("conv NHWC groups=2 p1", "ieee", kFp32, true, false, 0, [&] {
      kiln_conv_nhwc<<<dim3(unsigned(Kn::kGridX), unsigned(Kn::kGridY), Sh::kGroups), Kn::kThreads,
                       Kn::kSmemBytes>>>(bufs.x.p, bufs.w.p, bufs.y.p);
    });
  }
}

// =============================================================================================
// General GEMMs (every output checked)
void bench_general() {
  std::printf("general gemm (every output checked)\n");
  {
    using namespace odd_tn;
    DevBuf<float> a(size_t(kM) * kK), bt(size_t(kN) * kK), bias(kN), c(size_t(kM) * kN);
    a.fill(60);
    bt.fill(61);
    bias.fill(62, -0.5f, 0.5f);
    const auto ha = a.to_host(), hbt = bt.to_host(), hb = bias.to_host();
    set_smem(kiln_gemm_odd_tn, Kernel::kSmemBytes);
    c.poison();
    kiln_gemm_odd_tn<<<dim3(unsigned(Kernel::kTilesN), unsigned(Kernel::kTilesM), 1), Kernel::kThreads,
                       Kernel::kSmemBytes>>>(a.p, bt.p, bias.p, c.p);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const auto out = c.to_host();
    ErrStats e;
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n) {
        double acc = hb[n];
        for (int k = 0; k < kK; ++k) acc += double(ha[m * kK + k]) * double(hbt[n * kK + k]);
        e.add(out[m * kN + n], std::max(acc, 0.0), kFp32);
      }
    report("odd 1000x127x33 A.Bt relu", "3xtf32", e, kFp32, nonfinite(c.p, c.n));
  }
  {
    using namespace odd_nn;
    DevBuf<float> at(size_t(kK) * kM), b(size_t(kK) * kN), c(size_t(kM) * kN);
    at.fill(63);
    b.fill(64);
    const auto hat = at.to_host(), hb = b.to_host();
    set_smem(kiln_gemm_odd_nn, Kernel::kSmemBytes);
    c.poison();
    kiln_gemm_odd_nn<<<dim3(unsigned(Kernel::kTilesN), unsigned(Kernel::kTilesM), 1), Kernel::kThreads,
                       Kernel::kSmemBytes>>>(at.p, b.p, c.p);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const auto out = c.to_host();
    ErrStats e;
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n) {
        double acc = 0;
        for (int k = 0; k < kK; ++k) acc += double(hat[k * kM + m]) * double(hb[k * kN + n]);
        e.add(out[m * kN + n], acc, kFp32);
      }
    report("odd 33x7x1000 At^T.B", "ieee", e, kFp32, nonfinite(c.p, c.n));
  }
  {
    using namespace splitk;
    DevBuf<float> a(size_t(kM) * kK), b(size_t(kK) * kN), ws(size_t(kSplits) * kM * kN),
        c(size_t(kM) * kN);
    a.fill(67);
    b.fill(68);
    const auto ha = a.to_host(), hb = b.to_host();
    set_smem(kiln_gemm_splitk, Kernel::kSmemBytes);
    c.poison();
    ws.poison();
    kiln_gemm_splitk<<<dim3(unsigned(Kernel::kTilesN), unsigned(Kernel::kTilesM), kSplits),
                       Kernel::kThreads, Kernel::kSmemBytes>>>(a.p, b.p, ws.p);
    CK(cudaGetLastError());
    kiln_gemm_splitk_reduce<<<unsigned((kM * kN + Reduce::kThreads - 1) / Reduce::kThreads), Reduce::kThreads>>>(ws.p, c.p);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const auto out = c.to_host();
    ErrStats e;
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n) {
        double acc = 0;
        for (int k = 0; k < kK; ++k) acc += double(ha[size_t(m) * kK + k]) * double(hb[size_t(k) * kN + n]);
        e.add(out[m * kN + n], 0.5 * acc, kFp32);
      }
    report("split-K 8: 96x200x5000", "3xtf32", e, kFp32, nonfinite(c.p, c.n) + nonfinite(ws.p, ws.n));
  }
  {
    using namespace bf16_batched;
    DevBuf<T> a(size_t(kBatch) * kM * kK), b(size_t(kK) * kN), c(size_t(kBatch) * kM * kN);
    a.fill(65);
    b.fill(66);
    const auto ha = a.to_host(), hb = b.to_host();
    set_smem(kiln_gemm_bf16_batched, Kernel::kSmemBytes);
    c.poison();
    kiln_gemm_bf16_batched<<<dim3(unsigned(Kernel::kTilesN), unsigned(Kernel::kTilesM), kBatch),
                             Kernel::kThreads, Kernel::kSmemBytes>>>(a.p, b.p, c.p);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const auto out = c.to_host();
    ErrStats e;
    long long unwritten = 0;
    for (int bb = 0; bb < kBatch; ++bb)
      for (int m = 0; m < kM; ++m)
        for (int n = 0; n < kN; ++n) {
          double acc = 0;
          for (int k = 0; k < kK; ++k)
            acc += double(__bfloat162float(ha[(size_t(bb) * kM + m) * kK + k])) *
                   double(__bfloat162float(hb[size_t(k) * kN + n]));
          const float o = __bfloat162float(out[(size_t(bb) * kM + m) * kN + n]);
          unwritten += !std::isfinite(o);
          e.add(o, acc, kBf16);
        }
    report("bf16 batched 3x257x136x200", "bf16", e, kBf16, (unsigned long long)unwritten);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // --quick: skip the big seeds; any other words pick sections (general, conv_variants, small_k,
  // linear, conv_seed) by name.
  bool quick = false;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else only.emplace_back(argv[i]);
  }
  auto want = [&](const char* section) {
    return only.empty() || std::find(only.begin(), only.end(), section) != only.end();
  };
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  std::printf("device: %s, %d SMs\n", prop.name, g_sms);
  cublasHandle_t h;
  CB(cublasCreate(&h));
  if (want("general")) bench_general();
  if (want("conv_variants")) bench_conv_variants();
  if (!quick) {
    if (want("small_k")) bench_small_k(h);
    if (want("linear")) bench_linear(h);
    if (want("conv_seed")) bench_conv_seed();
  }
  CB(cublasDestroy(h));

  // One table; per problem and precision, the fastest kiln variant that passed is marked '*'.
  std::printf("\n%-22s %-6s %-78s %8s %8s %6s %9s %9s\n", "problem", "prec", "variant", "ms", "TFLOP/s",
              "TB/s", "rel err", "max rel");
  for (const Row& r : g_rows) {
    bool best = r.rel >= 0 && r.ok;
    for (const Row& o : g_rows)
      if (o.rel >= 0 && o.ok && o.problem == r.problem && o.prec == r.prec && o.ms < r.ms) best = false;
    char rel[16] = "-", max_rel[16] = "-";
    if (r.rel >= 0) std::snprintf(rel, sizeof rel, "%.2e", r.rel);
    if (r.max_rel >= 0) std::snprintf(max_rel, sizeof max_rel, "%.2e", r.max_rel);
    std::printf("%-22s %-6s %-78s %8.3f %8.1f %6.2f %9s %9s%s\n", r.problem.c_str(), r.prec.c_str(),
                r.variant.c_str(), r.ms, r.tflops, r.tbs, rel, max_rel, best ? " *" : r.ok ? "" : " FAIL");
  }
  std::printf("%s\n", g_failed ? "ACCURACY FAILURES" : "all checks passed");
  return g_failed ? 1 : 0;
}
