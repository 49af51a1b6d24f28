// gemm_check — standalone correctness check and timing of the kiln gemm / conv template
// instantiations in tests/templates (the units the emitter will generate), against a float64
// CPU reference, side by side with cuBLAS.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I templates -I tests/templates -lcublas \
//        bench/standalone/gemm_check.cu -o gemm_check && ./gemm_check [--quick]
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
  double num = 0, den = 0, max_abs = 0;
  long long bad = 0, count = 0;
  void add(double out, double ref, const Tol& t) {
    const double d = std::fabs(out - ref);
    ++count;
    if (!(d <= t.atol + t.rtol * std::fabs(ref))) ++bad;  // NaN counts as bad
    if (std::isnan(out)) { max_abs = INFINITY; num = INFINITY; }
    num += d * d;
    den += ref * ref;
    if (d > max_abs) max_abs = d;
  }
  double rel() const { return den > 0 ? std::sqrt(num / den) : std::sqrt(num); }
};

void report(const char* name, const char* prec, const ErrStats& e, const Tol& t,
            unsigned long long unwritten) {
  const bool ok = e.rel() < t.rel && e.bad == 0 && unwritten == 0;
  std::printf("  %-28s %-7s checked %9lld  rel %.3e (tol %.0e)  max_abs %.3e  bad %lld  unwritten %llu  %s\n",
              name, prec, e.count, e.rel(), t.rel, e.max_abs, e.bad, unwritten, ok ? "ok" : "FAIL");
  if (!ok) g_failed = true;
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

struct Row {
  std::string variant, prec;
  double ms, tflops, gbs, cublas_ms;
};
std::vector<Row> g_rows;

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
// 1. matmul_small_k: C[32768,32768] = A[32768,64] · B[64,32768]
void bench_small_k(cublasHandle_t h) {
  constexpr long long M = 32768, N = 32768, K = 64;
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

  struct V {
    const char* prec;
    void (*fn)(const float*, const float*, float*);
    int threads, smem;
    long long tiles;
    Tol tol;
  };
  const V variants[] = {
      {"tf32", kiln_gemm_small_k_tf32, small_k_tf32::Kernel::kThreads,
       small_k_tf32::Kernel::kSmemBytes, small_k_tf32::Kernel::kTiles, kTf32},
      {"3xtf32", kiln_gemm_small_k_tf32x3, small_k_tf32x3::Kernel::kThreads,
       small_k_tf32x3::Kernel::kSmemBytes, small_k_tf32x3::Kernel::kTiles, kFp32},
      {"ieee", kiln_gemm_small_k_ieee, small_k_ieee::Kernel::kThreads,
       small_k_ieee::Kernel::kSmemBytes, small_k_ieee::Kernel::kTiles, kFp32},
  };
  float cublas_fp32 = 0, cublas_tf32 = 0;
  {
    const float one = 1.f, zero = 0.f;
    auto run = [&] {  // row-major C = A·B  <=>  column-major C^T = B^T · A^T
      CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, int(N), int(M), int(K), &one, b.p, int(N), a.p,
                     int(K), &zero, c.p, int(N)));
    };
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    cublas_fp32 = time_ms(run);
    CB(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
    cublas_tf32 = time_ms(run);
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  }
  for (const V& v : variants) {
    set_smem(v.fn, v.smem);
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.fn, v.threads, v.smem));
    const int grid = int(std::min<long long>(v.tiles, (long long)g_sms * std::max(per_sm, 1)));
    auto launch = [&] { v.fn<<<grid, v.threads, v.smem>>>(a.p, b.p, c.p); };
    c.poison();
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const auto out = gather(c.p, idx);
    ErrStats e;
    for (size_t i = 0; i < out.size(); ++i) e.add(out[i], ref[i], v.tol);
    report("small_k", v.prec, e, v.tol, nonfinite(c.p, c.n));
    const float ms = time_ms(launch);
    const double cub = std::strcmp(v.prec, "tf32") == 0 ? cublas_tf32 : cublas_fp32;
    g_rows.push_back({"matmul_small_k (grid " + std::to_string(grid) + ")", v.prec, ms,
                      2.0 * M * N * K / ms / 1e9, (M * K + K * N + M * N) * 4.0 / ms / 1e6, cub});
  }
}

