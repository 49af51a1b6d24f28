// TMA tensor maps on a GPU (runtime/tensor_map.h): the driver encodes a 2-D bf16 map over a
// cuMemAlloc'ed buffer, and on sm_90 a kernel given the encoded bytes the way the runtime
// passes them (a pointer to a TensorMapBytes in the params array, taken by value as a
// `const __grid_constant__` parameter) loads a box through it, out-of-bounds elements as zero.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "runtime/driver.h"
#include "runtime/nvrtc.h"
#include "runtime/tensor_map.h"

namespace kiln::test {

namespace {

// A bf16 matrix of kRows x kCols, row-major; 136 bf16 columns are 272 bytes a row, a multiple
// of 16 as a map's stride must be.
constexpr int kRows = 100, kCols = 136, kBox = 64;

// Loads one kBox x kBox box at (x0, y0) (column, row) through the map into shared memory, with
// no swizzle so the tile is dense, then writes the tile out.
constexpr const char* kTmaBox = R"(
struct alignas(64) TensorMap { unsigned long long opaque[16]; };

__device__ unsigned shared_address(const void* p) {
  unsigned long long a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return static_cast<unsigned>(a);
}

extern "C" __global__ void tma_box(const __grid_constant__ TensorMap map, unsigned short* out, int x0, int y0) {
  __shared__ alignas(128) unsigned short tile[64 * 64];
  __shared__ alignas(8) unsigned long long barrier;
  const unsigned bar = shared_address(&barrier);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(64 * 64 * 2) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        :: "r"(shared_address(tile)), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x0), "r"(y0), "r"(bar)
        : "memory");
  }
  asm volatile(
      "{\n"
      "  .reg .pred done;\n"
      "wait_for_box:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "  @!done bra wait_for_box;\n"
      "}\n" :: "r"(bar) : "memory");
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) out[i] = tile[i];
}
)";

TensorMapSpec matrix_map(int swizzle) {
  TensorMapSpec s;
  s.dims = {kCols, kRows};
  s.strides = {kCols * 2};
  s.box = {kBox, kBox};
  s.swizzle = swizzle;
  return s;
}

// Distinct, nonzero bit patterns (the test compares bits, not values).
unsigned short pattern(int row, int col) { return static_cast<unsigned short>(0x3c00 + row * kCols + col + 1); }

// The device's arch in *arch; false, with the skip line printed, when it has no TMA.
bool has_tma(std::string* arch) {
  int device = 0;
  current_context(&device);
  *arch = device_arch(device);
  int version = 0;
  for (char c : *arch)
    if (c >= '0' && c <= '9') version = version * 10 + (c - '0');
  if (version >= 90) return true;
  std::printf("%s %s has no TMA (tensor maps need sm_90)\n", kSkipMarker, arch->c_str());
  return false;
}

}  // namespace

TEST_CASE("gpu tensor map: cuTensorMapEncodeTiled encodes a 2-D bf16 map over cuMemAlloc'ed memory") {
  KILN_REQUIRE_GPU();
  std::string arch;
  if (!has_tma(&arch)) return;
  const bool has_encoder = driver().tensor_map_encode_tiled != nullptr;
  REQUIRE_MESSAGE(has_encoder, "the driver lacks cuTensorMapEncodeTiled");
  DeviceBuffer matrix(static_cast<std::size_t>(kRows) * kCols * 2);
  REQUIRE(matrix.ptr() % 16 == 0);
  for (int swizzle : {0, 32, 64, 128}) {
    TensorMapSpec spec = matrix_map(swizzle);
    spec.box[0] = swizzle == 0 ? kBox : swizzle / 2;   // a row fills the swizzle span
    CAPTURE(spec.text());
    TensorMapBytes map{};
    CHECK_NOTHROW(map = encode_tensor_map(spec, DType::bf16, matrix.ptr(), "tensor map test: 'x'"));
    bool any = false;
    for (unsigned char b : map.bytes) any |= b != 0;
    CHECK(any);
  }
  // A misaligned address is refused before the driver sees it.
  CHECK_THROWS_AS(encode_tensor_map(matrix_map(128), DType::bf16, matrix.ptr() + 2, "tensor map test: 'x'"),
                  ArgumentError);
}

TEST_CASE("gpu tensor map: a kernel loads a box through the encoded bytes, out of bounds as zero") {
  KILN_REQUIRE_GPU();
  std::string arch;
  if (!has_tma(&arch)) return;
  std::vector<unsigned short> host(static_cast<std::size_t>(kRows) * kCols);
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) host[static_cast<std::size_t>(r) * kCols + c] = pattern(r, c);
  DeviceBuffer matrix(host.size() * 2);
  matrix.upload(host);
  DeviceBuffer out(kBox * kBox * 2);

  CompileRequest request;
  request.source = kTmaBox;
  request.file_name = "tma_box.cu";
  request.arch = arch;
  auto compiled = compile(request);
  CUmodule module = load_module(compiled.cubin);
  CUfunction kernel = get_function(module, "tma_box");
  // Inside, across the right edge, and across both edges (columns 128..135 and rows 64..99 exist).
  for (auto [x0, y0] : {std::pair{0, 0}, std::pair{64, 16}, std::pair{128, 64}}) {
    CAPTURE(x0);
    CAPTURE(y0);
    out.memset8(0xff);   // poison
    const TensorMapBytes map = encode_tensor_map(matrix_map(0), DType::bf16, matrix.ptr(), "tensor map test: 'x'");
    CUdeviceptr out_ptr = out.ptr();
    int x = x0, y = y0;
    void* params[] = {const_cast<TensorMapBytes*>(&map), &out_ptr, &x, &y};
    launch_kernel(kernel, {1, 1, 1}, {128, 1, 1}, 0, nullptr, params);
    check(driver().ctx_synchronize(), "cuCtxSynchronize");
    const auto tile = out.download_as<unsigned short>();
    int wrong = 0;
    for (int r = 0; r < kBox; ++r)
      for (int c = 0; c < kBox; ++c) {
        const int row = y0 + r, col = x0 + c;
        const unsigned short want = row < kRows && col < kCols ? pattern(row, col) : 0;
        if (tile[static_cast<std::size_t>(r) * kBox + c] != want && wrong++ < 5)
          MESSAGE("tile[" << r << "][" << c << "] = " << tile[static_cast<std::size_t>(r) * kBox + c] << ", want "
                          << want);
      }
    CHECK(wrong == 0);
  }
  unload_module(module);
}

}  // namespace kiln::test
