// TMA tensor maps on the host (runtime/tensor_map.h): every rule of cuTensorMapEncodeTiled is
// checked with no driver and named in the message, a misaligned tensor is the caller's error
// before any driver is loaded, a driver without the encoder is a clear CudaError, and the
// per-executable cache encodes a (kernel, argument, address) once. Encoding itself needs a GPU:
// tests/gpu/test_tensor_map_gpu.cpp.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "kiln/kiln.h"
#include "runtime/driver.h"
#include "runtime/tensor_map.h"

namespace {

using kiln::DType;
using kiln::TensorMapSpec;

// A bf16 4096x4096 row-major matrix read in 64x128 boxes with the 128-byte swizzle: what the
// Hopper GEMM's operand maps look like.
TensorMapSpec gemm_operand() {
  TensorMapSpec s;
  s.dims = {4096, 4096};
  s.strides = {8192};
  s.box = {64, 128};
  s.swizzle = 128;
  return s;
}

// The message check_tensor_map gives `spec` of `dtype`, or "" when it passes.
std::string rule_broken(const TensorMapSpec& spec, DType dtype) {
  try {
    kiln::check_tensor_map(spec, dtype);
    return "";
  } catch (const kiln::InternalError& e) {
    return e.what();
  }
}

kiln::TensorMapBytes filled(unsigned char value) {
  kiln::TensorMapBytes b;
  std::memset(b.bytes, value, sizeof b.bytes);
  return b;
}

}  // namespace

TEST_CASE("tensor map: TensorMapSpec::text") {
  CHECK(gemm_operand().text() == "dims [4096, 4096] strides [8192] box [64, 128] swizzle 128");
  TensorMapSpec flat;
  flat.dims = {1000};
  flat.box = {32};
  flat.swizzle = 0;
  CHECK(flat.text() == "dims [1000] strides [] box [32] swizzle 0");
}

TEST_CASE("tensor map: specs the driver takes pass") {
  CHECK(rule_broken(gemm_operand(), DType::bf16).empty());
  CHECK(rule_broken(gemm_operand(), DType::f16).empty());
  // f32 (read as tf32): a 32-element row is 128 bytes, the whole swizzle span.
  TensorMapSpec f32 = gemm_operand();
  f32.strides = {16384};
  f32.box = {32, 128};
  CHECK(rule_broken(f32, DType::f32).empty());
  // Without a swizzle a row may be wider than 128 bytes.
  TensorMapSpec wide = gemm_operand();
  wide.box = {256, 8};
  wide.swizzle = 0;
  CHECK(rule_broken(wide, DType::bf16).empty());
  // Rank 5 at the limits: dims 2^32, box 256, a stride just under 2^40.
  TensorMapSpec big;
  big.dims = {std::int64_t{1} << 32, 1, 1, 1, 1};
  big.strides = {(std::int64_t{1} << 40) - 16, 16, 16, 16};
  big.box = {8, 256, 1, 1, 1};
  big.swizzle = 32;
  CHECK(rule_broken(big, DType::f32).empty());
}

