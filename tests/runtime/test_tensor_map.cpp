// TMA tensor maps on the host (runtime/tensor_map.h): every rule of cuTensorMapEncodeTiled (and,
// for im2col maps, of cuTensorMapEncodeIm2col) is checked with no driver and named in the
// message, a misaligned tensor is the caller's error before any driver is loaded, a driver
// without the encoder is a clear CudaError, and the per-executable cache encodes a (kernel,
// argument, address) once. Encoding itself needs a GPU: tests/gpu/test_tensor_map_gpu.cpp.
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

TEST_CASE("tensor map: the cache encodes a (kernel, argument, address, extents) once, and stays bounded") {
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
  // A map with dyn extents (KernelArg::map_dyn_dim, a dyn matmul's M; map_dims_at, a dyn
  // attention's): other extents over the same address are another map, the same ones the same.
  CHECK(cache.get(0, 1, 0x1000, encode, {1000}).bytes[0] == 5);
  CHECK(cache.get(0, 1, 0x1000, encode, {1001}).bytes[0] == 6);
  CHECK(cache.get(0, 1, 0x1000, encode, {1000}).bytes[0] == 5);
  CHECK(cache.get(0, 1, 0x1000, encode, {64, 1000, 8, 4}).bytes[0] == 7);
  CHECK(cache.get(0, 1, 0x1000, encode, {64, 1000, 8, 5}).bytes[0] == 8);
  CHECK(cache.get(0, 1, 0x1000, encode, {64, 1000, 8, 4}).bytes[0] == 7);
  CHECK(encodes == 8);
  CHECK(cache.size() == 8);
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

// ---------------------------------------------------------------- im2col maps

namespace {

// An f32 NHWC activation (C 64, W 1024, H 512, N 8) read as im2col columns of 256 pixels of 32
// channels, the pixel box shrunk by 2 at the far end of W and H (a 3x3 filter, no padding): what
// an implicit-GEMM convolution's input map looks like.
TensorMapSpec conv_input() {
  TensorMapSpec s;
  s.dims = {64, 1024, 512, 8};
  s.strides = {256, 262144, 134217728};
  s.box = {32, 256};
  s.swizzle = 128;
  s.im2col = true;
  s.lower = {0, 0};
  s.upper = {-2, -2};
  s.element_strides = {1, 1, 1, 1};
  return s;
}

// The same tensor with a depth of 32 (NDHWC, rank 5), and without H (NWC, rank 3).
TensorMapSpec conv_input_rank5() {
  TensorMapSpec s = conv_input();
  s.dims = {64, 32, 32, 32, 8};
  s.strides = {256, 8192, 262144, 8388608};
  s.lower = {0, 0, 0};
  s.upper = {-2, -2, -2};
  s.element_strides = {1, 1, 1, 1, 1};
  return s;
}

TensorMapSpec conv_input_rank3() {
  TensorMapSpec s = conv_input();
  s.dims = {64, 1024, 8};
  s.strides = {256, 262144};
  s.lower = {0};
  s.upper = {-2};
  s.element_strides = {1, 1, 1};
  return s;
}

// What the fake cuTensorMapEncodeIm2col below was called with.
struct Im2colCall {
  int calls = 0;
  CUtensorMapDataType dtype{};
  cuuint32_t rank = 0;
  void* address = nullptr;
  std::vector<cuuint64_t> dims, strides;
  std::vector<int> lower, upper;
  cuuint32_t channels = 0, pixels = 0;
  std::vector<cuuint32_t> element_strides;
  CUtensorMapInterleave interleave{};
  CUtensorMapSwizzle swizzle{};
  CUtensorMapL2promotion l2{};
  CUtensorMapFloatOOBfill oob{};
};
Im2colCall im2col_call;

CUresult fake_encode_im2col(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank, void* address,
                            const cuuint64_t* dims, const cuuint64_t* strides, const int* lower, const int* upper,
                            cuuint32_t channels, cuuint32_t pixels, const cuuint32_t* element_strides,
                            CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                            CUtensorMapFloatOOBfill oob) {
  Im2colCall& c = im2col_call;
  ++c.calls;
  c.dtype = dtype;
  c.rank = rank;
  c.address = address;
  c.dims.assign(dims, dims + rank);
  c.strides.assign(strides, strides + rank - 1);
  c.lower.assign(lower, lower + rank - 2);
  c.upper.assign(upper, upper + rank - 2);
  c.channels = channels;
  c.pixels = pixels;
  c.element_strides.assign(element_strides, element_strides + rank);
  c.interleave = interleave;
  c.swizzle = swizzle;
  c.l2 = l2;
  c.oob = oob;
  std::memset(map, 0x5a, sizeof *map);
  return CUDA_SUCCESS;
}

// A tiled encoder that must not be called (an im2col map never goes to it).
CUresult unused_encode_tiled(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                             const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                             CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  FAIL("cuTensorMapEncodeTiled called for an im2col map");
  return CUDA_ERROR_INVALID_VALUE;
}

}  // namespace

TEST_CASE("tensor map: im2col specs the driver takes pass, and text() names the pixel box") {
  CHECK(rule_broken(conv_input(), DType::f32).empty());
  CHECK(conv_input().text() ==
        "dims [64, 1024, 512, 8] strides [256, 262144, 134217728] box [32, 256] swizzle 128 "
        "im2col lower [0, 0] upper [-2, -2] element strides [1, 1, 1, 1]");
  CHECK(rule_broken(conv_input_rank3(), DType::f32).empty());
  CHECK(rule_broken(conv_input_rank5(), DType::f32).empty());
  // bf16: 64 channels are 128 bytes, the whole swizzle span.
  TensorMapSpec bf16 = conv_input();
  bf16.box = {64, 256};
  CHECK(rule_broken(bf16, DType::bf16).empty());
  // The limits themselves: 256 channels (unswizzled), 1024 pixels, element strides of 8.
  TensorMapSpec s = conv_input();
  s.box = {256, 1024};
  s.swizzle = 0;
  s.element_strides = {8, 8, 8, 8};
  CHECK(rule_broken(s, DType::f32).empty());
  // Corners at the ends of their ranges, per rank: [-2^15, 2^15 - 1], [-2^7, 2^7 - 1], [-2^4, 2^4 - 1].
  s = conv_input_rank3();
  s.lower = {-32768};
  s.upper = {32767};
  CHECK(rule_broken(s, DType::f32).empty());
  s = conv_input();
  s.lower = {-128, 127};
  s.upper = {127, -128};
  CHECK(rule_broken(s, DType::f32).empty());
  s = conv_input_rank5();
  s.lower = {-16, 15, 0};
  s.upper = {15, -16, 0};
  CHECK(rule_broken(s, DType::f32).empty());
  // A pixel box of one pixel along a dim: extent 4 + upper -1 - lower 2 = 1.
  s = conv_input();
  s.dims = {64, 4, 512, 8};
  s.lower = {2, 0};
  s.upper = {-1, -2};
  CHECK(rule_broken(s, DType::f32).empty());
  // A tiled map's text is as before: no im2col suffix.
  CHECK(gemm_operand().text().find("im2col") == std::string::npos);
}

TEST_CASE("tensor map: each rule of cuTensorMapEncodeIm2col (im2col), named with its values") {
  // One broken rule a row: how the conv input map is changed to break it, and the rule's words.
  struct Case {
    std::function<void(TensorMapSpec&)> change;
    std::string rule;
  };
  const std::vector<Case> cases = {
      {[](TensorMapSpec& s) {
         s.dims = {64, 1024};
         s.strides = {256};
         s.lower = {};
         s.upper = {};
         s.element_strides = {1, 1};
       },
       "an im2col map of rank 2 (it takes 3..5)"},
      {[](TensorMapSpec& s) { s.box = {32, 256, 1}; }, "3 box entries for an im2col map (it takes 2: channels, pixels)"},
      {[](TensorMapSpec& s) { s.box = {32}; }, "1 box entries for an im2col map (it takes 2: channels, pixels)"},
      {[](TensorMapSpec& s) { s.box = {0, 256}; }, "0 channels per pixel is outside 1..256"},
      {[](TensorMapSpec& s) { s.box = {257, 256}; }, "257 channels per pixel is outside 1..256"},
      {[](TensorMapSpec& s) { s.box = {32, 1025}; }, "1025 pixels per column is outside 1..1024"},
      {[](TensorMapSpec& s) { s.box = {32, 0}; }, "0 pixels per column is outside 1..1024"},
      {[](TensorMapSpec& s) { s.lower = {0}; }, "1 lower and 2 upper corner entries for rank 4 (it takes 2 of each)"},
      {[](TensorMapSpec& s) { s.upper = {-2, -2, -2}; },
       "2 lower and 3 upper corner entries for rank 4 (it takes 2 of each)"},
      {[](TensorMapSpec& s) {
         s.lower = {};
         s.upper = {};
       },
       "0 lower and 0 upper corner entries for rank 4 (it takes 2 of each)"},
      {[](TensorMapSpec& s) { s.lower = {0, 128}; },
       "pixel box corner 128 (spatial dim 1) is outside -128..127 for rank 4"},
      {[](TensorMapSpec& s) { s.upper = {-129, -2}; },
       "pixel box corner -129 (spatial dim 0) is outside -128..127 for rank 4"},
      {[](TensorMapSpec& s) {
         s.dims = {64, 4, 512, 8};
         s.lower = {2, 0};
       },
       "the pixel box of spatial dim 0 is empty: extent 4 + upper -2 - lower 2"},
      {[](TensorMapSpec& s) {
         s.dims = {64, 1024, 3, 8};
         s.lower = {0, 1};
       },
       "the pixel box of spatial dim 1 is empty: extent 3 + upper -2 - lower 1"},
      {[](TensorMapSpec& s) { s.element_strides = {1, 1, 0, 1}; }, "element_strides[2] = 0 is outside 1..8"},
      {[](TensorMapSpec& s) { s.element_strides = {9, 1, 1, 1}; }, "element_strides[0] = 9 is outside 1..8"},
      {[](TensorMapSpec& s) { s.element_strides = {1, 1, 1}; }, "3 element strides for rank 4"},
      {[](TensorMapSpec& s) { s.element_strides = {}; }, "0 element strides for rank 4"},
      {[](TensorMapSpec& s) { s.element_strides = {1, 1, 1, 1, 1}; }, "5 element strides for rank 4"},
      // The rules shared with tiled maps, on box[0] = channels per pixel.
      {[](TensorMapSpec& s) { s.box = {64, 256}; },
       "box[0] = 64 elements of 4 bytes is 256 bytes, over the 128-byte swizzle span"},
      {[](TensorMapSpec& s) { s.box = {3, 256}; }, "box[0] = 3 elements of 4 bytes is 12 bytes, not a multiple of 16"},
  };
  for (const auto& c : cases) {
    TensorMapSpec s = conv_input();
    c.change(s);
    CAPTURE(c.rule);
    CHECK(rule_broken(s, DType::f32) == "internal error in kiln: TMA tensor map " + s.text() + " of f32: " + c.rule);
  }
  // The exact message once in full, spec and all.
  TensorMapSpec s = conv_input();
  s.element_strides = {1, 1, 1, 9};
  CHECK(rule_broken(s, DType::f32) ==
        "internal error in kiln: TMA tensor map dims [64, 1024, 512, 8] strides [256, 262144, 134217728] box [32, 256] "
        "swizzle 128 im2col lower [0, 0] upper [-2, -2] element strides [1, 1, 1, 9] of f32: "
        "element_strides[3] = 9 is outside 1..8");
  // The corner range is per rank: 16 breaks rank 5 (15 passes), 32768 breaks rank 3.
  s = conv_input_rank5();
  s.upper = {-2, 15, -2};
  CHECK(rule_broken(s, DType::f32).empty());
  s.upper = {-2, 16, -2};
  CHECK(rule_broken(s, DType::f32) == "internal error in kiln: TMA tensor map " + s.text() +
                                          " of f32: pixel box corner 16 (spatial dim 1) is outside -16..15 for rank 5");
  s.upper = {-2, -2, -2};
  s.lower = {0, 0, -17};
  CHECK(rule_broken(s, DType::f32) == "internal error in kiln: TMA tensor map " + s.text() +
                                          " of f32: pixel box corner -17 (spatial dim 2) is outside -16..15 for rank 5");
  s = conv_input_rank3();
  s.upper = {32768};
  CHECK(rule_broken(s, DType::f32) ==
        "internal error in kiln: TMA tensor map " + s.text() +
            " of f32: pixel box corner 32768 (spatial dim 0) is outside -32768..32767 for rank 3");
  // Rank 6 is over the shared rank limit before any im2col rule.
  s = conv_input();
  s.dims = {64, 8, 8, 8, 8, 8};
  s.strides = {256, 2048, 16384, 131072, 1048576};
  CHECK(rule_broken(s, DType::f32) == "internal error in kiln: TMA tensor map " + s.text() + " of f32: rank 6 is outside 1..5");
  // The swizzle span is per swizzle: 32 f32 channels (128 bytes) are over the 64-byte one.
  s = conv_input();
  s.swizzle = 64;
  CHECK(rule_broken(s, DType::f32) == "internal error in kiln: TMA tensor map " + s.text() +
                                          " of f32: box[0] = 32 elements of 4 bytes is 128 bytes, over the 64-byte "
                                          "swizzle span");
}

TEST_CASE("tensor map: a tiled map with im2col fields (corners or element strides) is rejected") {
  const std::string rule = "a tiled map has no pixel box or element strides (im2col only)";
  TensorMapSpec s = gemm_operand();
  s.element_strides = {1, 1};
  CHECK(rule_broken(s, DType::bf16) == "internal error in kiln: TMA tensor map " + s.text() + " of bf16: " + rule);
  s = gemm_operand();
  s.lower = {0};
  s.upper = {0};
  CHECK(rule_broken(s, DType::bf16) == "internal error in kiln: TMA tensor map " + s.text() + " of bf16: " + rule);
  s = gemm_operand();
  s.upper = {-2};
  CHECK(rule_broken(s, DType::bf16) == "internal error in kiln: TMA tensor map " + s.text() + " of bf16: " + rule);
  // An im2col map with im2col turned off is a tiled map with im2col fields (and a rank-2 box for rank 4).
  s = conv_input();
  s.im2col = false;
  CHECK_THROWS_AS(kiln::check_tensor_map(s, DType::f32), kiln::InternalError);
}

TEST_CASE("tensor map: a driver without the im2col encoder (cuTensorMapEncodeIm2col) is a clear CudaError") {
  const std::string message =
      "kiln: the CUDA driver /usr/lib/libcuda.so.1 lacks cuTensorMapEncodeIm2col, which the kernel reading "
      "conv2d: 'x' through a TMA tensor map needs; update the NVIDIA driver (CUDA 12.0 or newer)";
  kiln::Driver old;   // every entry point null
  old.library_path = "/usr/lib/libcuda.so.1";
  // A driver with the tiled encoder but not the im2col one (the tiled one is not a stand-in).
  kiln::Driver tiled_only = old;
  tiled_only.tensor_map_encode_tiled = &unused_encode_tiled;
  for (const kiln::Driver* d : {&old, &tiled_only}) {
    try {
      kiln::encode_tensor_map(*d, conv_input(), DType::f32, 0x7f0000001000ULL, "conv2d: 'x'");
      FAIL("expected a CudaError");
    } catch (const kiln::CudaError& e) {
      CHECK(e.call() == "cuTensorMapEncodeIm2col");
      CHECK(e.code_name() == "CUDA_ERROR_NOT_FOUND");
      CHECK(std::string(e.what()) == message);
    }
  }
  // A broken im2col spec is kiln's error, reported before the driver's entry points are looked at;
  // a misaligned address is the caller's, also before.
  TensorMapSpec bad = conv_input();
  bad.element_strides = {0, 1, 1, 1};
  CHECK_THROWS_AS(kiln::encode_tensor_map(old, bad, DType::f32, 0x7f0000001000ULL, "conv2d: 'x'"), kiln::InternalError);
  CHECK_THROWS_AS(kiln::encode_tensor_map(old, conv_input(), DType::f32, 0x7f0000001008ULL, "conv2d: 'x'"),
                  kiln::ArgumentError);
  // A driver with only the im2col encoder still names cuTensorMapEncodeTiled for a tiled map.
  kiln::Driver im2col_only = old;
  im2col_only.tensor_map_encode_im2col = &fake_encode_im2col;
  try {
    kiln::encode_tensor_map(im2col_only, gemm_operand(), DType::bf16, 0x7f0000001000ULL, "matmul: 'a'");
    FAIL("expected a CudaError");
  } catch (const kiln::CudaError& e) {
    CHECK(e.call() == "cuTensorMapEncodeTiled");
  }
}

TEST_CASE("tensor map: an im2col map reaches cuTensorMapEncodeIm2col with its corners, channels, pixels and strides") {
  kiln::Driver d;
  d.library_path = "/usr/lib/libcuda.so.1";
  d.tensor_map_encode_tiled = &unused_encode_tiled;
  d.tensor_map_encode_im2col = &fake_encode_im2col;
  im2col_call = Im2colCall{};
  TensorMapSpec s = conv_input();
  s.lower = {-1, -3};
  s.upper = {-2, 5};
  s.element_strides = {1, 2, 3, 1};
  const kiln::TensorMapBytes m = kiln::encode_tensor_map(d, s, DType::f32, 0x7f0000001000ULL, "conv2d: 'x'");
  const Im2colCall& c = im2col_call;
  REQUIRE(c.calls == 1);
  CHECK(c.dtype == CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  CHECK(c.rank == 4);
  CHECK(c.address == reinterpret_cast<void*>(0x7f0000001000ULL));
  CHECK(c.dims == std::vector<cuuint64_t>{64, 1024, 512, 8});
  CHECK(c.strides == std::vector<cuuint64_t>{256, 262144, 134217728});
  CHECK(c.lower == std::vector<int>{-1, -3});
  CHECK(c.upper == std::vector<int>{-2, 5});
  CHECK(c.channels == 32);
  CHECK(c.pixels == 256);
  CHECK(c.element_strides == std::vector<cuuint32_t>{1, 2, 3, 1});
  CHECK(c.interleave == CU_TENSOR_MAP_INTERLEAVE_NONE);
  CHECK(c.swizzle == CU_TENSOR_MAP_SWIZZLE_128B);
  CHECK(c.l2 == CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  CHECK(c.oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  // The encoded bytes come back as the driver wrote them.
  CHECK(m.bytes[0] == 0x5a);
  CHECK(m.bytes[127] == 0x5a);
  // Rank 5, bf16, swizzle 64: three corners of each.
  im2col_call = Im2colCall{};
  s = conv_input_rank5();
  s.box = {32, 1024};
  s.swizzle = 64;
  s.lower = {-16, 0, 1};
  s.upper = {15, -1, 0};
  kiln::encode_tensor_map(d, s, DType::bf16, 0x7f0000002000ULL, "conv3d: 'x'");
  REQUIRE(im2col_call.calls == 1);
  CHECK(im2col_call.dtype == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  CHECK(im2col_call.rank == 5);
  CHECK(im2col_call.lower == std::vector<int>{-16, 0, 1});
  CHECK(im2col_call.upper == std::vector<int>{15, -1, 0});
  CHECK(im2col_call.channels == 32);
  CHECK(im2col_call.pixels == 1024);
  CHECK(im2col_call.element_strides == std::vector<cuuint32_t>{1, 1, 1, 1, 1});
  CHECK(im2col_call.swizzle == CU_TENSOR_MAP_SWIZZLE_64B);
}
