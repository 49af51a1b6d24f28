// kiln/philox.cuh — Philox4x32-10 and dropout's keep decision, shared by the host
// reference interpreter (reference/reference.cpp includes this file directly) and the
// GPU dropout epilogue (NVRTC sees it as an embedded header).
//
// [Note: one function, two compilers]
// Dropout's mask must be the same bits on the CPU and the GPU, whatever the tiling.
// So the mask is a pure function of (seed, flat output index), written once here and
// compiled by both g++ and NVRTC. This header therefore uses no standard header at all
// (NVRTC has none): only unsigned int / unsigned long long and plain arithmetic.
//
// The exact rule (docs/semantics.md, "dropout"):
//   key     = {lo32(seed), hi32(seed)}
//   counter = {lo32(i / 4), hi32(i / 4), 0, 0}
//   r       = philox4x32_10(counter, key)[i % 4]
//   keep   <=> (r >> 8) >= T,  T = ceil(p * 2^24)
// i.e. "keep when u >= p" with u = (r >> 8) * 2^-24 in [0, 1), exactly. Kept values
// are scaled by 1 / (1 - p).
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KILN_PHILOX_HD __host__ __device__ __forceinline__
#else
#define KILN_PHILOX_HD inline
#endif

namespace kiln {

// Four 32-bit words: a Philox counter or output block.
struct PhiloxBlock {
  unsigned int v[4];
};
// Two 32-bit words: a Philox key.
struct PhiloxKey {
  unsigned int v[2];
};

namespace philox_detail {
constexpr unsigned int kMul0 = 0xD2511F53u;
constexpr unsigned int kMul1 = 0xCD9E8D57u;
constexpr unsigned int kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr unsigned int kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

KILN_PHILOX_HD unsigned int mul_hi(unsigned int a, unsigned int b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
#endif
}

KILN_PHILOX_HD PhiloxBlock round(PhiloxBlock c, PhiloxKey k) {
  const unsigned int hi0 = mul_hi(kMul0, c.v[0]);
  const unsigned int lo0 = kMul0 * c.v[0];
  const unsigned int hi1 = mul_hi(kMul1, c.v[2]);
  const unsigned int lo1 = kMul1 * c.v[2];
  PhiloxBlock out;
  out.v[0] = hi1 ^ c.v[1] ^ k.v[0];
  out.v[1] = lo1;
  out.v[2] = hi0 ^ c.v[3] ^ k.v[1];
  out.v[3] = lo0;
  return out;
}
}  // namespace philox_detail

// Philox4x32 with 10 rounds (Salmon et al., SC'11), bit-identical to Random123's
// philox4x32_R(10, ctr, key); checked against its known-answer vectors in
// tests/runtime/test_philox.cpp.
// The ten rounds unroll (about 6 SASS instructions a round). A GEMM epilogue inlines one block per
// four outputs a thread holds (32 in a thread of a 128x256 TMA tile), most of that kernel's cold
// compile (NVRTC, sm_90a, linear_relu_dropout of specs/matmul.kiln, 2026-12-05: 567 ms, 320
// without its dropout). Keeping the rounds a loop cut that to 433 ms but cost run time (H200,
// 2026-12-06, 4096^3 tf32, medians of 100: 0.367 ms unrolled, 0.397 as a loop a block, 0.391 as
// one loop over four blocks' rounds), so they stay unrolled (docs/notes/session-61.md).
KILN_PHILOX_HD PhiloxBlock philox4x32_10(PhiloxBlock counter, PhiloxKey key) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {  // the key is bumped between rounds, not before the first
      key.v[0] += philox_detail::kWeyl0;
      key.v[1] += philox_detail::kWeyl1;
    }
    counter = philox_detail::round(counter, key);
  }
  return counter;
}

// T = ceil(p * 2^24) for p in [0, 1]: the smallest 24-bit value that is kept.
// p * 2^24 is exact in double for any double p (a power-of-two scale), so the only
// rounding is the ceiling, done by hand to need no <cmath>.
KILN_PHILOX_HD unsigned int dropout_threshold(double p) {
  const double t = p * 16777216.0;
  if (!(t > 0.0)) return 0u;                     // p <= 0 (or NaN): keep everything
  if (t >= 16777216.0) return 16777216u;         // p >= 1: keep nothing
  unsigned int u = static_cast<unsigned int>(t);  // truncates; t > 0 so this is floor
  if (static_cast<double>(u) < t) ++u;
  return u;
}

// The Philox block that holds the random bits of flat elements (index & ~3) .. (index | 3): one
// block serves four adjacent elements' draws (a caller that needs four reads its words).
KILN_PHILOX_HD PhiloxBlock dropout_block(unsigned long long seed, unsigned long long index) {
  const unsigned long long block = index >> 2;
  PhiloxBlock counter;
  counter.v[0] = static_cast<unsigned int>(block);
  counter.v[1] = static_cast<unsigned int>(block >> 32);
  counter.v[2] = 0u;
  counter.v[3] = 0u;
  PhiloxKey key;
  key.v[0] = static_cast<unsigned int>(seed);
  key.v[1] = static_cast<unsigned int>(seed >> 32);
  return philox4x32_10(counter, key);
}

// Word i (0..3) of a block, by selects, not by a run-time index into the block (that put the
// block in local memory: a 16-byte stack frame in every GEMM whose epilogue draws per element).
KILN_PHILOX_HD unsigned int philox_word(const PhiloxBlock& b, unsigned int i) {
  return i == 0u ? b.v[0] : i == 1u ? b.v[1] : i == 2u ? b.v[2] : b.v[3];
}

// The 32 random bits dropout draws for flat element `index` under `seed`.
KILN_PHILOX_HD unsigned int dropout_bits(unsigned long long seed, unsigned long long index) {
  return philox_word(dropout_block(seed, index), static_cast<unsigned int>(index & 3u));
}

// The random bits of the N adjacent flat elements first .. first + N - 1, N a power of two and
// `first` a multiple of N (the elementwise template's vector step): ceil(N / 4) Philox blocks for
// the N draws, not N. bits(j) is dropout_bits(seed, first + j).
template <int N>
struct DropoutWords {
  static constexpr int kBlocks = N < 4 ? 1 : N / 4;
  PhiloxBlock block[kBlocks];
  unsigned int lane0;   // first's word in its block: 0 when N >= 4 (first is then a multiple of 4)

  KILN_PHILOX_HD DropoutWords(unsigned long long seed, unsigned long long first)
      : lane0(N >= 4 ? 0u : static_cast<unsigned int>(first & 3u)) {
    for (int b = 0; b < kBlocks; ++b) block[b] = dropout_block(seed, first + 4ull * static_cast<unsigned long long>(b));
  }

  KILN_PHILOX_HD unsigned int bits(int j) const {
    const unsigned int w = lane0 + static_cast<unsigned int>(j);   // < 4 when N < 4
    return philox_word(kBlocks == 1 ? block[0] : block[w >> 2], w & 3u);
  }
};

// Whether dropout keeps the element whose random bits are `bits` (dropout_bits, or a word of
// dropout_block): its top 24 bits at least the threshold.
KILN_PHILOX_HD bool dropout_keep_bits(unsigned int bits, unsigned int threshold) { return (bits >> 8) >= threshold; }

// Whether dropout keeps flat element `index` (row-major over the dropout's output).
KILN_PHILOX_HD bool dropout_keep(unsigned long long seed, unsigned long long index,
                                 unsigned int threshold) {
  return dropout_keep_bits(dropout_bits(seed, index), threshold);
}

}  // namespace kiln