// =============================================================================================
// 2. linear_dropout_softmax: softmax(dropout(X · W^T + b)), X[128,16384], W[16384,16384]
void bench_linear(cublasHandle_t h) {
  constexpr int M = 128, N = 16384, K = 16384;
  constexpr unsigned long long kSeed = 0x1234abcdull;
  std::printf("linear_dropout_softmax %dx%d x (%dx%d)^T\n", M, K, N, K);
  DevBuf<float> x(size_t(M) * K), w(size_t(N) * K), bias(N), y(size_t(M) * N);
  x.fill(3);
  w.fill(4);
  bias.fill(5);
  const std::vector<float> hx = x.to_host(), hw = w.to_host(), hb = bias.to_host();
  constexpr int kTiles = int(linear_tf32::Kernel::kTilesN);
  DevBuf<float> stats(size_t(M) * kTiles * 2);
  auto h_ref = [&](int r, int col) {
    double acc = 0;
    const float* xr = &hx[size_t(r) * K];
    const float* wr = &hw[size_t(col) * K];
    for (int k = 0; k < K; ++k) acc += double(xr[k]) * double(wr[k]);
    acc += hb[col];
    const bool keep = kiln::dropout_keep(kSeed, (unsigned long long)r * N + col, linear_tf32::kThreshold);
    return keep ? acc * (1.0 / (1.0 - 0.2)) : 0.0;
  };
  const auto samples = sample_2d(M, N, 20000, 11);
  std::vector<unsigned long long> idx;
  std::vector<double> ref;
  for (auto& s : samples) {
    idx.push_back(s.first * N + s.second);
    ref.push_back(h_ref(int(s.first), int(s.second)));
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

  struct V {
    const char* prec;
    void (*gemm)(const float*, const float*, const float*, unsigned long long, float*, float*);
    void (*fin)(float*, const float*);
    int threads, smem, fin_threads;
    Tol tol;
  };
  const V variants[] = {
      {"tf32", kiln_linear_tf32, kiln_linear_tf32_softmax, linear_tf32::Kernel::kThreads,
       linear_tf32::Kernel::kSmemBytes, linear_tf32::Finalize::kThreads, kTf32},
      {"3xtf32", kiln_linear_tf32x3, kiln_linear_tf32x3_softmax, linear_tf32x3::Kernel::kThreads,
       linear_tf32x3::Kernel::kSmemBytes, linear_tf32x3::Finalize::kThreads, kFp32},
  };
  float cublas_fp32 = 0, cublas_tf32 = 0;
  {
    const float one = 1.f, zero = 0.f;
    auto run = [&] {  // column-major H^T[N,M] = W(N x K) · X^T(K x M)
      CB(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, w.p, K, x.p, K, &zero, y.p, N));
    };
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    cublas_fp32 = time_ms(run);
    CB(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
    cublas_tf32 = time_ms(run);
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  }
  const dim3 grid(unsigned(linear_tf32::Kernel::kTilesN), unsigned(linear_tf32::Kernel::kTilesM), 1);
  for (const V& v : variants) {
    set_smem(v.gemm, v.smem);
    y.poison();
    stats.poison();
    v.gemm<<<grid, v.threads, v.smem>>>(x.p, w.p, bias.p, kSeed, y.p, stats.p);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    {  // H = dropout(X W^T + b) before the softmax, sampled, against float64
      const auto out = gather(y.p, idx);
      ErrStats e;
      for (size_t i = 0; i < out.size(); ++i) e.add(out[i], ref[i], v.tol);
      report("linear+bias+dropout (H)", v.prec, e, v.tol, nonfinite(y.p, y.n) + nonfinite(stats.p, stats.n));
    }
    std::vector<std::vector<float>> h_rows;
    for (int r : full_rows) {
      std::vector<float> hr(N);
      CK(cudaMemcpy(hr.data(), y.p + size_t(r) * N, N * 4, cudaMemcpyDeviceToHost));
      h_rows.push_back(hr);
    }
    v.fin<<<M, v.fin_threads>>>(y.p, stats.p);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    {
      // (a) the normalizing pass, against a float64 softmax of the GPU's own H: must be tight.
      // (b) end to end against float64: softmax amplifies H's absolute error (|H| ~ 5000, so
      //     f32 rounding of H alone moves exp(H - max) by ~1e-2 relative): printed, not gated.
      ErrStats fin, e2e;
      for (size_t i = 0; i < sizeof(full_rows) / sizeof(int); ++i) {
        std::vector<float> out(N);
        CK(cudaMemcpy(out.data(), y.p + size_t(full_rows[i]) * N, N * 4, cudaMemcpyDeviceToHost));
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < N; ++c) mx = std::max(mx, double(h_rows[i][c]));
        for (int c = 0; c < N; ++c) sum += std::exp(double(h_rows[i][c]) - mx);
        for (int c = 0; c < N; ++c) {
          fin.add(out[c], std::exp(double(h_rows[i][c]) - mx) / sum, kFp32);
          e2e.add(out[c], row_ref[i][c], kTf32);
        }
      }
      report("softmax finalize (rows)", v.prec, fin, kFp32, nonfinite(y.p, y.n));
      std::printf("  %-28s %-7s end-to-end vs float64 (informative): rel %.3e max_abs %.3e\n",
                  "softmax(dropout(linear))", v.prec, e2e.rel(), e2e.max_abs);
    }
    auto launch = [&] {
      v.gemm<<<grid, v.threads, v.smem>>>(x.p, w.p, bias.p, kSeed, y.p, stats.p);
      v.fin<<<M, v.fin_threads>>>(y.p, stats.p);
    };
    const float ms = time_ms(launch);
    const double cub = std::strcmp(v.prec, "tf32") == 0 ? cublas_tf32 : cublas_fp32;
    g_rows.push_back({"linear_dropout_softmax", v.prec, ms, 2.0 * M * N * K / ms / 1e9,
                      (double(N) * K + double(M) * K + 3.0 * M * N) * 4.0 / ms / 1e6, cub});
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
  void check(const char* name, const char* prec, const Tol& tol, bool nhwc, bool with_bias,
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
  }
};

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
      bufs.check("conv_3x3 seed", v.prec, v.tol, false, false, 20000, launch);
      const float ms = time_ms(launch);
      g_rows.push_back({"conv2d_3x3 (cuDNN: see README)", v.prec, ms, flop / ms / 1e9, bytes / ms / 1e6, 0});
    }
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
    DevBuf<float> a(size_t(kM) * kK), b(size_t(kK) * kN), ws(size_t(Kernel::kWorkspaceFloats)),
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
    kiln_gemm_splitk_reduce<<<unsigned(Reduce::kGridX), Reduce::kThreads>>>(ws.p, c.p);
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
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;  // skip the big seeds
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  std::printf("device: %s, %d SMs\n", prop.name, g_sms);
  cublasHandle_t h;
  CB(cublasCreate(&h));
  bench_general();
  bench_conv_variants();
  if (!quick) {
    bench_small_k(h);
    bench_linear(h);
    bench_conv_seed();
  }
  CB(cublasDestroy(h));

  std::printf("\n%-40s %-7s %9s %9s %9s %10s %7s\n", "variant", "prec", "ms", "TFLOP/s", "GB/s",
              "cuBLAS ms", "ratio");
  for (const Row& r : g_rows)
    std::printf("%-40s %-7s %9.3f %9.1f %9.0f %10.3f %7.2f\n", r.variant.c_str(), r.prec.c_str(), r.ms,
                r.tflops, r.gbs, r.cublas_ms, r.cublas_ms > 0 ? r.ms / r.cublas_ms : 0.0);
  std::printf("%s\n", g_failed ? "ACCURACY FAILURES" : "all checks passed");
  return g_failed ? 1 : 0;
}