TEST_CASE("tensor map: each rule of cuTensorMapEncodeTiled, named with its values") {
  // One broken rule a row: how the GEMM operand map is changed to break it, and the rule's words.
  struct Case {
    std::function<void(TensorMapSpec&)> change;
    std::string rule;
  };
  const std::vector<Case> cases = {
      {[](TensorMapSpec& s) { s = TensorMapSpec{}; }, "rank 0 is outside 1..5"},
      {[](TensorMapSpec& s) {
         s.dims = {8, 8, 8, 8, 8, 8};
         s.strides = {16, 16, 16, 16, 16};
         s.box = {8, 1, 1, 1, 1, 1};
       },
       "rank 6 is outside 1..5"},
      {[](TensorMapSpec& s) { s.strides = {8192, 8192}; }, "2 strides for rank 2 (it takes rank - 1 = 1)"},
      {[](TensorMapSpec& s) { s.box = {64}; }, "1 box entries for rank 2 (it takes 2)"},
      {[](TensorMapSpec& s) { s.swizzle = 256; }, "swizzle 256 is not 0, 32, 64 or 128 bytes"},
      {[](TensorMapSpec& s) { s.dims = {4096, 0}; }, "dims[1] = 0 is outside 1..2^32"},
      {[](TensorMapSpec& s) { s.dims = {(std::int64_t{1} << 32) + 1, 4096}; }, "dims[0] = 4294967297 is outside 1..2^32"},
      // A bf16 row of 4100 elements is 8200 bytes: no map (the planner must not ask for one over K % 8 != 0).
      {[](TensorMapSpec& s) { s.strides = {8200}; }, "strides[0] = 8200 bytes is not a positive multiple of 16"},
      {[](TensorMapSpec& s) { s.strides = {0}; }, "strides[0] = 0 bytes is not a positive multiple of 16"},
      {[](TensorMapSpec& s) { s.strides = {std::int64_t{1} << 40}; }, "strides[0] = 1099511627776 bytes is not below 2^40"},
      {[](TensorMapSpec& s) { s.box = {64, 257}; }, "box[1] = 257 is outside 1..256"},
      {[](TensorMapSpec& s) { s.box = {0, 128}; }, "box[0] = 0 is outside 1..256"},
      {[](TensorMapSpec& s) { s.box = {12, 128}; }, "box[0] = 12 elements of 2 bytes is 24 bytes, not a multiple of 16"},
      {[](TensorMapSpec& s) { s.box = {128, 64}; },
       "box[0] = 128 elements of 2 bytes is 256 bytes, over the 128-byte swizzle span"},
      {[](TensorMapSpec& s) {
         s.box = {32, 64};
         s.swizzle = 32;
       },
       "box[0] = 32 elements of 2 bytes is 64 bytes, over the 32-byte swizzle span"},
  };
  for (const auto& c : cases) {
    TensorMapSpec s = gemm_operand();
    c.change(s);
    CAPTURE(c.rule);
    CHECK(rule_broken(s, DType::bf16) == "internal error in kiln: TMA tensor map " + s.text() + " of bf16: " + c.rule);
  }
  // The exact message once in full, spec and all.
  TensorMapSpec s = gemm_operand();
  s.box = {12, 128};
  CHECK(rule_broken(s, DType::bf16) ==
        "internal error in kiln: TMA tensor map dims [4096, 4096] strides [8192] box [12, 128] swizzle 128 of bf16: "
        "box[0] = 12 elements of 2 bytes is 24 bytes, not a multiple of 16");
  // The span is per swizzle: 64 bytes fit the 64-byte one.
  s.box = {32, 64};
  s.swizzle = 64;
  CHECK(rule_broken(s, DType::bf16).empty());
}

TEST_CASE("tensor map: element types other than f32, f16 and bf16 are unsupported") {
  for (DType t : {DType::f64, DType::i32, DType::i64, DType::u64, DType::boolean})
    CHECK_THROWS_WITH_AS(kiln::check_tensor_map(gemm_operand(), t),
                         ("a TMA tensor map of " + std::string(kiln::dtype_name(t)) +
                          " is not supported (kiln maps f32, f16 and bf16)")
                             .c_str(),
                         kiln::UnsupportedError);
}

TEST_CASE("tensor map: a misaligned tensor is the caller's error, found before the driver is loaded") {
  // No GPU or driver is needed to reach this error: the address is checked first.
  CHECK_THROWS_WITH_AS(kiln::encode_tensor_map(gemm_operand(), DType::bf16, 0x7f0000001008ULL, "matmul: 'a'"),
                       "matmul: 'a' at 0x7f0000001008 is not 16-byte aligned; the kernel reads it through a TMA "
                       "tensor map, which needs that (pass a pointer from the allocator, not an offset view)",
                       kiln::ArgumentError);
  // A broken spec is reported before the address (it is kiln's, not the caller's).
  TensorMapSpec bad = gemm_operand();
  bad.box = {12, 128};
  CHECK_THROWS_AS(kiln::encode_tensor_map(bad, DType::bf16, 0x7f0000001008ULL, "matmul: 'a'"), kiln::InternalError);
}

