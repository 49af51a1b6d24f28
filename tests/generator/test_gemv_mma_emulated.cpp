// Runs GemvMma (kiln/gemv_mma.cuh, [Note: skinny products on the tensor cores]) on the CPU
// through cuda_emulator.h, whose mma.sync m16n8k8 gathers the warp's fragments: the k order a lane
// loads and the fragments' k slots, x staged in shared memory as tf32 parts, rows past R, K slices
// that end mid-step and mid-chunk, chunks after the first, the epilogue or the workspace slices,
// the big operand as A or as B, against float64 sums. (The tensor cores' own accumulation rounding
// is not modelled: the GPU test of test_specs_gpu.cpp holds the hardware to the fp32 bound.)
#include "cuda_emulator.h"   // first: compiles the templates as host code
#include "emulated_buffers.h"

#include "kiln/gemv_mma.cuh"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

// C = 2 v + 1 where the kernel applies the epilogue (one K slice).
struct TwoXPlusOne {
  float operator()(float v, int, int, int) const { return 2.f * v + 1.f; }
};

// big(r, k) = big[r * ld + k]; x(k, p) = x[k * xk + p * xp]. Runs Kernel on the emulator and checks
// every output (r, p) against the float64 sum: C placed at (r, p) when kBigIsA, else (p, r), with
// ldc columns; with split_k > 1 the slices are summed here (the reduce kernel's job).
template <class Kernel, bool kBigIsA, int kSplitK>
void check(int rows, int p, int k, int ld, long long xk, long long xp, int block_rows, double rel_tol, unsigned seed) {
  CAPTURE(rows);
  CAPTURE(p);
  CAPTURE(k);
  CAPTURE(kSplitK);
  emulated::Buffer big(std::size_t(rows) * ld, 0, 0.f);   // 16-byte aligned: the big operand's loads
  const auto values = emulated::random_floats(std::size_t(rows) * ld, seed, -1.f, 1.f);
  std::copy(values.begin(), values.end(), big.data);
  const auto x = emulated::random_floats(std::size_t(k) * p, seed + 1, -1.f, 1.f);
  const int ldc = kBigIsA ? p : rows;
  const std::size_t outputs = std::size_t(rows) * p;
  emulated::Buffer c(outputs * kSplitK, 0, std::numeric_limits<float>::quiet_NaN());   // poisoned: every output is written
  const float* a = kBigIsA ? big.data : x.data();
  const float* b = kBigIsA ? x.data() : big.data;
  emu::launch({unsigned((rows + block_rows - 1) / block_rows), unsigned(kSplitK), 0}, kiln::kGemvThreads, [&] {
    if constexpr (kSplitK == 1) Kernel::run(a, b, c.data, TwoXPlusOne{});
    else Kernel::run(a, b, c.data, kiln::gemm::Identity{});
  });
  int wrong = 0;
  for (int r = 0; r < rows; ++r)
    for (int q = 0; q < p; ++q) {
      double sum = 0, scale = 0;
      for (int kk = 0; kk < k; ++kk) {
        const double term = double(big.data[std::size_t(r) * ld + kk]) * x[std::size_t(kk * xk + q * xp)];
        sum += term;
        scale += std::fabs(term);
      }
      const std::size_t at = kBigIsA ? std::size_t(r) * ldc + q : std::size_t(q) * ldc + r;
      double got = 0;
      for (int s = 0; s < kSplitK; ++s) got += c.data[s * outputs + at];
      const double want = kSplitK == 1 ? 2 * sum + 1 : sum;
      const double tol = rel_tol * (kSplitK == 1 ? 2 : 1) * scale + 1e-6;
      if (!(std::fabs(got - want) <= tol) && ++wrong <= 5)
        MESSAGE("(" << r << ", " << q << "): " << got << " against " << want << " (tolerance " << tol << ")");
    }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("emulated GemvMma: 3xTF32 against x stored [K, 12], 150 rows, one K slice over three chunks") {
  // 150 rows: a second block of 22 rows (rows past R read row 149 and store nothing); K = 600:
  // chunks of 256, 256 and 88 k, the last step 24 k (element loads past the slice's end); rows
  // 604 floats apart; the epilogue in the kernel.
  using K = kiln::gemm::GemvMma<kiln::Tf32x3, int, 150, 12, 600, 1, true, 604, 0, 12, 1, 0, 12, 0, 128, 1, 256>;
  check<K, true, 1>(150, 12, 600, 604, 12, 1, 128, 4e-6, 3);
}

TEST_CASE("emulated GemvMma: 3xTF32, three K slices to the workspace, 32 rows a warp") {
  // K = 600 in slices of 224, 224 and 152 (4.75 steps); blocks of 256 rows (two m16 tiles a warp)
  using K = kiln::gemm::GemvMma<kiln::Tf32x3, int, 150, 12, 600, 1, true, 604, 0, 12, 1, 0, 12, 0, 256, 3, 256>;
  check<K, true, 3>(150, 12, 600, 604, 12, 1, 256, 4e-6, 5);
}

TEST_CASE("emulated GemvMma: tf32, the big operand is B, x k-contiguous with 9 rows") {
  // C(m, n) = x(m, .) . B(., n) with B stored [N, K] (a linear layer's weight, 100 rows of 520),
  // x = A [9, 520]: one n8 tile and a second with one column; two K slices of 288 and 232.
  using K = kiln::gemm::GemvMma<kiln::Tf32, int, 100, 9, 520, 1, false, 520, 0, 1, 520, 0, 100, 0, 128, 2, 256>;
  check<K, false, 2>(100, 9, 520, 520, 1, 520, 128, 2e-3, 7);
}
