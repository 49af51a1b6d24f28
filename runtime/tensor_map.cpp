#include "runtime/tensor_map.h"

#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "runtime/driver.h"

namespace kiln {

namespace {

// The rules of cuTensorMapEncodeTiled (cuda.h's documentation of it, CUDA 13.0).
constexpr std::size_t kMaxRank = 5;
constexpr std::int64_t kMaxDim = std::int64_t{1} << 32;
constexpr std::int64_t kStrideLimit = std::int64_t{1} << 40;   // strides stay below it
constexpr std::int64_t kStrideUnit = 16;                       // bytes; also box[0]'s row unit
constexpr int kMaxBox = 256;
constexpr int kMaxIm2colPixels = 1024;   // pixels per column of an im2col map
constexpr int kMaxElementStride = 8;
constexpr unsigned long long kAddressAlignment = 16;

static_assert(sizeof(CUtensorMap) == sizeof(TensorMapBytes::bytes));

[[noreturn]] void broken(const TensorMapSpec& spec, DType dtype, const std::string& rule) {
  throw InternalError(
      fmt::format("internal error in kiln: TMA tensor map {} of {}: {}", spec.text(), dtype_name(dtype), rule));
}

CUtensorMapDataType map_dtype(DType dtype) {
  switch (dtype) {
    case DType::f32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    default: break;
  }
  throw UnsupportedError(
      fmt::format("a TMA tensor map of {} is not supported (kiln maps f32, f16 and bf16)", dtype_name(dtype)));
}

CUtensorMapSwizzle map_swizzle(int bytes) {
  switch (bytes) {
    case 0: return CU_TENSOR_MAP_SWIZZLE_NONE;
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
    default: return CU_TENSOR_MAP_SWIZZLE_NONE;   // check_tensor_map rejected it already
  }
}

// The address is the caller's (a user tensor's pointer): an ArgumentError they can act on.
void check_address(unsigned long long address, const std::string& tensor_name) {
  if (address % kAddressAlignment == 0) return;
  throw ArgumentError(fmt::format("{} at 0x{:x} is not {}-byte aligned; the kernel reads it through a TMA tensor map, "
                                  "which needs that (pass a pointer from the allocator, not an offset view)",
                                  tensor_name, address, kAddressAlignment));
}

// Encodes a spec and address that passed their checks.
TensorMapBytes encode_checked(const Driver& d, const TensorMapSpec& spec, DType dtype, unsigned long long address,
                              const std::string& tensor_name) {
  const char* const entry = spec.im2col ? "cuTensorMapEncodeIm2col" : "cuTensorMapEncodeTiled";
  if ((spec.im2col ? reinterpret_cast<void*>(d.tensor_map_encode_im2col)
                   : reinterpret_cast<void*>(d.tensor_map_encode_tiled)) == nullptr)
    throw CudaError(fmt::format("kiln: the CUDA driver {} lacks {}, which the kernel reading {} through a TMA tensor "
                                "map needs; update the NVIDIA driver (CUDA 12.0 or newer)",
                                d.library_path.empty() ? "libcuda.so.1" : d.library_path, entry, tensor_name),
                    entry, static_cast<int>(CUDA_ERROR_NOT_FOUND), "CUDA_ERROR_NOT_FOUND");
  const std::size_t rank = spec.dims.size();
  cuuint64_t dims[kMaxRank] = {}, strides[kMaxRank - 1] = {};
  cuuint32_t box[kMaxRank] = {}, element_strides[kMaxRank] = {};
  int lower[kMaxRank] = {}, upper[kMaxRank] = {};
  for (std::size_t i = 0; i < rank; ++i) {
    dims[i] = static_cast<cuuint64_t>(spec.dims[i]);
    if (i < spec.box.size()) box[i] = static_cast<cuuint32_t>(spec.box[i]);
    element_strides[i] = spec.element_strides.empty() ? 1 : static_cast<cuuint32_t>(spec.element_strides[i]);
  }
  for (std::size_t i = 0; i < spec.lower.size(); ++i) lower[i] = spec.lower[i], upper[i] = spec.upper[i];
  for (std::size_t i = 0; i + 1 < rank; ++i) strides[i] = static_cast<cuuint64_t>(spec.strides[i]);
  CUtensorMap map;
  const CUresult r =
      spec.im2col
          ? d.tensor_map_encode_im2col(&map, map_dtype(dtype), static_cast<cuuint32_t>(rank),
                                       reinterpret_cast<void*>(address), dims, strides, lower, upper, box[0], box[1],
                                       element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, map_swizzle(spec.swizzle),
                                       CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
          : d.tensor_map_encode_tiled(&map, map_dtype(dtype), static_cast<cuuint32_t>(rank),
                                      reinterpret_cast<void*>(address), dims, strides, box, element_strides,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, map_swizzle(spec.swizzle),
                                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    try {
      check(r, entry);
    } catch (const CudaError& e) {
      throw CudaError(fmt::format("{} (the tensor map of {} at 0x{:x}: {} of {})", e.what(), tensor_name, address,
                                  spec.text(), dtype_name(dtype)),
                      e.call(), e.code(), e.code_name());
    }
  }
  TensorMapBytes out;
  std::memcpy(out.bytes, &map, sizeof out.bytes);
  return out;
}

// The rules cuTensorMapEncodeIm2col adds (cuda.h, CUDA 13.0): rank 3..5; box = {channels per
// pixel 1..256, pixels per column 1..1024}; rank - 2 corners each, signed, within +-2^15 (rank 3),
// +-2^7 (rank 4) or +-2^4 (rank 5), and a pixel box of non-zero extent in every spatial dim;
// element strides 1..8 per dim.
void check_im2col(const TensorMapSpec& spec, DType dtype) {
  const std::size_t rank = spec.dims.size();
  if (rank < 3) broken(spec, dtype, fmt::format("an im2col map of rank {} (it takes 3..5)", rank));
  if (spec.box.size() != 2)
    broken(spec, dtype, fmt::format("{} box entries for an im2col map (it takes 2: channels, pixels)", spec.box.size()));
  if (spec.box[0] < 1 || spec.box[0] > kMaxBox)
    broken(spec, dtype, fmt::format("{} channels per pixel is outside 1..{}", spec.box[0], kMaxBox));
  if (spec.box[1] < 1 || spec.box[1] > kMaxIm2colPixels)
    broken(spec, dtype, fmt::format("{} pixels per column is outside 1..{}", spec.box[1], kMaxIm2colPixels));
  const std::size_t spatial = rank - 2;
  if (spec.lower.size() != spatial || spec.upper.size() != spatial)
    broken(spec, dtype, fmt::format("{} lower and {} upper corner entries for rank {} (it takes {} of each)",
                                    spec.lower.size(), spec.upper.size(), rank, spatial));
  const int limit = rank == 3 ? 1 << 15 : rank == 4 ? 1 << 7 : 1 << 4;
  for (std::size_t i = 0; i < spatial; ++i) {
    for (int v : {spec.lower[i], spec.upper[i]})
      if (v < -limit || v >= limit)
        broken(spec, dtype, fmt::format("pixel box corner {} (spatial dim {}) is outside {}..{} for rank {}", v, i,
                                        -limit, limit - 1, rank));
    if (spec.dims[i + 1] + spec.upper[i] - spec.lower[i] < 1)
      broken(spec, dtype, fmt::format("the pixel box of spatial dim {} is empty: extent {} + upper {} - lower {}", i,
                                      spec.dims[i + 1], spec.upper[i], spec.lower[i]));
  }
  if (spec.element_strides.size() != rank)
    broken(spec, dtype, fmt::format("{} element strides for rank {}", spec.element_strides.size(), rank));
  for (std::size_t i = 0; i < rank; ++i)
    if (spec.element_strides[i] < 1 || spec.element_strides[i] > kMaxElementStride)
      broken(spec, dtype, fmt::format("element_strides[{}] = {} is outside 1..{}", i, spec.element_strides[i],
                                      kMaxElementStride));
}

}  // namespace

void check_tensor_map(const TensorMapSpec& spec, DType dtype) {
  map_dtype(dtype);
  const std::size_t rank = spec.dims.size();
  if (rank < 1 || rank > kMaxRank) broken(spec, dtype, fmt::format("rank {} is outside 1..{}", rank, kMaxRank));
  if (spec.strides.size() != rank - 1)
    broken(spec, dtype, fmt::format("{} strides for rank {} (it takes rank - 1 = {})", spec.strides.size(), rank, rank - 1));
  if (spec.swizzle != 0 && spec.swizzle != 32 && spec.swizzle != 64 && spec.swizzle != 128)
    broken(spec, dtype, fmt::format("swizzle {} is not 0, 32, 64 or 128 bytes", spec.swizzle));
  for (std::size_t i = 0; i < rank; ++i)
    if (spec.dims[i] < 1 || spec.dims[i] > kMaxDim)
      broken(spec, dtype, fmt::format("dims[{}] = {} is outside 1..2^32", i, spec.dims[i]));
  for (std::size_t i = 0; i < spec.strides.size(); ++i) {
    const std::int64_t s = spec.strides[i];
    if (s <= 0 || s % kStrideUnit != 0)
      broken(spec, dtype, fmt::format("strides[{}] = {} bytes is not a positive multiple of {}", i, s, kStrideUnit));
    if (s >= kStrideLimit) broken(spec, dtype, fmt::format("strides[{}] = {} bytes is not below 2^40", i, s));
  }
  if (spec.im2col) {
    check_im2col(spec, dtype);
  } else {
    if (spec.box.size() != rank)
      broken(spec, dtype, fmt::format("{} box entries for rank {} (it takes {})", spec.box.size(), rank, rank));
    if (!spec.lower.empty() || !spec.upper.empty() || !spec.element_strides.empty())
      broken(spec, dtype, "a tiled map has no pixel box or element strides (im2col only)");
    for (std::size_t i = 0; i < rank; ++i)
      if (spec.box[i] < 1 || spec.box[i] > kMaxBox)
        broken(spec, dtype, fmt::format("box[{}] = {} is outside 1..{}", i, spec.box[i], kMaxBox));
  }
  // The box's inner row moves in 16-byte units and, swizzled, must fit in one swizzle span.
  const std::size_t elem = dtype_size(dtype);
  const std::int64_t row = static_cast<std::int64_t>(spec.box[0]) * static_cast<std::int64_t>(elem);
  if (row % kStrideUnit != 0)
    broken(spec, dtype, fmt::format("box[0] = {} elements of {} bytes is {} bytes, not a multiple of {}", spec.box[0],
                                    elem, row, kStrideUnit));
  if (spec.swizzle != 0 && row > spec.swizzle)
    broken(spec, dtype, fmt::format("box[0] = {} elements of {} bytes is {} bytes, over the {}-byte swizzle span",
                                    spec.box[0], elem, row, spec.swizzle));
}

std::int64_t tensor_map_reach_bytes(const TensorMapSpec& spec, DType dtype) {
  constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();
  const auto elem = static_cast<std::int64_t>(dtype_size(dtype));
  std::int64_t reach = 0;
  for (std::size_t i = 0; i < spec.dims.size(); ++i) {
    const std::int64_t step = i == 0 ? elem : i - 1 < spec.strides.size() ? spec.strides[i - 1] : 0;
    std::int64_t span = 0;
    if (__builtin_mul_overflow(spec.dims[i] - 1, step, &span) || __builtin_add_overflow(reach, span, &reach))
      return kSaturated;
  }
  return reach > kSaturated - elem ? kSaturated : reach + elem;
}

TensorMapBytes encode_tensor_map(const TensorMapSpec& spec, DType dtype, unsigned long long address,
                                 const std::string& tensor_name) {
  // Both checks come before the driver is loaded: they hold or fail the same on any machine.
  check_tensor_map(spec, dtype);
  check_address(address, tensor_name);
  return encode_checked(driver(), spec, dtype, address, tensor_name);
}

TensorMapBytes encode_tensor_map(const Driver& d, const TensorMapSpec& spec, DType dtype, unsigned long long address,
                                 const std::string& tensor_name) {
  check_tensor_map(spec, dtype);
  check_address(address, tensor_name);
  return encode_checked(d, spec, dtype, address, tensor_name);
}

}  // namespace kiln
