// Stand-in for kiln/philox.cuh (written on another branch) with the declared interface
//   bool kiln::dropout_keep(unsigned long long seed, unsigned long long index, unsigned threshold)
// Philox4x32-10 keyed by the seed, counter = (index lo, index hi, 0, 0); keep when the first
// output word >= threshold (threshold = ceil(p * 2^32)). Host and device, so a CPU reference
// draws the same bits. Used when kiln/philox.cuh is absent or KILN_GEMM_FALLBACK_PHILOX is set.
#pragma once

#if !defined(KILN_GEMM_FALLBACK_PHILOX) && defined(__has_include)
#if __has_include("kiln/philox.cuh")
#include "kiln/philox.cuh"
#define KILN_GEMM_HAVE_PHILOX 1
#endif
#endif

#ifndef KILN_GEMM_HAVE_PHILOX
namespace kiln {
__host__ __device__ __forceinline__ unsigned int philox_first_word(unsigned long long seed,
                                                                   unsigned long long index) {
  unsigned int c0 = static_cast<unsigned int>(index), c1 = static_cast<unsigned int>(index >> 32);
  unsigned int c2 = 0, c3 = 0;
  unsigned int k0 = static_cast<unsigned int>(seed), k1 = static_cast<unsigned int>(seed >> 32);
#ifdef __CUDA_ARCH__
#pragma unroll 1  // the epilogue inlines this per element: keep the code (and compile time) small
#endif
  for (int r = 0; r < 10; ++r) {
    const unsigned long long p0 = 0xD2511F53ull * c0;
    const unsigned long long p1 = 0xCD9E8D57ull * c2;
    const unsigned int hi0 = static_cast<unsigned int>(p0 >> 32), lo0 = static_cast<unsigned int>(p0);
    const unsigned int hi1 = static_cast<unsigned int>(p1 >> 32), lo1 = static_cast<unsigned int>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c0;
}
__host__ __device__ __forceinline__ bool dropout_keep(unsigned long long seed,
                                                      unsigned long long index,
                                                      unsigned int threshold) {
  return philox_first_word(seed, index) >= threshold;
}
}  // namespace kiln
#endif

namespace kiln_test {
// The threshold of dropout probability p (in [0, 1)) for the dropout_keep in use: kiln/philox.cuh
// keeps a 24-bit draw >= ceil(p * 2^24) (kiln::dropout_threshold), the stand-in above a 32-bit word
// >= ceil(p * 2^32). (A 32-bit threshold given to kiln's dropped every element: the GEMM's
// products were dead code, and ptxas removed every mma.)
__host__ __device__ constexpr unsigned int dropout_threshold(double p) {
#ifdef KILN_GEMM_HAVE_PHILOX
  const double t = p * 16777216.0;
#else
  const double t = p * 4294967296.0;
#endif
  const unsigned long long u = static_cast<unsigned long long>(t);
  return static_cast<unsigned int>(static_cast<double>(u) < t ? u + 1 : u);
}
}  // namespace kiln_test