TEST_CASE("tensor map: a driver without cuTensorMapEncodeTiled is a clear CudaError") {
  kiln::Driver old;   // every entry point null, as resolve_optional leaves a pre-12.0 driver's encoder
  old.library_path = "/usr/lib/libcuda.so.1";
  try {
    kiln::encode_tensor_map(old, gemm_operand(), DType::bf16, 0x7f0000001000ULL, "matmul: 'a'");
    FAIL("expected a CudaError");
  } catch (const kiln::CudaError& e) {
    CHECK(e.call() == "cuTensorMapEncodeTiled");
    CHECK(e.code_name() == "CUDA_ERROR_NOT_FOUND");
    CHECK(std::string(e.what()) ==
          "kiln: the CUDA driver /usr/lib/libcuda.so.1 lacks cuTensorMapEncodeTiled, which the kernel reading "
          "matmul: 'a' through a TMA tensor map needs; update the NVIDIA driver (CUDA 12.0 or newer)");
  }
}

TEST_CASE("tensor map: reach in bytes, for the runtime's in-bounds check") {
  // The last element of a 4096x4096 bf16 matrix ends at 4096 * 8192 bytes.
  CHECK(kiln::tensor_map_reach_bytes(gemm_operand(), DType::bf16) == 4096LL * 8192);
  // Padded rows: the last row reaches only its own 100 elements past the last stride.
  TensorMapSpec padded;
  padded.dims = {100, 3};
  padded.strides = {256};
  padded.box = {8, 1};
  CHECK(kiln::tensor_map_reach_bytes(padded, DType::f32) == 2 * 256 + 100 * 4);
  TensorMapSpec huge;
  huge.dims = {std::int64_t{1} << 32, std::int64_t{1} << 32, std::int64_t{1} << 32};
  huge.strides = {(std::int64_t{1} << 40) - 16, (std::int64_t{1} << 40) - 16};
  huge.box = {8, 1, 1};
  CHECK(kiln::tensor_map_reach_bytes(huge, DType::f32) == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("tensor map: the cache encodes a (kernel, argument, address) once, and stays bounded") {
  kiln::TensorMapCache cache;
  int encodes = 0;
  auto encode = [&] {
    ++encodes;
    return filled(static_cast<unsigned char>(encodes));
  };
  // A host loop over the same buffers encodes once.
  for (int i = 0; i < 10; ++i) CHECK(cache.get(0, 1, 0x1000, encode).bytes[0] == 1);
  CHECK(encodes == 1);
  // Another argument, kernel or address is another map.
  CHECK(cache.get(0, 2, 0x1000, encode).bytes[127] == 2);
  CHECK(cache.get(1, 1, 0x1000, encode).bytes[0] == 3);
  CHECK(cache.get(0, 1, 0x2000, encode).bytes[0] == 4);
  CHECK(cache.get(0, 1, 0x1000, encode).bytes[0] == 1);
  CHECK(encodes == 4);
  CHECK(cache.size() == 4);
  // Scratch moving between launches must not grow it without bound: it starts over when full.
  for (unsigned long long a = 0; a < 2 * kiln::TensorMapCache::kMaxEntries; ++a) cache.get(2, 0, 0x10000 + a * 256, encode);
  CHECK(cache.size() <= kiln::TensorMapCache::kMaxEntries);
  CHECK(cache.size() >= 1);
  // An encode that throws caches nothing.
  CHECK_THROWS_AS(cache.get(3, 0, 0x1000, []() -> kiln::TensorMapBytes { throw kiln::ArgumentError("misaligned"); }),
                  kiln::ArgumentError);
  const int before = encodes;
  cache.get(3, 0, 0x1000, encode);
  CHECK(encodes == before + 1);
}

TEST_CASE("tensor map: the cache is safe from several threads") {
  kiln::TensorMapCache cache;
  std::atomic<int> encodes{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        // Each address's bytes are a function of the address: a mixed-up entry shows as wrong bytes.
        const unsigned long long address = 0x1000 + static_cast<unsigned long long>(i % 300) * 16;
        const auto b = cache.get(0, 0, address, [&] {
          ++encodes;
          return filled(static_cast<unsigned char>(address >> 4));
        });
        if (b.bytes[0] != static_cast<unsigned char>(address >> 4) || b.bytes[127] != b.bytes[0]) ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
  CHECK(cache.size() <= kiln::TensorMapCache::kMaxEntries);
  CHECK(encodes >= 300);
}
