// Philox4x32-10 against Random123's known-answer vectors (kat_vectors, the three
// "philox4x32 10" lines), and dropout's threshold and keep rule built on it.
#include <doctest/doctest.h>

#include <initializer_list>

#include "templates/kiln/philox.cuh"

namespace {

kiln::PhiloxBlock block(unsigned a, unsigned b, unsigned c, unsigned d) { return {{a, b, c, d}}; }

void check_block(const kiln::PhiloxBlock& got, const kiln::PhiloxBlock& want) {
  for (int i = 0; i < 4; ++i) CHECK(got.v[i] == want.v[i]);
}

}  // namespace

TEST_CASE("philox4x32_10 matches Random123's known answers") {
  check_block(kiln::philox4x32_10(block(0, 0, 0, 0), {{0, 0}}),
              block(0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8));
  check_block(kiln::philox4x32_10(block(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff), {{0xffffffff, 0xffffffff}}),
              block(0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd));
  check_block(kiln::philox4x32_10(block(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), {{0xa4093822, 0x299f31d0}}),
              block(0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1));
}

TEST_CASE("dropout_threshold is ceil(p * 2^24)") {
  CHECK(kiln::dropout_threshold(0.0) == 0u);
  CHECK(kiln::dropout_threshold(0.5) == 8388608u);
  CHECK(kiln::dropout_threshold(0.2) == 3355444u);   // 0.2 * 2^24 = 3355443.2 (0.2 is a bit above 1/5)
  CHECK(kiln::dropout_threshold(0.25) == 4194304u);  // exact: no rounding up
  CHECK(kiln::dropout_threshold(0x1p-24) == 1u);
  CHECK(kiln::dropout_threshold(0x1p-30) == 1u);     // any p > 0 drops u = 0
  CHECK(kiln::dropout_threshold(1.0) == 16777216u);  // keeps nothing
}

// DropoutWords<N>: the elementwise template's N draws from ceil(N / 4) blocks, first a multiple of N.
template <int N>
void check_words(unsigned long long seed, unsigned long long first) {
  CAPTURE(N);
  CAPTURE(first);
  const kiln::DropoutWords<N> words(seed, first);
  for (int j = 0; j < N; ++j) CHECK(words.bits(j) == kiln::dropout_bits(seed, first + static_cast<unsigned long long>(j)));
}

TEST_CASE("DropoutWords<N> gives dropout_bits of N adjacent elements") {
  const unsigned long long seed = 0xfedcba9876543210ull;
  for (unsigned long long first : {0ull, 16ull, 4096ull, (3ull << 33) + 32}) {
    check_words<1>(seed, first + 3);   // the tail: any element
    check_words<1>(seed, first + 1);
    check_words<2>(seed, first + 2);
    check_words<4>(seed, first);
    check_words<8>(seed, first);
    check_words<16>(seed, first);
  }
}

TEST_CASE("dropout_keep draws word i % 4 of block i / 4, keyed by the seed's halves") {
  const unsigned long long seed = 0x0123456789abcdefull;
  const unsigned long long index = (5ull << 32) * 4 + 4 * 7 + 2;  // block (5 << 32) + 7, word 2
  const kiln::PhiloxBlock r = kiln::philox4x32_10(block(7, 5, 0, 0), {{0x89abcdefu, 0x01234567u}});
  CHECK(kiln::dropout_bits(seed, index) == r.v[2]);
  for (unsigned w = 0; w < 4; ++w)   // every word of the block, each by its own select
    CHECK(kiln::dropout_bits(seed, index - 2 + w) == r.v[w]);
  for (unsigned w = 0; w < 4; ++w) {   // dropout_block: the block of all four, from any of them
    const kiln::PhiloxBlock b = kiln::dropout_block(seed, index - 2 + w);
    for (unsigned j = 0; j < 4; ++j) CHECK(b.v[j] == r.v[j]);
  }
  const unsigned u24 = r.v[2] >> 8;
  CHECK(kiln::dropout_keep_bits(r.v[2], u24));
  CHECK_FALSE(kiln::dropout_keep_bits(r.v[2], u24 + 1));
  CHECK(kiln::dropout_keep(seed, index, u24));        // u >= T
  CHECK_FALSE(kiln::dropout_keep(seed, index, u24 + 1));
  CHECK(kiln::dropout_keep(seed, index, 0));           // p = 0 keeps everything
  CHECK_FALSE(kiln::dropout_keep(seed, index, 16777216u));
}
